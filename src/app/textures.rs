//! Images on screen: tiles of wgpu textures registered with eframe's renderer, each twice (a
//! linear and a nearest-neighbour sampler), freed when the image is replaced.

use std::sync::Arc;

use eframe::egui_wgpu::{RenderState, Renderer};
use egui::mutex::RwLock;
use egui::{Rect, TextureId, pos2};

use crate::gpu::GpuTiles;

/// One tile: where it sits in the image and its two texture ids.
pub struct DisplayTile {
    /// The tile in image pixels.
    pub rect: Rect,
    /// Sampled with linear filtering (zoomed out).
    pub linear: TextureId,
    /// Sampled nearest-neighbour (zoomed in: sharp pixels).
    pub nearest: TextureId,
}

/// An image ready to draw, any size (tiles no larger than the device's texture limit).
pub struct DisplayImage {
    /// Width and height in pixels.
    pub size: [u32; 2],
    /// The tiles.
    pub tiles: Vec<DisplayTile>,
    renderer: Arc<RwLock<Renderer>>,
    /// Keeps the textures alive while egui draws them.
    _textures: GpuTiles,
}

impl DisplayImage {
    /// Registers the tiles' textures with the renderer.
    pub fn register(render_state: &RenderState, textures: GpuTiles) -> Self {
        let mut renderer = render_state.renderer.write();
        let sampler = |filter| wgpu::SamplerDescriptor {
            label: Some("graylab image"),
            mag_filter: filter,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        };
        let tiles = textures
            .tiles
            .iter()
            .map(|t| DisplayTile {
                rect: Rect::from_min_size(
                    pos2(t.x0 as f32, t.y0 as f32),
                    egui::vec2(t.width as f32, t.height as f32),
                ),
                linear: renderer.register_native_texture_with_sampler_options(
                    &render_state.device,
                    &t.view,
                    sampler(wgpu::FilterMode::Linear),
                ),
                nearest: renderer.register_native_texture_with_sampler_options(
                    &render_state.device,
                    &t.view,
                    sampler(wgpu::FilterMode::Nearest),
                ),
            })
            .collect();
        drop(renderer);
        Self {
            size: [textures.width, textures.height],
            tiles,
            renderer: Arc::clone(&render_state.renderer),
            _textures: textures,
        }
    }
}

impl Drop for DisplayImage {
    fn drop(&mut self) {
        let mut renderer = self.renderer.write();
        for t in &self.tiles {
            renderer.free_texture(&t.linear);
            renderer.free_texture(&t.nearest);
        }
    }
}
