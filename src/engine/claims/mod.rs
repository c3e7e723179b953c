//! The tutorial's claims ("GPU computing: when and how to speed up code"), each tested on this
//! machine: a short experiment, its measurements with their units and clocks, a verdict from a
//! rule written once ([`rules`]) and one sentence that says why. Another machine may reach the
//! opposite verdicts. Each comparison runs its sides in turns ([`crate::engine::sampling`])
//! until the deciding ratio's 95% interval clears the claim's threshold, else "inconclusive
//! here"; the quick set runs the same experiments with a smaller budget.
//!
//! The experiments: `transfers` (claims 1, 2 and 6), `timing` (3 and 4), `work` (7 and 8),
//! `sizes` (5 and 9) and `sequential` (10); `sampled` runs their rounds.

mod parts;
pub mod rules;
mod sampled;
mod sequential;
mod sizes;
mod timing;
mod transfers;
mod work;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use parts::{claims_parts, claims_steps};

use crate::engine::sampling::{Budget, Decision, Interval, Stop};
use crate::engine::{Engine, EngineError, RunReport};
use crate::system::load::{Busy, CpuSnapshot};
use crate::system::units::ratio;

/// Whether a claim holds on this machine.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Verdict {
    /// The claim holds here.
    Holds,
    /// It does not hold here.
    DoesNotHold,
    /// It holds from this threshold on (e.g. "16 operations per round trip").
    HoldsFrom(String),
    /// The difference is within the noise of what was measured: neither verdict is supported.
    Inconclusive,
    /// The run was stopped before this claim's experiment finished.
    NotRun,
}

impl Verdict {
    /// Whether it decides the claim (holds, does not hold, holds from a threshold).
    #[must_use]
    pub fn is_decided(&self) -> bool {
        matches!(self, Self::Holds | Self::DoesNotHold | Self::HoldsFrom(_))
    }
}

/// Says how busy the machine was while a claim was measured, when it was; a claim measured while
/// others took more of it than graylab had ([`Busy::overwhelms`]) is "inconclusive", its figures
/// kept (a quick set under a load of 9 on two cores once decided claim 5 against its full set,
/// intervals 0.03–0.96 against 2.25–5.17).
fn judge_busy(result: &mut ClaimResult) {
    let Some(busy) = result.busy.filter(Busy::is_busy) else { return };
    if busy.overwhelms() && result.verdict.is_decided() {
        let _ = write!(
            result.why,
            "; not decided: {} while it was measured, more than graylab had, so its timings measure the \
             scheduler as much as the work: run it again when the machine is quiet",
            busy.shares_text()
        );
        result.verdict = Verdict::Inconclusive;
    } else {
        let _ = write!(
            result.why,
            "; measured on a busy machine ({}), so the noise is wider",
            busy.shares_text()
        );
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Holds => f.write_str("holds here"),
            Self::DoesNotHold => f.write_str("does not hold here"),
            Self::HoldsFrom(threshold) => write!(f, "holds from {threshold} on"),
            Self::Inconclusive => f.write_str("inconclusive here"),
            Self::NotRun => f.write_str("not run (stopped)"),
        }
    }
}

impl From<Verdict> for String {
    fn from(v: Verdict) -> Self {
        v.to_string()
    }
}

impl TryFrom<String> for Verdict {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        let fixed = [Self::Holds, Self::DoesNotHold, Self::Inconclusive, Self::NotRun];
        if let Some(v) = fixed.into_iter().find(|v| v.to_string() == s) {
            return Ok(v);
        }
        s.strip_prefix("holds from ")
            .and_then(|rest| rest.strip_suffix(" on"))
            .map(|threshold| Self::HoldsFrom(threshold.to_owned()))
            .ok_or_else(|| format!("not a verdict: {s:?}"))
    }
}

/// One measured figure of an experiment.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Measurement {
    /// What was measured, e.g. "upload" or "submit only, no wait".
    pub name: String,
    /// Its value, in `unit`.
    pub value: f64,
    /// `ms`, `x`, `KB`, `MP`, ...
    pub unit: String,
    /// The clock that measured it (`cpu-clock`, `gpu-timestamp`, `cpu-clock+gpu-timestamp`), or
    /// `none` for a size or a count that no clock measured.
    pub clock: String,
    /// The lower end of the value's 95% interval, where it is a median of enough samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// The upper end of that interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// How many samples the value is the median of (none for a single reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
}

impl Measurement {
    /// A time in milliseconds from nanoseconds.
    #[must_use]
    pub fn ms(name: impl Into<String>, ns: f64, clock: &str) -> Self {
        Self::of(name, ns / 1e6, "ms", clock)
    }

