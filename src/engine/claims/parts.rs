//! What the claims run, as the one estimator counts it ([`crate::engine::estimate`]): each
//! claim's runs by lane, image size and work per pixel, each comparison at the rounds its budget
//! takes at the least (the warm-up and the rounds before the first look: most comparisons are
//! decided there), so that a first estimate comes from this machine's pace or ceilings, and the
//! overhead learned from a run (images made, rounds beyond the first look, cold devices) scales
//! with them.

use crate::engine::claims::{sequential, sizes, timing, transfers, work};
use crate::engine::estimate::{Lane, Part, round_trip_parts, sweep_parts};
use crate::engine::sampling::Budget;
use crate::pixel::Op;

/// The workgroup shapes claim 3 races on an adapter that allows 1,024 invocations (six lines,
/// six squares and rectangles): both measured so far allow twelve.
const RACED_SHAPES: f64 = 12.0;

/// Megapixels of a `(width, height)` image.
fn megapixels((w, h): (u32, u32)) -> f64 {
    f64::from(w) * f64::from(h) / 1e6
}

/// The parts of the claims (the quick set where `quick`): per claim, both sides of every
/// comparison at the budget's least rounds ([`Budget::for_set`]: warm-up and first look), and
/// one CPU run of each image they make.
#[must_use]
pub fn claims_parts(quick: bool) -> Vec<Part> {
    let budget = Budget::for_set(quick);
    let rounds = (budget.warmup_rounds + budget.min_rounds) as f64;
    let mut parts = Vec::new();
    let mut add = |lane, megapixels, work: u32, runs: f64| {
        parts.push(Part { lane, megapixels, rounds: work, op: Op::None, runs });
    };
    // Runs with an op after the grayscale, priced by the ops' rates ([`Pace::op_run`]).
    let mut with_ops = Vec::new();
    let (gpu, cpu) = (Lane::Gpu, Lane::CpuAllThreads);
    let mut images = Vec::new();
    // 1: the 8K image, the GPU and the CPU in turns.
    let eight_k = megapixels(transfers::IMAGE);
    add(gpu, eight_k, 0, rounds);
    add(cpu, eight_k, 0, rounds);
    images.push(eight_k);
    // 2: each round, every count of operations per round trip: a cold and a warm round trip on
    // the GPU, as many passes on the CPU.
    let trip = megapixels(transfers::ROUND_TRIP_IMAGE);
    for p in round_trip_parts(&transfers::ROUND_TRIP_COUNTS, 1, cpu, trip, 0) {
        add(p.lane, p.megapixels, p.rounds, p.runs * rounds);
    }
    images.push(trip);
    // 3: every workgroup shape, a GPU run each a round.
    let shapes = megapixels(timing::WORKGROUP_IMAGE);
    add(gpu, shapes, 0, RACED_SHAPES * rounds);
    images.push(shapes);
    // 4: a pass over the input kept on the GPU a round, then a cold run and the bench's warm ones.
    let sync = megapixels(timing::SYNC_IMAGE);
    add(gpu, sync, 0, rounds + 1.0 + timing::SYNC_BENCH_RUNS as f64);
    images.push(sync);
    // 5: per size, the CPU, the GPU end to end and the GPU with its input kept, each round.
    for bytes in sizes::CACHE_SIZES_BYTES {
        let size = megapixels(sizes::dims_for(bytes));
        add(cpu, size, 0, rounds);
        add(gpu, size, 0, 2.0 * rounds);
        images.push(size);
    }
    // 6: a cold and a warm GPU run (the device opened for them is one-time work) against a CPU
    // run, each round.
    let cold = megapixels(transfers::COLD_IMAGE);
    add(gpu, cold, 0, 2.0 * rounds);
    add(cpu, cold, 0, rounds);
    images.push(cold);
    // 7: branching (the GPU's lanes wait for the pixels that branch; the CPU does half the
    // pixels' rounds) against uniform work of the same average, on each backend.
    let worked = megapixels(work::IMAGE);
    let half = work::BRANCH_ROUNDS / 2;
    add(gpu, worked, work::BRANCH_ROUNDS, rounds);
    add(gpu, worked, half, rounds);
    add(cpu, worked, half, 2.0 * rounds);
    images.push(worked);
    // 8: each work level, then each blur radius, on both backends.
    for level in work::LEVELS {
        add(gpu, worked, level, rounds);
        add(cpu, worked, level, rounds);
    }
    for radius in work::BLUR_RADII {
        for lane in [gpu, cpu] {
            with_ops.push(Part {
                lane,
                megapixels: worked,
                rounds: 0,
                op: Op::Blur { radius },
                runs: rounds,
            });
        }
    }
    images.push(worked);
    // 10: per size, the dither and the blur on both backends.
    let sizes_10: &[(u32, u32)] = if quick { &sequential::QUICK_SIZES } else { &sequential::SIZES };
    for &size in sizes_10 {
        let size = megapixels(size);
        for op in [Op::Dither, sequential::BLUR] {
            for lane in [gpu, cpu] {
                with_ops.push(Part { lane, megapixels: size, rounds: 0, op, runs: rounds });
            }
        }
        images.push(size);
    }
    // 9: the smallest size in turns, then the sweep.
    add(gpu, sizes::SMALLEST_MP, 0, rounds);
    add(cpu, sizes::SMALLEST_MP, 0, rounds);
    images.push(sizes::SMALLEST_MP);
    let (sizes_mp, runs) = sizes::sweep_plan(quick);
    parts.extend(sweep_parts(&sizes_mp, runs, true));
    images.extend(&sizes_mp);
    // The images made, each about one CPU run of its size.
    parts.extend(images.into_iter().map(|megapixels| Part {
        lane: cpu,
        megapixels,
        rounds: 0,
        op: Op::None,
        runs: 1.0,
    }));
    parts.extend(with_ops);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_set_runs_what_the_quick_set_does_and_claim_9_s_larger_sweep() {
        let (quick, full) = (claims_parts(true), claims_parts(false));
        let pixels = |parts: &[Part]| parts.iter().map(|p| p.megapixels * p.runs).sum::<f64>();
        // The 8K image of claim 1 on both backends, 7 rounds each (a warm-up and six).
        let eight_k = 7680.0 * 4320.0 / 1e6;
        assert!(quick.iter().any(|p| p.lane == Lane::Gpu
            && (p.megapixels - eight_k).abs() < 1e-9
            && (p.runs - 7.0).abs() < 1e-9));
        // Claim 8's 1,024 rounds a pixel on both backends.
        assert_eq!(quick.iter().filter(|p| p.rounds == 1024).count(), 2);
        // The same experiments; the full set's sweep adds 16 MP and a warm run a size.
        assert!(full.len() > quick.len());
        assert!(pixels(&full) > pixels(&quick) + 16.0 * 3.0);
    }
}
