//! Images on screen at the resolution they are seen: a downsampled preview level with mipmaps
//! (from host pixels, made on the worker; or drawn on the GPU from a GPU result) for
//! fit-to-window views, and full-resolution tiles made only for what is visible when zoomed in,
//! kept in a small LRU cache. No image pushes its full size through the render queue up front.

mod cache;
mod paint;
mod pixels;

use std::sync::{Arc, Mutex, PoisonError};

use eframe::egui_wgpu::RenderState;
use egui::{Painter, Pos2, Rect, pos2, vec2};
use image::DynamicImage;

pub use cache::TileBudget;
use cache::TileCache;
use paint::ImagePainter;
pub use pixels::{Level, preview_levels, preview_size};

use crate::engine::GpuTiles;

/// Default longest side of the preview level, in pixels.
pub const PREVIEW_MAX_SIDE: u32 = 2048;

/// Where an image's full-resolution pixels come from.
enum Source {
    /// Host pixels.
    Host(Arc<DynamicImage>),
    /// A GPU result kept on the GPU.
    Gpu(Box<GpuTiles>),
}

/// An image ready to draw, any size.
pub struct DisplayImage {
    /// Width and height in pixels.
    pub size: [u32; 2],
    /// Whether it has an alpha channel (drawn over a checkerboard).
    pub has_alpha: bool,
    /// Whether its textures (preview and tiles) are one channel of gray (`R8Unorm`).
    gray: bool,
    /// One view per mip level of the preview, largest first: each draw samples the one level
    /// nearest the size on screen (bilinear, 4 taps; trilinear would be 8, which a software
    /// adapter pays for on every pixel).
    preview: Vec<wgpu::TextureView>,
    preview_size: [u32; 2],
    source: Source,
    cache: Mutex<TileCache>,
    render_state: RenderState,
    painter: Arc<ImagePainter>,
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

/// `rect` widened or heightened about its centre to one physical pixel where it is thinner.
fn at_least_a_pixel(rect: Rect, pixels_per_point: f32) -> Rect {
    let pixel = 1.0 / pixels_per_point.max(1e-3);
    rect.expand2(vec2((pixel - rect.width()).max(0.0) / 2.0, (pixel - rect.height()).max(0.0) / 2.0))
}

/// A texture holding `levels` (largest first): `R8Unorm` for gray levels, else premultiplied
/// `Rgba8Unorm`.
fn upload(render_state: &RenderState, levels: &[Level]) -> Option<wgpu::Texture> {
    let first = levels.first()?;
    let format = if first.gray { wgpu::TextureFormat::R8Unorm } else { wgpu::TextureFormat::Rgba8Unorm };
    let texture = render_state.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("graylab image"),
        size: wgpu::Extent3d { width: first.width, height: first.height, depth_or_array_layers: 1 },
        mip_level_count: levels.len() as u32,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
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
            &level.bytes,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(level.channels() as u32 * level.width),
                rows_per_image: Some(level.height),
            },
            wgpu::Extent3d { width: level.width, height: level.height, depth_or_array_layers: 1 },
        );
    }
    Some(texture)
}

impl DisplayImage {
    /// An image from host pixels and its preview `levels` (see [`preview_levels`]).
    pub fn from_host(render_state: &RenderState, image: Arc<DynamicImage>, levels: &[Level]) -> Option<Self> {
        let texture = upload(render_state, levels)?;
        let first = levels.first()?;
        Some(Self {
            size: [image.width(), image.height()],
            has_alpha: image.color().has_alpha(),
            gray: first.gray,
            preview: level_views(&texture),
            preview_size: [first.width, first.height],
            source: Source::Host(image),
            cache: Mutex::default(),
            render_state: render_state.clone(),
            painter: ImagePainter::of(render_state),
        })
    }

    /// A GPU result whose preview the engine has drawn.
    pub fn from_gpu(render_state: &RenderState, tiles: GpuTiles, has_alpha: bool) -> Self {
        Self {
            size: [tiles.width, tiles.height],
            has_alpha,
            gray: false,
            preview: level_views(&tiles.preview.texture),
            preview_size: [tiles.preview.width, tiles.preview.height],
            source: Source::Gpu(Box::new(tiles)),
            cache: Mutex::default(),
            render_state: render_state.clone(),
            painter: ImagePainter::of(render_state),
        }
    }