    /// Any other figure.
    #[must_use]
    pub fn of(name: impl Into<String>, value: f64, unit: &str, clock: &str) -> Self {
        Self { name: name.into(), value, unit: unit.to_owned(), clock: clock.to_owned(), ..Self::default() }
    }

    /// A median with its interval, in milliseconds from nanosecond samples.
    #[must_use]
    pub fn ms_of(name: impl Into<String>, ns: &[f64], clock: &str) -> Self {
        Self::sampled(name, &ns.iter().map(|v| v / 1e6).collect::<Vec<_>>(), "ms", clock)
    }

    /// A median with its interval from `values` in `unit`.
    #[must_use]
    pub fn sampled(name: impl Into<String>, values: &[f64], unit: &str, clock: &str) -> Self {
        Self::of_interval(name, Interval::of(values), values, unit, clock)
    }

    /// The median and interval of `interval`, in `unit`: one a verdict was decided on, so that a
    /// ratio is printed with one interval only; without one, the median of `values`.
    #[must_use]
    pub fn of_interval(
        name: impl Into<String>,
        interval: Option<Interval>,
        values: &[f64],
        unit: &str,
        clock: &str,
    ) -> Self {
        match interval {
            Some(i) => Self {
                ci_low: Some(i.ci_low),
                ci_high: Some(i.ci_high),
                samples: Some(i.samples),
                ..Self::of(name, i.median, unit, clock)
            },
            None => {
                Self { samples: Some(values.len()), ..Self::of(name, sampled::median(values), unit, clock) }
            }
        }
    }
}

/// The ratio a verdict was decided on: its interval over the rounds, against the threshold.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    /// The ratio, e.g. "(upload + download) / GPU kernel".
    pub statistic: String,
    /// Its median and interval; `None` with too few rounds for one.
    pub interval: Option<Interval>,
    /// The claim's threshold on it.
    pub threshold: f64,
    /// Where the interval lies against the threshold.
    pub decision: Decision,
    /// Why the sampling stopped.
    pub stop: Stop,
}

impl Evidence {
    /// `ratio 1.40 (95% CI 1.21–1.62, 9 rounds; against 1.20)`, or why there is no interval:
    /// the threshold said beside the interval, so that a decided effect that falls short of its
    /// margin reads as such.
    #[must_use]
    pub fn text(&self) -> String {
        match &self.interval {
            Some(i) => format!(
                "{} {} (95% CI {}\u{2013}{}, {} rounds; against {})",
                self.statistic,
                ratio(i.median),
                ratio(i.ci_low),
                ratio(i.ci_high),
                i.samples,
                ratio(self.threshold)
            ),
            None => format!(
                "{}: too few rounds for an interval (against {})",
                self.statistic,
                ratio(self.threshold)
            ),
        }
    }
}

/// One claim, tested.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClaimResult {
    /// The claim's number in the tutorial's list (1 to 10).
    pub id: u8,
    /// The claim, quoted.
    pub claim: String,
    /// What was run to test it.
    pub experiment: String,
    /// What was measured.
    pub measurements: Vec<Measurement>,
    /// Whether it holds here.
    pub verdict: Verdict,
    /// Why, from the numbers, in one sentence.
    pub why: String,
    /// The ratios the verdict was decided on, each with its interval.
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// How busy the machine was while this claim was measured (other processes' CPU time),
    /// where the system says and the claim ran long enough to tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<Busy>,
}

/// The claims tested on one machine.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClaimsReport {
    /// graylab version.
    pub version: String,
    /// `release` or `debug`.
    pub build: String,
    /// The GPU adapter.
    pub adapter: String,
    /// Whether it is a software adapter (the "GPU" is the CPU's own cores).
    pub software_adapter: bool,
    /// CPU threads.
    pub cpu_threads: usize,
    /// Whether the quick set ran (the same experiments, a smaller sampling budget).
    pub quick: bool,
    /// Each claim.
    pub claims: Vec<ClaimResult>,
    /// How long the whole run took, in seconds.
    #[serde(default)]
    pub took_s: f64,
    /// How busy the machine was over the whole run, where the system says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<Busy>,
    /// Where the ceilings the claims' models rest on came from (absent from runs saved before
    /// it was kept).
    #[serde(default)]
    pub held_against: crate::engine::ceilings::HeldAgainst,
    /// Whether the run was stopped: the claims finished before are kept, the rest are
    /// [`Verdict::NotRun`].
    #[serde(default)]
    pub stopped: bool,
    /// Each claim's last run of every side it ran whole ("claim N · side"), kept for a trace when
    /// [`ClaimsOptions::keep_runs`] asked; never in the JSON.
    #[serde(skip)]
    pub runs: Vec<(String, RunReport)>,
}

