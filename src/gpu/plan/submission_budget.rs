//! How much work one submission may carry: at most [`SUBMISSION_BUDGET_NS`] of GPU time, so a
//! render thread sharing the queue (eframe's, in the app) gets its frames in between.
//!
//! The GPU's speed is learnt per device from what earlier submissions measured, starting from
//! rates slower than any GPU we know of. A timestamp reading is the GPU's own time: a slower one
//! is believed at once, a faster one only slowly. The CPU clock around a submit-and-wait is only
//! an upper bound: it also counts the wait behind other work on the queue (in the app, eframe's
//! frames, which on a software adapter take as long as a chunk), so it may lower the estimate but
//! never raise it. Believing it would shrink the chunks after every wait, each smaller chunk
//! waiting as long as the last, down to one row per submission.

use std::sync::{Mutex, PoisonError};

use crate::pixel::Kernel;

/// The GPU time one submission should stay under, in nanoseconds.
pub const SUBMISSION_BUDGET_NS: u64 = 8_000_000;

/// The GPU's cost per byte of each step, as learnt so far.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct GpuRates {
    /// Upload copy (staging to input buffer), per input byte.
    pub upload_ns_per_byte: f64,
    /// Kernel, per input byte.
    pub kernel_ns_per_byte: f64,
    /// Drawing into display textures, per output byte.
    pub display_ns_per_byte: f64,
    /// Download copy (output buffer to staging), per output byte.
    pub download_ns_per_byte: f64,
}

impl GpuRates {
    /// Where learning starts: slower than a software rasteriser on two cores, so the first
    /// submissions are small everywhere.
    pub const CONSERVATIVE: Self = Self {
        upload_ns_per_byte: 0.5,
        kernel_ns_per_byte: 3.0,
        display_ns_per_byte: 6.0,
        download_ns_per_byte: 0.5,
    };

    /// Predicted GPU nanoseconds per input byte of `kernel`, for the steps a run has.
    #[must_use]
    pub fn ns_per_input_byte(&self, kernel: Kernel, display: bool, download: bool) -> f64 {
        let out_per_in = kernel.out_bytes_per_pixel() as f64 / kernel.in_bytes_per_pixel() as f64;
        let mut ns = self.upload_ns_per_byte + self.kernel_ns_per_byte;
        if display {
            ns += self.display_ns_per_byte * out_per_in;
        }
        if download {
            ns += self.download_ns_per_byte * out_per_in;
        }
        ns
    }
}

/// What one submission measured.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sample {
    /// Input bytes of the chunk.
    pub in_bytes: u64,
    /// Output bytes of the chunk.
    pub out_bytes: u64,
    /// Upload copy time, if the chunk was uploaded (not when its input was already resident).
    pub upload_ns: Option<u64>,
    /// Kernel time.
    pub kernel_ns: u64,
    /// Display time, if the chunk was drawn.
    pub display_ns: Option<u64>,
    /// Download copy time, if the chunk was downloaded.
    pub download_ns: Option<u64>,
    /// The times are the CPU clock around a submit-and-wait: upper bounds of the GPU's time.
    pub upper_bounds: bool,
}

/// The learnt rates of one device.
pub(crate) struct Budget {
    rates: Mutex<GpuRates>,
}

impl Budget {
    /// Starts from [`GpuRates::CONSERVATIVE`].
    pub(crate) fn new() -> Self {
        Self { rates: Mutex::new(GpuRates::CONSERVATIVE) }
    }

