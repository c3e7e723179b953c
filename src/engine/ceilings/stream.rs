//! The CPU kernel's ceiling: the memory-stream baseline ([`crate::cpu::stream_baseline`]: read 3
//! bytes and write 1 per pixel, no arithmetic) moving as many bytes as the run's kernel, on its
//! threads; and [`Engine::phase_rates`], every phase of a run against its ceiling.

use std::sync::PoisonError;
use std::time::Instant;

use crate::engine::ceilings::rates::{Ceiling, Ceilings, PhaseRate, bytes_of, phase_rates, raise_beaten};
use crate::engine::report::RunReport;
use crate::engine::{Backend, Engine};
use crate::pixel::Kernel;

/// Timed runs of the baseline on demand (after one warm-up); the fastest counts.
const RUNS: usize = 3;

/// The baseline of one size and thread count, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StreamBaseline {
    /// Pixels asked for.
    pub asked_pixels: u64,
    /// Pixels measured: those asked for, or fewer where they had no room in the memory budget.
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
    Some(crate::system::clock::nanos_since(started))
}

/// The baseline's rate in GB/s (3 bytes read + 1 written per pixel).
pub(crate) fn stream_gb_per_s(pixels: u64, ns: u64) -> f64 {
    (pixels * 4) as f64 / ns.max(1) as f64
}

impl Engine {
    /// [`phase_rates`] of `report`: GPU phases against the GPU ceilings this engine knows
    /// (without them the rates come alone), a CPU kernel against the memory-stream baseline,
    /// measured now (a few kernel times; kept for the next call of the same size).
    #[must_use]
    pub fn phase_rates(&self, report: &RunReport) -> Vec<PhaseRate> {
        let mut ceilings =
            Ceilings { gpu: self.known_gpu_ceilings().map(|k| k.ceilings), cpu_stream_gb_per_s: None };
        if report.backend == Backend::Cpu
            && let (Some(kernel), Some(threads)) = (report.kernel, report.threads)
        {
            let pixels = u64::from(report.width) * u64::from(report.height);
            ceilings.cpu_stream_gb_per_s = self.cpu_stream_gb_per_s(kernel, pixels, threads);
        }
        let mut rates = phase_rates(report, &ceilings);
        self.raise_ceilings_beaten_by(&mut rates);
        rates
    }

    /// Raises the known GPU ceilings that `rates` beat, here and in the cache: a run that beat
    /// a one-step ceiling proves it was measured low, so the run is the new ceiling (its share
    /// says "raised now"; later runs are held against it). The two-step rates (a whole upload
    /// or download) are then held against their steps as raised, so no line beside the "raised
    /// now" one is a share of the ceiling as it was.
    pub(crate) fn raise_ceilings_beaten_by(&self, rates: &mut [PhaseRate]) {
        let Some(mut gpu) = self.known_gpu_ceilings().map(|k| k.ceilings) else { return };
        let raised = raise_beaten(&mut gpu, rates);
        if raised.is_empty() {
            return;
        }
        let names: Vec<&str> = raised.iter().map(|c| c.name()).collect();
        log::info!("a run beat the {} ceiling: raised to what it did", names.join(", "));
        let key = gpu.adapter_key.clone();
        // The one-step rates that beat a ceiling, as they were: each raises its step, in the
        // engine and in the cache file as it is now, only where that step is still below it.
        let beaten: Vec<PhaseRate> = rates.to_vec();
        let now = Ceilings { gpu: Some(gpu), cpu_stream_gb_per_s: None };
        for r in
            rates.iter_mut().filter(|r| matches!(r.ceiling, Some(Ceiling::HostToGpu | Ceiling::GpuToHost)))
        {
            *r = r.at(r.ns, r.ceiling.and_then(|c| now.rate(c)));
        }
        self.change_known(&key, "the raised GPU ceilings", |c| {
            raise_beaten(c, &beaten);
        });
    }

    /// The memory-stream ceiling of `kernel` over `pixels` on `threads`, GB/s: the baseline
    /// moving as many bytes as the kernel does, measured unless the last one asked for it.
    pub(crate) fn cpu_stream_gb_per_s(&self, kernel: Kernel, pixels: u64, threads: usize) -> Option<f64> {
        self.stream_baseline(stream_pixels(kernel, pixels), threads).map(|b| stream_gb_per_s(b.pixels, b.ns))
    }

