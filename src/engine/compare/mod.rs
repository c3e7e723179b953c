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
//! (`names.rs`): figures of another setting are in one result only, never compared. A figure a
//! file states no clock for (written before clocks were) is matched on any clock, and its row
//! says the clock is unknown. A figure whose numbers cannot be one (a time below zero,
//! null, or beyond a day) is refused, naming its field: never dropped, never printed. Derived
//! figures (rates at the median, models, rooflines, single cold runs, a round trip's time per
//! operation and its medians again with intervals) are left out, so one measurement is one figure.
//!
//! A figure is beyond its noise when its two ranges do not overlap: for timed runs, every run of
//! one result was slower than every run of the other (a 95% interval of one run's median says
//! nothing of what differs between two runs, so the runs' whole range is the noise here). One
//! without a range in a file (a single run) is "unsure" beyond the threshold: neither way.

use serde_json::Value;

mod names;

pub use names::image_of;

/// The longest time a figure may be, in ns (a day): beyond it a file was edited or corrupted,
/// not measured (`1e300` ns printed as u64's 584 years).
pub const MAX_FIGURE_NS: f64 = 86_400e9;

/// The most bytes or operations a probe may count (1e21): beyond it, not a measurement.
const MAX_AMOUNT: f64 = 1e21;

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
    /// Its name, from its path: `gpu wg 256 bt601 · kernel` (its clock apart).
    pub name: String,
    /// The clock that timed it, where its file says (`cpu-clock`); `None` in files written
    /// before clocks were kept.
    pub clock: Option<String>,
    /// What it measures.
    pub unit: Unit,
    /// Its value (the median), in `unit`.
    pub value: f64,
    /// The range of its runs (or, for a ratio, its 95% interval), where the file has one.
    pub interval: Option<(f64, f64)>,
    /// Which way is better.
    pub better: Better,
}

impl Figure {
    /// Its name with its clock, as a list names it: `… · cpu1 [cpu-clock]`.
    #[must_use]
    pub fn label(&self) -> String {
        self.clock.as_ref().map_or_else(|| self.name.clone(), |clock| format!("{} [{clock}]", self.name))
    }
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
    /// Its name with its clock, and where one file states no clock, that it is unknown there:
    /// `… · total [cpu-clock; base: clock unknown]`.
    pub name: String,
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
    /// Figures only the base has, by their labels ([`Figure::label`]).
    pub only_base: Vec<String>,
    /// Figures only the new result has, by their labels.
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

/// A figure whose numbers cannot be one: a time below zero, null or beyond a day, a count
/// that is not a number. Named by its field's path in the file, `results[1].phases[2].median_ns`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} is {value}: {why}")]
pub struct CorruptFigure {
    /// Where it is in the file.
    pub field: String,
    /// What the file holds there, as JSON.
    pub value: String,
    /// What a figure there must be.
    pub why: &'static str,
}

/// Why two results were not compared.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// The base result holds a figure that cannot be one.
    #[error("the base result holds a corrupt figure ({0})")]
    Base(CorruptFigure),
    /// The new result holds a figure that cannot be one.
    #[error("the new result holds a corrupt figure ({0})")]
    New(CorruptFigure),
}

/// Every measured figure of a result, named by its path; an error naming the first field that
/// cannot be a figure.
///
/// # Errors
///
/// [`CorruptFigure`] where a time is below zero, null or beyond [`MAX_FIGURE_NS`], or
/// another figure's number is not a finite number.
pub fn figures(json: &Value) -> Result<Vec<Figure>, CorruptFigure> {
    let mut found = Vec::new();
    let kind = kind_of(json);
    let facts = names::Facts::of(json, kind.as_deref());
    // A whole file of one setup (round trips, a sweep, a workgroup race) names them first:
    // figures of another image size, formula, workgroup or work are not the same figures.
    let mut root: Vec<String> = names::root_label(json, kind.as_deref(), &facts).into_iter().collect();
    let mut walker = Walker { facts: &facts, path: &mut root, at: String::new(), found: &mut found };
    walker.walk(json)?;
    // Two figures of one name (a setting run twice) are told apart by their order.
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for f in &mut found {
        let n = seen.entry(f.label()).or_default();
        *n += 1;
        if *n > 1 {
            f.name = format!("{} #{n}", f.name);
        }
    }
    Ok(found)
}

