//! The size sweep's results: the measurements at each size, the model's figures and the whole
//! sweep with its verdict. It uses only the grid's leaf.

use crate::engine::WorkgroupSize;
use crate::engine::ceilings::ComputeCeilings;
use crate::engine::ceilings::rates::PhaseRate;
use crate::engine::ceilings::{Ceiling, PhasePart};
use crate::engine::report::Stats;
use crate::engine::sampling::{Decision, Interval, Stop, ratios};
use crate::engine::spans::Phase;
use crate::engine::sweep::grid::{AxisLevel, CellNotRun, Frontier, GridAxis, Roofline, Series};
use crate::gpu::GpuCeilings;
use crate::pixel::{Formula, Op};
use crate::system::clock::Clock;
use crate::system::load::Busy;

/// The measurements at one size.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepPoint {
    /// Megapixels actually measured (width x height / 1e6).
    pub megapixels: f64,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Each series' statistics over the warm runs (absent when the GPU is not available).
    pub series: Vec<(Series, Stats)>,
    /// Host-to-GPU rate at the median upload, GB/s.
    pub upload_gb_per_s: Option<f64>,
    /// GPU-to-host rate at the median download, GB/s.
    pub download_gb_per_s: Option<f64>,
    /// The memory-stream baseline on all threads at this size: the CPU kernel's ceiling.
    #[serde(default)]
    pub cpu_stream: Option<Stats>,
    /// Each phase against its ceiling at its median: the CPU kernel on all threads, the GPU
    /// upload, kernel and download.
    #[serde(default)]
    pub rates: Vec<PhaseRate>,
    /// What the ceilings model predicts at this size.
    #[serde(default)]
    pub modelled: Option<ModelledPoint>,
    /// The work level of this point: synthetic rounds per pixel (0: the plain grayscale).
    #[serde(default)]
    pub work_rounds: u32,
    /// The op every series ran after the grayscale (`none`: none), timed with the kernel.
    #[serde(default)]
    pub op: Op,
    /// The GPU end to end against the best CPU series, measured in turns until decided (absent
    /// without a GPU, and in sweeps saved before it: then the medians decide).
    #[serde(default)]
    pub end_to_end: Option<Speedup>,
    /// How busy the machine was while this point was measured (absent where it is not known, or
    /// the point was too short to tell: [`crate::system::load::MIN_TICKS`]).
    #[serde(default)]
    pub busy: Option<Busy>,
    /// Each series' cold run and its last warm run, named ("1 thread · cold"), for a trace
    /// (`graylab sweep --trace`), when the options asked to keep them; never saved.
    #[serde(skip)]
    pub runs: Vec<(String, crate::engine::RunReport)>,
}

impl SweepPoint {
    /// This point's level on `axis`: its work rounds, or its blur's radius (0 without one).
    #[must_use]
    pub fn level(&self, axis: GridAxis) -> u32 {
        axis.level_of(self.work_rounds, self.op)
    }

    /// The median of one series, in nanoseconds.
    #[must_use]
    pub fn median_ns(&self, series: Series) -> Option<u64> {
        self.series.iter().find(|(s, _)| *s == series).map(|(_, st)| st.median_ns)
    }

    /// The best CPU median (one thread or all threads, whichever were measured), nanoseconds.
    #[must_use]
    pub fn best_cpu_ns(&self) -> Option<u64> {
        [Series::Cpu1, Series::CpuAll].iter().filter_map(|s| self.median_ns(*s)).min()
    }

    /// Whether `series` beats the best CPU series here. The GPU end to end is decided by its
    /// sampled comparison where there is one (a difference within the noise is no win); the
    /// resident series, never run in turns, only when its slowest run beat the best CPU series'
    /// fastest with enough runs that such a split is chance at most 2.5% of the time (the
    /// comparison's one side: four runs each at least, the sweep's five 0.4%); other series, and
    /// a sweep saved without comparisons, by the medians.
    #[must_use]
    pub fn gpu_wins(&self, series: Series) -> bool {
        match (&self.end_to_end, series) {
            (Some(c), Series::GpuTotal) => c.winner == Winner::GpuFaster,
            (_, Series::GpuResident) => self.every_run_faster(series),
            _ => matches!((self.median_ns(series), self.best_cpu_ns()), (Some(g), Some(c)) if g < c),
        }
    }

