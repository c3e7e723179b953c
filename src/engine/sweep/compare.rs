//! The sweep's comparisons through the sampling engine: at each point the GPU end to end and the
//! best CPU series run in turns until the interval of the GPU's speed-up lies clear of 1 or the
//! point's budget ([`point_budget`]) is spent: a [`Speedup`], "GPU faster", "CPU faster" or
//! "within the noise"; the crossover and the frontier count only decided wins. A point whose
//! fewest rounds cost too much ([`affordable`]) takes [`FEWEST_ROUNDS`] alone and is "not
//! measured (time budget)": a heavy cell of a work grid is not run six times more.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use image::DynamicImage;

use crate::engine::bench::Repeat;
use crate::engine::sampling::{Budget, MIN_SAMPLES, Stop, rotation, sample};
use crate::engine::spans::Phase;
use crate::engine::sweep::grid::Series;
use crate::engine::sweep::result::Speedup;
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, RunReport};

/// The most rounds one comparison takes.
pub const MAX_ROUNDS: usize = 42;

/// The share of a point's other measurements' time that its comparison may take beyond its
/// fewest rounds.
pub const TIME_SHARE: f64 = 0.5;

/// The most a point's fewest rounds may take, as a multiple of its other measurements' time.
pub const MOST_ADDED: f64 = 1.0;

/// The least time cap of a comparison: a small point's rounds are cheap, whatever the runs asked.
pub const FLOOR: Duration = Duration::from_millis(500);

/// The budget of one point whose other measurements took `measured`: at least `runs` rounds
/// (and at least [`MIN_SAMPLES`]), then until decided, [`MAX_ROUNDS`] or [`TIME_SHARE`] of
/// `measured` (at least [`FLOOR`]). No warm-up round: the point's own series, measured just
/// before on the same image and settings, warmed both sides.
#[must_use]
pub fn point_budget(runs: usize, measured: Duration) -> Budget {
    let min_rounds = runs.max(MIN_SAMPLES);
    let max_time = measured.mul_f64(TIME_SHARE).max(FLOOR);
    Budget { warmup_rounds: 0, min_rounds, max_rounds: MAX_ROUNDS.max(min_rounds), max_time }
}

/// Whether the fewest rounds of `budget`, each about `round_ns` (one run of each side), take at
/// most [`MOST_ADDED`] times `measured` (or twice [`FLOOR`]); a point where they do not is left
/// unsampled.
#[must_use]
pub fn affordable(budget: &Budget, round_ns: f64, measured: Duration) -> bool {
    let rounds = (budget.warmup_rounds + budget.min_rounds) as f64;
    let most = (measured.as_nanos() as f64 * MOST_ADDED).max(2.0 * FLOOR.as_nanos() as f64);
    rounds * round_ns <= most
}

/// The rounds every point gets, however heavy: a rough figure, no interval.
pub const FEWEST_ROUNDS: usize = 3;

/// The budget of a point whose fewest rounds [`affordable`] refused: [`FEWEST_ROUNDS`] rounds
/// and no more, so that the cell has a figure without deciding anything.
#[must_use]
pub fn fewest(budget: &Budget) -> Budget {
    Budget { warmup_rounds: 0, min_rounds: FEWEST_ROUNDS, max_rounds: FEWEST_ROUNDS, ..*budget }
}

/// Rounds of `measure` (each `[cpu_ns, gpu_ns]` of one round, the sides in [`rotation`] order)
/// until the GPU's speed-up is decided at a checkpoint or the budget is spent.
pub(crate) fn compare_rounds(
    cpu_series: Option<Series>,
    budget: &Budget,
    cancel: Option<&AtomicBool>,
    measure: impl FnMut(usize) -> Result<[f64; 2], EngineError>,
) -> Result<Speedup, EngineError> {
    let split = |rounds: &[[f64; 2]]| -> (Vec<f64>, Vec<f64>) { rounds.iter().map(|r| (r[0], r[1])).unzip() };
    // Every look, the last included, at the budget's level for each.
    let confidence = budget.look_confidence();
    let decided = |rounds: &[[f64; 2]]| {
        let (cpu, gpu) = split(rounds);
        Speedup::at(cpu_series, &cpu, &gpu, Stop::Decided, confidence).is_decided()
    };
    let sampled = sample(budget, cancel, measure, decided, || EngineError::Cancelled)?;
    let (cpu, gpu) = split(&sampled.rounds);
    Ok(Speedup::at(cpu_series, &cpu, &gpu, sampled.stop, confidence))
}

/// The two sides of a comparison: a CPU and a GPU setting of one image.
#[derive(Clone, Copy, Debug)]
pub struct Sides {
    /// The CPU side (its threads, formula and work).
    pub cpu: ConvertSettings,
    /// The GPU side.
    pub gpu: ConvertSettings,
    /// In a sweep, the series the CPU side stands for: its kernel (and op) is timed, as the
    /// series is; `None`: the whole CPU run is timed (the app's "CPU vs GPU").
    pub cpu_series: Option<Series>,
}

