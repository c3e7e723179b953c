//! Two results of one kind (two `bench`, `sweep`, `claims` or `info` JSON files, from two
//! machines, builds or days) compared figure by figure: each measured figure found in both, its
//! ratio new/base with the range its intervals allow, and whether it moved beyond a threshold
//! *and* beyond its noise.
//!
//! The figures are found by what they are, not by where each command puts them: a median of
//! timed runs (`median_ns`, with the runs' range `min_ns`–`max_ns`), a probe (`bytes` or `ops`
//! over `median_ns`: a rate, its range from the median repetition to the best), a ratio with its
//! interval (`median`, `ci_low`, `ci_high`), a claim's measurement (`value` in `unit`, timed by
//! `clock`). Each is named by its path, its clock and every setting that changes what was measured
//! (`names.rs`): figures of another setting are in one result only, never compared. Derived
//! figures (rates at the median, models, rooflines, single cold runs, a round trip's time per
//! operation and its medians again with intervals) are left out, so one measurement is one figure.
//!
//! A figure is beyond its noise when its two ranges do not overlap: for timed runs, every run of
//! one result was slower than every run of the other (a 95% interval of one run's median says
//! nothing of what differs between two runs, so the runs' whole range is the noise here). One
//! without a range in a file (a single run) is "unsure" beyond the threshold: neither way.

use serde_json::Value;

mod names;

/// Keys whose subtrees hold no figure to compare: the stamp, single or derived runs, models, and
/// a round trip's figures derived from its `cpu_total_ns` and `gpu_total_ns` (the time per
/// operation; the same rounds' medians with their intervals).
const SKIPPED_KEYS: [&str; 16] = [
    "provenance",
    "cold",
    "warm",
    "busy",
    "rates",
    "modelled",
    "model",
    "roofline",
    "frontier",
    "end_to_end",
    "estimate_basis",
    "adapters",
    "valid_workgroups",
    "cpu_per_op_ns",
    "cpu_ns",
    "gpu_ns",
];

/// Keys that only hold a list or a group: left out of a figure's name.
const CONTAINER_KEYS: [&str; 10] = [
    "results",
    "phases",
    "points",
    "series",
    "claims",
    "evidence",
    "measurements",
    "result",
    "stats",
    "interval",
];

/// What a figure measures.
#[derive(Clone, Debug, PartialEq)]
pub enum Unit {
    /// A duration in nanoseconds.
    Ns,
    /// Bytes per second, in GB/s (1e9).
    GbPerS,
    /// Operations per second, in Gop/s (1e9).
    GopPerS,
    /// A ratio or another unit, as the file names it (`x`, `speed-up`).
    Other(String),
}

/// Which way is better for a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// Times: lower is faster.
    Lower,
    /// Rates: higher is faster.
    Higher,
    /// Ratios and counts: neither way is slower.
    Neither,
}

/// One measured figure of a result.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// Its name, from its path: `gpu wg 256 bt601 · kernel`.
    pub name: String,
    /// What it measures.
    pub unit: Unit,
    /// Its value (the median), in `unit`.
    pub value: f64,
    /// The range of its runs (or, for a ratio, its 95% interval), where the file has one.
    pub interval: Option<(f64, f64)>,
    /// Which way is better.
    pub better: Better,
}

/// How a figure changed from the base to the new result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Worse beyond the threshold and beyond the noise.
    Slower,
    /// Better beyond the threshold and beyond the noise.
    Faster,
    /// A figure with no better way moved beyond the threshold and the noise.
    Moved,
    /// Beyond the threshold, but the intervals overlap: within the noise.
    Noise,
    /// Beyond the threshold, but one of the two has no interval (a single run): noise unknown.
    Unsure,
    /// Within the threshold.
    Same,
}

/// One figure in both results.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The figure in the base result.
    pub base: Figure,
    /// The same figure in the new result.
    pub new: Figure,
    /// new / base.
    pub ratio: f64,
    /// The range of new / base the two intervals allow, where both have one.
    pub ratio_range: Option<(f64, f64)>,
    /// How it changed.
    pub change: Change,
}

/// Two results compared.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Every figure found in both, in the base's order.
    pub rows: Vec<Row>,
    /// Figures only the base has.
    pub only_base: Vec<String>,
    /// Figures only the new result has.
    pub only_new: Vec<String>,
    /// Claims whose verdict differs between the two (claims results only).
    pub verdicts: Vec<VerdictChange>,
}

/// The part of a figure's name that makes it a figure of the machine, not of a run: the probed
/// ceilings every result carries beside its own figures (under a sweep's or a race's setup too).
const MACHINE_FIGURES: &str = "ceilings";

