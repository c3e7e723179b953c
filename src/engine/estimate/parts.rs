//! What a job runs, as the estimator's parts: conversions of one image (and of each file of a
//! batch), round trips' counts of operations, every transfer path's sizes. A sweep's and the
//! workgroup race's are beside them (`crate::engine::sweep::SweepOptions::parts`,
//! `crate::engine::sweep::race_parts`).

use super::{BYTES_PER_PIXEL, Lane, Part, THREE_TWO};
use crate::engine::ConvertSettings;
use crate::pixel::Op;

/// The parts of converting a `width` x `height` image with each of `list`, `runs` times.
#[must_use]
pub fn convert_parts(list: &[ConvertSettings], runs: u32, (width, height): (u32, u32)) -> Vec<Part> {
    let runs = f64::from(runs.max(1));
    let megapixels = crate::system::units::megapixels(width, height);
    let height_per_width = f64::from(height) / f64::from(width.max(1));
    list.iter()
        .map(|s| Part {
            lane: Lane::of(s),
            megapixels,
            rounds: s.work.rounds,
            op: s.op,
            runs,
            height_per_width,
        })
        .collect()
}

/// The parts of round trips on `lane`'s CPU and the GPU: for each count of operations, a cold
/// run and `runs` warm ones of the CPU and of the GPU doing that many conversions of an image of
/// `megapixels` at `rounds`.
#[must_use]
pub fn round_trip_parts(passes: &[u32], runs: usize, cpu: Lane, megapixels: f64, rounds: u32) -> Vec<Part> {
    let runs = runs.max(1) as f64 + 1.0;
    passes
        .iter()
        .flat_map(|&n| {
            let runs = runs * f64::from(n.max(1));
            [cpu, Lane::Gpu].map(|lane| Part {
                lane,
                megapixels,
                rounds,
                op: Op::None,
                runs,
                height_per_width: THREE_TWO,
            })
        })
        .collect()
}

/// The parts of timing `paths` transfer paths from 4 KiB up to `largest_bytes`: at each size,
/// every path's warm-up and timed runs (as `graylab info --probe` and the app's window time
/// them), each a transfer on [`Lane::Transfer`].
#[must_use]
pub fn transfer_paths_parts(largest_bytes: u64, paths: usize) -> Vec<Part> {
    crate::gpu::path_sizes(largest_bytes)
        .into_iter()
        .map(|bytes| Part {
            lane: Lane::Transfer,
            megapixels: bytes as f64 / BYTES_PER_PIXEL / 1e6,
            rounds: 0,
            op: Op::None,
            runs: (paths * (crate::gpu::path_repeats(bytes) + 1)) as f64,
            height_per_width: THREE_TWO,
        })
        .collect()
}
