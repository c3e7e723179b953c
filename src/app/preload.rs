//! Decoding a file and making its preview level, on a thread of its own: the worker's loads use
//! it, and at launch it starts before the window and the GPU device exist, so the photo is on
//! screen as soon as the window is.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use image::DynamicImage;

use super::display::{RgbaLevel, preview_levels};
use crate::engine::DecodeOptions;

/// A decoded file, ready to upload for display.
pub struct Decoded {
    /// The pixels (EXIF orientation applied).
    pub image: Arc<DynamicImage>,
    /// Decode time (CPU clock).
    pub decode_ns: u64,
    /// Whether EXIF orientation rotated or flipped it.
    pub reoriented: bool,
    /// What the decoder warned about.
    pub warnings: Vec<String>,
    /// The preview level and its mipmaps.
    pub levels: Vec<RgbaLevel>,
}

/// Decodes `path` and makes its preview (longest side `preview_side`).
pub fn decode_for_display(path: &Path, preview_side: u32) -> Result<Decoded, String> {
    let decoded = crate::io::decode_file(path, &DecodeOptions::default()).map_err(|e| format!("{e:#}"))?;
    let levels = preview_levels(&decoded.image, preview_side);
    Ok(Decoded {
        image: Arc::new(decoded.image),
        decode_ns: decoded.decode_ns,
        reoriented: decoded.reoriented,
        // Hook for decoder warnings (a truncated file kept, …): `io::Decoded` has none yet.
        warnings: Vec::new(),
        levels,
    })
}

/// A decode running on its own thread.
pub struct Preload {
    path: PathBuf,
    thread: JoinHandle<Result<Decoded, String>>,
}

impl Preload {
    /// Starts decoding `path` now.
    pub fn start(path: PathBuf, preview_side: u32) -> std::io::Result<Self> {
        let path = std::path::absolute(&path).unwrap_or(path);
        let p = path.clone();
        let thread = std::thread::Builder::new().name("graylab-preload".into()).spawn(move || {
            super::priority::yield_to_ui();
            decode_for_display(&p, preview_side)
        })?;
        Ok(Self { path, thread })
    }

    /// The file it decodes.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the result.
    pub fn wait(self) -> Result<Decoded, String> {
        self.thread.join().unwrap_or_else(|_| Err("the decoder thread crashed".to_owned()))
    }
}
