//! The display passes: the pipelines of `shaders/display.wgsl` (one per entry point and output
//! layout), the preview with its mipmaps in bounded submissions, and full-resolution tiles.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{GpuContext, GpuError, GpuTile, GpuTiles, display_texture};
use crate::gpu::device::context::sized;
use crate::gpu::device::wait::wait_for;

/// Source samples per preview submission on a software adapter: about 5 ms of lavapipe on two
/// cores, so a renderer sharing the queue waits at most that long behind one.
const SOFTWARE_SAMPLES_PER_SUBMISSION: u64 = 600_000;

/// The same on a GPU: a whole 16K preview (well under a millisecond).
const GPU_SAMPLES_PER_SUBMISSION: u64 = 64 << 20;

/// The display shader's pipelines, one per entry point and output layout, built on first use.
/// The converter builds it once; every [`GpuTiles`] keeps a handle to it.
pub(crate) struct DisplayPipeline {
    module: wgpu::ShaderModule,
    pipelines: Mutex<HashMap<(&'static str, u32), wgpu::ComputePipeline>>,
}

/// `struct ExpandParams` of `shaders/display.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ExpandParams {
    width: u32,
    band_row0: u32,
    x0: u32,
    y0: u32,
    w: u32,
    h: u32,
    tile_x0: u32,
    tile_y0: u32,
}

/// `struct PreviewParams` of `shaders/display.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PreviewParams {
    width: u32,
    height: u32,
    band_row0: u32,
    band_rows: u32,
    preview_w: u32,
    preview_h: u32,
    first_row: u32,
    rows: u32,
}

fn texture(view: &wgpu::TextureView) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::TextureView(view)
}