impl Comparison {
    /// Whether the two results (of kind `kind`) share a figure of what they ran. The ceilings
    /// are an info result's own figures; beside any other result's runs they are the machine's,
    /// the same cache read twice: two benches of other formulas shared only them, and were
    /// called "nothing moved".
    #[must_use]
    pub fn shares_run_figures(&self, kind: &str) -> bool {
        self.rows
            .iter()
            .any(|r| kind == "info" || !r.base.name.split(" · ").any(|part| part == MACHINE_FIGURES))
    }
}

/// A claim whose verdict differs between two claims results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerdictChange {
    /// The claim's number.
    pub id: u64,
    /// The claim, as quoted.
    pub claim: String,
    /// Its verdict in the base result.
    pub base: String,
    /// Its verdict in the new result.
    pub new: String,
}

impl Comparison {
    /// How many rows changed this way.
    #[must_use]
    pub fn count(&self, change: Change) -> usize {
        self.rows.iter().filter(|r| r.change == change).count()
    }
}

/// The kind of result in `json`: its stamp's `kind`, or for a file written before results were
/// stamped, what its fields show (`None` when they show nothing known).
#[must_use]
pub fn kind_of(json: &Value) -> Option<String> {
    if let Some(kind) = json.get("kind").and_then(Value::as_str) {
        return Some(kind.to_owned());
    }
    let shown_by = [
        ("results", "bench"),
        ("points", "sweep"),
        ("claims", "claims"),
        ("adapters", "info"),
        ("passes", "round_trips"),
        ("result", "round_trips"),
    ];
    shown_by.into_iter().find(|(key, _)| json.get(key).is_some()).map(|(_, kind)| kind.to_owned())
}

/// Every measured figure of a result, named by its path.
#[must_use]
pub fn figures(json: &Value) -> Vec<Figure> {
    let mut found = Vec::new();
    // A whole file of one setup (round trips, a sweep, a workgroup race) names them first:
    // figures of another image, formula, workgroup, threads or work are not the same figures.
    let mut root: Vec<String> = names::root_label(json, kind_of(json).as_deref()).into_iter().collect();
    walk(json, &mut root, &mut found);
    // Two figures of one name (a setting run twice) are told apart by their order.
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for f in &mut found {
        let n = seen.entry(f.name.clone()).or_default();
        *n += 1;
        if *n > 1 {
            f.name = format!("{} #{n}", f.name);
        }
    }
    found
}

