//! Drawing image quads inside egui's render pass with `shaders/image.wgsl` (an egui-wgpu paint
//! callback). egui's own shader also runs its software-filtering branch on every pixel on a
//! software adapter, and images cover most of the window; this one is a plain textured quad.

use std::sync::Arc;

use eframe::egui_wgpu::{self, CallbackTrait, RenderState};
use egui::{Painter, Rect};
use wgpu::util::DeviceExt as _;

/// `struct Draw` of `shaders/image.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct DrawParams {
    rect: [f32; 4],
    uv: [f32; 4],
    checker_side: f32,
    checker: f32,
    gray: f32,
    pad: f32,
}

/// How a quad samples its texture.
#[derive(Clone, Copy)]
pub struct DrawHow {
    /// Nearest-neighbour magnification (pixels seen as squares when zoomed in).
    pub nearest: bool,
    /// Over a checkerboard (the image has alpha).
    pub checker: bool,
    /// The texture is one channel of gray (`R8Unorm`), shown as gray.
    pub gray: bool,
}

/// The pipeline and samplers, made once per renderer.
pub struct ImagePainter {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    linear: wgpu::Sampler,
    nearest: wgpu::Sampler,
    device: wgpu::Device,
}

/// Checker squares, in screen points.
const CHECKER_SIDE: f32 = 12.0;

impl ImagePainter {
    /// The painter of `render_state`'s renderer, made on first use.
    pub fn of(render_state: &RenderState) -> Arc<Self> {
        if let Some(p) = render_state.renderer.read().callback_resources.get::<Arc<Self>>() {
            return Arc::clone(p);
        }
        let painter = Arc::new(Self::new(render_state));
        render_state.renderer.write().callback_resources.insert(Arc::clone(&painter));
        painter
    }

    fn new(render_state: &RenderState) -> Self {
        let device = &render_state.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("image.wgsl"),
            source: wgpu::ShaderSource::Wgsl(crate::shaders::IMAGE_WGSL.into()),
        });
        let entry =
            |binding, visibility, ty| wgpu::BindGroupLayoutEntry { binding, visibility, ty, count: None };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("image"),
            entries: &[
                entry(
                    0,
                    wgpu::ShaderStages::VERTEX_FRAGMENT,
                    wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                ),
                entry(
                    1,
                    wgpu::ShaderStages::FRAGMENT,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
                entry(
                    2,
                    wgpu::ShaderStages::FRAGMENT,
                    wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                ),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("image"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let target = render_state.target_format;
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("image"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleStrip,
                ..Default::default()
            },
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some(if target.is_srgb() { "fs_linear" } else { "fs_gamma" }),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: target,
                    blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let sampler = |filter| {
            device.create_sampler(&wgpu::SamplerDescriptor {
                label: Some("image"),
                mag_filter: filter,
                min_filter: wgpu::FilterMode::Linear,
                mipmap_filter: wgpu::MipmapFilterMode::Nearest,
                ..Default::default()
            })
        };
        Self {
            pipeline,
            layout,
            linear: sampler(wgpu::FilterMode::Linear),
            nearest: sampler(wgpu::FilterMode::Nearest),
            device: device.clone(),
        }
    }

    /// Draws texture `view` (premultiplied) at screen rectangle `rect` (points), showing
    /// texture coordinates `uv`, clipped to the painter's clip rectangle, as `how` says.
    pub fn draw(&self, painter: &Painter, view: &wgpu::TextureView, rect: Rect, uv: Rect, how: DrawHow) {
        let DrawHow { nearest, checker, gray } = how;
        let clip = painter.clip_rect().intersect(rect);
        if !clip.is_positive() {
            return;
        }
        let ctx = painter.ctx();
        let (screen, ppp) = (ctx.content_rect(), ctx.pixels_per_point());
        let ndc = |p: egui::Pos2| {
            [
                (p.x - screen.min.x) / screen.width() * 2.0 - 1.0,
                1.0 - (p.y - screen.min.y) / screen.height() * 2.0,
            ]
        };
        let ([x0, y0], [x1, y1]) = (ndc(rect.min), ndc(rect.max));
        let params = DrawParams {
            rect: [x0, y0, x1, y1],
            uv: [uv.min.x, uv.min.y, uv.max.x, uv.max.y],
            checker_side: CHECKER_SIDE * ppp,
            checker: if checker { 1.0 } else { 0.0 },
            gray: if gray { 1.0 } else { 0.0 },
            pad: 0.0,
        };
        let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("image draw"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("image draw"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(view) },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(if nearest {
                        &self.nearest
                    } else {
                        &self.linear
                    }),
                },
            ],
        });
        painter.add(egui_wgpu::Callback::new_paint_callback(clip, Quad { group }));
    }
}

/// One quad to draw in egui's render pass.
struct Quad {
    group: wgpu::BindGroup,
}

impl CallbackTrait for Quad {
    fn paint(
        &self,
        info: egui::PaintCallbackInfo,
        render_pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        let Some(painter) = resources.get::<Arc<ImagePainter>>() else { return };
        // The quad is placed in whole-screen coordinates; egui's scissor does the clipping.
        let [w, h] = info.screen_size_px;
        render_pass.set_viewport(0.0, 0.0, w as f32, h as f32, 0.0, 1.0);
        render_pass.set_pipeline(&painter.pipeline);
        render_pass.set_bind_group(0, &self.group, &[]);
        render_pass.draw(0..4, 0..1);
    }
}
