//! The CPU kernel's ceiling: the memory-stream baseline ([`crate::cpu::stream_baseline`]: read 3
//! bytes and write 1 per pixel, no arithmetic) at the run's size and threads, and
//! [`Engine::phase_rates`], the one call that gives every phase of a run against its ceiling.

use std::sync::PoisonError;
use std::time::Instant;

use crate::engine::ceilings::rates::{Ceilings, PhaseRate, phase_rates, raise_beaten};
use crate::engine::report::RunReport;
use crate::engine::{Backend, Engine, Kernel};

/// Timed runs of the baseline on demand (after one warm-up); the fastest counts.
const RUNS: usize = 3;

/// The baseline of one size and thread count, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StreamBaseline {
    /// Pixels.
    pub pixels: u64,
    /// CPU threads.
    pub threads: usize,
    /// The fastest run.
    pub ns: u64,
}

/// Times the baseline over `src` (RGB8) into `dst` (one byte per pixel) once.
pub(crate) fn time_baseline(src: &[u8], dst: &mut [u8], threads: usize) -> Option<u64> {
    let started = Instant::now();
    crate::cpu::stream_baseline(src, dst, threads).ok()?;
    Some(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// The baseline's rate in GB/s (3 bytes read + 1 written per pixel).
pub(crate) fn stream_gb_per_s(pixels: u64, ns: u64) -> f64 {
    (pixels * 4) as f64 / ns.max(1) as f64
}

impl Engine {
    /// Phase X of this run = N GB/s = P% of ceiling Y, for every phase that moves pixels: GPU
    /// phases against the GPU ceilings this engine knows ([`Engine::gpu_ceilings`] loads or
    /// measures them; without them the rates come alone), a CPU RGB8 kernel against the
    /// memory-stream baseline at the run's size and threads, measured now (a few kernel times;
    /// kept for the next call of the same size).
    #[must_use]
    pub fn phase_rates(&self, report: &RunReport) -> Vec<PhaseRate> {
        let mut ceilings =
            Ceilings { gpu: self.known_gpu_ceilings().map(|k| k.ceilings), cpu_stream_gb_per_s: None };
        if report.backend == Backend::Cpu
            && report.kernel == Some(Kernel::Rgb8ToL8)
            && let Some(threads) = report.threads
        {
            let pixels = u64::from(report.width) * u64::from(report.height);
            ceilings.cpu_stream_gb_per_s =
                self.stream_baseline(pixels, threads).map(|b| stream_gb_per_s(b.pixels, b.ns));
        }
        let rates = phase_rates(report, &ceilings);
        // A run that beat a one-step ceiling proves it was measured low: the run is the new
        // ceiling (this run's share says so; later runs are held against it).
        if let Some(mut gpu) = ceilings.gpu {
            let raised = raise_beaten(&mut gpu, &rates);
            if !raised.is_empty() {
                self.keep_raised_ceilings(gpu, &raised);
            }
        }
        rates
    }

    /// The memory-stream baseline of `pixels` on `threads`, measured unless it is the last one
    /// measured; `None` when the memory budget has no room for its buffers now.
    fn stream_baseline(&self, pixels: u64, threads: usize) -> Option<StreamBaseline> {
        let mut last = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(b) = last.filter(|b| b.pixels == pixels && b.threads == threads) {
            return Some(b);
        }
        let _memory = crate::io::budget().try_reserve(pixels.saturating_mul(4)).ok()?;
        let len = usize::try_from(pixels).ok()?;
        let src = vec![0x5Au8; len.checked_mul(3)?];
        let mut dst = vec![1u8; len];
        let ns = (0..=RUNS).filter_map(|_| time_baseline(&src, &mut dst, threads)).skip(1).min()?;
        let b = StreamBaseline { pixels, threads, ns };
        *last = Some(b);
        Some(b)
    }
}
