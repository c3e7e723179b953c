//! Which workgroup shape is fastest here: every shape the adapter allows, in turns on one image,
//! its kernel timed by GPU timestamps where the adapter reads them (else the CPU clock), until
//! every other shape's time over the fastest's clears 1 or the budget is spent ([`WorkgroupRace`]).
//! Claim 3 runs the same race with its own goal ([`Goal::Spread`]).

use std::sync::atomic::AtomicBool;

use image::DynamicImage;

use crate::engine::bench::Repeat;
use crate::engine::estimate::{Lane, Part, THREE_TWO};
use crate::engine::sampling::{Budget, Decision, Interval, Sampled, Stop, decide, median, ratios, sample};
use crate::engine::spans::Phase;
use crate::engine::sweep::compare::in_turns;
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, WorkgroupSize};
use crate::pixel::Op;
use crate::system::clock::Clock;

/// When a race may stop before its budget is spent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Goal {
    /// The fastest shape is decided: every other shape over it clears 1.
    Fastest,
    /// The slowest shape over the fastest is decided against this ratio (claim 3).
    Spread(f64),
}

/// One shape's kernel time in a race.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeTime {
    /// The shape.
    pub workgroup: WorkgroupSize,
    /// The median kernel time and its 95% interval, in nanoseconds (`None`: too few rounds).
    pub kernel_ns: Option<Interval>,
    /// The clock that timed the kernel.
    pub clock: Clock,
    /// The kernel's nanoseconds in each warm round, in round order.
    pub samples_ns: Vec<f64>,
}

/// The answer to "which workgroup shape is fastest here".
#[derive(Clone, Debug, PartialEq)]
pub struct WorkgroupRace {
    /// Every shape raced, in the adapter's menu order.
    pub shapes: Vec<ShapeTime>,
    /// The shape with the lowest median kernel time.
    pub fastest: Option<WorkgroupSize>,
    /// The shape with the next lowest median.
    pub runner_up: Option<WorkgroupSize>,
    /// The shape with the highest median.
    pub slowest: Option<WorkgroupSize>,
    /// The runner-up's kernel time over the fastest's (per-round ratios): the fastest's speed-up.
    pub speed_up: Option<Interval>,
    /// The slowest's kernel time over the fastest's (per-round ratios).
    pub over_slowest: Option<Interval>,
    /// Whether the fastest is decided: every other shape's time over it, round by round, lies
    /// wholly above 1 (or it is the only shape); then `tied` is empty.
    pub decided: bool,
    /// Undecided: the fastest and every shape within the noise of it, fastest first.
    pub tied: Vec<WorkgroupSize>,
    /// Why the sampling stopped.
    pub stop: Stop,
    /// Warm rounds taken (each runs every shape once).
    pub rounds: usize,
    /// Wall time of every round, the warm-up included, in nanoseconds.
    pub took_ns: u64,
}

/// `2.3x`, `1.12x`: fewer decimals for larger ratios.
fn times(ratio: f64) -> String {
    if ratio >= 10.0 {
        format!("{ratio:.0}x")
    } else if ratio >= 2.0 {
        format!("{ratio:.1}x")
    } else {
        format!("{ratio:.2}x")
    }
}

/// The most shapes a verdict names; the rest are counted ("a, b, c and 7 more").
const NAMED: usize = 4;

