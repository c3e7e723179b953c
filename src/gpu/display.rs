//! Display tiles: `rgba8unorm` textures covering an image in pieces no larger than the device's
//! texture limit, filled either from host pixels or, for a GPU result, by a compute pass straight
//! from the output buffer (no readback). The GUI registers them with its renderer.
//!
//! The converter's hook: for each finished chunk it calls [`DisplayPipeline::encode`] with the
//! band's output buffer and the chunk's rows.

use image::DynamicImage;
use wgpu::util::DeviceExt as _;

use super::pipelines::sized;
use super::{GpuContext, GpuError};
use crate::pixel::Kernel;

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
    /// The texture (`Rgba8Unorm`; sampled, storage-written, copy destination and source).
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

/// The display pipeline (the converter builds it on first use and keeps it).
pub(crate) struct DisplayPipeline {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

/// The kernel's output for one band, as the display passes read it.
#[derive(Clone, Copy)]
pub(crate) struct BandOutput<'a> {
    /// The output buffer (packed gray words).
    pub buffer: &'a wgpu::Buffer,
    /// Bytes of it that may be read.
    pub bytes: u64,
    /// The kernel that wrote it (its pixel layout).
    pub kernel: Kernel,
    /// The image row its first word starts.
    pub band_row0: u32,
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
        let scope = self.device().push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let mut tiles = Vec::new();
        for y0 in (0..height).step_by(side as usize) {
            for x0 in (0..width).step_by(side as usize) {
                let (w, h) = ((width - x0).min(side), (height - y0).min(side));
                let texture = self.device().create_texture(&wgpu::TextureDescriptor {
                    label: Some("display tile"),
                    size: wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format: wgpu::TextureFormat::Rgba8Unorm,
                    usage: wgpu::TextureUsages::TEXTURE_BINDING
                        | wgpu::TextureUsages::STORAGE_BINDING
                        | wgpu::TextureUsages::COPY_DST
                        | wgpu::TextureUsages::COPY_SRC,
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
            self.queue().write_texture(
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
        self.queue().submit([]);
    }
}

impl DisplayPipeline {
    /// Compiles the display shader.
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        let device = ctx.device();
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
        let buffer = |ty| wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None };
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
    }

    /// Records passes that draw image rows `rows` of `band`'s output into every tile they touch.
    pub(crate) fn encode(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        tiles: &GpuTiles,
        band: &BandOutput<'_>,
        rows: std::ops::Range<u32>,
    ) {
        let display = self;
        let BandOutput { buffer: output, bytes: out_bytes, kernel, band_row0 } = *band;
        let layout = match kernel {
            Kernel::Rgb8ToL8 | Kernel::Rgba8ToL8 => 1,
            Kernel::Rgba8ToLa8 => 2,
            Kernel::Rgb16ToL16 | Kernel::Rgba16ToL16 => 3,
            Kernel::Rgba16ToLa16 => 4,
        };
        for t in &tiles.tiles {
            let (top, bottom) = (rows.start.max(t.y0), rows.end.min(t.y0 + t.height));
            if top >= bottom {
                continue;
            }
            let params = ExpandParams {
                width: tiles.width,
                band_row0,
                x0: t.x0,
                y0: top,
                w: t.width,
                h: bottom - top,
                tile_x0: t.x0,
                tile_y0: t.y0,
                layout,
                pad: [0; 3],
            };
            let uniform = ctx.device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("display params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("display"),
                layout: &display.layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: sized(output, out_bytes) },
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