    /// The memory-stream baseline of `pixels` on `threads`, measured unless it is the last one
    /// asked for. When the memory budget has no room for buffers of that size now, it is
    /// measured at [`FALLBACK_PIXELS`] (far larger than any CPU cache, so the same rate);
    /// `None` only when even that has no room.
    fn stream_baseline(&self, pixels: u64, threads: usize) -> Option<StreamBaseline> {
        let mut last = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(b) = last.filter(|b| b.asked_pixels == pixels && b.threads == threads) {
            return Some(b);
        }
        let budget = crate::system::memory_budget::budget();
        let (measured, _memory) = match budget.try_reserve(pixels.saturating_mul(4)) {
            Ok(memory) => (pixels, memory),
            Err(_) if pixels > FALLBACK_PIXELS => {
                (FALLBACK_PIXELS, budget.try_reserve(FALLBACK_PIXELS * 4).ok()?)
            }
            Err(_) => return None,
        };
        let len = usize::try_from(measured).ok()?;
        // On huge pages where the OS offers them, as the decoded images and kernel outputs it
        // stands for are (`huge_pages`): the ceiling on the pages the kernel runs on.
        let mut src = crate::cpu::zeroed_buffer::<u8>(len.checked_mul(3)?);
        src.fill(0x5A);
        let mut dst = crate::cpu::zeroed_buffer::<u8>(len);
        dst.fill(1);
        let ns = (0..=RUNS).filter_map(|_| time_baseline(&src, &mut dst, threads)).skip(1).min()?;
        let b = StreamBaseline { asked_pixels: pixels, pixels: measured, threads, ns };
        *last = Some(b);
        Some(b)
    }
}

/// The baseline's size when a run's own size has no room in the memory budget: 32 Mi pixels,
/// 128 MiB moved, beyond every CPU cache.
const FALLBACK_PIXELS: u64 = 32 << 20;

/// The baseline's pixels (3 bytes read, 1 written) that move as many bytes as `kernel` does
/// over `pixels`: every kernel's memory traffic is held against the same stream.
fn stream_pixels(kernel: Kernel, pixels: u64) -> u64 {
    let (in_bytes, out_bytes) = bytes_of(kernel, pixels);
    (in_bytes + out_bytes).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_is_held_against_a_stream_of_its_bytes() {
        assert_eq!(stream_pixels(Kernel::Rgb8ToL8, 1000), 1000);
        // 4 bytes read and 1 written a pixel: 5000 bytes, 1250 baseline pixels.
        assert_eq!(stream_pixels(Kernel::Rgba8ToL8, 1000), 1250);
        // 8 read and 4 written.
        assert_eq!(stream_pixels(Kernel::Rgba16ToLa16, 1000), 3000);
    }

    #[test]
    fn rates_that_beat_a_known_ceiling_raise_it_in_the_engine() {
        use crate::engine::{Phase, Span, Track};
        let engine = Engine::cpu_only().without_ceiling_cache();
        let ceilings = crate::engine::ceilings::rates::example_ceilings();
        *engine.ceilings.lock().expect("not poisoned") = Some(super::super::KnownCeilings {
            ceilings: ceilings.clone(),
            origin: super::super::Origin { measured_now: true, measured_unix_s: 0, busy: false },
            cache_path: None,
            cache_error: None,
        });
        // 1 MP RGB8 staged at 64 GB/s, the host→staging ceiling's twice.
        let mut r = RunReport::new(Backend::Gpu, crate::pixel::Formula::Bt601, (1000, 1000), Vec::new());
        r.kernel = Some(Kernel::Rgb8ToL8);
        let copy =
            Span { phase: Some(Phase::Upload), ..Span::cpu(Track::HostCopy { thread: None }, 0, 46_875) };
        r.spans = vec![copy, Span::cpu(Track::Upload, 46_875, 80_000)];
        r.finish(100_000);
        let mut rates = phase_rates(&r, &Ceilings { gpu: Some(ceilings.clone()), cpu_stream_gb_per_s: None });
        assert!(rates.iter().any(PhaseRate::beats_ceiling), "{rates:?}");
        engine.raise_ceilings_beaten_by(&mut rates);
        let known = engine.known_gpu_ceilings().expect("known").ceilings;
        assert!((known.host_to_staging.gb_per_s() - 64.0).abs() < 0.01, "{:?}", known.host_to_staging);
        assert_eq!(known.staging_to_device, ceilings.staging_to_device, "not beaten, not raised");
        // The whole upload (3 MB in 80 µs, 37.5 GB/s) is held against the steps as raised: 64
        // then 128 GB/s, 42.7 GB/s one after the other, where it was 25.6 before.
        let upload = rates.iter().find(|r| r.ceiling == Some(Ceiling::HostToGpu)).expect("upload");
        assert!(upload.ceiling_gb_per_s.is_some_and(|c| (c - 128.0 / 3.0).abs() < 0.01), "{upload:?}");
        assert!(!upload.beats_ceiling(), "{}", upload.sentence());
    }
}
