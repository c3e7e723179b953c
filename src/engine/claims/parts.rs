//! What the claims run, as the one estimator counts it ([`crate::engine::estimate`]): each
//! claim's runs by lane, size and work per pixel, each comparison at its budget's least rounds
//! (most are decided at the first look); the overhead learned from a run covers the rest.

use crate::engine::claims::{sequential, sizes, timing, transfers, work};
use crate::engine::estimate::{Lane, Part, THREE_TWO, round_trip_parts};
use crate::engine::sampling::Budget;
use crate::pixel::Op;

/// The workgroup shapes claim 3 races on an adapter that allows 1,024 invocations (six lines,
/// six squares and rectangles): both measured so far allow twelve.
const RACED_SHAPES: f64 = 12.0;

/// The parts of the claims (the quick set where `quick`): both sides of every comparison at the
/// budget's least rounds ([`Budget::for_set`]), and one CPU run of each image made.
#[must_use]
pub fn claims_parts(quick: bool) -> Vec<Part> {
    claims_steps(quick).into_iter().flatten().collect()
}

/// [`claims_parts`] claim by claim, in the order they run (claims 1 to 10): what each weighs
/// in the job, for its progress.
#[must_use]
pub fn claims_steps(quick: bool) -> Vec<Vec<Part>> {
    let budget = Budget::for_set(quick);
    let rounds = (budget.warmup_rounds + budget.min_rounds) as f64;
    let (gpu, cpu) = (Lane::Gpu, Lane::CpuAllThreads);
    let megapixels = |(w, h)| crate::system::units::megapixels(w, h);
    let part = |lane, megapixels, work: u32, runs: f64| Part {
        lane,
        megapixels,
        rounds: work,
        op: Op::None,
        runs,
        height_per_width: THREE_TWO,
    };
    let with_op = |lane, megapixels, op, runs: f64| Part {
        lane,
        megapixels,
        rounds: 0,
        op,
        runs,
        height_per_width: THREE_TWO,
    };
    // Each image a claim makes costs about one CPU run of its size.
    let image = |megapixels| part(cpu, megapixels, 0, 1.0);
    // 1: the 8K image, the GPU and the CPU in turns.
    let eight_k = megapixels(transfers::IMAGE);
    let transfers = vec![part(gpu, eight_k, 0, rounds), part(cpu, eight_k, 0, rounds), image(eight_k)];
    // 2: each round, every count of operations per round trip: a cold and a warm round trip on
    // the GPU, as many passes on the CPU.
    let trip = megapixels(transfers::ROUND_TRIP_IMAGE);
    let mut round_trips: Vec<Part> = round_trip_parts(&transfers::ROUND_TRIP_COUNTS, 1, cpu, trip, 0)
        .into_iter()
        .map(|p| Part { runs: p.runs * rounds, ..p })
        .collect();
    round_trips.push(image(trip));
    // 3: every workgroup shape, a GPU run each a round.
    let shapes = megapixels(timing::WORKGROUP_IMAGE);
    let workgroups = vec![part(gpu, shapes, 0, RACED_SHAPES * rounds), image(shapes)];
    // 4: a pass over the input kept on the GPU a round, and its upload and cold passes.
    let sync = megapixels(timing::SYNC_IMAGE);
    let waiting = vec![part(gpu, sync, 0, rounds + 1.0), image(sync)];
    // 5: per size, the CPU, the GPU end to end and the GPU with its input kept, each round.
    let caches = sizes::CACHE_SIZES_BYTES
        .iter()
        .flat_map(|&bytes| {
            let size = megapixels(sizes::dims_for(bytes));
            [part(cpu, size, 0, rounds), part(gpu, size, 0, 2.0 * rounds), image(size)]
        })
        .collect();
    // 6: a cold and a warm GPU run (the device opened for them is one-time work) against a CPU
    // run, each round.
    let cold = megapixels(transfers::COLD_IMAGE);
    let cold_run = vec![part(gpu, cold, 0, 2.0 * rounds), part(cpu, cold, 0, rounds), image(cold)];
    // 7: branching (the GPU's lanes wait for the pixels that branch; the CPU does half the
    // pixels' rounds) against uniform work of the same average, on each backend.
    let worked = megapixels(work::IMAGE);
    let half = work::BRANCH_ROUNDS / 2;
    let branching = vec![
        part(gpu, worked, work::BRANCH_ROUNDS, rounds),
        part(gpu, worked, half, rounds),
        part(cpu, worked, half, 2.0 * rounds),
        image(worked),
    ];
    // 8: each work level, then each blur radius (priced by the ops' rates, [`Pace::op_run`]), on
    // both backends.
    let mut work_levels: Vec<Part> = work::LEVELS
        .iter()
        .flat_map(|&level| [part(gpu, worked, level, rounds), part(cpu, worked, level, rounds)])
        .collect();
    for radius in work::BLUR_RADII {
        work_levels.extend([gpu, cpu].map(|lane| with_op(lane, worked, Op::Blur { radius }, rounds)));
    }
    work_levels.push(image(worked));
    // 9: the smallest size in turns, then the sweep.
    let sweep = sizes::sweep_options(quick);
    let mut crossover =
        vec![part(gpu, sizes::SMALLEST_MP, 0, rounds), part(cpu, sizes::SMALLEST_MP, 0, rounds)];
    crossover.extend(sweep.parts());
    crossover.extend(std::iter::once(sizes::SMALLEST_MP).chain(sweep.sizes_mp.iter().copied()).map(image));
    // 10: per size, the dither and the blur on both backends.
    let sizes_10: &[(u32, u32)] = if quick { &sequential::QUICK_SIZES } else { &sequential::SIZES };
    let sequential = sizes_10
        .iter()
        .flat_map(|&size| {
            let size = megapixels(size);
            let mut ops: Vec<Part> = [Op::Dither, sequential::BLUR]
                .into_iter()
                .flat_map(|op| [gpu, cpu].map(|lane| with_op(lane, size, op, rounds)))
                .collect();
            ops.push(image(size));
            ops
        })
        .collect();
    vec![
        transfers,
        round_trips,
        workgroups,
        waiting,
        caches,
        cold_run,
        branching,
        work_levels,
        crossover,
        sequential,
    ]
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
        // One step a claim, each with its runs.
        let steps = claims_steps(true);
        assert_eq!(steps.len(), super::super::CLAIMS.len());
        assert!(steps.iter().all(|s| s.iter().any(|p| p.runs > 1.0)));
        assert!(steps[9].iter().any(|p| p.op == Op::Dither), "claim 10 is the dither");
    }
}