/// "a", "a and b", "a, b and c"; past [`NAMED`] names, the first few and how many more.
fn listed(names: &[String]) -> String {
    if names.len() > NAMED {
        let shown = names.get(..NAMED - 1).unwrap_or_default();
        return format!("{} and {} more", shown.join(", "), names.len() - shown.len());
    }
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl WorkgroupRace {
    /// The race that `rounds` (each one kernel time per shape, in the order of `shapes`) give,
    /// each paired interval at `confidence` (the race's level for each look,
    /// [`Budget::look_confidence`]).
    #[must_use]
    pub fn of(
        shapes: &[WorkgroupSize],
        clocks: &[Clock],
        rounds: &[Vec<f64>],
        stop: Stop,
        took_ns: u64,
        confidence: f64,
    ) -> Self {
        let shapes: Vec<ShapeTime> = shapes
            .iter()
            .enumerate()
            .map(|(side, &workgroup)| {
                let samples_ns: Vec<f64> = rounds.iter().filter_map(|r| r.get(side).copied()).collect();
                ShapeTime {
                    workgroup,
                    kernel_ns: Interval::of(&samples_ns),
                    clock: clocks.get(side).copied().unwrap_or(Clock::CpuClock),
                    samples_ns,
                }
            })
            .collect();
        // The shapes by median, fastest first (the menu's order among equals).
        let medians: Vec<f64> =
            shapes.iter().map(|s| median(&s.samples_ns).unwrap_or(f64::INFINITY)).collect();
        let mut by_median: Vec<usize> = (0..shapes.len()).collect();
        by_median.sort_by(|&a, &b| medians[a].total_cmp(&medians[b]));
        let (fastest, runner_up, slowest) =
            (by_median.first().copied(), by_median.get(1).copied(), by_median.last().copied());
        let over = |side: Option<usize>| -> Option<Interval> {
            let (s, f) = (shapes.get(side?)?, shapes.get(fastest?)?);
            Interval::of_ratios(&s.samples_ns, &f.samples_ns, confidence)
        };
        let speed_up = over(runner_up);
        // Every other shape not decided slower than the fastest, round by round, ties with it:
        // the runner-up by median alone says nothing of a shape whose rounds are noisier.
        let not_slower: Vec<usize> = by_median
            .iter()
            .skip(1)
            .copied()
            .filter(|&i| decide(over(Some(i)).as_ref(), 1.0) != Decision::Above)
            .collect();
        let decided = fastest.is_some()
            && rounds.len() >= crate::engine::sampling::MIN_SAMPLES
            && not_slower.is_empty();
        let tied: Vec<usize> =
            if decided { Vec::new() } else { fastest.into_iter().chain(not_slower).collect() };
        let shape = |i: Option<usize>| i.and_then(|i| shapes.get(i)).map(|s| s.workgroup);
        Self {
            fastest: shape(fastest),
            runner_up: shape(runner_up),
            slowest: shape(slowest),
            speed_up,
            over_slowest: over(slowest),
            decided,
            tied: tied.into_iter().filter_map(|i| shape(Some(i))).collect(),
            stop,
            rounds: rounds.len(),
            took_ns,
            shapes,
        }
    }

    /// The shape's time, if it was raced.
    #[must_use]
    pub fn shape(&self, workgroup: WorkgroupSize) -> Option<&ShapeTime> {
        self.shapes.iter().find(|s| s.workgroup == workgroup)
    }

    /// The per-round ratios of `workgroup`'s kernel time over the fastest's.
    #[must_use]
    pub fn over_fastest(&self, workgroup: WorkgroupSize) -> Vec<f64> {
        match (self.shape(workgroup), self.fastest.and_then(|f| self.shape(f))) {
            (Some(s), Some(f)) => ratios(&s.samples_ns, &f.samples_ns),
            _ => Vec::new(),
        }
    }

    /// Whether the race reached `goal`.
    fn reached(&self, goal: Goal) -> bool {
        match goal {
            Goal::Fastest => self.decided,
            Goal::Spread(threshold) => decide(self.over_slowest.as_ref(), threshold) != Decision::Within,
        }
    }

    /// The verdict in one line: "16x16 is fastest: 1.12x (1.05–1.20) faster than 8x32, 2.3x
    /// than 256 — 13 rounds in turns", or "No shape is clearly fastest: 16x16, 8x8 and 32x8
    /// are within the noise (round by round at most 4% slower than 16x16 at the median, none
    /// decided slower) — 42 rounds in turns" (past four shapes tied, the first three and how
    /// many more).
    #[must_use]
    pub fn sentence(&self) -> String {
        let turns = format!("{} rounds in turns", self.rounds);
        let Some(fastest) = self.fastest else { return format!("No shape was raced — {turns}") };
        if self.decided {
            let (Some(runner_up), Some(i)) = (self.runner_up, self.speed_up) else {
                return format!("{fastest} is the only shape this adapter allows — {turns}");
            };
            let than_slowest = match (self.slowest, self.over_slowest) {
                (Some(slowest), Some(s)) if slowest != runner_up => {
                    format!(", {} than {slowest}", times(s.median))
                }
                _ => String::new(),
            };
            return format!(
                "{fastest} is fastest: {} ({:.2}–{:.2}) faster than {runner_up}{than_slowest} — {turns}",
                times(i.median),
                i.ci_low,
                i.ci_high
            );
        }
        let names: Vec<String> = self.tied.iter().map(ToString::to_string).collect();
        // The tied shapes' per-round ratios to the fastest, each at its median: what "within the
        // noise" spans, faster or slower. Round by round, not the table's medians, which load
        // that drifts between rounds moves apart.
        let medians: Vec<f64> = self
            .tied
            .iter()
            .filter(|&&w| w != fastest)
            .filter_map(|&w| median(&self.over_fastest(w)))
            .collect();
        let noise = match (self.speed_up, span(&medians, fastest)) {
            (None, _) | (_, None) => format!("too few rounds: {}", self.rounds),
            (Some(_), Some(span)) => format!("round by round {span} at the median, none decided slower"),
        };
        format!("No shape is clearly fastest: {} are within the noise ({noise}) — {turns}", listed(&names))
    }
}

/// How far per-round medians over the `fastest` shape's spread, faster (below 1) and slower:
/// "at most 4% slower than 16x16", "at most 10% faster than 16x16", "from 3% faster to 4% slower
/// than 16x16", "within 1% of 16x16"; `None` without any.
fn span(medians: &[f64], fastest: WorkgroupSize) -> Option<String> {
    let faster = 1.0 - medians.iter().copied().reduce(f64::min)?;
    let slower = medians.iter().copied().reduce(f64::max)? - 1.0;
    let percent = |d: f64| format!("{:.0}%", d * 100.0);
    // Under half a per cent each way is no direction.
    Some(match (faster >= 0.005, slower >= 0.005) {
        (false, false) => format!("within 1% of {fastest}"),
        (false, true) => format!("at most {} slower than {fastest}", percent(slower)),
        (true, false) => format!("at most {} faster than {fastest}", percent(faster)),
        (true, true) => {
            format!("from {} faster to {} slower than {fastest}", percent(faster), percent(slower))
        }
    })
}

/// Rounds of `measure` (each one kernel time per shape, the shapes in
/// [`crate::engine::sampling::rotation`] order) until the race reaches `goal` at a checkpoint or
/// the budget is spent.
pub(crate) fn race_rounds(
    shapes: &[WorkgroupSize],
    goal: Goal,
    budget: &Budget,
    cancel: Option<&AtomicBool>,
    measure: impl FnMut(usize) -> Result<Vec<f64>, EngineError>,
) -> Result<Sampled<Vec<f64>>, EngineError> {
    let clocks = vec![Clock::CpuClock; shapes.len()];
    let confidence = budget.look_confidence();
    let reached = |rounds: &[Vec<f64>]| {
        WorkgroupRace::of(shapes, &clocks, rounds, Stop::Decided, 0, confidence).reached(goal)
    };
    sample(budget, cancel, measure, reached, || EngineError::Cancelled)
}

/// Which workgroup shape is fastest for `settings` on `image`, raced until decided or `budget` is
/// spent; `progress(rounds)` after each round, [`EngineError::Cancelled`] once `cancel` is set.
pub fn workgroups(
    engine: &Engine,
    image: &DynamicImage,
    settings: &ConvertSettings,
    budget: &Budget,
    cancel: Option<&AtomicBool>,
    progress: &mut dyn FnMut(usize),
) -> Result<WorkgroupRace, EngineError> {
    race(engine, image, settings, Goal::Fastest, budget, cancel, progress)
}

/// What a race of `shapes` shapes on an image of `megapixels` runs at least, for its estimate:
/// each shape's warm-up and first look of `budget` (more rounds are learned as the job's overhead,
/// [`crate::engine::estimate::Task::Workgroups`]).
#[must_use]
pub fn race_parts(shapes: usize, settings: &ConvertSettings, megapixels: f64, budget: &Budget) -> Vec<Part> {
    let runs = (shapes * (budget.warmup_rounds + budget.min_rounds)) as f64;
    // The kernel alone is raced ([`race`]): no op.
    vec![Part {
        lane: Lane::Gpu,
        megapixels,
        rounds: settings.work.rounds,
        op: Op::None,
        runs,
        height_per_width: THREE_TWO,
    }]
}

/// [`workgroups`] with its `goal`.
pub(crate) fn race(
    engine: &Engine,
    image: &DynamicImage,
    settings: &ConvertSettings,
    goal: Goal,
    budget: &Budget,
    cancel: Option<&AtomicBool>,
    progress: &mut dyn FnMut(usize),
) -> Result<WorkgroupRace, EngineError> {
    let shapes = engine.gpu()?.valid_workgroups();
    let mut repeats = shapes
        .iter()
        .map(|&workgroup| {
            // The kernel alone: an op after it is timed apart and does not depend on the shape
            // (the CLI refuses `--op` with the race; the app's panel may have one set).
            let settings = ConvertSettings { backend: Backend::Gpu, workgroup, op: Op::None, ..*settings };
            Repeat::new(engine, image, &settings)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut clocks = vec![Clock::CpuClock; shapes.len()];
    let sampled = race_rounds(&shapes, goal, budget, cancel, |round| {
        progress(round + 1);
        let mut ns = vec![0.0; repeats.len()];
        in_turns(&mut repeats, round, |side, report| {
            let kernel = report.phase(Phase::Kernel);
            clocks[side] = kernel.map_or(Clock::CpuClock, |p| p.source);
            ns[side] = kernel.map_or(report.total_ns, |p| p.ns) as f64;
        })?;
        Ok(ns)
    })?;
    let confidence = budget.look_confidence();
    Ok(WorkgroupRace::of(&shapes, &clocks, &sampled.rounds, sampled.stop, sampled.took_ns, confidence))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: WorkgroupSize = WorkgroupSize { x: 16, y: 16 };
    const B: WorkgroupSize = WorkgroupSize { x: 8, y: 8 };
    const C: WorkgroupSize = WorkgroupSize { x: 256, y: 1 };

    /// Rounds of the kernel times `ns` (one per shape), each wobbling by a few per cent in turn.
    fn rounds(ns: [f64; 3]) -> impl FnMut(usize) -> Result<Vec<f64>, EngineError> {
        move |round| {
            let w = |k: usize| [1.0, 1.03, 0.98, 1.01, 0.97, 1.02][(round + k) % 6];
            Ok(vec![ns[0] * w(0), ns[1] * w(2), ns[2] * w(4)])
        }
    }

    fn raced(ns: [f64; 3], goal: Goal) -> WorkgroupRace {
        let budget = Budget { max_time: std::time::Duration::from_hours(1), ..Budget::FULL };
        let shapes = [A, B, C];
        let s = race_rounds(&shapes, goal, &budget, None, rounds(ns)).expect("sampled");
        let confidence = budget.look_confidence();
        WorkgroupRace::of(&shapes, &[Clock::GpuTimestamp; 3], &s.rounds, s.stop, s.took_ns, confidence)
    }

    #[test]
    fn a_clear_fastest_is_decided_at_the_first_checkpoint() {
        let r = raced([1000.0, 1500.0, 3000.0], Goal::Fastest);
        assert_eq!((r.decided, r.stop, r.rounds), (true, Stop::Decided, 6));
        assert_eq!((r.fastest, r.runner_up, r.slowest), (Some(A), Some(B), Some(C)));
        let i = r.speed_up.expect("an interval");
        assert!(i.ci_low > 1.0 && i.median > 1.4 && i.median < 1.6, "{i:?}");
        let s = r.over_slowest.expect("an interval");
        assert!(s.median > 2.8 && s.median < 3.2, "{s:?}");
        assert!(r.tied.is_empty());
        assert_eq!(r.shapes.len(), 3);
        assert!(r.shapes.iter().all(|s| s.kernel_ns.is_some_and(|k| k.samples == 6)));
        assert_eq!(r.shape(C).map(|s| s.clock), Some(Clock::GpuTimestamp));
        let text = r.sentence();
        assert!(text.starts_with("16x16 is fastest: 1.5"), "{text}");
        assert!(text.contains("faster than 8x8, 3.0x than 256 — 6 rounds in turns"), "{text}");
    }

    #[test]
    fn a_tie_is_within_the_noise_with_the_tied_shapes_named() {
        let r = raced([1000.0, 1000.0, 2000.0], Goal::Fastest);
        assert_eq!((r.decided, r.stop, r.rounds), (false, Stop::Rounds, Budget::FULL.max_rounds));
        assert_eq!(r.tied.len(), 2);
        assert!(r.tied.contains(&A) && r.tied.contains(&B) && !r.tied.contains(&C), "{:?}", r.tied);
        let text = r.sentence();
        assert!(text.starts_with("No shape is clearly fastest: "), "{text}");
        // B's rounds over A's: 0.98 to 1.03, at the median 1.00: no direction, never "1% slower".
        assert!(
            text.contains(" are within the noise (round by round within 1% of 16x16 at the median, "),
            "{text}"
        );
        assert!(text.ends_with(&format!("— {} rounds in turns", Budget::FULL.max_rounds)), "{text}");
        assert!(!text.contains("256"), "{text}");
        let names = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
        assert_eq!(listed(&names(4)), "s0, s1, s2 and s3");
        assert_eq!(listed(&names(11)), "s0, s1, s2 and 8 more");
    }

    #[test]
    fn the_fastest_is_decided_only_when_every_other_shape_is_decided_slower() {
        // By median A (1 ms), B (2 ms), C (3 ms). B is twice A every round, decided slower; C
        // is slower than A in three rounds of seven and faster in four, its interval over A
        // 0.8-3.0: not decided slower. Checking the runner-up alone once called A fastest.
        let a = [5.0, 5.0, 5.0, 1.0, 1.0, 1.0, 1.0];
        let c = [4.0, 4.0, 4.0, 0.9, 3.0, 3.0, 3.0];
        let rounds: Vec<Vec<f64>> = (0..7).map(|i| vec![a[i] * 1e6, 2.0 * a[i] * 1e6, c[i] * 1e6]).collect();
        let r = WorkgroupRace::of(
            &[A, B, C],
            &[Clock::GpuTimestamp; 3],
            &rounds,
            Stop::Rounds,
            0,
            crate::engine::sampling::CONFIDENCE,
        );
        assert_eq!((r.fastest, r.runner_up), (Some(A), Some(B)));
        assert!(r.speed_up.is_some_and(|i| i.ci_low > 1.0), "{:?}", r.speed_up);
        assert_eq!((r.decided, r.tied.as_slice()), (false, [A, C].as_slice()));
        // C is 10% faster than A round by round, at the median: said so, not "at most 1% slower".
        assert_eq!(
            r.sentence(),
            "No shape is clearly fastest: 16x16 and 256 are within the noise (round by round at most 10% faster \
             than 16x16 at the median, none decided slower) — 7 rounds in turns"
        );
        // Once C too is decided slower (1.5x A every round), A is fastest.
        let rounds: Vec<Vec<f64>> = (0..7).map(|i| vec![a[i], 2.0 * a[i], 1.5 * a[i]]).collect();
        let r = WorkgroupRace::of(&[A, B, C], &[Clock::GpuTimestamp; 3], &rounds, Stop::Decided, 0, 0.95);
        assert_eq!((r.decided, r.fastest, r.tied.len()), (true, Some(A), 0));
    }

    #[test]
    fn claim_3s_goal_stops_once_the_spread_is_decided() {
        // A tie at the top does not keep claim 3 sampling: the slowest is clearly 2x.
        let r = raced([1000.0, 1000.0, 2000.0], Goal::Spread(1.2));
        assert_eq!((r.stop, r.rounds), (Stop::Decided, 6));
    }
}
