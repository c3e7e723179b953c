//! Which workgroup shape is fastest here: every shape the adapter allows, in turns on one image,
//! its kernel timed by GPU timestamps where the adapter reads them (else the CPU clock), until
//! the runner-up's time over the fastest's clears 1 or the budget is spent ([`WorkgroupRace`]).
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
    /// The fastest shape is decided: the runner-up over it clears 1.
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
    /// Whether the fastest is decided: `speed_up` lies wholly above 1 (or it is the only shape).
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
        let decided = match runner_up {
            None => fastest.is_some() && rounds.len() >= crate::engine::sampling::MIN_SAMPLES,
            Some(_) => decide(speed_up.as_ref(), 1.0) == Decision::Above,
        };
        let mut tied = Vec::new();
        if !decided && let Some(f) = fastest {
            tied.push(f);
            tied.extend(
                by_median.into_iter().skip(1).filter(|&i| {
                    Some(i) == runner_up || decide(over(Some(i)).as_ref(), 1.0) != Decision::Above
                }),
            );
        }
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
    /// are within the noise (round by round at most 4% slower than 16x16 at the median, every
    /// interval reaching it) — 42
    /// rounds in turns" (past four shapes tied, the first three and how many more).
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
        // The largest median of the tied shapes' per-round ratios to the fastest: what "within
        // the noise" spans. Round by round, not the table's medians, which load that drifts
        // between rounds moves apart.
        let widest = self
            .tied
            .iter()
            .filter_map(|&w| {
                Interval::of_ratios(
                    &self.shape(w)?.samples_ns,
                    &self.shape(fastest)?.samples_ns,
                    crate::engine::sampling::CONFIDENCE,
                )
            })
            .map(|i| i.median)
            .fold(None, |top: Option<f64>, m| Some(top.map_or(m, |t| t.max(m))));
        let noise = match (self.speed_up, widest) {
            (None, _) | (_, None) => format!("too few rounds: {}", self.rounds),
            (Some(_), Some(m)) => format!(
                "round by round at most {:.0}% slower than {fastest} at the median, every interval reaching it",
                ((m - 1.0) * 100.0).max(1.0)
            ),
        };
        format!("No shape is clearly fastest: {} are within the noise ({noise}) — {turns}", listed(&names))
    }
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
        assert!(text.contains(" are within the noise (round by round at most 1% slower than "), "{text}");
        assert!(text.ends_with(&format!("— {} rounds in turns", Budget::FULL.max_rounds)), "{text}");
        assert!(!text.contains("256"), "{text}");
        let names = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
        assert_eq!(listed(&names(4)), "s0, s1, s2 and s3");
        assert_eq!(listed(&names(11)), "s0, s1, s2 and 8 more");
    }

    #[test]
    fn claim_3s_goal_stops_once_the_spread_is_decided() {
        // A tie at the top does not keep claim 3 sampling: the slowest is clearly 2x.
        let r = raced([1000.0, 1000.0, 2000.0], Goal::Spread(1.2));
        assert_eq!((r.stop, r.rounds), (Stop::Decided, 6));
    }
}