    /// Full-resolution tiles currently on the GPU for this image.
    #[must_use]
    pub fn detail_tiles(&self) -> usize {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Draws the part of the image inside the painter's clip rectangle (over a checkerboard
    /// when it has alpha): the preview where it is sharp enough, else full-resolution tiles
    /// (made as the budget allows; the preview stands in for missing ones).
    pub fn paint(&self, painter: &Painter, place: &Placement, budget: &mut TileBudget) {
        let full = Rect::from_min_size(Pos2::ZERO, vec2(self.size[0] as f32, self.size[1] as f32));
        // An image thinner than a pixel on screen (4097x1 fitted) is drawn a pixel thick, not lost.
        let shown = at_least_a_pixel(place.to_screen(full), place.pixels_per_point);
        let clip = painter.clip_rect().intersect(shown);
        if !clip.is_positive() {
            return;
        }
        let screen_px_per_image_px = place.zoom * place.pixels_per_point;
        // The preview's scale along its more reduced side (1x4097 keeps its width, halves its height).
        let preview_scale = (self.preview_size[0] as f32 / self.size[0] as f32)
            .min(self.preview_size[1] as f32 / self.size[1] as f32);
        // From 1:1 up each image pixel is one screen pixel or a square of them: bilinear taps at
        // 1:1 would blend neighbours wherever the image is not placed on whole pixels, and show
        // each tile's edge as a line in a fine pattern (a dither's, at 100%).
        let nearest = screen_px_per_image_px >= 0.999;
        let draw = |view: &wgpu::TextureView, rect: Rect, uv: Rect| {
            let how = paint::DrawHow { nearest, checker: self.has_alpha, gray: self.gray };
            let on_screen = at_least_a_pixel(place.to_screen(rect), place.pixels_per_point);
            self.painter.draw(painter, view, on_screen, uv, how);
        };
        // The preview level that is at least as sharp as the screen: level k has 2^-k of the
        // preview's pixels per side.
        let screen_per_preview = screen_px_per_image_px / preview_scale;
        let level = ((1.0 / screen_per_preview.max(1e-6)).log2().floor().max(0.0) as usize)
            .min(self.preview.len() - 1);
        let preview = &self.preview[level];
        // The preview while it is as sharp as the screen: a 2060-px image's 2048-px preview at
        // 1:1 (within the 1% this allowed before) repeated and blended its columns.
        if screen_px_per_image_px <= preview_scale * 1.0001 {
            draw(preview, full, unit_uv());
            return;
        }
        let visible = Rect::from_min_max(place.to_image(clip.min), place.to_image(clip.max)).intersect(full);
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.next_frame();
        for cell in cache::cells(visible, self.size) {
            let rect = cell.rect().intersect(full);
            if cache.get(cell).is_none()
                && budget.take()
                && let Some(tile) = self.make_tile(cell)
            {
                cache.insert(cell, tile);
            }
            if let Some(tile) = cache.get(cell) {
                draw(&tile.view, rect, unit_uv());
            } else {
                let uv = Rect::from_min_max(
                    pos2(rect.min.x / full.width(), rect.min.y / full.height()),
                    pos2(rect.max.x / full.width(), rect.max.y / full.height()),
                );
                draw(preview, rect, uv);
            }
        }
        cache.evict();
    }

    fn make_tile(&self, cell: cache::Cell) -> Option<cache::Tile> {
        let [x0, y0, w, h] = cell.pixels(self.size);
        let texture = match &self.source {
            Source::Host(image) => {
                let level = pixels::tile(image, x0, y0, w, h);
                upload(&self.render_state, std::slice::from_ref(&level))?
            }
            Source::Gpu(tiles) => tiles.detail_tile(x0, y0, w, h).ok()?.texture,
        };
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Some(cache::Tile { view, used: 0 })
    }
}

/// A view of each mip level of `texture`.
fn level_views(texture: &wgpu::Texture) -> Vec<wgpu::TextureView> {
    (0..texture.mip_level_count())
        .map(|level| {
            texture.create_view(&wgpu::TextureViewDescriptor {
                base_mip_level: level,
                mip_level_count: Some(1),
                ..Default::default()
            })
        })
        .collect()
}

fn unit_uv() -> Rect {
    Rect::from_min_max(Pos2::ZERO, pos2(1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use egui::{Rect, pos2};

    #[test]
    fn an_image_thinner_than_a_pixel_is_drawn_a_pixel_thick_about_its_centre() {
        // 4097x1 fitted at 14%: 0.14 px tall, drawn 1 px tall (2/3 of a point at 1.5 px a point).
        let thin = Rect::from_min_max(pos2(10.0, 100.0), pos2(583.0, 100.14));
        let shown = super::at_least_a_pixel(thin, 1.0);
        assert_eq!((shown.width(), shown.height()), (thin.width(), 1.0));
        assert!((shown.center().y - thin.center().y).abs() < 1e-4);
        assert!((super::at_least_a_pixel(thin, 1.5).height() - 1.0 / 1.5).abs() < 1e-4);
        let wide = Rect::from_min_max(pos2(0.0, 0.0), pos2(3.0, 2.0));
        assert_eq!(super::at_least_a_pixel(wide, 1.0), wide);
    }
}
