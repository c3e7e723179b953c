//! Showing a GPU result without reading it back. The converter's hook copies each finished
//! chunk's output words into a store that stays on the GPU ([`GpuTiles::store_chunk`], one
//! buffer per band of output); after the last chunk `shaders/display.wgsl` draws from it a
//! downsampled preview level (with mipmaps) for fit-to-window views, and later full-resolution
//! tiles only for what is zoomed in. The GUI draws these `rgba8unorm` textures (premultiplied
//! alpha) in its render pass.
//!
//! The preview is drawn in bounded submissions, at most two in flight, so a renderer sharing the
//! queue keeps its frame rate. Each preview pixel averages its box of source pixels (at most 8 x 8
//! samples); a box that straddles the edge between two bands of output (images larger than one
//! storage binding) averages the rows of the first band only.

mod passes;

use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

use image::DynamicImage;

pub(crate) use passes::DisplayPipeline;

use super::{GpuContext, GpuError};
use crate::gpu::plan::bands::band_sizes;
use crate::pixel::Kernel;

/// One texture of a displayed image: the preview level or a full-resolution tile.
pub struct GpuTile {
    /// Left edge in image pixels.
    pub x0: u32,
    /// Top edge in image pixels.
    pub y0: u32,
    /// Width in texture pixels.
    pub width: u32,
    /// Height in texture pixels.
    pub height: u32,
    /// The texture (`Rgba8Unorm`, premultiplied alpha; sampled, storage-written, copied to and
    /// from).
    pub texture: wgpu::Texture,
    /// A view of all its mip levels.
    pub view: wgpu::TextureView,
}

/// One band of output kept on the GPU.
struct StoredBand {
    row0: u32,
    rows: u32,
    layout: u32,
    buffer: wgpu::Buffer,
    bytes: u64,
}

/// The kernel's output for one band, as the converter hands it to the display hook.
#[derive(Clone, Copy)]
pub(crate) struct BandOutput<'a> {
    /// The band's output buffer (packed gray words from its first row on).
    pub buffer: &'a wgpu::Buffer,
    /// The kernel that wrote it (its pixel layout).
    pub kernel: Kernel,
    /// The image row the band starts at.
    pub band_row0: u32,
    /// Image rows per band (the last band may have fewer).
    pub rows_per_band: u32,
}

/// A GPU result prepared for display: the preview level, and the output kept on the GPU band by
/// band for full-resolution tiles. Made by [`super::GpuConverter::create_display`]; it keeps the
/// device and the display pipeline alive for as long as it is shown.
pub struct GpuTiles {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The downsampled level (with a full mip chain), drawn after the last chunk.
    pub preview: GpuTile,
    ctx: Arc<GpuContext>,
    pipeline: Arc<DisplayPipeline>,
    /// Largest band kept in one buffer (one storage binding).
    band_limit_bytes: u64,
    store: Mutex<Vec<StoredBand>>,
}

/// Mip levels of a full chain down to 1x1.
fn mip_levels(width: u32, height: u32) -> u32 {
    32 - width.max(height).max(1).leading_zeros()
}

/// The layout code of `display.wgsl` for a gray host image: bytes per pixel, 16-bit as 3 and 4.
fn layout_of(image: &DynamicImage) -> Option<u32> {
    match image {
        DynamicImage::ImageLuma8(_) => Some(1),
        DynamicImage::ImageLumaA8(_) => Some(2),
        DynamicImage::ImageLuma16(_) => Some(3),
        DynamicImage::ImageLumaA16(_) => Some(4),
        _ => None,
    }
}

/// The layout code of a kernel's output.
fn layout_of_kernel(kernel: Kernel) -> u32 {
    match kernel {
        Kernel::Rgb8ToL8 | Kernel::Rgba8ToL8 => 1,
        Kernel::Rgba8ToLa8 => 2,
        Kernel::Rgb16ToL16 | Kernel::Rgba16ToL16 => 3,
        Kernel::Rgba16ToLa16 => 4,
    }
}

/// `f` inside an error scope of `filter`: what the scope caught, else `f`'s value.
fn in_scope<T>(ctx: &GpuContext, filter: wgpu::ErrorFilter, f: impl FnOnce() -> T) -> Result<T, GpuError> {
    let scope = ctx.device().push_error_scope(filter);
    let value = f();
    pollster::block_on(scope.pop()).map_or(Ok(value), |e| Err(e.into()))
}

