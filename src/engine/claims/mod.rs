//! The tutorial's claims, each tested on this machine. Every claim of "GPU computing: when and
//! how to speed up code" about when a GPU pays off becomes a short experiment: measurements,
//! each with its unit and clock, a verdict from a rule written once ([`rules`]), and one
//! sentence that says why from the numbers. Nothing here is fixed in advance: run on another
//! machine, the same code may reach the opposite verdicts.
//!
//! The experiments live in `transfers` (claims 1, 2 and 6), `timing` (3 and 4), `work` (7 and
//! 8, on the synthetic work per pixel) and `sizes` (5 and 9).

pub mod rules;
mod sizes;
mod timing;
mod transfers;
mod work;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{Engine, EngineError};

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
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Holds => f.write_str("holds here"),
            Self::DoesNotHold => f.write_str("does not hold here"),
            Self::HoldsFrom(threshold) => write!(f, "holds from {threshold} on"),
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
        match s.as_str() {
            "holds here" => Ok(Self::Holds),
            "does not hold here" => Ok(Self::DoesNotHold),
            _ => s
                .strip_prefix("holds from ")
                .and_then(|rest| rest.strip_suffix(" on"))
                .map(|threshold| Self::HoldsFrom(threshold.to_owned()))
                .ok_or_else(|| format!("not a verdict: {s:?}")),
        }
    }
}

/// One measured figure of an experiment.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
}

impl Measurement {
    /// A time in milliseconds from nanoseconds.
    #[must_use]
    pub fn ms(name: impl Into<String>, ns: f64, clock: &str) -> Self {
        Self { name: name.into(), value: ns / 1e6, unit: "ms".to_owned(), clock: clock.to_owned() }
    }

    /// Any other figure.
    #[must_use]
    pub fn of(name: impl Into<String>, value: f64, unit: &str, clock: &str) -> Self {
        Self { name: name.into(), value, unit: unit.to_owned(), clock: clock.to_owned() }
    }
}

/// One claim, tested.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClaimResult {
    /// The claim's number in the tutorial's list (1 to 9).
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
    /// Whether the quick set ran (smaller images, fewer runs).
    pub quick: bool,
    /// Each claim.
    pub claims: Vec<ClaimResult>,
}

/// How the claims run.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaimsOptions<'a> {
    /// Smaller images and fewer runs: about a quarter of the time.
    pub quick: bool,
    /// Checked between experiments: once set, the run stops with [`EngineError::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
}

/// The claims, in the tutorial's order, with the one line each that the runner reports.
const CLAIMS: [(u8, &str); 9] = [
    (1, "transfers against the kernel"),
    (2, "operations per round trip"),
    (3, "workgroup shapes"),
    (4, "timing with and without waiting"),
    (5, "data the size of the CPU's caches"),
    (6, "one cold run"),
    (7, "branching against uniform work"),
    (8, "work per pixel"),
    (9, "the crossover size"),
];

/// "1 warm run", "3 warm runs".
fn warm_runs(runs: usize) -> String {
    if runs == 1 { "1 warm run".to_owned() } else { format!("{runs} warm runs") }
}

/// The memory the claims hold at most (claim 1's image on both backends, and its input kept on
/// the GPU for claim 2), for the front end to reserve before it calls [`run_claims`].
#[must_use]
pub fn claims_bytes(quick: bool) -> u64 {
    let (w, h) = if quick { (3840, 2160) } else { (7680, 4320) };
    let (in_bytes, out_bytes) = crate::engine::synthetic_bytes(w, h);
    crate::engine::bench_bytes(in_bytes, out_bytes, true, true).saturating_add(in_bytes + out_bytes)
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
    let mut claims = Vec::new();
    let mut shared = transfers::Shared::default();
    for (done, (id, what)) in CLAIMS.iter().enumerate() {
        if options.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(EngineError::Cancelled);
        }
        progress(done, CLAIMS.len(), what);
        let mut result = match id {
            1 => transfers::transfers(engine, options.quick, &mut shared)?,
            2 => transfers::round_trips(engine, options.quick, &shared)?,
            3 => timing::workgroups(engine, options.quick)?,
            4 => timing::synchronise(engine, options.quick)?,
            5 => sizes::cache_sized(engine, options.quick)?,
            6 => transfers::cold_run(engine, options.quick)?,
            7 => work::branching(engine, options.quick)?,
            8 => work::work_levels(engine, options.quick, &shared)?,
            _ => sizes::crossover(engine, options.quick)?,
        };
        if software {
            result.why.push_str(" (on this software adapter the \"GPU\" is this CPU's own cores)");
        }
        claims.push(result);
    }
    progress(CLAIMS.len(), CLAIMS.len(), "done");
    Ok(ClaimsReport {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        build: if cfg!(debug_assertions) { "debug" } else { "release" }.to_owned(),
        adapter: gpu.adapter_info().name.clone(),
        software_adapter: software,
        cpu_threads: crate::engine::available_threads(),
        quick: options.quick,
        claims,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_and_parse_back() {
        for v in
            [Verdict::Holds, Verdict::DoesNotHold, Verdict::HoldsFrom("16 operations per round trip".into())]
        {
            let json = serde_json::to_string(&v).expect("serialise");
            assert_eq!(serde_json::from_str::<Verdict>(&json).expect("parse"), v, "{json}");
        }
        assert_eq!(Verdict::HoldsFrom("256 KB".into()).to_string(), "holds from 256 KB on");
        assert!(serde_json::from_str::<Verdict>("\"maybe\"").is_err());
    }
}