    /// Whether every run of `series` beat every run of the best CPU series (by median), with
    /// `C(n + m, n) >= 40` ways to split the runs: without a difference, so clean a split is
    /// chance at most 2.5% of the time.
    fn every_run_faster(&self, series: Series) -> bool {
        let stats = |wanted: Series| self.series.iter().find(|(s, _)| *s == wanted).map(|(_, st)| *st);
        let best_cpu =
            [Series::Cpu1, Series::CpuAll].into_iter().filter_map(stats).min_by_key(|s| s.median_ns);
        let (Some(gpu), Some(cpu)) = (stats(series), best_cpu) else { return false };
        let splits = (1..=gpu.runs).fold(1.0, |c, i| c * (cpu.runs + i) as f64 / i as f64);
        gpu.max_ns < cpu.min_ns && splits >= 40.0
    }

    /// Whether the machine was busy while this point was measured.
    #[must_use]
    pub fn was_busy(&self) -> bool {
        self.busy.is_some_and(|b| b.is_busy())
    }

    /// The clock that timed this point's GPU `phase` (its kernel, upload or download), as its
    /// rate keeps it: the kernel on the CPU clock where the adapter gave no timestamps; `None`
    /// where it has no such rate.
    #[must_use]
    pub fn gpu_phase_clock(&self, phase: Phase) -> Option<Clock> {
        let on_gpu = |c: Option<Ceiling>| c.is_some_and(|c| c != Ceiling::MemoryStream);
        self.rates
            .iter()
            .find(|r| r.phase == phase && r.part == PhasePart::Whole && on_gpu(r.ceiling))
            .map(|r| r.source)
    }

    /// The GPU's speed-up with `series` over the best CPU series here, the one figure every map
    /// shows: end to end, the sampled comparison's ([`Speedup::figure`], the figure its verdict
    /// line prints) where it took rounds; else (the resident series, a sweep saved without
    /// comparisons, a comparison with no rounds) the best CPU median over the series' median.
    #[must_use]
    pub fn speed_up(&self, series: Series) -> Option<CellSpeedUp> {
        let sampled = self.end_to_end.filter(|_| series == Series::GpuTotal).and_then(|c| c.figure());
        if let Some(ratio) = sampled {
            return Some(CellSpeedUp { ratio, sampled: true });
        }
        let gpu_ns = self.median_ns(series)?;
        Some(CellSpeedUp { ratio: self.best_cpu_ns()? as f64 / gpu_ns.max(1) as f64, sampled: false })
    }
}

/// A map cell's figure: the GPU's speed-up over the best CPU series, and what it rests on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellSpeedUp {
    /// CPU time over GPU time: above 1 the GPU is faster.
    pub ratio: f64,
    /// Whether it is the median of the per-round ratios run in turns (`false`: the medians of
    /// the series' separate warm runs, a cell without samples).
    pub sampled: bool,
}

impl CellSpeedUp {
    /// How a map marks a figure from the medians of separate runs: "*" (none on a sampled one).
    #[must_use]
    pub fn mark(self) -> &'static str {
        if self.sampled { "" } else { "*" }
    }
}

/// Who is faster at one point, as the sampling engine decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Winner {
    /// The GPU's speed-up interval lies wholly above 1.
    GpuFaster,
    /// It lies wholly below 1.
    CpuFaster,
    /// It holds 1: the difference is within the noise.
    WithinNoise,
    /// Too few rounds for an interval fitted in the time budget (a heavy cell of a work grid):
    /// not decided, neither a win nor a loss; its rounds and rough figure are kept beside it
    /// (`not_measured` in files saved before it was renamed).
    #[serde(alias = "not_measured")]
    Undecided,
}

impl Winner {
    /// How a map marks a cell its sampled comparison did not decide: "~" within the noise, "?"
    /// not decided (too few rounds for an interval); "" decided.
    #[must_use]
    pub fn mark(self) -> &'static str {
        match self {
            Self::WithinNoise => "~",
            Self::Undecided => "?",
            Self::GpuFaster | Self::CpuFaster => "",
        }
    }
}