/// How the claims run.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaimsOptions<'a> {
    /// The same experiments with a smaller sampling budget: more verdicts may be inconclusive.
    pub quick: bool,
    /// Checked between experiments and inside them: once set, the run stops, keeping the claims
    /// already finished ([`ClaimsReport::stopped`]).
    pub cancel: Option<&'a AtomicBool>,
    /// Keep each claim's last run of every side it runs whole (claims 1 and 5 to 10; claims 2
    /// to 4 time passes and kernels alone), for a trace.
    pub keep_runs: bool,
}

/// The claims, in the tutorial's order, with the one line each that the runner reports.
const CLAIMS: [(u8, &str); 10] = [
    (1, "transfers against the kernel"),
    (2, "operations per round trip"),
    (3, "workgroup shapes"),
    (4, "timing with and without waiting"),
    (5, "data the size of the CPU's caches"),
    (6, "one cold run"),
    (7, "branching against uniform work"),
    (8, "work per pixel"),
    (9, "the crossover size"),
    (10, "a sequential operation"),
];

/// The memory the claims hold at most (claim 1's 8K image on both backends, the GPU's runs by
/// its adapter's rule `gpu`), for the front end to reserve before it calls [`run_claims`]. The
/// quick set runs the same images.
#[must_use]
pub fn claims_bytes(gpu: crate::gpu::GpuHostMemory) -> u64 {
    let (in_bytes, out_bytes) = crate::engine::synthetic_bytes(transfers::IMAGE.0, transfers::IMAGE.1);
    let runs = crate::engine::bench_bytes(in_bytes, out_bytes, true, Some(gpu.keeping_input(true)));
    runs.saturating_add(in_bytes + 2 * out_bytes)
}

/// Runs every claim's experiment on `engine` (whose GPU must open). `progress(done, total,
/// what)` is called before each claim.
pub fn run_claims(
    engine: &Engine,
    options: &ClaimsOptions<'_>,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<ClaimsReport, EngineError> {
    let gpu = engine.gpu()?;
    let software = gpu.is_software();
    let started = Instant::now();
    let first = CpuSnapshot::now();
    let mut claims = Vec::new();
    let mut shared = transfers::Shared::default();
    let kept = sampled::KeptRuns::default();
    let budget = sampled::Sampling {
        budget: Budget::for_set(options.quick),
        cancel: options.cancel,
        kept: options.keep_runs.then_some(&kept),
    };
    let mut runs = Vec::new();
    let mut stopped = false;
    for (done, (id, what)) in CLAIMS.iter().enumerate() {
        stopped = stopped || options.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        if stopped {
            claims.push(not_run(*id, what));
            continue;
        }
        progress(done, CLAIMS.len(), what);
        let before = CpuSnapshot::now();
        let measured = match id {
            1 => transfers::transfers(engine, &budget, &mut shared),
            2 => transfers::round_trips(engine, &budget),
            3 => timing::workgroups(engine, &budget),
            4 => timing::synchronise(engine, &budget),
            5 => sizes::cache_sized(engine, &budget),
            6 => transfers::cold_run(engine, &budget),
            7 => work::branching(engine, &budget),
            8 => work::work_levels(engine, &budget, &shared),
            9 => sizes::crossover(engine, &budget, options.quick),
            _ => sequential::dither(engine, &budget, options.quick),
        };
        let mut result = match measured {
            Ok(result) => result,
            // Stopped inside this claim: it and the rest are not run, the finished ones kept.
            Err(EngineError::Cancelled) => {
                stopped = true;
                claims.push(not_run(*id, what));
                continue;
            }
            Err(e) => return Err(e),
        };
        // A claim too short to say how busy the machine was alone (claims 4 to 6 take under a
        // second) is judged by the run so far, which it ends: never decided unguarded.
        result.busy = CpuSnapshot::busy_of_a_run(before).or_else(|| CpuSnapshot::busy_of_a_run(first));
        judge_busy(&mut result);
        if software {
            result.why.push_str(" (on this software adapter the \"GPU\" is this CPU's own cores)");
        }
        runs.extend(kept.borrow_mut().drain(..).map(|(side, run)| (format!("claim {id} · {side}"), run)));
        claims.push(result);
    }
    progress(CLAIMS.len(), CLAIMS.len(), "done");
    Ok(ClaimsReport {
        version: crate::system::host::VERSION.to_owned(),
        build: crate::system::host::BUILD.to_owned(),
        adapter: gpu.adapter_info().name.clone(),
        software_adapter: software,
        cpu_threads: crate::engine::available_threads(),
        quick: options.quick,
        claims,
        took_s: started.elapsed().as_secs_f64(),
        busy: CpuSnapshot::busy_of_a_run(first),
        held_against: engine.held_against(),
        stopped,
        runs,
    })
}

