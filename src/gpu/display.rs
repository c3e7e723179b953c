//! Display tiles: `rgba8unorm` textures covering an image in pieces no larger than the device's
//! texture limit, filled either from host pixels or, for a GPU result, by a compute pass straight
//! from the output buffer (no readback). The GUI registers them with its renderer.

use image::DynamicImage;
use wgpu::util::DeviceExt as _;

use super::{GpuContext, GpuError};

/// One texture of a tiled image.
pub struct GpuTile {
    /// Left edge in image pixels.
    pub x0: u32,
    /// Top edge in image pixels.
    pub y0: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The texture (`Rgba8Unorm`; sampled, storage-written, copy destination).
    pub texture: wgpu::Texture,
    /// A view of the whole texture.
    pub view: wgpu::TextureView,
}

/// An image as a grid of textures.
pub struct GpuTiles {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The tiles, row by row.
    pub tiles: Vec<GpuTile>,
}

/// The display pipeline, built on first use.
pub(crate) struct DisplayPipeline {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

/// `struct Params` of `shaders/display.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct ExpandParams {
    pub width: u32,
    pub band_row0: u32,
    pub x0: u32,
    pub y0: u32,
    pub w: u32,
    pub h: u32,
    pub tile_x0: u32,
    pub tile_y0: u32,
    pub layout: u32,
    pub pad: [u32; 3],
}

impl GpuContext {
    /// Allocates textures covering a `width` x `height` image, each at most the device's texture
    /// side (so any size can be shown).
    pub fn create_tiles(&self, width: u32, height: u32) -> Result<GpuTiles, GpuError> {
        let side = self.limits().max_texture_dimension_2d.max(1);
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let mut tiles = Vec::new();
        for y0 in (0..height).step_by(side as usize) {
            for x0 in (0..width).step_by(side as usize) {
                let (w, h) = ((width - x0).min(side), (height - y0).min(side));
                let texture = self.device.create_texture(&wgpu::TextureDescriptor {
                    label: Some("display tile"),
                    size: wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format: wgpu::TextureFormat::Rgba8Unorm,
                    usage: wgpu::TextureUsages::TEXTURE_BINDING
                        | wgpu::TextureUsages::STORAGE_BINDING
                        | wgpu::TextureUsages::COPY_DST,
                    view_formats: &[],
                });
                let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
                tiles.push(GpuTile { x0, y0, width: w, height: h, texture, view });
            }
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::OutOfMemory(e.to_string()));
        }
        Ok(GpuTiles { width, height, tiles })
    }

    /// Fills the tiles from host pixels (any pixel type, shown as 8-bit RGBA).
    pub fn write_tiles(&self, tiles: &GpuTiles, image: &DynamicImage) {
        for t in &tiles.tiles {
            let rgba = image.crop_imm(t.x0, t.y0, t.width, t.height).to_rgba8();
            self.queue.write_texture(
                t.texture.as_image_copy(),
                rgba.as_raw(),
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(4 * t.width),
                    rows_per_image: Some(t.height),
                },
                wgpu::Extent3d { width: t.width, height: t.height, depth_or_array_layers: 1 },
            );
        }
        self.queue.submit([]);
    }

    pub(crate) fn display_pipeline(&self) -> &DisplayPipeline {
        self.display.get_or_init(|| {
            let device = &self.device;
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("display.wgsl"),
                source: wgpu::ShaderSource::Wgsl(crate::shaders::DISPLAY_WGSL.into()),
            });
            let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty,
                count: None,
            };
            let buffer =
                |ty| wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None };
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("display"),
                entries: &[
                    entry(0, buffer(wgpu::BufferBindingType::Storage { read_only: true })),
                    entry(1, buffer(wgpu::BufferBindingType::Uniform)),
                    entry(
                        2,
                        wgpu::BindingType::StorageTexture {
                            access: wgpu::StorageTextureAccess::WriteOnly,
                            format: wgpu::TextureFormat::Rgba8Unorm,
                            view_dimension: wgpu::TextureViewDimension::D2,
                        },
                    ),
                ],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("display"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("display expand"),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some("expand"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            });
            DisplayPipeline { layout, pipeline }
        })
    }

    /// Records passes that draw one band's output (image rows `rows`) into every tile it touches.
    pub(crate) fn encode_display(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        tiles: &GpuTiles,
        output: &wgpu::Buffer,
        out_bytes: u64,
        layout: u32,
        rows: std::ops::Range<u32>,
    ) {
        let display = self.display_pipeline();
        for t in &tiles.tiles {
            let (top, bottom) = (rows.start.max(t.y0), rows.end.min(t.y0 + t.height));
            if top >= bottom {
                continue;
            }
            let params = ExpandParams {
                width: tiles.width,
                band_row0: rows.start,
                x0: t.x0,
                y0: top,
                w: t.width,
                h: bottom - top,
                tile_x0: t.x0,
                tile_y0: t.y0,
                layout,
                pad: [0; 3],
            };
            let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("display params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("display"),
                layout: &display.layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: super::convert::sized(output, out_bytes) },
                    wgpu::BindGroupEntry { binding: 1, resource: uniform.as_entire_binding() },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: wgpu::BindingResource::TextureView(&t.view),
                    },
                ],
            });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("display expand"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&display.pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(params.w.div_ceil(16), params.h.div_ceil(16), 1);
        }
    }
}