/// The GPU end to end against a CPU series, run in turns until the interval of the GPU's speed-up
/// lies clear of 1 or the budget is spent.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Speedup {
    /// The CPU series it was run against (in a sweep, the faster of the warm runs' medians);
    /// `None` for the app's "CPU vs GPU", which runs the panel's threads.
    pub cpu_series: Option<Series>,
    /// The GPU's speed-up, CPU time over GPU time: the median of the per-round ratios with its
    /// 95% interval (`median`, `ci_low`, `ci_high`, `samples`); `None` with too few rounds.
    pub speed_up: Option<Interval>,
    /// What the interval says.
    pub winner: Winner,
    /// Why the sampling stopped.
    pub stop: Stop,
    /// Rounds taken (each one run of each side, after a warm-up round).
    pub rounds: usize,
    /// The median of the per-round speed-ups where too few rounds were taken for an interval:
    /// a figure, never a decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rough_speed_up: Option<f64>,
    /// The CPU side's time per run, nanoseconds: median and 95% interval (a kernel's in a
    /// sweep, the whole run's in the app); absent in sweeps saved before it was kept.
    pub cpu_ns: Option<Interval>,
    /// The GPU side's time per run end to end, nanoseconds: median and 95% interval.
    pub gpu_ns: Option<Interval>,
}

impl Speedup {
    /// The comparison that per-round CPU and GPU times give (the same rounds, in order), decided
    /// in one look at 95%.
    #[must_use]
    pub fn of(cpu_series: Option<Series>, cpu_ns: &[f64], gpu_ns: &[f64], stop: Stop) -> Self {
        Self::at(cpu_series, cpu_ns, gpu_ns, stop, crate::engine::sampling::CONFIDENCE)
    }

    /// [`Self::of`] with the speed-up's interval at `confidence`: a sampled comparison's level
    /// for each look ([`crate::engine::sampling::Budget::look_confidence`]).
    #[must_use]
    pub fn at(
        cpu_series: Option<Series>,
        cpu_ns: &[f64],
        gpu_ns: &[f64],
        stop: Stop,
        confidence: f64,
    ) -> Self {
        let speed_up = Interval::of_ratios(cpu_ns, gpu_ns, confidence);
        let winner = match crate::engine::sampling::decide(speed_up.as_ref(), 1.0) {
            _ if speed_up.is_none() => Winner::Undecided,
            Decision::Above => Winner::GpuFaster,
            Decision::Below => Winner::CpuFaster,
            Decision::Within => Winner::WithinNoise,
        };
        let rough_speed_up =
            if speed_up.is_none() { crate::engine::sampling::median(&ratios(cpu_ns, gpu_ns)) } else { None };
        Self {
            cpu_series,
            speed_up,
            winner,
            stop,
            rounds: cpu_ns.len().min(gpu_ns.len()),
            rough_speed_up,
            cpu_ns: Interval::of(cpu_ns),
            gpu_ns: Interval::of(gpu_ns),
        }
    }

    /// The speed-up its [`Self::label`] prints: the interval's median, else the median of too few
    /// rounds for an interval; `None` with no rounds.
    #[must_use]
    pub fn figure(&self) -> Option<f64> {
        self.speed_up.map(|i| i.median).or(self.rough_speed_up.filter(|_| self.rounds > 0))
    }

    /// Whether these rounds already decide who is faster.
    #[must_use]
    pub fn is_decided(&self) -> bool {
        matches!(self.winner, Winner::GpuFaster | Winner::CpuFaster)
    }

    /// The verdict in words with its figure: "GPU faster: 2.10x (1.90–2.30)", "CPU faster:
    /// 0.42x (0.40–0.45)", "within the noise (±4%)", with too few rounds for an interval "not
    /// decided in the time budget: about 0.50x" (its rounds are said beside it), or with none
    /// "not measured (time budget)".
    #[must_use]
    pub fn label(&self) -> String {
        let Some(i) = self.speed_up else {
            return match self.rough_speed_up {
                Some(x) if self.rounds > 0 => {
                    format!("not decided in the time budget: about {}x", crate::system::units::ratio(x))
                }
                _ => "not measured (time budget)".to_owned(),
            };
        };
        let r = crate::system::units::ratio;
        let figure = format!("{}x ({}–{})", r(i.median), r(i.ci_low), r(i.ci_high));
        match self.winner {
            Winner::GpuFaster => format!("GPU faster: {figure}"),
            Winner::CpuFaster => format!("CPU faster: {figure}"),
            Winner::WithinNoise | Winner::Undecided => {
                format!("within the noise (±{:.0}%): {figure}", i.spread_percent())
            }
        }
    }
}

