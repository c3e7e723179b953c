//! Images on screen at the resolution they are seen: a downsampled preview level with mipmaps
//! (from host pixels, made on the worker; or drawn on the GPU from a GPU result) for
//! fit-to-window views, and full-resolution tiles made only for what is visible when zoomed in,
//! kept in a small LRU cache. No image pushes its full size through the render queue up front.

mod cache;
mod pixels;

use std::sync::{Arc, Mutex, PoisonError};

use eframe::egui_wgpu::RenderState;
use egui::{Color32, Painter, Pos2, Rect, TextureId, pos2, vec2};
use image::DynamicImage;

pub use cache::TileBudget;
use cache::TileCache;
pub use pixels::{RgbaLevel, preview_levels, preview_size};

use crate::engine::GpuContext;
use crate::gpu::GpuTiles;

/// Default longest side of the preview level, in pixels.
pub const PREVIEW_MAX_SIDE: u32 = 2048;

/// Where an image's full-resolution pixels come from.
enum Source {
    /// Host pixels.
    Host(Arc<DynamicImage>),
    /// A GPU result kept on the GPU.
    Gpu { gpu: Arc<GpuContext>, tiles: Arc<GpuTiles> },
}

/// A texture registered with egui twice: linear (with mipmaps) and nearest-neighbour sampling.
struct Registered {
    linear: TextureId,
    nearest: TextureId,
    /// Keeps the texture alive (host images; GPU results keep theirs in `GpuTiles`).
    _texture: Option<wgpu::Texture>,
}

/// An image ready to draw, any size.
pub struct DisplayImage {
    /// Width and height in pixels.
    pub size: [u32; 2],
    /// Whether it has an alpha channel (drawn over a checkerboard).
    pub has_alpha: bool,
    preview: Registered,
    preview_size: [u32; 2],
    source: Source,
    cache: Mutex<TileCache>,
    render_state: RenderState,
}

/// How image pixels map to the screen: `screen = pane_center + (image - center) * zoom`.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The pane's centre on screen.
    pub pane_center: Pos2,
    /// The image point at the pane's centre.
    pub center: Pos2,
    /// Screen points per image pixel.
    pub zoom: f32,
    /// Physical pixels per screen point.
    pub pixels_per_point: f32,
}

impl Placement {
    /// The screen rectangle of an image rectangle.
    #[must_use]
    pub fn to_screen(self, image: Rect) -> Rect {
        Rect::from_min_size(
            self.pane_center + (image.min - self.center) * self.zoom,
            image.size() * self.zoom,
        )
    }

    /// The image point under a screen point.
    #[must_use]
    pub fn to_image(self, screen: Pos2) -> Pos2 {
        self.center + (screen - self.pane_center) / self.zoom
    }
}

fn register(render_state: &RenderState, view: &wgpu::TextureView) -> (TextureId, TextureId) {
    let sampler = |filter| wgpu::SamplerDescriptor {
        label: Some("graylab image"),
        mag_filter: filter,
        min_filter: wgpu::FilterMode::Linear,
        mipmap_filter: wgpu::MipmapFilterMode::Linear,
        ..Default::default()
    };
    let mut renderer = render_state.renderer.write();
    let device = &render_state.device;
    (
        renderer.register_native_texture_with_sampler_options(
            device,
            view,
            sampler(wgpu::FilterMode::Linear),
        ),
        renderer.register_native_texture_with_sampler_options(
            device,
            view,
            sampler(wgpu::FilterMode::Nearest),
        ),
    )
}

/// A texture holding `levels` (premultiplied RGBA8, largest first).
fn upload(render_state: &RenderState, levels: &[RgbaLevel]) -> Option<wgpu::Texture> {
    let first = levels.first()?;
    let texture = render_state.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("graylab image"),
        size: wgpu::Extent3d { width: first.width, height: first.height, depth_or_array_layers: 1 },
        mip_level_count: levels.len() as u32,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (mip, level) in levels.iter().enumerate() {
        render_state.queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: mip as u32,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            &level.rgba,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(4 * level.width),
                rows_per_image: Some(level.height),
            },
            wgpu::Extent3d { width: level.width, height: level.height, depth_or_array_layers: 1 },
        );
    }
    Some(texture)
}