    /// The rates learnt so far.
    pub(crate) fn rates(&self) -> GpuRates {
        *self.rates.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Input bytes one submission may carry for these steps, rounded down to a power of two so
    /// that small changes in the learnt rates do not resize the staging buffers every run.
    pub(crate) fn chunk_in_bytes(&self, kernel: Kernel, display: bool, download: bool) -> u64 {
        let ns = self.rates().ns_per_input_byte(kernel, display, download).max(1e-6);
        let bytes = ((SUBMISSION_BUDGET_NS as f64 / ns) as u64).max(1);
        1 << bytes.ilog2()
    }

    /// Learns from one submission.
    pub(crate) fn learn(&self, s: &Sample) {
        if s.in_bytes == 0 || s.out_bytes == 0 {
            return;
        }
        let mut rates = self.rates.lock().unwrap_or_else(PoisonError::into_inner);
        let per = |ns: u64, bytes: u64| ns as f64 / bytes as f64;
        let update = |estimate: &mut f64, observed: f64| update(estimate, observed, s.upper_bounds);
        if let Some(ns) = s.upload_ns {
            update(&mut rates.upload_ns_per_byte, per(ns, s.in_bytes));
        }
        update(&mut rates.kernel_ns_per_byte, per(s.kernel_ns, s.in_bytes));
        if let Some(ns) = s.display_ns {
            update(&mut rates.display_ns_per_byte, per(ns, s.out_bytes));
        }
        if let Some(ns) = s.download_ns {
            update(&mut rates.download_ns_per_byte, per(ns, s.out_bytes));
        }
    }
}

/// A faster reading moves the estimate a quarter of the way; a slower one replaces it, unless it
/// is only an upper bound, which says nothing about a slower GPU.
fn update(estimate: &mut f64, observed: f64, upper_bound: bool) {
    if !observed.is_finite() {
        return;
    }
    if observed <= *estimate {
        *estimate = *estimate * 0.75 + observed * 0.25;
    } else if !upper_bound {
        *estimate = observed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slower_readings_count_at_once_faster_ones_slowly() {
        let budget = Budget::new();
        let start = budget.chunk_in_bytes(Kernel::Rgb8ToL8, false, true);
        // 3.5 + 0.5 / 3 ns per input byte: about 2.2 MB per 8 ms submission, rounded down.
        assert_eq!(start, 2 << 20);
        let fast = Sample {
            in_bytes: 3_000_000,
            out_bytes: 1_000_000,
            upload_ns: Some(30_000),
            kernel_ns: 30_000,
            display_ns: None,
            download_ns: Some(10_000),
            upper_bounds: false,
        };
        budget.learn(&fast);
        let r = budget.rates();
        assert!((r.kernel_ns_per_byte - (3.0 * 0.75 + 0.01 * 0.25)).abs() < 1e-9, "{r:?}");
        for _ in 0..10 {
            budget.learn(&fast);
        }
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, false, true), 32 << 20);
        let slow = Sample { kernel_ns: 30_000_000, ..fast };
        budget.learn(&slow);
        assert!((budget.rates().kernel_ns_per_byte - 10.0).abs() < 1e-9);
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, false, true), 512 << 10);
        // A display step is only planned (and learnt) when a run draws.
        assert!(
            (budget.rates().display_ns_per_byte - GpuRates::CONSERVATIVE.display_ns_per_byte).abs() < 1e-12
        );
    }

    #[test]
    fn cpu_clock_readings_only_lower_the_estimate() {
        let budget = Budget::new();
        // A submit-and-wait that waited behind a frame: 30 ms for 3 MB. Only an upper bound.
        let waited = Sample {
            in_bytes: 3_000_000,
            out_bytes: 1_000_000,
            upload_ns: Some(30_000_000),
            kernel_ns: 30_000_000,
            display_ns: Some(30_000_000),
            download_ns: None,
            upper_bounds: true,
        };
        for _ in 0..20 {
            budget.learn(&waited);
        }
        assert_eq!(budget.rates(), GpuRates::CONSERVATIVE, "slow upper bounds change nothing");
        // 0.5 + 3 + 6 / 3 ns per input byte: about 1.45 MB per 8 ms submission, rounded down.
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, true, false), 1 << 20);
        // A fast one still proves the GPU faster than estimated.
        let quick = Sample { kernel_ns: 300_000, ..waited };
        budget.learn(&quick);
        let r = budget.rates();
        assert!((r.kernel_ns_per_byte - (3.0 * 0.75 + 0.1 * 0.25)).abs() < 1e-9, "{r:?}");
        assert!((r.upload_ns_per_byte - GpuRates::CONSERVATIVE.upload_ns_per_byte).abs() < 1e-12);
    }
}