impl DisplayPipeline {
    /// Compiles the display shader (pipelines come on first use).
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        Self { module: ctx.shader("display.wgsl", crate::shaders::DISPLAY_WGSL), pipelines: Mutex::default() }
    }

    /// The pipeline of `entry` for output `layout` (1..=4), compiled on first use.
    fn pipeline(&self, ctx: &GpuContext, entry: &'static str, layout: u32) -> wgpu::ComputePipeline {
        let mut cache = self.pipelines.lock().unwrap_or_else(PoisonError::into_inner);
        cache
            .entry((entry, layout))
            .or_insert_with(|| {
                let constants = [("OUT_LAYOUT", f64::from(layout))];
                let options =
                    wgpu::PipelineCompilationOptions { constants: &constants, ..Default::default() };
                ctx.pipeline(entry, None, &self.module, entry, options)
            })
            .clone()
    }

    /// Draws the preview level and its mipmaps from `tiles`' store (see [`GpuTiles::draw_preview`]).
    pub(crate) fn draw_preview(
        &self,
        ctx: &GpuContext,
        tiles: &GpuTiles,
        cancel: Option<&AtomicBool>,
    ) -> Result<(), GpuError> {
        let store = tiles.store.lock().unwrap_or_else(PoisonError::into_inner);
        let (pw, ph) = (tiles.preview.width, tiles.preview.height);
        let level = |l: u32| {
            tiles.preview.texture.create_view(&wgpu::TextureViewDescriptor {
                base_mip_level: l,
                mip_level_count: Some(1),
                ..Default::default()
            })
        };
        let level0 = level(0);
        // Source samples per preview row, at most 8 x 8 per preview pixel.
        let taps = |side: u32, preview: u32| u64::from(side.div_ceil(preview).clamp(1, 8));
        let per_row = u64::from(pw) * taps(tiles.width, pw) * taps(tiles.height, ph);
        let budget =
            if ctx.is_software() { SOFTWARE_SAMPLES_PER_SUBMISSION } else { GPU_SAMPLES_PER_SUBMISSION };
        let rows_per_submission = (budget / per_row.max(1)).clamp(1, u64::from(ph)) as u32;
        let mut in_flight = VecDeque::new();
        // The first preview row whose box starts at or below image row `row`.
        let first_row = |row: u32| (u64::from(row) * u64::from(ph)).div_ceil(u64::from(tiles.height)) as u32;
        for band in store.iter() {
            let pipeline = self.pipeline(ctx, "preview", band.layout);
            let (start, end) = (first_row(band.row0), first_row(band.row0 + band.rows).min(ph));
            for chunk in (start..end).step_by(rows_per_submission as usize) {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    if let Some(last) = in_flight.pop_back() {
                        wait_for(ctx.device(), Some(&last))?;
                    }
                    return Err(GpuError::Cancelled);
                }
                let rows = rows_per_submission.min(end - chunk);
                let params = PreviewParams {
                    width: tiles.width,
                    height: tiles.height,
                    band_row0: band.row0,
                    band_rows: band.rows,
                    preview_w: pw,
                    preview_h: ph,
                    first_row: chunk,
                    rows,
                };
                let uniform = uniform(ctx, bytemuck::bytes_of(&params));
                let mut encoder = ctx.encoder("display preview");
                let entries = [
                    wgpu::BindGroupEntry { binding: 0, resource: sized(&band.buffer, band.bytes) },
                    wgpu::BindGroupEntry { binding: 2, resource: texture(&level0) },
                    wgpu::BindGroupEntry { binding: 3, resource: uniform.as_entire_binding() },
                ];
                dispatch(ctx, &mut encoder, &pipeline, &entries, (pw, rows));
                if in_flight.len() >= 2
                    && let Some(oldest) = in_flight.pop_front()
                {
                    wait_for(ctx.device(), Some(&oldest))?;
                }
                in_flight.push_back(ctx.queue().submit([encoder.finish()]));
            }
        }
        let mip = self.pipeline(ctx, "mip", 1);
        let mut encoder = ctx.encoder("display mips");
        for l in 1..tiles.preview.texture.mip_level_count() {
            let (src, dst) = (level(l - 1), level(l));
            let entries = [
                wgpu::BindGroupEntry { binding: 4, resource: texture(&src) },
                wgpu::BindGroupEntry { binding: 5, resource: texture(&dst) },
            ];
            dispatch(ctx, &mut encoder, &mip, &entries, ((pw >> l).max(1), (ph >> l).max(1)));
        }
        ctx.submit_and_wait(encoder).map(drop)
    }

    /// A full-resolution tile of `tiles`' store at `origin`, `size` pixels (submitted, not
    /// waited for).
    pub(crate) fn detail_tile(
        &self,
        ctx: &GpuContext,
        tiles: &GpuTiles,
        (x0, y0): (u32, u32),
        (width, height): (u32, u32),
    ) -> GpuTile {
        let mut tile = display_texture(ctx, width, height, 1);
        (tile.x0, tile.y0) = (x0, y0);
        let mut encoder = ctx.encoder("display tile");
        for band in tiles.store.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            let (top, bottom) = (y0.max(band.row0), (y0 + height).min(band.row0 + band.rows));
            if top >= bottom {
                continue;
            }
            let params = ExpandParams {
                width: tiles.width,
                band_row0: band.row0,
                x0,
                y0: top,
                w: width,
                h: bottom - top,
                tile_x0: x0,
                tile_y0: y0,
            };
            let uniform = uniform(ctx, bytemuck::bytes_of(&params));
            let entries = [
                wgpu::BindGroupEntry { binding: 0, resource: sized(&band.buffer, band.bytes) },
                wgpu::BindGroupEntry { binding: 1, resource: uniform.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: texture(&tile.view) },
            ];
            let expand = self.pipeline(ctx, "expand", band.layout);
            dispatch(ctx, &mut encoder, &expand, &entries, (width, bottom - top));
        }
        ctx.queue().submit([encoder.finish()]);
        tile
    }
}

/// Records one dispatch of 16 x 16 workgroups covering `size` invocations.
fn dispatch(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    entries: &[wgpu::BindGroupEntry<'_>],
    size: (u32, u32),
) {
    let group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("display"),
        layout: &pipeline.get_bind_group_layout(0),
        entries,
    });
    let mut pass = encoder
        .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("display"), timestamp_writes: None });
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, &group, &[]);
    pass.dispatch_workgroups(size.0.div_ceil(16), size.1.div_ceil(16), 1);
}

fn uniform(ctx: &GpuContext, contents: &[u8]) -> wgpu::Buffer {
    ctx.buffer_with("display params", contents, wgpu::BufferUsages::UNIFORM)
}