/// A texture for display (sampled, storage-written, copied to and from).
pub(crate) fn display_texture(ctx: &GpuContext, width: u32, height: u32, mip_levels: u32) -> GpuTile {
    let texture = ctx.device().create_texture(&wgpu::TextureDescriptor {
        label: Some("display"),
        size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        mip_level_count: mip_levels,
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
    GpuTile { x0: 0, y0: 0, width, height, texture, view }
}

impl GpuTiles {
    /// Prepares the display of a `width` x `height` result with a `preview` (width, height) level
    /// and its mipmaps.
    pub(crate) fn new(
        ctx: Arc<GpuContext>,
        pipeline: Arc<DisplayPipeline>,
        (width, height): (u32, u32),
        preview: (u32, u32),
        band_limit_bytes: u64,
    ) -> Result<Self, GpuError> {
        let (pw, ph) = (preview.0.max(1), preview.1.max(1));
        let preview = in_scope(&ctx, wgpu::ErrorFilter::OutOfMemory, || {
            display_texture(&ctx, pw, ph, mip_levels(pw, ph))
        })?;
        Ok(Self { width, height, preview, ctx, pipeline, band_limit_bytes, store: Mutex::default() })
    }

    /// Stores a gray image from the host (L8, LA8, L16 or LA16) for display, as a conversion's
    /// output would be (in bands that fit one storage binding); other pixel types are shown as
    /// 8-bit gray. Draw the preview afterwards with [`Self::draw_preview`].
    pub fn write_host(&self, image: &DynamicImage) {
        let (layout, bytes) = match layout_of(image) {
            Some(layout) => (layout, std::borrow::Cow::Borrowed(image.as_bytes())),
            None => (1, std::borrow::Cow::Owned(image.to_luma8().into_raw())),
        };
        let row_bytes = (bytes.len() / self.height.max(1) as usize).max(1);
        let rows_per_band = (self.band_limit_bytes as usize / row_bytes).saturating_sub(1).max(1);
        let mut store = Vec::new();
        for (i, chunk) in bytes.chunks(rows_per_band * row_bytes).enumerate() {
            let mut padded = chunk.to_vec();
            padded.resize(padded.len().next_multiple_of(4).max(4), 0);
            let buffer = self.ctx.buffer_with("display store", &padded, wgpu::BufferUsages::STORAGE);
            let row0 = (i * rows_per_band) as u32;
            let band_rows = (chunk.len() / row_bytes) as u32;
            store.push(StoredBand { row0, rows: band_rows, layout, bytes: padded.len() as u64, buffer });
        }
        *self.store.lock().unwrap_or_else(PoisonError::into_inner) = store;
    }

    /// The converter's hook: records a copy of one finished chunk's output `words` (band-relative)
    /// from `band`'s output buffer into the store, at the same place in the band's stored copy
    /// (allocated with the band's first chunk).
    pub(crate) fn store_chunk(
        &self,
        enc: &mut wgpu::CommandEncoder,
        band: &BandOutput<'_>,
        words: Range<u64>,
    ) {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        if !store.iter().any(|b| b.row0 == band.band_row0) {
            let rows = band.rows_per_band.min(self.height.saturating_sub(band.band_row0));
            let (_, _, bytes) = band_sizes(band.kernel, u64::from(rows) * u64::from(self.width));
            let bytes = bytes.max(4);
            let buffer = self.ctx.buffer(
                "display store",
                bytes,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            );
            let layout = layout_of_kernel(band.kernel);
            store.push(StoredBand { row0: band.band_row0, rows, layout, buffer, bytes });
        }
        let Some(stored) = store.iter().find(|b| b.row0 == band.band_row0) else { return };
        let offset = words.start * 4;
        let bytes = ((words.end - words.start) * 4)
            .min(stored.bytes.saturating_sub(offset))
            .min(band.buffer.size().saturating_sub(offset));
        if bytes > 0 {
            enc.copy_buffer_to_buffer(band.buffer, offset, &stored.buffer, offset, bytes);
        }
    }

    /// Draws the preview level and its mipmaps from the stored output, in submissions of bounded
    /// size with at most two in flight, so that other work on the queue (the renderer's frames)
    /// never waits long behind it. `cancel` is checked between submissions.
    pub fn draw_preview(&self, cancel: Option<&AtomicBool>) -> Result<(), GpuError> {
        in_scope(&self.ctx, wgpu::ErrorFilter::Validation, || {
            self.pipeline.draw_preview(&self.ctx, self, cancel)
        })?
    }

    /// A full-resolution tile of the stored output: image pixels `x0..x0 + width`,
    /// `y0..y0 + height` (submitted, not waited for).
    pub fn detail_tile(&self, x0: u32, y0: u32, width: u32, height: u32) -> Result<GpuTile, GpuError> {
        in_scope(&self.ctx, wgpu::ErrorFilter::Validation, || {
            self.pipeline.detail_tile(&self.ctx, self, (x0, y0), (width, height))
        })
    }

    /// Bands of output stored (more than one for images larger than one storage binding).
    #[must_use]
    pub fn stored_bands(&self) -> usize {
        self.store.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests;
