//! This CPU's compute ceiling for the synthetic work: hash rounds per second on every thread,
//! with the kernel's own SIMD code ([`super::intensity`], the copy [`simd_level`] picks), on a
//! block small enough to stay in the L1 cache, so the figure is arithmetic, not memory.
//!
//! Each thread of a pool of the asked size runs [`CEILING_ROUNDS`] rounds over its own block of
//! [`CEILING_BLOCK_PIXELS`] gray pixels, again and again; one repetition is all threads at once,
//! timed on the CPU clock. The best of [`CEILING_REPEATS`] repetitions (after a warm-up that
//! also sizes them to about [`CEILING_TARGET_NS`]) is the ceiling: the best the machine does.

use std::hint::black_box;
use std::time::Instant;

use super::intensity::apply_work_chunk_u8_at;
use super::{CpuError, SimdLevel, available_threads, simd_level};
use crate::pixel::{OPS_PER_ROUND, Work};
use crate::system::clock::{Clock, nanos};

/// Rounds per pixel of each pass over a block: high enough that the block's loads and stores
/// cost nothing beside the arithmetic.
pub const CEILING_ROUNDS: u32 = 4096;

/// Gray pixels in each thread's block: 4.5 KiB of `u8`, a multiple of every SIMD block size of
/// the kernel (32, 72 and 256 lanes), so no pass has a padded tail.
pub const CEILING_BLOCK_PIXELS: usize = 4608;

/// Timed repetitions; the fastest counts.
pub const CEILING_REPEATS: usize = 3;

/// What one repetition should last, nanoseconds (the whole measurement is about 4 of them).
pub const CEILING_TARGET_NS: u64 = 40_000_000;

/// This CPU's compute ceiling, as measured.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuCompute {
    /// Threads that ran at once.
    pub threads: usize,
    /// The kernel's instruction set that ran (the one [`simd_level`] picks for every run).
    pub simd: SimdLevel,
    /// Integer operations of one repetition, all threads together (3 per round).
    pub ops: u64,
    /// The fastest repetition, nanoseconds, CPU clock: the ceiling.
    pub best_ns: u64,
    /// The median repetition, nanoseconds, CPU clock.
    pub median_ns: u64,
    /// The clock of `best_ns` and `median_ns`: the CPU's, said in the results (caches written
    /// before it was said were timed on it too).
    #[serde(default)]
    pub clock: Clock,
    /// What the ops after the grayscale cost on these threads (`None` in caches written before
    /// they were measured).
    #[serde(default)]
    pub op_rates: Option<crate::pixel::OpRates>,
    /// The probe's own fastest repetition, nanoseconds, when a run of the work kernel beat it
    /// and `best_ns` was raised to what the run did (`median_ns` stays the probe's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_from_best_ns: Option<u64>,
}

impl CpuCompute {
    /// The ceiling: integer operations per second at the fastest repetition.
    #[must_use]
    pub fn ops_per_s(&self) -> f64 {
        self.ops as f64 / self.best_ns.max(1) as f64 * 1e9
    }
}

/// `passes` passes of the ceiling's work over `block` with the kernel's code at `level`.
fn burst(block: &mut [u8], level: SimdLevel, passes: u64) {
    let work = Work { rounds: CEILING_ROUNDS, mask: 0, divergent: false };
    for _ in 0..passes {
        apply_work_chunk_u8_at(black_box(&mut *block), work, level);
    }
}

/// One repetition: every thread of `pool` runs `passes` passes over its own block at once.
fn repetition(pool: &rayon::ThreadPool, level: SimdLevel, passes: u64) -> u64 {
    let started = Instant::now();
    pool.broadcast(|ctx| {
        let mut block: Vec<u8> = (0..CEILING_BLOCK_PIXELS).map(|i| (i + ctx.index()) as u8).collect();
        burst(&mut block, level, passes);
        black_box(block);
    });
    nanos(started.elapsed()).max(1)
}

