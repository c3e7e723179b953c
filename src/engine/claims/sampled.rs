//! The claims' rounds: each side prepared once ([`Repeat`]) and run in turns until the deciding
//! ratio clears the claim's threshold; and the helpers that turn rounds into figures and evidence.

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;

use image::DynamicImage;

use crate::engine::bench::Repeat;
use crate::engine::claims::Evidence;
use crate::engine::report::RunReport;
use crate::engine::sampling::{Budget, Decision, Interval, Sampled, decide, sample};
use crate::engine::spans::Phase;
use crate::engine::sweep::compare::in_turns;
use crate::engine::{ConvertSettings, Engine, EngineError};
use crate::system::clock::Clock;

/// Runs kept for a trace: the last of each side, named, in the order first seen.
pub(super) type KeptRuns = RefCell<Vec<(String, RunReport)>>;

/// How a claim samples: the set's budget, the run's stop flag, and where runs are kept for a
/// trace when asked.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sampling<'a> {
    /// The quick or the full set's budget.
    pub budget: Budget,
    /// Checked between rounds.
    pub cancel: Option<&'a AtomicBool>,
    /// Where each side's last run is kept, when a trace was asked for.
    pub kept: Option<&'a KeptRuns>,
}

impl Sampling<'_> {
    /// Keeps `report` as the last run of side `name` (at its image size), when runs are kept.
    pub(super) fn keep(&self, name: &str, report: &RunReport) {
        let Some(kept) = self.kept else { return };
        let mut kept = kept.borrow_mut();
        // A side is its name (backend, workgroup or threads), size, work and op.
        let settings = |r: &RunReport| (r.width, r.height, r.work.work_rounds, r.work.divergent, r.op.op);
        let same = |(n, r): &&mut (String, RunReport)| n == name && settings(r) == settings(report);
        match kept.iter_mut().find(same) {
            Some(slot) => slot.1 = report.clone(),
            None => kept.push((name.to_owned(), report.clone())),
        }
    }

    /// Takes rounds of `measure` until `decided` holds at a checkpoint or the budget is spent.
    pub(super) fn rounds<R>(
        &self,
        measure: impl FnMut(usize) -> Result<R, EngineError>,
        decided: impl Fn(&[R]) -> bool,
    ) -> Result<Sampled<R>, EngineError> {
        sample(&self.budget, self.cancel, measure, decided, || EngineError::Cancelled)
    }

    /// Runs every setting of `sides` on `image` once a round, in rotated order, until
    /// `decided(rounds)`: each round holds one report per side, in the order of `sides`.
    pub(super) fn interleaved(
        &self,
        engine: &Engine,
        image: &DynamicImage,
        sides: &[ConvertSettings],
        decided: impl Fn(&[Vec<RunReport>]) -> bool,
    ) -> Result<Sampled<Vec<RunReport>>, EngineError> {
        let mut repeats =
            sides.iter().map(|s| Repeat::new(engine, image, s)).collect::<Result<Vec<_>, _>>()?;
        self.rounds(
            |round| {
                let mut reports: Vec<Option<RunReport>> = vec![None; repeats.len()];
                in_turns(&mut repeats, round, |side, report| {
                    self.keep(&side_name(&sides[side]), &report);
                    reports[side] = Some(report);
                })?;
                Ok(reports.into_iter().flatten().collect())
            },
            decided,
        )
    }

    /// [`Sampling::interleaved`] until the per-round `ratio` is decided against `threshold`: the rounds
    /// taken and the evidence named `statistic`.
    pub(super) fn decide(
        &self,
        (engine, image): (&Engine, &DynamicImage),
        sides: &[ConvertSettings],
        (statistic, threshold): (&str, f64),
        ratio: impl Fn(&[Vec<RunReport>]) -> Vec<f64>,
    ) -> Result<(Vec<Vec<RunReport>>, Evidence), EngineError> {
        let sampled = self.interleaved(engine, image, sides, |r| self.settled(&ratio(r), threshold))?;
        let e = self.evidence(statistic, &ratio(&sampled.rounds), threshold, sampled.stop);
        Ok((sampled.rounds, e))
    }

    /// The evidence that `values` (per-round ratios, in the order taken) give against
    /// `threshold`: the interval at the budget's level for each look (the one that decided, or
    /// the last), widened for the run's drift.
    pub(super) fn evidence(
        &self,
        statistic: &str,
        values: &[f64],
        threshold: f64,
        stop: crate::engine::sampling::Stop,
    ) -> Evidence {
        let interval = Interval::of_drifting(values, self.budget.look_confidence());
        Evidence {
            statistic: statistic.to_owned(),
            decision: decide(interval.as_ref(), threshold),
            interval,
            threshold,
            stop,
        }
    }

    /// Whether per-round `values` already decide against `threshold`, at the budget's level for
    /// each look.
    pub(super) fn settled(&self, values: &[f64], threshold: f64) -> bool {
        self.evidence("", values, threshold, crate::engine::sampling::Stop::Decided).decision
            != Decision::Within
    }
}

/// The default settings on the GPU.
pub(super) fn gpu() -> ConvertSettings {
    ConvertSettings { backend: crate::engine::Backend::Gpu, ..ConvertSettings::default() }
}

/// A side's name in a trace: its workgroup on the GPU, or its threads (the trace's process names
/// the backend, formula, work, op and size).
pub(super) fn side_name(s: &ConvertSettings) -> String {
    match s.backend {
        crate::engine::Backend::Gpu => format!("workgroup {}", s.workgroup),
        crate::engine::Backend::Cpu => "all threads".to_owned(),
    }
}

/// The nanoseconds `ns` reads from side `side`'s report, each round (rounds without them left out).
pub(super) fn side_ns(
    rounds: &[Vec<RunReport>],
    side: usize,
    ns: impl Fn(&RunReport) -> Option<u64>,
) -> Vec<f64> {
    rounds.iter().filter_map(|r| ns(r.get(side)?)).map(|ns| ns as f64).collect()
}

/// A phase's nanoseconds in each round's report of side `side` (rounds without it left out).
pub(super) fn phase_ns(rounds: &[Vec<RunReport>], side: usize, phase: Phase) -> Vec<f64> {
    side_ns(rounds, side, |r| r.phase(phase).map(|p| p.ns))
}

/// The whole run's nanoseconds of side `side`, each round.
pub(super) fn total_ns(rounds: &[Vec<RunReport>], side: usize) -> Vec<f64> {
    side_ns(rounds, side, |r| Some(r.total_ns))
}

/// The clock's label of `phase` in side `side`'s reports (`cpu-clock` when absent).
pub(super) fn clock(rounds: &[Vec<RunReport>], side: usize, phase: Phase) -> &'static str {
    rounds.first().and_then(|r| r.get(side)?.phase(phase)).map_or(Clock::CpuClock, |p| p.source).label()
}

/// The median of `values` (0 when empty).
pub(super) fn median(values: &[f64]) -> f64 {
    crate::engine::sampling::median(values).unwrap_or(0.0)
}
