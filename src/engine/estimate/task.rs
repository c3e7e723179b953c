//! The kinds of job the estimator tells apart ([`Task`]), each with its own overhead over its
//! runs: a share or a fixed time, taught by its runs or not, capped by a sampling budget or not.

use crate::engine::sampling::Budget;

/// The kinds of job, each with its own overhead over its runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Task {
    /// One conversion, or Run ×N.
    Convert,
    /// A size sweep.
    Sweep,
    /// A work grid (sizes by work levels), calibration included.
    Grid,
    /// A grid whose cells run an op after the grayscale (the blur-radius axis, or `--op` on
    /// every cell): its overhead (the op's buffers, pipelines and planes) is not a work grid's.
    OpGrid,
    /// Round trips (operations per upload and download).
    RoundTrips,
    /// The tutorial's claims, quick.
    ClaimsQuick,
    /// The tutorial's claims, all of them.
    ClaimsAll,
    /// CPU vs GPU on one image, in turns until decided.
    Compare,
    /// Every workgroup size on one image, in turns until the fastest is decided.
    Workgroups,
    /// Every transfer path timed from 4 KiB up (the app's Transfer paths window).
    TransferPaths,
    /// Files converted one to another (`graylab convert` on a folder or several files), several
    /// at once: each decoded, converted and encoded. Its parts are the conversions; its overhead,
    /// the decode and the encode, most of its time, is seconds a megapixel (and a tenth of a
    /// megapixel more a file).
    Batch,
}

/// What a file of a batch costs beyond its pixels (opening it, reading its header, creating
/// and linking its output), in megapixels of its overhead: 40 JPEGs of 0.06 MP took 0.9 ms of
/// CPU a file beyond their pixels' (lavapipe's 2-core machine), and a file waits on the disk too.
const BATCH_FILE_MP: f64 = 0.1;

/// A batch's decode and encode before one was seen, CPU seconds a megapixel, spread over every
/// core: six 16-MP JPEG photos to gray PNGs took 1.45 s of CPU (lavapipe's 2-core machine).
const BATCH_GUESS_CPU_S_PER_MP: f64 = 0.015;

impl Task {
    /// Whether a job of this kind spends a fixed time beyond its runs, not a share of them: a
    /// conversion showing its result (as a share of a plain 60-ms run, it priced a 4096-round one
    /// at 1.8x), a grid its calibration and each cell's images (as a share of a small grid's
    /// runs, 3.2x, it priced the default grid at 5 min 44 s where it took 22 s).
    pub(super) fn fixed_overhead(self) -> bool {
        matches!(self, Self::Convert | Self::Grid | Self::OpGrid | Self::Batch)
    }

    /// How many times a job of this kind made of `parts` pays its fixed overhead: once, a grid
    /// once a cell (each size and level its own images and buffers), a batch once a megapixel
    /// of its files (and [`BATCH_FILE_MP`] a file).
    pub(super) fn overhead_units(self, parts: &[super::Part]) -> f64 {
        if self == Self::Batch {
            return parts.iter().map(|p| (p.megapixels + BATCH_FILE_MP) * p.runs).sum();
        }
        if !matches!(self, Self::Grid | Self::OpGrid) {
            return 1.0;
        }
        let mut cells: Vec<(u64, u32, crate::pixel::Op)> = Vec::new();
        for p in parts {
            let cell = (p.megapixels.to_bits(), p.rounds, p.op);
            if !cells.contains(&cell) {
                cells.push(cell);
            }
        }
        cells.len().max(1) as f64
    }

    /// Whether a job of this kind is the same job every time (the claims), so that once one was
    /// seen its estimate is the wall time seen, not a share of its runs' price, which other jobs
    /// move (a quick claims run of 6.5 s was estimated at 1.5 s so).
    pub(super) fn same_every_time(self) -> bool {
        matches!(self, Self::ClaimsQuick | Self::ClaimsAll)
    }

    /// Whether a job of this kind teaches the pace its runs ([`super::Pace::observe`]); the
    /// claims, the transfer paths and a batch (whose files' decode and encode are not a lane's
    /// runs) teach it their overhead alone.
    pub(super) fn teaches_runs(self) -> bool {
        !matches!(self, Self::ClaimsQuick | Self::ClaimsAll | Self::TransferPaths | Self::Batch)
    }

    /// Whether a job of this kind does its one-time work again every time, its overhead learned
    /// with it: the claims open a device for each of claim 6's cold runs (100 ms each on an H200,
    /// half its quick run); the transfer paths are one-time work themselves; a batch is a process
    /// of its own, which opens the GPU and compiles its pipelines each time.
    #[must_use]
    pub fn repeats_one_time_work(self) -> bool {
        !self.teaches_runs()
    }

    /// The sampling budget of a job of this kind that runs in turns until decided (CPU against
    /// GPU, a race of workgroup sizes), which caps its wall time.
    pub(super) fn sampled_within(self) -> Option<Budget> {
        matches!(self, Self::Compare | Self::Workgroups).then_some(Budget::FULL)
    }

    /// The most a sampled job whose warm-up and first look take `first_s` can take: those rounds
    /// once they outlast its budget, else the budget and one more round; times the guessed share.
    pub(super) fn capped_s(self, first_s: f64) -> Option<f64> {
        let b = self.sampled_within()?;
        let round_s = first_s / (b.warmup_rounds + b.min_rounds).max(1) as f64;
        let budget_s = b.max_time.as_secs_f64();
        let sampled_s = if first_s >= budget_s { first_s } else { budget_s + round_s };
        Some(sampled_s * self.guessed_overhead())
    }

    /// A kind's fixed overhead a unit before one was seen, seconds, where it is most of the job
    /// (a batch's decode and encode); `None`: a share of its runs is guessed instead.
    pub(super) fn guessed_fixed_s(self) -> Option<f64> {
        let cores = crate::engine::available_threads().max(1) as f64;
        (self == Self::Batch).then(|| BATCH_GUESS_CPU_S_PER_MP / cores)
    }

    /// A job's wall time over its runs before one was seen (images made, allocation, a grid's
    /// calibration).
    pub(super) fn guessed_overhead(self) -> f64 {
        match self {
            Self::Grid | Self::OpGrid => 1.05,
            Self::Sweep => 1.3,
            // Transfers are priced at the copies' fastest runs; the paths take their medians,
            // their map waits and one thread's copies: the H200's took 1.46 s priced at 0.57,
            // lavapipe's 10 s priced at 4.4.
            Self::TransferPaths => 2.0,
            _ => 1.2,
        }
    }
}