fn walk(value: &Value, path: &mut Vec<String>, found: &mut Vec<Figure>) {
    match value {
        Value::Object(map) => {
            if let Some(figure) = figure_of(map, path) {
                found.push(figure);
                return;
            }
            for (key, child) in map {
                if SKIPPED_KEYS.contains(&key.as_str()) {
                    continue;
                }
                let named = !CONTAINER_KEYS.contains(&key.as_str());
                if named {
                    path.push(key.clone());
                }
                walk(child, path, found);
                if named {
                    path.pop();
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                // A named pair, `["cpu1", {…}]`, as a sweep's series are.
                if let [Value::String(name), inner] = item.as_array().map(Vec::as_slice).unwrap_or_default() {
                    path.push(name.clone());
                    walk(inner, path, found);
                    path.pop();
                    continue;
                }
                path.push(names::label_of(item).unwrap_or_else(|| format!("#{}", i + 1)));
                walk(item, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The figure an object is, if it is one.
fn figure_of(map: &serde_json::Map<String, Value>, path: &[String]) -> Option<Figure> {
    let num = |key: &str| map.get(key).and_then(Value::as_f64);
    // A group inside its namesake (`ceilings.ceilings`) is named once.
    let mut parts: Vec<&str> = path.iter().map(String::as_str).collect();
    parts.dedup();
    let mut name = parts.join(" · ");
    // A figure timed on another clock is another figure (a bench phase names its own).
    if let Some(clock) = map.get("clock").and_then(Value::as_str).filter(|c| *c != "none")
        && !name.ends_with(']')
    {
        name = format!("{name} [{clock}]");
    }
    if let Some(median_ns) = num("median_ns").filter(|&ns| ns > 0.0) {
        // A probe: so many bytes or operations in its best repetition, the ceiling as every other
        // view states it (it read the median); from its median to its best is the noise it shows.
        for (key, unit) in [("bytes", Unit::GbPerS), ("ops", Unit::GopPerS)] {
            if let Some(amount) = num(key) {
                let at_median = amount / median_ns;
                let interval = num("best_ns").filter(|&b| b > 0.0).map(|best| (at_median, amount / best));
                let value = interval.map_or(at_median, |(_, best)| best);
                return Some(Figure { name, unit, value, interval, better: Better::Higher });
            }
        }
        let interval = num("min_ns").zip(num("max_ns")).filter(|_| num("runs").is_some_and(|r| r > 1.0));
        return Some(Figure { name, unit: Unit::Ns, value: median_ns, interval, better: Better::Lower });
    }
    if let (Some(value), Some(low), Some(high)) = (num("median"), num("ci_low"), num("ci_high")) {
        // A median with its interval: a time where its key says ns (`cpu_ns`), else a ratio.
        if path.last().is_some_and(|key| key.ends_with("_ns")) {
            return Some(Figure {
                name,
                unit: Unit::Ns,
                value,
                interval: Some((low, high)),
                better: Better::Lower,
            });
        }
        let (unit, interval) = (Unit::Other("ratio".to_owned()), Some((low, high)));
        return Some(Figure { name, unit, value, interval, better: Better::Neither });
    }
    // A claim's measurement: a time in ms, or another unit; a size no clock measured is none.
    let (value, unit, clock) = (num("value")?, map.get("unit")?.as_str()?, map.get("clock")?.as_str()?);
    if clock == "none" {
        return None;
    }
    let interval = num("ci_low").zip(num("ci_high"));
    Some(if unit == "ms" {
        let interval = interval.map(|(l, h)| (l * 1e6, h * 1e6));
        Figure { name, unit: Unit::Ns, value: value * 1e6, interval, better: Better::Lower }
    } else {
        Figure { name, unit: Unit::Other(unit.to_owned()), value, interval, better: Better::Neither }
    })
}

/// `base` and `new` compared figure by figure, a change counting beyond `threshold` (0.10:
/// 10%) in either direction (as a factor: 10% slower is ×1.10, 10% faster ÷1.10).
#[must_use]
pub fn compare(base_json: &Value, new_json: &Value, threshold: f64) -> Comparison {
    let (base, new) = (figures(base_json), figures(new_json));
    let mut comparison = Comparison::default();
    for b in &base {
        match new.iter().find(|n| n.name == b.name && n.unit == b.unit) {
            Some(n) => comparison.rows.push(row(b, n, threshold)),
            None => comparison.only_base.push(b.name.clone()),
        }
    }
    // Matched as the rows are, by name and unit: a figure whose unit changed is in both lists.
    comparison.only_new = new
        .iter()
        .filter(|n| !base.iter().any(|b| b.name == n.name && b.unit == n.unit))
        .map(|n| n.name.clone())
        .collect();
    comparison.verdicts = verdict_changes(base_json, new_json);
    comparison
}

/// The claims (by number) whose verdict differs between `base` and `new`.
fn verdict_changes(base: &Value, new: &Value) -> Vec<VerdictChange> {
    let claims = |v: &Value| v.get("claims").and_then(Value::as_array).cloned().unwrap_or_default();
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let new_claims = claims(new);
    claims(base)
        .iter()
        .filter_map(|b| {
            let id = b.get("id")?.as_u64()?;
            let n = new_claims.iter().find(|n| n.get("id").and_then(Value::as_u64) == Some(id))?;
            let (before, after) = (text(b.get("verdict")?), text(n.get("verdict")?));
            (before != after).then(|| VerdictChange {
                id,
                claim: b.get("claim").map(text).unwrap_or_default(),
                base: before,
                new: after,
            })
        })
        .collect()
}

fn row(base: &Figure, new: &Figure, threshold: f64) -> Row {
    let ratio = if base.value > 0.0 { new.value / base.value } else { f64::NAN };
    let (ratio_range, overlap) = match (base.interval, new.interval) {
        (Some((bl, bh)), Some((nl, nh))) => {
            ((bl > 0.0 && bh > 0.0).then(|| (nl / bh, nh / bl)), Some(nl <= bh && bl <= nh))
        }
        _ => (None, None), // No range in one of them: no overlap known.
    };
    let factor = 1.0 + threshold;
    let (up, down) = (ratio > factor, ratio < 1.0 / factor);
    let change = if !(up || down) || !ratio.is_finite() {
        Change::Same
    } else if overlap == Some(true) {
        Change::Noise
    } else if overlap.is_none() {
        Change::Unsure
    } else {
        match (base.better, up) {
            (Better::Lower, true) | (Better::Higher, false) => Change::Slower,
            (Better::Lower, false) | (Better::Higher, true) => Change::Faster,
            (Better::Neither, _) => Change::Moved,
        }
    };
    Row { base: base.clone(), new: new.clone(), ratio, ratio_range, change }
}

#[cfg(test)]
mod tests;
