//! What a sweep will measure and what it will cost, before it starts: the options, the sizes
//! ([`size_for`]) and levels, and for a grid a short calibration measured first and the plan
//! built from it ([`SweepOptions::plan`]): the warm runs each cell gets and the time it takes.
//!
//! A grid's cell whose one run is estimated to take long gets fewer warm runs (as many as fit in
//! [`CELL_SERIES_BUDGET_NS`] per series, at least one, at most the runs asked); each series keeps
//! its own cold run first (it allocates, pages in and compiles what the warm runs reuse). A grid
//! measures the one-thread CPU series at 0 rounds only (elsewhere the all-threads series is the
//! best CPU), and never on the blur's radius axis. A cell's op ([`CellOps`]) is priced by the ops' rates measured with this
//! machine's ceilings ([`Pace::op_run`]).

use image::DynamicImage;

use crate::engine::bench::bench;
use crate::engine::estimate::{Basis, Estimate, Lane, Pace, Part, THREE_TWO, Task};
use crate::engine::sweep::cell_ops::CellOps;
use crate::engine::sweep::grid::{AxisLevel, GridAxis, sorted_sizes};
use crate::engine::sweep::{Series, SweepResult};
use crate::engine::{
    Backend, ConvertSettings, Engine, EngineError, WorkgroupSize, available_threads, synthetic_rgb,
};
use crate::pixel::{Formula, OPS_PER_ROUND, Op, Work};
use crate::system::units::count;

/// The default sizes, in megapixels: 0.25 MP to 128 MP.
pub const DEFAULT_SIZES_MP: [f64; 10] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 33.0, 64.0, 128.0];

/// The default sizes of a work grid (work levels given, sizes not), in megapixels: small
/// enough that the default grid finishes in about 3 minutes on a 2-core machine with Mesa's
/// lavapipe, where the "GPU" does about 0.6 G pixel-rounds a second.
pub const DEFAULT_WORK_SIZES_MP: [f64; 3] = [0.25, 1.0, 2.0];

/// The warm-run time one series of one cell may take, nanoseconds: past it, fewer warm runs.
pub const CELL_SERIES_BUDGET_NS: u64 = 1_500_000_000;

/// The calibration's size, megapixels (or the grid's largest size when that is smaller).
pub const CALIBRATION_MP: f64 = 0.25;

/// The calibration's work level, rounds per pixel.
pub const CALIBRATION_ROUNDS: u32 = 256;

/// How a sweep runs.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Sizes in megapixels.
    pub sizes_mp: Vec<f64>,
    /// Warm runs per point (after one cold run).
    pub runs: usize,
    /// GPU workgroup size.
    pub workgroup: WorkgroupSize,
    /// Formula.
    pub formula: Formula,
    /// Include the GPU series (when an adapter is available).
    pub gpu: bool,
    /// Work levels, synthetic rounds per pixel (`[0]`: the plain grayscale); every size is
    /// measured at every level.
    pub work_levels: Vec<u32>,
    /// The divergent variant of the work (rounds only for odd gray values).
    pub divergent: bool,
    /// Keep each point's runs ([`crate::engine::sweep::SweepPoint::runs`]) for a trace.
    pub keep_runs: bool,
    /// What each cell runs after the grayscale, and the grid's second axis.
    pub ops: CellOps,
}

impl SweepOptions {
    /// The sizes measured: finite and above 0, smallest first, each once.
    #[must_use]
    pub fn sizes(&self) -> Vec<f64> {
        sorted_sizes(self.sizes_mp.iter().copied())
    }

    /// The work levels measured: lowest first, each once (`[0]` when none is given).
    #[must_use]
    pub fn levels(&self) -> Vec<u32> {
        let mut levels = self.work_levels.clone();
        levels.sort_unstable();
        levels.dedup();
        if levels.is_empty() {
            levels.push(0);
        }
        levels
    }

    /// Whether this is a work grid (any level but the plain grayscale alone).
    #[must_use]
    pub fn is_work_grid(&self) -> bool {
        self.levels() != [0]
    }

    /// The settings every run starts from: the formula and the workgroup asked.
    #[must_use]
    pub fn settings(&self) -> ConvertSettings {
        ConvertSettings { formula: self.formula, workgroup: self.workgroup, ..ConvertSettings::default() }
    }

    /// The work of one level (mask 0: the image stays the exact grayscale).
    #[must_use]
    pub fn work(&self, rounds: u32) -> Work {
        Work { rounds, mask: 0, divergent: self.divergent && rounds > 0 }
    }

