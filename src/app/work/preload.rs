//! Decoding a file and making its preview level, on a thread of its own: the worker's loads use
//! it, and at launch it starts before the window and the GPU device exist, so the photo is on
//! screen as soon as the window is.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use crate::app::textures::{Level, preview_levels};
use crate::app::work::error::WorkError;
use crate::io::DecodeOptions;

/// A decoded file, ready to upload for display.
pub struct Preloaded {
    /// The decoder's result: the pixels (EXIF orientation applied), its warnings, the memory
    /// reserved for the image and its conversions (held while it is open).
    pub decoded: crate::io::Decoded,
    /// The preview level and its mipmaps.
    pub levels: Vec<Level>,
}

/// How the app decodes: a truncated JPEG is kept (with a warning) rather than refused, and the
/// memory for converting it on the GPU (`gpu_work`: staging copies) is reserved with it, as the
/// CLI does for `--backend gpu`, since the app can switch to the GPU at any time.
#[must_use]
pub fn decode_options(gpu_work: bool) -> DecodeOptions {
    DecodeOptions {
        allow_truncated: true,
        working_copies: if gpu_work { 2 } else { 0 },
        ..DecodeOptions::default()
    }
}

/// Decodes `path` with `options` and makes its preview (longest side `preview_side`).
pub fn decode_for_display(
    path: &Path,
    preview_side: u32,
    options: &DecodeOptions,
) -> Result<Preloaded, WorkError> {
    let decoded = crate::io::decode_file(path, options)?;
    let levels = preview_levels(&decoded.image, preview_side);
    Ok(Preloaded { decoded, levels })
}

/// A decode running on its own thread.
pub struct Preload {
    path: PathBuf,
    thread: JoinHandle<Result<Preloaded, WorkError>>,
}

impl Preload {
    /// Starts decoding `path` now, with `options`.
    pub fn start(path: PathBuf, preview_side: u32, options: DecodeOptions) -> std::io::Result<Self> {
        let path = std::path::absolute(&path).unwrap_or(path);
        let p = path.clone();
        let thread = std::thread::Builder::new()
            .name("graylab-preload".into())
            .spawn(move || decode_for_display(&p, preview_side, &options))?;
        Ok(Self { path, thread })
    }

    /// The file it decodes.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the result.
    pub fn wait(self) -> Result<Preloaded, WorkError> {
        self.thread.join().unwrap_or(Err(WorkError::DecoderCrashed))
    }
}
