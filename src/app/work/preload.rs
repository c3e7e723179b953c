//! Decoding a file and making its preview level, on a thread of its own: the worker's loads use
//! it, and at launch it starts before the window and the GPU device exist, so the photo is on
//! screen as soon as the window is.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use crate::app::textures::{Level, preview_levels};
use crate::app::work::error::WorkError;
use crate::engine::GpuHostMemory;
use crate::io::DecodeOptions;

/// A decoded file, ready to upload for display.
pub struct Preloaded {
    /// The decoder's result: the pixels (EXIF orientation applied), its warnings, the memory
    /// reserved for the image and its conversions (held while it is open).
    pub decoded: crate::io::Decoded,
    /// The preview level and its mipmaps.
    pub levels: Vec<Level>,
}

/// How the app decodes: a truncated JPEG is kept (with a warning) rather than refused, and what
/// a GPU conversion holds in host memory (`gpu`: its adapter's rule; `None` without a GPU) is
/// reserved with it, by the rule the CLI's `convert --backend gpu` reserves by, since the app
/// can switch to the GPU at any time.
#[must_use]
pub fn decode_options(gpu: Option<GpuHostMemory>) -> DecodeOptions {
    crate::engine::gpu_decode_options(
        DecodeOptions { allow_truncated: true, ..DecodeOptions::default() },
        gpu,
    )
}

/// [`decode_options`] at launch, before the window's device exists: by the adapter graylab
/// picks, which the window's device is made on ([`crate::engine::choose_window_adapter`]).
#[must_use]
pub fn launch_decode_options() -> DecodeOptions {
    decode_options(GpuHostMemory::of_chosen_adapter().ok())
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
    /// Starts decoding `path` now, with the `options` its thread works out first.
    pub fn start(
        path: PathBuf,
        preview_side: u32,
        options: impl FnOnce() -> DecodeOptions + Send + 'static,
    ) -> std::io::Result<Self> {
        let path = std::path::absolute(&path).unwrap_or(path);
        let p = path.clone();
        let thread = std::thread::Builder::new()
            .name("graylab-preload".into())
            .spawn(move || decode_for_display(&p, preview_side, &options()))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The app's loads and `graylab convert --backend gpu` (whose decode `engine::convert_file`
    /// gives the same rule) reserve alike for one image, on a software and on a discrete GPU:
    /// a 12000x10000 RGB photo, 360 MB and 120 MB of gray, that the app refused in a 1.1 GiB
    /// budget the CLI converted in.
    #[test]
    fn the_app_and_the_cli_reserve_alike_for_gpu_work() {
        use crate::system::memory_budget::working_copies_bytes;
        let (in_bytes, gray) = (360_000_000, 120_000_000);
        let lavapipe = GpuHostMemory::new(wgpu::DeviceType::Cpu, 128 << 20);
        let h200 = GpuHostMemory::new(wgpu::DeviceType::DiscreteGpu, (1 << 32) - 256);
        for (gpu, working) in [(lavapipe, 2 * ((128 << 20) + 44_739_243)), (h200, in_bytes + gray)] {
            let app = decode_options(Some(gpu));
            let cli = crate::engine::gpu_decode_options(DecodeOptions::default(), Some(gpu));
            assert_eq!(
                (app.working_copies, app.working_copy_bytes),
                (cli.working_copies, cli.working_copy_bytes)
            );
            let reserved = working_copies_bytes(in_bytes, gray, app.working_copies, app.working_copy_bytes);
            assert_eq!((reserved, gpu.run_bytes(in_bytes, gray)), (working, working), "{gpu:?}");
        }
        let on_lavapipe = working_copies_bytes(in_bytes, gray, 2, Some(128 << 20));
        assert!(in_bytes + gray + on_lavapipe <= 1_181_116_006);
        // Without a GPU: nothing beyond the image.
        assert_eq!(decode_options(None).working_copies, 0);
    }
}
