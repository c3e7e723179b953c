//! What a conversion may ask for beyond its settings: a cancel flag, a count of the pixels done,
//! keeping its input on the GPU between runs of the same image ([`ImageKey`]), and reading a
//! displayed result back.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub use crate::system::progress::PixelProgress;

/// The identity of an input image, for keeping it on the GPU between runs: make one per image
/// (a decoded file, a resized copy) and pass it with every run of those pixels. Keys are unique
/// in the process; a key promises that the pixels behind it never change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ImageKey(u64);

impl ImageKey {
    /// A key no other image has.
    #[must_use]
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The number the GPU layer keys on.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl Default for ImageKey {
    fn default() -> Self {
        Self::new()
    }
}

/// Options of one conversion beyond its [`super::ConvertSettings`].
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// Checked between GPU submissions: once set, the run stops with
    /// [`super::EngineError::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
    /// Counts the pixels done as the run goes: started at the image's pixels when the run starts,
    /// added to as each CPU chunk finishes and as the GPU is seen to finish each slice of its
    /// kernel (see [`crate::gpu::GpuJob::progress`]); all of them at the end.
    pub progress: Option<&'a PixelProgress>,
    /// GPU runs: keep the input on the GPU under this key. The first run uploads it and keeps it;
    /// later runs of the same key (another formula or workgroup shape) upload nothing, and their
    /// report has no upload phase. One image is kept at a time; a run with another key replaces
    /// it, and a GPU run without a key (the full round trip, the default) frees it.
    pub keep_input_on_gpu: Option<ImageKey>,
    /// [`super::Engine::convert_for_display`]: also copy the result back to the host (the full
    /// round trip, timed as a download phase). [`super::Engine::convert`] always does.
    pub download_result: bool,
}