/// A walk through a result: the figures' names so far, the field's place in the file.
struct Walker<'a> {
    facts: &'a names::Facts,
    /// The figure's name so far, part by part.
    path: &'a mut Vec<String>,
    /// The JSON path here, `results[1].phases[2]`.
    at: String,
    found: &'a mut Vec<Figure>,
}

impl Walker<'_> {
    fn walk(&mut self, value: &Value) -> Result<(), CorruptFigure> {
        match value {
            Value::Object(map) => {
                if let Some(figure) = figure_of(map, self.path, &self.at)? {
                    self.found.push(figure);
                    return Ok(());
                }
                for (key, child) in map {
                    if SKIPPED_KEYS.contains(&key.as_str()) {
                        continue;
                    }
                    let named = !CONTAINER_KEYS.contains(&key.as_str());
                    let field = if self.at.is_empty() { key.clone() } else { format!("{}.{key}", self.at) };
                    self.within(field, named.then(|| self.facts.key_name(key)), child)?;
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let field = format!("{}[{i}]", self.at);
                    // A named pair, `["cpu1", {…}]`, as a sweep's series are.
                    if let [Value::String(name), inner] =
                        item.as_array().map(Vec::as_slice).unwrap_or_default()
                    {
                        self.within(format!("{field}[1]"), Some(name.clone()), inner)?;
                        continue;
                    }
                    let name = names::label_of(item, self.facts).unwrap_or_else(|| format!("#{}", i + 1));
                    self.within(field, Some(name), item)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Walks `value` at `field`, its name part `name` where it adds one.
    fn within(&mut self, field: String, name: Option<String>, value: &Value) -> Result<(), CorruptFigure> {
        let outer = std::mem::replace(&mut self.at, field);
        let named = name.is_some();
        self.path.extend(name);
        let walked = self.walk(value);
        if named {
            self.path.pop();
        }
        self.at = outer;
        walked
    }
}

/// The number at `key` of `map`, where it has one, if `ok`; else why not, naming the field.
fn checked(
    map: &serde_json::Map<String, Value>,
    at: &str,
    key: &str,
    (ok, why): (fn(f64) -> bool, &'static str),
) -> Result<Option<f64>, CorruptFigure> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => v.as_f64().filter(|x| ok(*x)).map(Some).ok_or_else(|| CorruptFigure {
            field: if at.is_empty() { key.to_owned() } else { format!("{at}.{key}") },
            value: v.to_string(),
            why,
        }),
    }
}

/// A time: at least 0 (a clock coarser than the run reads 0) and at most a day.
const TIME: (fn(f64) -> bool, &str) =
    (|ns| (0.0..=MAX_FIGURE_NS).contains(&ns), "a time must be at least 0 ns and at most a day");
/// Bytes or operations: above 0 and at most [`MAX_AMOUNT`].
const AMOUNT: (fn(f64) -> bool, &str) =
    (|n| n > 0.0 && n <= MAX_AMOUNT, "a count must be above 0 and at most 1e21");
/// A ratio or a claim's value: a finite number.
const FINITE: (fn(f64) -> bool, &str) = (f64::is_finite, "a figure must be a finite number");

/// The figure an object is, if it is one; an error where it is one whose numbers cannot be.
fn figure_of(
    map: &serde_json::Map<String, Value>,
    path: &[String],
    at: &str,
) -> Result<Option<Figure>, CorruptFigure> {
    let num = |key: &str, check| checked(map, at, key, check);
    // graylab writes a ratio or a claim's value that came out infinite (a time of 0) as null:
    // no figure, not a corrupt one.
    let finite =
        |key: &str| if map.get(key).is_some_and(Value::is_null) { Ok(None) } else { num(key, FINITE) };
    // A group inside its namesake (`ceilings.ceilings`) is named once; places in a list (`#2`)
    // are each their own.
    let mut parts: Vec<&str> = path.iter().map(String::as_str).collect();
    parts.dedup_by(|a, b| a == b && !a.starts_with('#'));
    let name = parts.join(" · ");
    // A figure timed on another clock is another figure (a bench phase names its own).
    let clock = map
        .get("clock")
        .and_then(Value::as_str)
        .filter(|c| *c != "none" && !name.ends_with(']'))
        .map(str::to_owned);
    // A median of 0 (under the clock's tick) has no ratio to another: no figure.
    if let Some(median_ns) = num("median_ns", TIME)? {
        if median_ns == 0.0 {
            return Ok(None);
        }
        // A probe: so many bytes or operations in its best repetition, the ceiling as every other
        // view states it (it read the median); from its median to its best is the noise it shows.
        let best = num("best_ns", TIME)?;
        for (key, unit) in [("bytes", Unit::GbPerS), ("ops", Unit::GopPerS)] {
            if let Some(amount) = num(key, AMOUNT)? {
                let at_median = amount / median_ns;
                let interval = best.map(|best| (at_median, amount / best));
                let value = interval.map_or(at_median, |(_, best)| best);
                return Ok(Some(Figure { name, clock, unit, value, interval, better: Better::Higher }));
            }
        }
        let (min, max) = (num("min_ns", TIME)?, num("max_ns", TIME)?);
        let interval =
            min.zip(max).filter(|_| map.get("runs").and_then(Value::as_f64).is_some_and(|r| r > 1.0));
        return Ok(Some(Figure {
            name,
            clock,
            unit: Unit::Ns,
            value: median_ns,
            interval,
            better: Better::Lower,
        }));
    }
    let (low, high) = (finite("ci_low")?, finite("ci_high")?);
    if let (Some(value), Some(low), Some(high)) = (finite("median")?, low, high) {
        // A median with its interval: a time where its key says ns (`cpu_ns`), else a ratio.
        let interval = Some((low, high));
        if path.last().is_some_and(|key| key.ends_with("_ns")) {
            return Ok(Some(Figure { name, clock, unit: Unit::Ns, value, interval, better: Better::Lower }));
        }
        let unit = Unit::Other("ratio".to_owned());
        return Ok(Some(Figure { name, clock, unit, value, interval, better: Better::Neither }));
    }
    // A claim's measurement: a time in ms, or another unit; a size no clock measured is none.
    let (Some(unit), Some(on)) =
        (map.get("unit").and_then(Value::as_str), map.get("clock").and_then(Value::as_str))
    else {
        return Ok(None);
    };
    let Some(value) = finite("value")?.filter(|_| on != "none") else { return Ok(None) };
    let interval = low.zip(high);
    Ok(Some(if unit == "ms" {
        let interval = interval.map(|(l, h)| (l * 1e6, h * 1e6));
        Figure { name, clock, unit: Unit::Ns, value: value * 1e6, interval, better: Better::Lower }
    } else {
        Figure { name, clock, unit: Unit::Other(unit.to_owned()), value, interval, better: Better::Neither }
    }))
}

/// `base` and `new` compared figure by figure, a change counting beyond `threshold` (0.10:
/// 10%) in either direction (as a factor: 10% slower is ×1.10, 10% faster ÷1.10). A figure is
/// matched by its name and unit on its clock, or, where one file states no clock for it, on
/// any clock.
///
/// # Errors
///
/// [`CompareError`] where either result holds a figure that cannot be one ([`figures`]).
pub fn compare(base_json: &Value, new_json: &Value, threshold: f64) -> Result<Comparison, CompareError> {
    let base = figures(base_json).map_err(CompareError::Base)?;
    let new = figures(new_json).map_err(CompareError::New)?;
    let mut comparison = Comparison::default();
    let mut used = vec![false; new.len()];
    let same = |b: &Figure, n: &Figure| n.name == b.name && n.unit == b.unit;
    for b in &base {
        let on_its_clock = (0..new.len()).find(|&i| !used[i] && same(b, &new[i]) && new[i].clock == b.clock);
        let on_any = || {
            (0..new.len())
                .find(|&i| !used[i] && same(b, &new[i]) && (b.clock.is_none() || new[i].clock.is_none()))
        };
        match on_its_clock.or_else(on_any) {
            Some(i) => {
                used[i] = true;
                comparison.rows.push(row(b, &new[i], threshold));
            }
            None => comparison.only_base.push(b.label()),
        }
    }
    // Matched as the rows are: a figure whose unit changed is in both lists.
    comparison.only_new = new.iter().zip(&used).filter(|(_, used)| !**used).map(|(n, _)| n.label()).collect();
    comparison.verdicts = verdict_changes(base_json, new_json);
    Ok(comparison)
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
    let name = match (&base.clock, &new.clock) {
        (Some(clock), None) => format!("{} [base: {clock}; new: clock unknown]", base.name),
        (None, Some(clock)) => format!("{} [base: clock unknown; new: {clock}]", base.name),
        _ => base.label(),
    };
    Row { name, base: base.clone(), new: new.clone(), ratio, ratio_range, change }
}

#[cfg(test)]
mod tests;