impl ClaimResult {
    /// Claim `id`, quoted as `claim`, tested by `experiment`: what it measured, the rule's
    /// verdict and why, and the evidence it was decided on.
    fn new(
        (id, claim): (u8, &str),
        experiment: String,
        measurements: Vec<Measurement>,
        (verdict, why): (Verdict, String),
        evidence: Vec<Evidence>,
    ) -> Self {
        Self { id, claim: claim.to_owned(), experiment, measurements, verdict, why, evidence, busy: None }
    }
}

/// Claim `id` (`what` it tests) as a stopped run leaves it: not run, nothing measured, the line
/// that names it in place of the tutorial's words (its experiment quotes them) and no experiment.
fn not_run(id: u8, what: &str) -> ClaimResult {
    let why = "the run was stopped before this claim's experiment finished".to_owned();
    ClaimResult::new((id, what), String::new(), Vec::new(), (Verdict::NotRun, why), Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_measured_while_others_took_most_of_the_machine_is_not_decided() {
        let result = |verdict: Verdict, others_share: f64| ClaimResult {
            busy: Some(Busy { others_share, steal_share: 0.0 }),
            ..ClaimResult::new(
                (5, "small data"),
                "sizes".into(),
                Vec::new(),
                (verdict, "the GPU is faster from 16 KiB".into()),
                Vec::new(),
            )
        };
        // Quiet: nothing said, nothing changed.
        let mut quiet = result(Verdict::Holds, 0.1);
        judge_busy(&mut quiet);
        assert_eq!((quiet.verdict, quiet.why.as_str()), (Verdict::Holds, "the GPU is faster from 16 KiB"));
        // Busy: decided, with the noise said.
        let mut busy = result(Verdict::DoesNotHold, 0.4);
        judge_busy(&mut busy);
        assert_eq!(busy.verdict, Verdict::DoesNotHold);
        assert!(
            busy.why.ends_with("(other processes took 40% of the CPU), so the noise is wider"),
            "{}",
            busy.why
        );
        // Overwhelmed: not decided, and said why; an inconclusive one stays as it is.
        for verdict in [Verdict::Holds, Verdict::DoesNotHold, Verdict::HoldsFrom("16 KiB".into())] {
            let mut over = result(verdict, 0.82);
            judge_busy(&mut over);
            assert_eq!(over.verdict, Verdict::Inconclusive);
            assert!(
                over.why.contains("not decided: other processes took 82% of the CPU while it was measured")
            );
        }
        let mut open = result(Verdict::Inconclusive, 0.82);
        judge_busy(&mut open);
        assert_eq!(open.verdict, Verdict::Inconclusive);
        assert!(open.why.ends_with("so the noise is wider"), "{}", open.why);
    }

    #[test]
    fn a_decided_ratio_is_measured_with_the_interval_it_was_decided_on() {
        // 42 rounds whose ratio creeps from 1.00 to 1.06: the plain interval of the median says
        // 1.021-1.040, the evidence's (widened for the drift) 1.015-1.045. Claim 8 once printed
        // both for one speed-up.
        let ratios: Vec<f64> = (0..42).map(|i| 1.0 + 0.06 * f64::from(i) / 41.0).collect();
        let decided = Interval::of_drifting(&ratios, crate::engine::sampling::CONFIDENCE);
        let m = Measurement::of_interval("speed-up", decided, &ratios, "x", "cpu-clock");
        let d = decided.expect("an interval");
        assert_eq!(
            (m.value, m.ci_low, m.ci_high, m.samples),
            (d.median, Some(ratios[10]), Some(ratios[31]), Some(42))
        );
        let plain = Measurement::sampled("speed-up", &ratios, "x", "cpu-clock");
        assert!(plain.ci_low > m.ci_low && plain.ci_high < m.ci_high, "{plain:?}");
        // Without an interval: the median of what there is, and how many.
        let few = Measurement::of_interval("speed-up", None, &ratios[..3], "x", "cpu-clock");
        assert_eq!((few.value, few.ci_low, few.samples), (ratios[1], None, Some(3)));
    }

    #[test]
    fn verdicts_read_and_parse_back() {
        for v in [
            Verdict::Holds,
            Verdict::DoesNotHold,
            Verdict::HoldsFrom("16 operations per round trip".into()),
            Verdict::Inconclusive,
            Verdict::NotRun,
        ] {
            let json = serde_json::to_string(&v).expect("serialise");
            assert_eq!(serde_json::from_str::<Verdict>(&json).expect("parse"), v, "{json}");
        }
        assert_eq!(Verdict::HoldsFrom("256 KB".into()).to_string(), "holds from 256 KB on");
        assert!(serde_json::from_str::<Verdict>("\"maybe\"").is_err());
    }
}