    /// The levels of the grid's second axis, lowest first: the blur's radii, or the work levels.
    #[must_use]
    pub fn axis_levels_asked(&self) -> Vec<u32> {
        match self.ops.axis() {
            GridAxis::BlurRadius => self.ops.radii(),
            GridAxis::WorkRounds => self.levels(),
        }
    }

    /// Each level with what its cells run and their operations per pixel.
    #[must_use]
    pub fn axis_levels(&self) -> Vec<AxisLevel> {
        let axis = self.ops.axis();
        self.axis_levels_asked().into_iter().map(|level| AxisLevel::of(axis, level, self.ops.op)).collect()
    }

    /// Whether the sweep is a grid: over the blur's radius, or a work grid.
    #[must_use]
    pub fn is_grid(&self) -> bool {
        self.ops.axis() == GridAxis::BlurRadius || self.is_work_grid()
    }
}

/// A `w x h` image of about `megapixels`, 3:2 landscape, at least 1x1.
#[must_use]
pub fn size_for(megapixels: f64) -> (u32, u32) {
    let pixels = (megapixels * 1e6).max(1.0);
    let width = (pixels * 1.5).sqrt().round().max(1.0);
    let height = (pixels / width).round().max(1.0);
    (width as u32, height as u32)
}

/// One run of each path at one small size, at 0 rounds and at [`CALIBRATION_ROUNDS`], the
/// medians of one warm run each (after a cold one), CPU clock: what a grid's estimate scales.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    /// The size measured, megapixels.
    pub megapixels: f64,
    /// The work level measured beside 0, rounds per pixel.
    pub rounds: u32,
    /// CPU, one thread, 0 rounds: one conversion, nanoseconds.
    pub cpu1_ns: u64,
    /// CPU, all threads, 0 rounds.
    pub cpu_all_ns: u64,
    /// CPU, all threads, at `rounds`.
    pub cpu_all_work_ns: u64,
    /// GPU end to end, 0 rounds (`None` without a GPU).
    pub gpu_ns: Option<u64>,
    /// GPU end to end at `rounds`.
    pub gpu_work_ns: Option<u64>,
}

impl Calibration {
    /// Teaches `pace` the runs measured: each lane at 0 rounds and at `rounds`.
    pub fn observe_into(&self, pace: &mut Pace) {
        let mut seen = |lane, rounds, ns: u64| pace.observe(lane, self.megapixels, rounds, ns as f64 / 1e9);
        seen(Lane::CpuOneThread, 0, self.cpu1_ns);
        seen(Lane::CpuAllThreads, 0, self.cpu_all_ns);
        seen(Lane::CpuAllThreads, self.rounds, self.cpu_all_work_ns);
        if let (Some(plain), Some(worked)) = (self.gpu_ns, self.gpu_work_ns) {
            seen(Lane::Gpu, 0, plain);
            seen(Lane::Gpu, self.rounds, worked);
        }
    }
}

/// One cell of a sweep: its size, work level and op, the warm runs each backend gets, and what
/// it should cost.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellPlan {
    /// The size asked, megapixels.
    pub megapixels: f64,
    /// The work level, rounds per pixel.
    pub work_rounds: u32,
    /// The op after the grayscale (`none`: none).
    #[serde(default)]
    pub op: Op,
    /// Warm runs of each CPU series.
    pub cpu_runs: usize,
    /// Warm runs of each GPU series (end to end, resident); 0 without a GPU.
    pub gpu_runs: usize,
    /// Whether the one-thread CPU series is measured (at 0 rounds only in a work grid).
    pub single_thread: bool,
    /// The estimated time of the whole cell, cold runs included, nanoseconds (`None` without a
    /// calibration).
    pub estimated_ns: Option<u64>,
}

/// What a sweep will do and what it should cost, from [`SweepOptions::plan`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GridEstimate {
    /// Every cell in the order measured: each size smallest first, its levels lowest first.
    pub cells: Vec<CellPlan>,
    /// The warm runs asked per series.
    pub runs: usize,
    /// The estimated time of every cell together, nanoseconds (`None` without a calibration).
    pub total_ns: Option<u64>,
    /// The calibration the estimate scales, if one was measured.
    pub calibration: Option<Calibration>,
    /// The grid's second axis.
    #[serde(default)]
    pub axis: GridAxis,
    /// Whether this machine's op rates were measured for every lane the cells run on: the ops
    /// are then priced from them, else as synthetic rounds.
    #[serde(default)]
    pub op_rates_known: bool,
}

