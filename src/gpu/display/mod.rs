//! Showing a GPU result without reading it back: each band of output is copied into a store that
//! stays on the GPU, then `shaders/display.wgsl` draws from it a downsampled preview level (with
//! mipmaps) for fit-to-window views, and full-resolution tiles only for what is zoomed in. The
//! GUI draws these `rgba8unorm` textures (premultiplied alpha) in its render pass.
//!
//! The preview is drawn in bounded submissions, at most two in flight, so a renderer sharing the
//! queue keeps its frame rate. Each preview pixel averages its box of source pixels (at most 8 x 8
//! samples); a box that straddles the edge between two bands of output (images larger than one
//! storage binding) averages the rows of the first band only. Errors are caught with error scopes
//! around this work only. Depends on nothing in graylab but the shaders.

mod passes;
use std::sync::{Mutex, PoisonError};

use image::DynamicImage;
use wgpu::util::DeviceExt as _;

pub(crate) use passes::DisplayPipeline;

use super::{GpuContext, GpuError};

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
    /// The texture (`Rgba8Unorm`, premultiplied alpha).
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

/// A GPU result prepared for display: the preview level, and the output kept on the GPU band by
/// band for full-resolution tiles.
pub struct GpuTiles {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The downsampled level (with a full mip chain), drawn by [`GpuContext::finish_display`].
    pub preview: GpuTile,
    store: Mutex<Vec<StoredBand>>,
}

/// Mip levels of a full chain down to 1x1.
fn mip_levels(width: u32, height: u32) -> u32 {
    32 - width.max(height).max(1).leading_zeros()
}

/// The layout code of `display.wgsl` for a gray image: bytes per pixel, 16-bit as 3 and 4.
fn layout_of(image: &DynamicImage) -> Option<u32> {
    match image {
        DynamicImage::ImageLuma8(_) => Some(1),
        DynamicImage::ImageLumaA8(_) => Some(2),
        DynamicImage::ImageLuma16(_) => Some(3),
        DynamicImage::ImageLumaA16(_) => Some(4),
        _ => None,
    }
}

impl GpuContext {
    /// A texture for display (sampled, storage-written, copied to and from).
    pub fn create_display_texture(&self, width: u32, height: u32, mip_levels: u32) -> GpuTile {
        let texture = self.device.create_texture(&wgpu::TextureDescriptor {
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

    /// Prepares the display of a `width` x `height` GPU result with a `preview` (width, height)
    /// level and its mipmaps.
    pub fn create_display(&self, width: u32, height: u32, preview: (u32, u32)) -> Result<GpuTiles, GpuError> {
        let (pw, ph) = (preview.0.max(1), preview.1.max(1));
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let preview = self.create_display_texture(pw, ph, mip_levels(pw, ph));
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::OutOfMemory(e.to_string()));
        }
        Ok(GpuTiles { width, height, preview, store: Mutex::default() })
    }

    /// Stores a gray image from the host (L8, LA8, L16 or LA16) for display, as a conversion's
    /// output would be (in bands that fit one storage binding); other pixel types are shown as
    /// 8-bit gray.
    pub fn write_tiles(&self, tiles: &GpuTiles, image: &DynamicImage) {
        let (layout, bytes) = match layout_of(image) {
            Some(layout) => (layout, std::borrow::Cow::Borrowed(image.as_bytes())),
            None => (1, std::borrow::Cow::Owned(image.to_luma8().into_raw())),
        };
        let row_bytes = (bytes.len() / tiles.height.max(1) as usize).max(1);
        let limit = self.band_limit_bytes().min(self.limits().max_storage_buffer_binding_size);
        let rows_per_band = (limit as usize / row_bytes).saturating_sub(1).max(1);
        let mut store = Vec::new();
        for (i, chunk) in bytes.chunks(rows_per_band * row_bytes).enumerate() {
            let mut padded = chunk.to_vec();
            padded.resize(padded.len().next_multiple_of(4).max(4), 0);
            let buffer = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("display store"),
                contents: &padded,
                usage: wgpu::BufferUsages::STORAGE,
            });
            let row0 = (i * rows_per_band) as u32;
            let band_rows = (chunk.len() / row_bytes) as u32;
            store.push(StoredBand { row0, rows: band_rows, layout, bytes: padded.len() as u64, buffer });
        }
        *tiles.store.lock().unwrap_or_else(PoisonError::into_inner) = store;
    }

    /// Records a copy of one band's output (image rows `rows`, `out_bytes` bytes in `output`) into
    /// the display store, for [`Self::finish_display`] and full-resolution tiles.
    pub(crate) fn encode_display(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        tiles: &GpuTiles,
        output: &wgpu::Buffer,
        out_bytes: u64,
        layout: u32,
        rows: std::ops::Range<u32>,
    ) {
        let bytes = out_bytes.next_multiple_of(4).max(4);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("display store"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(output, 0, &buffer, 0, out_bytes.min(output.size()));
        let band = StoredBand { row0: rows.start, rows: rows.end - rows.start, layout, buffer, bytes };
        tiles.store.lock().unwrap_or_else(PoisonError::into_inner).push(band);
    }
}

#[cfg(test)]
mod tests;