/// The GPU end to end (its whole run on the CPU clock) against the CPU on `image`, in turns
/// until decided or `budget` is spent; `progress(rounds)` after each round,
/// [`EngineError::Cancelled`] once `cancel` is set.
pub fn compare(
    engine: &Engine,
    image: &DynamicImage,
    sides: &Sides,
    budget: &Budget,
    cancel: Option<&AtomicBool>,
    progress: &mut dyn FnMut(usize),
) -> Result<Speedup, EngineError> {
    let kernel_only = sides.cpu_series.is_some();
    let mut repeats = [Repeat::new(engine, image, &sides.cpu)?, Repeat::new(engine, image, &sides.gpu)?];
    compare_rounds(sides.cpu_series, budget, cancel, |round| {
        progress(round + 1);
        let mut ns = [0.0; 2];
        in_turns(&mut repeats, round, |side, report| {
            // The CPU side as its series is timed, the GPU's as a caller waits.
            let series_ns = if side == 0 && kernel_only { kernel_and_op_ns(&report) } else { None };
            ns[side] = series_ns.unwrap_or(report.total_ns) as f64;
        })?;
        Ok(ns)
    })
}

/// A run as a sweep's series times it: its kernel and its op (the CPU's phase, the GPU's passes);
/// `None` without a kernel.
pub(crate) fn kernel_and_op_ns(report: &RunReport) -> Option<u64> {
    let op_ns = match report.backend {
        Backend::Cpu => report.phase(Phase::Op).map_or(0, |p| p.ns),
        Backend::Gpu => report.op.kernel_ns,
    };
    Some(report.phase(Phase::Kernel)?.ns + op_ns)
}

/// Runs each of `repeats` once, in [`rotation`] order for `round`, and hands each report to
/// `each(side, report)` as it comes.
pub(crate) fn in_turns(
    repeats: &mut [Repeat<'_>],
    round: usize,
    mut each: impl FnMut(usize, RunReport),
) -> Result<(), EngineError> {
    for side in rotation(round, repeats.len()) {
        each(side, repeats[side].run()?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sweep::result::Winner;

    /// The comparison against `series` within `budget` of rounds of `cpu` and `gpu` nanoseconds,
    /// each wobbling by a few per cent in turn.
    fn compared(series: Series, budget: &Budget, (cpu, gpu): (f64, f64)) -> Speedup {
        let rounds = |round| {
            let wobble = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02][round % 6];
            Ok([cpu * wobble, gpu / wobble])
        };
        compare_rounds(Some(series), budget, None, rounds).expect("sampled")
    }

    #[test]
    fn a_clear_win_is_decided_at_the_first_checkpoint() {
        let budget = point_budget(5, Duration::from_hours(2));
        let c = compared(Series::CpuAll, &budget, (2000.0, 1000.0));
        assert_eq!((c.winner, c.stop, c.rounds), (Winner::GpuFaster, Stop::Decided, MIN_SAMPLES));
        let i = c.speed_up.expect("an interval");
        assert!(i.ci_low > 1.0 && i.median > 1.9 && i.median < 2.1, "{i:?}");
        assert!(c.label().starts_with("GPU faster: 2."), "{}", c.label());
        // The other way round; more runs asked move the first look to them.
        let c = compared(Series::Cpu1, &point_budget(8, Duration::from_hours(2)), (1000.0, 3000.0));
        assert_eq!((c.winner, c.stop, c.rounds), (Winner::CpuFaster, Stop::Decided, 8));
        assert!(c.label().starts_with("CPU faster: 0.3"), "{}", c.label());
    }

    #[test]
    fn a_tie_is_within_the_noise_after_the_whole_budget() {
        let budget = point_budget(5, Duration::from_hours(2));
        let c = compared(Series::CpuAll, &budget, (1000.0, 1000.0));
        assert_eq!((c.winner, c.stop, c.rounds), (Winner::WithinNoise, Stop::Rounds, MAX_ROUNDS));
        assert!(c.label().starts_with("within the noise (±"), "{}", c.label());
        // A point too slow to sample is not sampled, and says so: 6 rounds in at most the other
        // measurements' 3 s, or in 1 s however short those were.
        let budget = point_budget(5, Duration::from_secs(3));
        assert_eq!(budget.max_time, Duration::from_millis(1500));
        assert!(affordable(&budget, 0.49e9, Duration::from_secs(3)));
        assert!(!affordable(&budget, 0.51e9, Duration::from_secs(3)));
        let small = point_budget(2, Duration::from_millis(3));
        assert_eq!(small.max_time, FLOOR);
        assert!(affordable(&small, 0.16e9, Duration::from_millis(3)));
        assert!(!affordable(&small, 0.17e9, Duration::from_millis(3)));
        // Such a point takes three rounds: a rough figure, not decided, neither win nor loss.
        let heavy = fewest(&budget);
        let c = compared(Series::CpuAll, &heavy, (6000.0, 1000.0));
        assert_eq!((c.winner, c.speed_up, c.rounds), (Winner::Undecided, None, FEWEST_ROUNDS));
        assert_eq!(c.label(), "not decided in the time budget: about 6.00x");
        let none = Speedup { rounds: 0, rough_speed_up: None, ..c };
        assert_eq!(none.label(), "not measured (time budget)");
        assert!(!c.is_decided());
    }
}