impl GridEstimate {
    /// The whole job's estimate, as its user waits for it: the `spent_s` seconds already spent
    /// before the cells (the calibration) and the cells' [`Self::total_ns`], from runs seen on this
    /// machine (the calibration's, just now); `None` without a calibration. The one figure the
    /// text says and the JSON's `estimate_s` keeps.
    #[must_use]
    pub fn whole(&self, spent_s: f64) -> Option<Estimate> {
        self.calibration?;
        Some(Estimate { seconds: self.total_ns? as f64 / 1e9 + spent_s.max(0.0), basis: Basis::Seen })
    }

    /// What the estimate is ([`Self::whole`], with the `spent_s` seconds already spent), what it
    /// is based on, and which cells run fewer times, in a few sentences.
    #[must_use]
    pub fn sentence(&self, spent_s: f64) -> String {
        let (Some(c), Some(whole)) = (&self.calibration, self.whole(spent_s)) else {
            return format!(
                "{}, {} each; no calibration, so no estimate of the time.",
                count(self.cells.len(), "cell"),
                count(self.runs, "warm run")
            );
        };
        // "0.2 s", "12.5 s", "1 min 30 s": a fraction of a second is not "0 s".
        let time = crate::system::units::elapsed_text(whole.seconds);
        let spent = crate::system::units::elapsed_text(spent_s);
        let gpu = if c.gpu_ns.is_some() { " and the GPU end to end" } else { "" };
        let op = self.op_sentence().map_or_else(String::new, |op| format!(" {op}"));
        format!(
            "{}, estimated at about {time} in all, {}: the {spent} spent calibrating just now, then \
             the cells, priced from the CPU (all threads){gpu} timed once each at {:.2} MP, 0 and {} \
             rounds per pixel, scaled with pixels x rounds (an estimate, not a measurement).{op} {}",
            count(self.cells.len(), "cell"),
            whole.basis_text(),
            c.megapixels,
            c.rounds,
            self.runs_sentence()
        )
    }