impl DisplayImage {
    /// An image from host pixels and its preview `levels` (see [`preview_levels`]).
    pub fn from_host(
        render_state: &RenderState,
        image: Arc<DynamicImage>,
        levels: &[RgbaLevel],
    ) -> Option<Self> {
        let texture = upload(render_state, levels)?;
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let (linear, nearest) = register(render_state, &view);
        let first = levels.first()?;
        Some(Self {
            size: [image.width(), image.height()],
            has_alpha: pixels::has_alpha(&image),
            preview: Registered { linear, nearest, _texture: Some(texture) },
            preview_size: [first.width, first.height],
            source: Source::Host(image),
            cache: Mutex::default(),
            render_state: render_state.clone(),
        })
    }

    /// A GPU result whose preview [`GpuContext::finish_display`] has drawn.
    pub fn from_gpu(
        render_state: &RenderState,
        gpu: Arc<GpuContext>,
        tiles: GpuTiles,
        has_alpha: bool,
    ) -> Self {
        let (linear, nearest) = register(render_state, &tiles.preview.view);
        Self {
            size: [tiles.width, tiles.height],
            has_alpha,
            preview: Registered { linear, nearest, _texture: None },
            preview_size: [tiles.preview.width, tiles.preview.height],
            source: Source::Gpu { gpu, tiles: Arc::new(tiles) },
            cache: Mutex::default(),
            render_state: render_state.clone(),
        }
    }

    /// Full-resolution tiles currently on the GPU for this image.
    #[must_use]
    pub fn detail_tiles(&self) -> usize {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Draws the part of the image inside the painter's clip rectangle: the preview where it is
    /// sharp enough, else full-resolution tiles (made as the budget allows; the preview stands
    /// in for missing ones).
    pub fn paint(&self, painter: &Painter, place: &Placement, budget: &mut TileBudget) {
        let full = Rect::from_min_size(Pos2::ZERO, vec2(self.size[0] as f32, self.size[1] as f32));
        let clip = painter.clip_rect().intersect(place.to_screen(full));
        if !clip.is_positive() {
            return;
        }
        let screen_px_per_image_px = place.zoom * place.pixels_per_point;
        let preview_scale = self.preview_size[0] as f32 / self.size[0] as f32;
        let nearest = screen_px_per_image_px >= 2.0;
        let pick = |r: &Registered| if nearest { r.nearest } else { r.linear };
        if screen_px_per_image_px <= preview_scale * 1.01 {
            painter.image(pick(&self.preview), place.to_screen(full), unit_uv(), Color32::WHITE);
            return;
        }
        let visible = Rect::from_min_max(place.to_image(clip.min), place.to_image(clip.max)).intersect(full);
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.next_frame();
        for cell in cache::cells(visible, self.size) {
            let rect = cell.rect().intersect(full);
            let id = cache.get(cell).map(|t| if nearest { t.nearest } else { t.linear }).or_else(|| {
                let made = budget.take().then(|| self.make_tile(cell))??;
                let ids = if nearest { made.nearest } else { made.linear };
                cache.insert(cell, made);
                Some(ids)
            });
            if let Some(id) = id {
                painter.image(id, place.to_screen(rect), unit_uv(), Color32::WHITE);
            } else {
                let uv = Rect::from_min_max(
                    pos2(rect.min.x / full.width(), rect.min.y / full.height()),
                    pos2(rect.max.x / full.width(), rect.max.y / full.height()),
                );
                painter.image(pick(&self.preview), place.to_screen(rect), uv, Color32::WHITE);
            }
        }
        cache.evict(&self.render_state);
    }

    fn make_tile(&self, cell: cache::Cell) -> Option<cache::Tile> {
        let [x0, y0, w, h] = cell.pixels(self.size);
        let (texture, view) = match &self.source {
            Source::Host(image) => {
                let level = RgbaLevel { width: w, height: h, rgba: pixels::tile_rgba(image, x0, y0, w, h) };
                let texture = upload(&self.render_state, std::slice::from_ref(&level))?;
                let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
                (texture, view)
            }
            Source::Gpu { gpu, tiles } => {
                let tile = gpu.detail_tile(tiles, x0, y0, w, h).ok()?;
                (tile.texture, tile.view)
            }
        };
        let (linear, nearest) = register(&self.render_state, &view);
        Some(cache::Tile { linear, nearest, _texture: texture, used: 0 })
    }
}

fn unit_uv() -> Rect {
    Rect::from_min_max(Pos2::ZERO, pos2(1.0, 1.0))
}

impl Drop for DisplayImage {
    fn drop(&mut self) {
        let mut renderer = self.render_state.renderer.write();
        renderer.free_texture(&self.preview.linear);
        renderer.free_texture(&self.preview.nearest);
        drop(renderer);
        self.cache.lock().unwrap_or_else(PoisonError::into_inner).clear(&self.render_state);
    }
}