/// A whole sweep, with its verdict.
#[expect(clippy::struct_excessive_bools, reason = "independent facts of a saved sweep, serialised flat")]
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepResult {
    /// graylab version.
    pub version: String,
    /// `release` or `debug`.
    pub build: String,
    /// Where the images came from (`synthetic` or a file name).
    pub source: String,
    /// The GPU adapter, if one was measured.
    pub adapter: Option<String>,
    /// Whether that adapter is a software rasteriser.
    pub software_adapter: bool,
    /// Whether the GPU kernel series came from timestamps at every size (not where the device
    /// has none, or reads them late and the runs fell back to the CPU clock).
    pub gpu_timestamps: bool,
    /// CPU threads of the "all threads" series.
    pub cpu_threads: usize,
    /// Warm runs per point.
    pub runs: usize,
    /// The GPU workgroup size.
    pub workgroup: WorkgroupSize,
    /// The formula.
    pub formula: Formula,
    /// The work levels measured, rounds per pixel, lowest first (`[0]`: the plain grayscale).
    #[serde(default = "plain_work_levels")]
    pub work_levels: Vec<u32>,
    /// Whether the work was the divergent variant (rounds only for odd gray values).
    #[serde(default)]
    pub divergent: bool,
    /// What the grid's second axis varies: work rounds, or the blur's radius.
    #[serde(default)]
    pub axis: GridAxis,
    /// The op every cell ran on the work axis (`none`: none; on the radius axis each point's).
    #[serde(default)]
    pub op: Op,
    /// Each level of the second axis, lowest first, with its operations per pixel (absent from
    /// sweeps saved before it: then `work_levels`).
    #[serde(default)]
    pub levels: Vec<AxisLevel>,
    /// How the estimate before the run priced the cells' op, in a sentence (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_estimate_basis: Option<String>,
    /// Every point measured, smallest first within each work level, the work levels lowest
    /// first.
    pub points: Vec<SweepPoint>,
    /// Whether the sweep was stopped (a signal, the app's Stop) before every cell was measured:
    /// `points` holds the cells finished, `not_run` the rest.
    #[serde(default)]
    pub stopped: bool,
    /// The cells a stopped sweep did not measure, in the order they would have run: no figure,
    /// neither a win nor a loss.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<CellNotRun>,
    /// The smallest size from which the GPU end to end beats the fastest CPU series, decided, at
    /// it and at every larger size ([`SweepPoint::gpu_wins`]).
    pub crossover_mp: Option<f64>,
    /// The smallest size from which the GPU with resident data beats the fastest CPU series at it
    /// and at every larger size, every run faster ([`SweepPoint::gpu_wins`]).
    pub resident_crossover_mp: Option<f64>,
    /// The fixed cost of one dispatch on data already on the GPU (submit to finish): the resident
    /// times of the two smallest sizes extended to 0 pixels.
    pub dispatch_latency_ns: Option<u64>,
    /// The clock of `dispatch_latency_ns`: the resident series' (absent from sweeps saved before
    /// it was said, and without a latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_latency_clock: Option<Clock>,
    /// The copies' fitted latencies, GPU sweeps only: the model adds them to every end-to-end
    /// run (absent from sweeps saved before they were fitted).
    #[serde(default)]
    pub copy_latency: Option<crate::engine::ceilings::CopyLatency>,
    /// Share of GPU end-to-end time spent moving data (the upload and the download phases), at
    /// the size closest to 33 MP (8K): the size is `transfer_share_mp`.
    pub transfer_share_at_8k: Option<f64>,
    /// The size that share was measured at, in megapixels.
    pub transfer_share_mp: Option<f64>,
    /// The GPU's probed ceilings the rates and the model use.
    #[serde(default)]
    pub ceilings: Option<Box<GpuCeilings>>,
    /// The crossover modelled from the ceilings.
    #[serde(default)]
    pub model: Option<Box<SweepModel>>,
    /// This machine's compute ceilings, when measured.
    #[serde(default)]
    pub compute: Option<ComputeCeilings>,
    /// Where the GPU starts to win over the work levels (a work grid: any level but 0 alone).
    #[serde(default)]
    pub frontier: Option<Frontier>,
    /// The roofline of the ceilings and the measured points (a work grid).
    #[serde(default)]
    pub roofline: Option<Roofline>,
    /// One sentence for this machine.
    pub verdict: String,
    /// How busy the machine was over the whole sweep (absent where it is not known).
    #[serde(default)]
    pub busy: Option<Busy>,
    /// Where the ceilings above came from (absent from sweeps saved before it was kept).
    #[serde(default)]
    pub held_against: crate::engine::ceilings::HeldAgainst,
}