    /// How the cells' ops are priced, for every estimate of this plan; `None` when no cell runs
    /// one.
    #[must_use]
    pub fn op_sentence(&self) -> Option<String> {
        let mut ops: Vec<Op> = Vec::new();
        for op in self.cells.iter().map(|c| c.op).filter(|op| !op.is_none()) {
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
        let first = ops.first()?;
        let which = if self.axis == GridAxis::BlurRadius {
            "Each cell's blur".to_owned()
        } else {
            format!("Each cell's {first}")
        };
        if self.op_rates_known {
            let gpu = self.cells.iter().any(|c| c.gpu_runs > 0);
            let rates: Vec<&str> = [
                ops.iter().any(|op| matches!(op, Op::Blur { .. })).then_some("the blur per pixel and tap"),
                ops.contains(&Op::Dither).then_some(if gpu {
                    "the dither per wavefront step on the GPU and per pixel on the CPU"
                } else {
                    "the dither per pixel"
                }),
                gpu.then_some("the GPU op stage whole, with its copies of the gray plane"),
            ]
            .into_iter()
            .flatten()
            .collect();
            return Some(format!(
                "{which} is priced from the ops' rates measured with this machine's ceilings ({}).",
                rates.join("; ")
            ));
        }
        let counts: Vec<String> = ops.iter().map(|op| format!("{} for {op}", op.ops_per_pixel())).collect();
        Some(format!(
            "{which} is priced as its integer operations per pixel ({}) at the synthetic rounds' rate \
             ({OPS_PER_ROUND} a round): this machine's op rates are not measured yet.",
            counts.join(", ")
        ))
    }

    /// Which cells get fewer warm runs than asked, and why (or that none does).
    #[must_use]
    pub fn runs_sentence(&self) -> String {
        let gpu = self.cells.iter().any(|c| c.gpu_runs > 0);
        let fewer: Vec<String> = self
            .cells
            .iter()
            .filter(|c| c.cpu_runs < self.runs || (gpu && c.gpu_runs < self.runs))
            .map(|cell| {
                let gpu = if cell.gpu_runs > 0 { format!(", GPU {}", cell.gpu_runs) } else { String::new() };
                let level = match (self.axis, cell.op) {
                    (GridAxis::BlurRadius, op) => op.to_string(),
                    (GridAxis::WorkRounds, _) => format!("{} rounds", cell.work_rounds),
                };
                format!("{level} at {} MP (CPU {}{gpu})", cell.megapixels, cell.cpu_runs)
            })
            .collect();
        if fewer.is_empty() {
            format!("Every cell gets the {} asked.", count(self.runs, "warm run"))
        } else {
            format!(
                "Fewer warm runs than the {} asked, to keep each series of a cell near {:.1} s: {}.",
                self.runs,
                CELL_SERIES_BUDGET_NS as f64 / 1e9,
                fewer.join("; ")
            )
        }
    }
}

/// Warm runs of a series whose one run takes `run_ns`: as many as fit in the budget, at least
/// one, at most `asked`.
fn runs_within_budget(run_ns: f64, asked: usize) -> usize {
    if run_ns <= 0.0 || !run_ns.is_finite() {
        return asked.max(1);
    }
    ((CELL_SERIES_BUDGET_NS as f64 / run_ns).floor() as usize).clamp(1, asked.max(1))
}

impl CellPlan {
    /// What this cell runs, as the estimator counts it: each series with its cold run, the GPU's
    /// end to end, then resident.
    fn parts(&self) -> Vec<Part> {
        let (megapixels, rounds, op) = (self.megapixels, self.work_rounds, self.op);
        let part = |lane, runs: usize| Part {
            lane,
            megapixels,
            rounds,
            op,
            runs: runs as f64,
            height_per_width: THREE_TWO,
        };
        let mut parts = vec![part(Lane::CpuAllThreads, 1 + self.cpu_runs)];
        if self.single_thread {
            parts.push(part(Lane::CpuOneThread, 1 + self.cpu_runs));
        }
        if self.gpu_runs > 0 {
            parts.push(part(Lane::Gpu, 2 * (1 + self.gpu_runs)));
        }
        parts
    }
}

impl SweepOptions {
    /// Every cell, each running what [`Self::ops`] says, with the warm runs asked: each size smallest
    /// first, its levels lowest first.
    fn cells(&self) -> Vec<CellPlan> {
        let runs = self.runs.max(1);
        let (axis, grid, levels) = (self.ops.axis(), self.is_grid(), self.axis_levels_asked());
        let cell = |megapixels, level| {
            let (work_rounds, op) = axis.cell(level, self.ops.op);
            CellPlan {
                megapixels,
                work_rounds,
                op,
                cpu_runs: runs,
                gpu_runs: if self.gpu { runs } else { 0 },
                single_thread: !grid || (axis == GridAxis::WorkRounds && level == 0),
                estimated_ns: None,
            }
        };
        self.sizes().into_iter().flat_map(|mp| levels.iter().map(move |&level| cell(mp, level))).collect()
    }

    /// The plan of every cell, each running what [`Self::ops`] says, estimated by the one estimator
    /// ([`Pace`]): what `pace` learned on this machine before, taught the `calibration` just
    /// measured. A grid's cells get the warm runs that fit in their budget; without a
    /// calibration every cell gets the runs asked and no time is estimated.
    #[must_use]
    pub fn plan(&self, calibration: Option<&Calibration>, pace: &Pace) -> GridEstimate {
        let runs = self.runs.max(1);
        let axis = self.ops.axis();
        let op_rates_known =
            pace.op_rates_known(Lane::CpuAllThreads) && (!self.gpu || pace.op_rates_known(Lane::Gpu));
        let Some(c) = calibration else {
            let cells = self.cells();
            return GridEstimate { cells, runs, total_ns: None, calibration: None, axis, op_rates_known };
        };
        let mut pace = pace.clone();
        c.observe_into(&mut pace);
        let mut cells = self.cells_at(&pace);
        let mut parts = Vec::new();
        for cell in &mut cells {
            let cell_parts = cell.parts();
            cell.estimated_ns = Some((pace.parts(&cell_parts).seconds * 1e9).round() as u64);
            parts.extend(cell_parts);
        }
        let total_ns = Some((pace.job(self.task(), &parts).seconds * 1e9).round() as u64);
        GridEstimate { cells, runs, total_ns, calibration: Some(*c), axis, op_rates_known }
    }