/// Measures this CPU's compute ceiling on `threads` threads (clamped to
/// `1..=available_threads()`), in about 0.1 to 0.3 s (see the module doc).
pub fn compute_ceiling(threads: usize) -> Result<CpuCompute, CpuError> {
    let threads = threads.clamp(1, available_threads());
    let pool = super::parallel::pool(threads)?;
    let level = simd_level();
    // The warm-up: one pass per thread, which also says how many passes fill a repetition.
    let one_ns = repetition(&pool, level, 1);
    let passes = (CEILING_TARGET_NS / one_ns).clamp(1, 10_000);
    let mut runs: Vec<u64> = (0..CEILING_REPEATS).map(|_| repetition(&pool, level, passes)).collect();
    runs.sort_unstable();
    let ops_per_pass = CEILING_BLOCK_PIXELS as u64 * u64::from(CEILING_ROUNDS) * u64::from(OPS_PER_ROUND);
    Ok(CpuCompute {
        threads,
        simd: level,
        ops: ops_per_pass * passes * threads as u64,
        best_ns: runs.first().copied().unwrap_or(1),
        median_ns: crate::system::median::median_of_sorted(&runs).unwrap_or(1),
        clock: Clock::CpuClock,
        op_rates: op_rates(threads).ok(),
        raised_from_best_ns: None,
    })
}

/// The ops' rates on `threads` threads: the blur and the dither on a small plane, the fastest
/// of three runs each (a few milliseconds in all).
fn op_rates(threads: usize) -> Result<crate::pixel::OpRates, CpuError> {
    use crate::pixel::{OpRates, RATE_PLANE, rate_plane};
    let plane = rate_plane(RATE_PLANE);
    let size = (RATE_PLANE.0 as usize, RATE_PLANE.1 as usize);
    OpRates::measured(false, (0, 3), |op| {
        let started = Instant::now();
        super::ops::apply_op(op, &plane, size, threads)?;
        Ok(nanos(started.elapsed()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_measured_on_the_threads_it_names_with_the_kernels_code() {
        for threads in [1, available_threads()] {
            let c = compute_ceiling(threads).expect("a pool");
            assert_eq!(c.threads, threads);
            assert_eq!(c.simd, simd_level(), "the level every run of the kernel uses");
            assert!(c.ops > 0 && c.best_ns > 0 && c.median_ns >= c.best_ns, "{c:?}");
            assert!(c.ops.is_multiple_of(threads as u64 * u64::from(CEILING_ROUNDS) * 3), "{c:?}");
            assert!(c.ops_per_s() > 0.0, "{c:?}");
            // The ops' rates beside it: the blur a pixel and tap, the dither a pixel (one loop).
            let r = c.op_rates.expect("the ops' rates");
            assert!(r.blur_ns_per_pixel_tap > 0.0 && r.dither_ns_per_pixel > 0.0, "{r:?}");
            assert!(r.dither_ns_per_step.abs() < f64::EPSILON, "{r:?}");
        }
        assert_eq!(compute_ceiling(0).expect("a pool").threads, 1, "clamped");
    }

    #[test]
    fn a_pass_is_the_kernels_work_exactly() {
        // The burst runs the kernel's code: at mask 0 the block is left as it was (the rounds
        // run but are not kept), and the same call with mask 0xFF gives the reference.
        let src: Vec<u8> = (0..CEILING_BLOCK_PIXELS).map(|i| (i * 7) as u8).collect();
        let mut block = src.clone();
        burst(&mut block, simd_level(), 2);
        assert_eq!(block, src);
        let work = Work { rounds: CEILING_ROUNDS, mask: 0xFF, divergent: false };
        assert!(apply_work_chunk_u8_at(&mut block, work, simd_level()));
        assert!(block.iter().zip(&src).all(|(&o, &g)| u32::from(o) == work.reference_pixel(g.into()) & 0xFF));
    }
}