impl SweepResult {
    /// Whether this sweep is a grid: any work level but the plain grayscale alone, or the
    /// blur's radius as its second axis.
    #[must_use]
    pub fn is_grid(&self) -> bool {
        self.axis == GridAxis::BlurRadius || self.work_levels.iter().any(|k| *k > 0)
    }

    /// The levels of the second axis, lowest first: rounds per pixel, or blur radii.
    #[must_use]
    pub fn grid_levels(&self) -> Vec<u32> {
        if self.levels.is_empty() {
            self.work_levels.clone()
        } else {
            self.levels.iter().map(|l| l.level).collect()
        }
    }

    /// Whether any cell ran an op after the grayscale (the model prices neither).
    #[must_use]
    pub fn has_op(&self) -> bool {
        self.points.iter().any(|p| !p.op.is_none())
    }

    /// Whether the machine was busy over the sweep or while any of its points was measured.
    #[must_use]
    pub fn was_busy(&self) -> bool {
        self.busy.is_some_and(|b| b.is_busy()) || self.points.iter().any(SweepPoint::was_busy)
    }

    /// How busy the machine was, in one clause, where it was busy: over the whole sweep, and how
    /// many points were measured busy (a sweep quiet overall can have a busy point).
    #[must_use]
    pub fn busy_text(&self) -> Option<String> {
        if !self.was_busy() {
            return None;
        }
        let points = self.points.iter().filter(|p| p.was_busy()).count();
        // A point too short to tell (under a second of CPU ticks) is not counted as quiet.
        let told = self.points.iter().filter(|p| p.busy.is_some()).count();
        let overall = self.busy.map_or_else(String::new, |b| format!("{} over the sweep, ", b.shares_text()));
        let of = crate::system::units::count(told, "point");
        Some(match self.points.len() - told {
            _ if told == 0 => format!("{overall}each point too short to tell on its own"),
            0 => format!("{overall}{points} of {of} measured busy"),
            short => format!("{overall}{points} of {of} measured busy, {short} too short to tell"),
        })
    }
}

fn plain_work_levels() -> Vec<u32> {
    vec![0]
}

/// What a pixel costs on each path, and what a GPU run costs however small.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CostModel {
    /// Fixed cost of one GPU run, nanoseconds.
    pub gpu_latency_ns: f64,
    /// Fixed cost of an end-to-end run's copies (up and down) on top, nanoseconds.
    #[serde(default)]
    pub copy_latency_ns: f64,
    /// GPU end to end, every step at its ceiling one after the other, ns per pixel.
    pub gpu_ns_per_pixel: f64,
    /// GPU end to end with the host copies fully overlapping the GPU's work, ns per pixel.
    pub gpu_overlapped_ns_per_pixel: f64,
    /// GPU with the input resident and the output left there: the kernel at the device-copy
    /// rate, ns per pixel.
    pub gpu_resident_ns_per_pixel: f64,
    /// CPU at the memory-stream baseline, ns per pixel.
    pub cpu_ns_per_pixel: f64,
}

/// The modelled times at one size, nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelledPoint {
    /// GPU end to end, steps one after the other.
    pub gpu_total_ns: u64,
    /// GPU end to end, host copies fully overlapping GPU work.
    pub gpu_overlapped_ns: u64,
    /// GPU with the data resident.
    pub gpu_resident_ns: u64,
    /// CPU, all threads.
    pub cpu_ns: u64,
}

/// A sweep's model: its costs, where they came from, and the modelled crossovers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepModel {
    /// The costs.
    pub cost: CostModel,
    /// Where the GPU latency came from.
    pub latency_from: String,
    /// The size whose memory-stream baseline set the CPU's rate, megapixels.
    pub cpu_stream_mp: f64,
    /// From this size the modelled GPU end to end beats the CPU (`None`: never).
    pub crossover_mp: Option<f64>,
    /// The same with host copies fully overlapping GPU work.
    pub overlapped_crossover_mp: Option<f64>,
    /// The same with the data resident on the GPU.
    pub resident_crossover_mp: Option<f64>,
}

