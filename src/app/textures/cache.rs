//! Full-resolution tiles of one image, made on demand for what is visible and kept in a least-
//! recently-used cache of bounded size.

use std::collections::HashMap;

use egui::{Rect, pos2};

/// Tile side in image pixels.
pub const TILE_SIDE: u32 = 512;

/// Tiles kept per image (1 MiB each in RGBA, 256 KiB in gray).
const MAX_TILES: usize = 96;

/// How many tiles may still be made this frame (the rest next frame, so no frame stalls).
pub struct TileBudget {
    left: u32,
    /// Whether a tile was wanted but not made: draw another frame soon.
    pub wanted_more: bool,
}

impl TileBudget {
    /// A budget of `tiles` new tiles.
    #[must_use]
    pub fn new(tiles: u32) -> Self {
        Self { left: tiles, wanted_more: false }
    }

    /// Takes one tile from the budget, if any is left.
    pub fn take(&mut self) -> bool {
        if self.left == 0 {
            self.wanted_more = true;
            return false;
        }
        self.left -= 1;
        true
    }
}

/// A tile position: column and row of `TILE_SIDE` cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    col: u32,
    row: u32,
}

impl Cell {
    /// The cell in image pixels (clipped to the image later).
    pub fn rect(self) -> Rect {
        let side = TILE_SIDE as f32;
        Rect::from_min_size(pos2(self.col as f32 * side, self.row as f32 * side), egui::Vec2::splat(side))
    }

    /// `[x0, y0, width, height]` inside an image of `size`.
    pub fn pixels(self, size: [u32; 2]) -> [u32; 4] {
        let (x0, y0) = (self.col * TILE_SIDE, self.row * TILE_SIDE);
        [x0, y0, TILE_SIDE.min(size[0] - x0), TILE_SIDE.min(size[1] - y0)]
    }
}

/// The cells covering `visible` (image pixels) of an image of `size`; each rectangle clipped to
/// the image by the caller's drawing.
pub fn cells(visible: Rect, size: [u32; 2]) -> impl Iterator<Item = Cell> {
    let cols = size[0].div_ceil(TILE_SIDE);
    let rows = size[1].div_ceil(TILE_SIDE);
    let range = |a: f32, b: f32, n: u32| {
        let first = (a.max(0.0) as u32 / TILE_SIDE).min(n.saturating_sub(1));
        let last = ((b.max(0.0) as u32).div_ceil(TILE_SIDE)).clamp(first + 1, n);
        first..last
    };
    let (xs, ys) = (range(visible.min.x, visible.max.x, cols), range(visible.min.y, visible.max.y, rows));
    ys.flat_map(move |row| xs.clone().map(move |col| Cell { col, row }))
}

/// One full-resolution tile on the GPU.
pub struct Tile {
    /// A view of its texture (keeps it alive).
    pub view: wgpu::TextureView,
    /// The frame it was last drawn in.
    pub used: u64,
}

/// The tiles of one image.
#[derive(Default)]
pub struct TileCache {
    tiles: HashMap<Cell, Tile>,
    frame: u64,
}

impl TileCache {
    /// Starts a new frame (for least-recently-used eviction).
    pub fn next_frame(&mut self) {
        self.frame += 1;
    }

    /// How many tiles are cached.
    pub fn len(&self) -> usize {
        self.tiles.len()
    }

    /// The tile of `cell`, marked as used.
    pub fn get(&mut self, cell: Cell) -> Option<&Tile> {
        let frame = self.frame;
        self.tiles.get_mut(&cell).map(|t| {
            t.used = frame;
            &*t
        })
    }

    /// Adds a tile made this frame.
    pub fn insert(&mut self, cell: Cell, mut tile: Tile) {
        tile.used = self.frame;
        self.tiles.insert(cell, tile);
    }

    /// Drops the least recently used tiles beyond the cache size (never one used this frame).
    pub fn evict(&mut self) {
        if self.tiles.len() <= MAX_TILES {
            return;
        }
        let mut by_age: Vec<(u64, Cell)> = self.tiles.iter().map(|(c, t)| (t.used, *c)).collect();
        by_age.sort_unstable_by_key(|(used, _)| *used);
        let excess = self.tiles.len() - MAX_TILES;
        for (used, cell) in by_age.into_iter().take(excess) {
            if used == self.frame {
                break;
            }
            self.tiles.remove(&cell);
        }
    }
}