    /// Every cell, a grid's with the warm runs that fit its budget at `pace` (as the grid's plan
    /// trims them).
    fn cells_at(&self, pace: &Pace) -> Vec<CellPlan> {
        let runs = self.runs.max(1);
        let mut cells = self.cells();
        for cell in cells.iter_mut().filter(|_| self.is_grid()) {
            let (mp, rounds, op) = (cell.megapixels, cell.work_rounds, cell.op);
            let one_run_ns = |lane| pace.run_with_op(lane, mp, rounds, op).seconds * 1e9;
            cell.cpu_runs = runs_within_budget(one_run_ns(Lane::CpuAllThreads), runs);
            if self.gpu {
                cell.gpu_runs = runs_within_budget(one_run_ns(Lane::Gpu), runs);
            }
        }
        cells
    }

    /// The parts a [`Pace`] estimates this sweep from, each cell running what [`Self::ops`] says (a
    /// plain sweep's sizes; a grid's cells as asked, before its calibration trims their runs).
    #[must_use]
    pub fn parts(&self) -> Vec<Part> {
        self.cells().iter().flat_map(CellPlan::parts).collect()
    }

    /// [`Self::parts`] as the sweep will run them where `pace` prices them: a grid's cells with
    /// the warm runs that fit their budget. Its estimate once a grid was seen, and what its
    /// overhead is learned over (priced with every run asked, a second grid of 10 runs was put at
    /// 3.7x the time it took, and its overhead learned as none).
    #[must_use]
    pub fn parts_at(&self, pace: &Pace) -> Vec<Part> {
        self.cells_at(pace).iter().flat_map(CellPlan::parts).collect()
    }

    /// The kind of job this sweep is, each cell running what [`Self::ops`] says, for its overhead: a
    /// grid with an op in its cells learns apart from a work grid (one kind's overhead must not
    /// rewrite the other's).
    #[must_use]
    pub fn task(&self) -> Task {
        match (self.is_grid(), self.ops.axis() == GridAxis::BlurRadius || !self.ops.op.is_none()) {
            (false, _) => Task::Sweep,
            (true, false) => Task::Grid,
            (true, true) => Task::OpGrid,
        }
    }
}

/// Teaches `pace` a finished sweep's medians on each lane, but for points that ran an op (their
/// time is not the rounds' pace); the job's overhead is taught apart ([`Pace::finished`]).
pub fn teach_pace(pace: &mut Pace, result: &SweepResult) {
    for point in result.points.iter().filter(|p| p.op.is_none()) {
        for (series, lane) in [
            (Series::Cpu1, Lane::CpuOneThread),
            (Series::CpuAll, Lane::CpuAllThreads),
            (Series::GpuTotal, Lane::Gpu),
        ] {
            if let Some(ns) = point.median_ns(series) {
                pace.observe(lane, point.megapixels, point.work_rounds, ns as f64 / 1e9);
            }
        }
    }
}

/// Measures the calibration of a work grid: one cold and one warm run of the CPU (one thread
/// at 0 rounds; all threads at 0 and [`CALIBRATION_ROUNDS`]) and, with `options.gpu`, of the GPU
/// end to end at both levels, on a synthetic image of [`CALIBRATION_MP`] (or the grid's largest
/// size when smaller). About a second on a 2-core machine with lavapipe.
pub fn calibrate(engine: &Engine, options: &SweepOptions) -> Result<Calibration, EngineError> {
    let largest = options.sizes().last().copied().unwrap_or(CALIBRATION_MP);
    let (w, h) = size_for(CALIBRATION_MP.min(largest));
    let image: DynamicImage = synthetic_rgb(w, h, 1);
    let base = options.settings();
    let work = options.work(CALIBRATION_ROUNDS);
    let time = |settings: ConvertSettings| bench(engine, &image, &settings, 1).map(|r| r.total.median_ns);
    let all = available_threads();
    let cpu1_ns = time(ConvertSettings { threads: 1, ..base })?;
    let cpu_all_ns = time(ConvertSettings { threads: all, ..base })?;
    let cpu_all_work_ns = time(ConvertSettings { threads: all, work, ..base })?;
    let (gpu_ns, gpu_work_ns) = if options.gpu {
        let gpu = ConvertSettings { backend: Backend::Gpu, ..base };
        let plain = time(gpu)?;
        let worked = time(ConvertSettings { work, ..gpu })?;
        engine.gpu_converter()?.release_buffers()?;
        (Some(plain), Some(worked))
    } else {
        (None, None)
    };
    Ok(Calibration {
        megapixels: crate::system::units::megapixels(w, h),
        rounds: CALIBRATION_ROUNDS,
        cpu1_ns,
        cpu_all_ns,
        cpu_all_work_ns,
        gpu_ns,
        gpu_work_ns,
    })
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