/// Fails unless `text` holds `part`, showing the text.
#[cfg(test)]
#[track_caller]
pub(crate) fn assert_says(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in: {text}");
}

/// The statistics of one run of `ns`, for made-up points.
#[cfg(test)]
pub(crate) fn one_run(ns: u64) -> Stats {
    Stats { min_ns: ns, median_ns: ns, max_ns: ns, runs: 1, clock: None }
}

#[cfg(test)]
impl SweepPoint {
    /// A made-up point of `mp` megapixels (1 x 1 pixels) with five runs of each series, every
    /// one at its median; with a GPU total and kernel, what is not the kernel is its upload and
    /// download, half each.
    pub(crate) fn for_tests(mp: f64, medians_ns: &[(Series, u64)]) -> Self {
        let series: Vec<(Series, Stats)> =
            medians_ns.iter().map(|&(s, ns)| (s, Stats { runs: 5, ..one_run(ns) })).collect();
        let median = |wanted| medians_ns.iter().find(|(s, _)| *s == wanted).map(|&(_, ns)| ns);
        let moving =
            median(Series::GpuTotal).zip(median(Series::GpuKernel)).map(|(t, k)| t.saturating_sub(k));
        let rate = |phase, ns| PhaseRate {
            phase,
            part: PhasePart::Whole,
            bytes: 3,
            ns,
            source: Clock::CpuClock,
            gb_per_s: 3.0 / ns.max(1) as f64,
            ceiling: None,
            ceiling_gb_per_s: None,
            ceiling_source: None,
            percent_of_ceiling: None,
            ceiling_bytes: None,
        };
        let rates = moving
            .map_or_else(Vec::new, |m| vec![rate(Phase::Upload, m / 2), rate(Phase::Download, m - m / 2)]);
        Self { megapixels: mp, width: 1, height: 1, series, rates, ..Self::default() }
    }
}

#[cfg(test)]
impl SweepResult {
    /// A made-up result of `points` on a "Test GPU" with timestamps, nothing analysed yet: the
    /// fixture the verdict's and the frontier's tests build on.
    pub(crate) fn for_tests(points: Vec<SweepPoint>) -> Self {
        Self {
            build: "release".into(),
            source: "synthetic".into(),
            adapter: Some("Test GPU".into()),
            gpu_timestamps: true,
            cpu_threads: 2,
            runs: 1,
            work_levels: vec![0],
            points,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sampling::Stop;

    #[test]
    fn a_cells_speed_up_is_its_sampled_figure_where_it_took_rounds_else_the_medians() {
        let medians = [(Series::CpuAll, 1600), (Series::GpuTotal, 5000), (Series::GpuResident, 800)];
        let plain = SweepPoint::for_tests(1.0, &medians);
        // No comparison: the medians of the separate runs, marked.
        let from_medians = CellSpeedUp { ratio: 0.32, sampled: false };
        assert_eq!(plain.speed_up(Series::GpuTotal), Some(from_medians));
        assert_eq!(from_medians.mark(), "*");
        // Run in turns, the GPU 3.2x faster: that figure, not the medians' 0.32x.
        let compared = |cpu: &[f64], gpu: &[f64]| SweepPoint {
            end_to_end: Some(Speedup::of(Some(Series::CpuAll), cpu, gpu, Stop::Decided)),
            ..plain.clone()
        };
        let decided = compared(&[1600.0; 6], &[500.0; 6]);
        assert_eq!(decided.speed_up(Series::GpuTotal), Some(CellSpeedUp { ratio: 3.2, sampled: true }));
        assert_eq!(decided.end_to_end.map(|c| c.label()), Some("GPU faster: 3.20x (3.20–3.20)".to_owned()));
        // The data kept on the GPU is never run in turns: its medians.
        assert_eq!(decided.speed_up(Series::GpuResident), Some(CellSpeedUp { ratio: 2.0, sampled: false }));
        // Too few rounds for an interval: the rough figure the line prints ("about 2.00x").
        let rough = compared(&[1000.0, 1000.0], &[500.0, 500.0]);
        assert_eq!(rough.speed_up(Series::GpuTotal), Some(CellSpeedUp { ratio: 2.0, sampled: true }));
        // No rounds at all: the medians again.
        assert_eq!(compared(&[], &[]).speed_up(Series::GpuTotal), Some(from_medians));
    }
}
