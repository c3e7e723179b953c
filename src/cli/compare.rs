//! `graylab compare BASE.json NEW.json`: two results of one kind side by side, figure by figure,
//! with the ratio new/base and the range its intervals allow; the figures that moved beyond the
//! threshold and beyond their noise are marked. Exits 0 when nothing got slower, 3 when
//! something did (1 stays an error, 2 a usage error), so a script or CI can gate on it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::UsageError;
use super::out::outln;
use crate::engine::compare::{
    Change, CompareError, Comparison, Figure, Row, Unit, compare, image_of, kind_of,
};
use crate::system::units::{duration, gb, human_bytes, ops_per_s};

/// The exit code when a figure got slower.
pub const SLOWER_EXIT: u8 = 3;

/// Arguments of `graylab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The result to compare against (JSON of `bench`, `bench --passes`, `bench
    /// --fastest-workgroup`, `sweep`, `claims` or `info`).
    #[arg(value_parser = super::args::input_file)]
    pub base: PathBuf,
    /// The new result, of the same kind.
    #[arg(value_parser = super::args::input_file)]
    pub new: PathBuf,
    /// The smallest change that counts, as a fraction: 0.10 marks a figure 10% slower or faster
    /// (×1.10 either way) when the two results' runs also do not overlap.
    #[arg(long, default_value_t = 0.10, value_name = "FRACTION")]
    pub threshold: f64,
    /// List every figure, not only those that moved.
    #[arg(long)]
    pub all: bool,
}

pub(super) fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    if !(args.threshold > 0.0 && args.threshold < 10.0) {
        return Err(UsageError(format!(
            "--threshold {} is not a fraction above 0 and below 10",
            args.threshold
        ))
        .into());
    }
    let base = read(&args.base)?;
    let new = read(&args.new)?;
    let kind = kind_of_both(args, &base, &new)?;
    // A figure that cannot be one is refused, as a file that cannot be read is: never dropped.
    let comparison = compare(&base, &new, args.threshold).map_err(|e| {
        let (corrupt, path) = match e {
            CompareError::Base(c) => (c, &args.base),
            CompareError::New(c) => (c, &args.new),
        };
        anyhow::anyhow!("a corrupt figure ({corrupt}): {}", path.display())
    })?;
    header(args, (&base, &new), &kind);
    let nothing_in_common = !comparison.shares_run_figures(&kind);
    if nothing_in_common {
        // Figures of other settings are other figures: none is compared, and nothing was, which
        // a gate must not take for "nothing got slower" (exit 1, as for two kinds of result);
        // the ceilings each result carries beside its runs compare none of them.
        let ceilings = if comparison.rows.is_empty() { "" } else { " but the ceilings probed beside them" };
        outln!(
            "{} and {} have no figure in common{ceilings} ({} and {} figures of their own), so nothing \
             they ran was compared: were they run with the same settings?",
            args.base.display(),
            args.new.display(),
            comparison.only_base.len(),
            comparison.only_new.len()
        );
    } else {
        print_rows(&comparison, args.all);
    }
    print_apart(&comparison, args.all);
    if !comparison.verdicts.is_empty() {
        outln!();
        outln!("Verdicts that turned:");
        for v in &comparison.verdicts {
            outln!("  claim {} ({}): {} -> {}", v.id, v.claim, v.base, v.new);
        }
    }
    outln!();
    outln!("{}", summary(&comparison, nothing_in_common));
    let slower = comparison.count(Change::Slower) > 0;
    Ok(match (nothing_in_common, slower) {
        (true, _) => ExitCode::FAILURE,
        (false, true) => ExitCode::from(SLOWER_EXIT),
        (false, false) => ExitCode::SUCCESS,
    })
}

/// The kind both results are, named as everywhere else ("round trips", "workgroup race"); an
/// error where they are of two kinds or one is of none.
fn kind_of_both(args: &CompareArgs, base: &Value, new: &Value) -> anyhow::Result<String> {
    match (kind_of(base), kind_of(new)) {
        (Some(b), Some(n)) if b == n => Ok(b),
        (Some(b), Some(n)) => {
            let (b, n) = (said(&b), said(&n));
            let a = |kind: &str| if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
            anyhow::bail!(
                "{} is {} {b} result and {} is {} {n} result: compare two results of one kind",
                args.base.display(),
                a(&b),
                args.new.display(),
                a(&n)
            )
        }
        (b, _) => {
            let path = if b.is_none() { &args.base } else { &args.new };
            anyhow::bail!("{}: not a result graylab wrote (no kind, no figures)", path.display())
        }
    }
}

/// A result's kind as messages name it.
fn said(kind: &str) -> String {
    crate::io::ResultKind::from_stamp(kind).map_or_else(|| kind.to_owned(), |k| k.name().to_owned())
}

/// The lines above the figures: the two results, where each came from, and what differs
/// between them that changes what a figure means (the images; the machines' threads).
fn header(args: &CompareArgs, (base, new): (&Value, &Value), kind: &str) {
    // 0.004 is "0.4%", not "0%".
    let percent = (args.threshold * 1e4).round() / 1e2;
    outln!("graylab compare: two {} results, threshold {percent}%", said(kind));
    outln!("  base: {}", origin(&args.base, base));
    outln!("  new:  {}", origin(&args.new, new));
    if let (Some(b), Some(n)) = (image_of(base), image_of(new))
        && b != n
    {
        outln!(
            "  the images differ ({b}; {n}): a figure of divergent work, whose cost depends on the pixels, \
             is compared only on an image of the same name"
        );
    }
    let threads = |json: &Value| json.pointer("/provenance/host/threads").and_then(Value::as_u64);
    if let (Some(b), Some(n)) = (threads(base), threads(new))
        && b != n
    {
        outln!(
            "  the CPUs have {b} and {n} threads: a CPU figure on all cores compares each machine with all \
             its cores; one run at a thread count asked compares only that count"
        );
    }
    outln!(
        "  a figure is marked when new/base is beyond the threshold and beyond the noise: the two \
         results' runs do not overlap (for a claim's ratio, its 95% intervals)"
    );
    outln!();
}

/// A result file of any kind, through the one reader of result files
/// ([`crate::io::read_result`]: bounded, the file named in every error, a newer schema refused).
fn read(path: &Path) -> anyhow::Result<Value> {
    Ok(crate::io::read_result::<Value>(path, None)?.body)
}

/// Where a result came from, in one line: graylab, the host, the adapter (its driver and API),
/// when, the load, the image.
fn origin(path: &Path, json: &Value) -> String {
    let Some(p) = json.get("provenance") else {
        return format!("{} (no provenance: written by a graylab before schema 1)", path.display());
    };
    let text = |v: &Value| v.as_str().unwrap_or("?").to_owned();
    let host = &p["host"];
    let memory = host["memory_bytes"].as_u64().map_or_else(String::new, |b| format!(", {}", human_bytes(b)));
    // The driver and the API beside the adapter: a driver upgrade is another run of it.
    let adapter = p["adapter"].get("name").map_or_else(
        || "no GPU opened".to_owned(),
        |name| {
            let said =
                |key: &str, before: &str| p["adapter"].get(key).map(|v| format!(", {before}{}", text(v)));
            let (driver, backend) =
                (said("driver", "driver ").unwrap_or_default(), said("backend", "").unwrap_or_default());
            format!("{}{driver}{backend}", text(name))
        },
    );
    let image = image_of(json).map_or_else(String::new, |image| format!(", on {image}"));
    let load = host["load_1m"].as_f64().map_or_else(String::new, |l| format!(", load {l:.2}"));
    let threads = host["threads"].as_u64().unwrap_or(0);
    format!(
        "{} — graylab {} {}, {} ({}{memory}), {adapter}, written {}{load}{image}",
        path.display(),
        text(&p["graylab"]),
        text(&p["build"]),
        text(&host["cpu_model"]),
        crate::system::units::count(threads as usize, "thread"),
        p["written_unix_s"].as_u64().map_or_else(|| "?".to_owned(), utc),
    )
}

/// Seconds since 1970 as `2026-12-03 05:40 UTC` (Howard Hinnant's days-to-civil).
fn utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let (hour, minute) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

/// A figure's value in its unit.
fn value_text(f: &Figure) -> String {
    match &f.unit {
        Unit::Ns => duration(f.value.round() as u64),
        Unit::GbPerS => gb(f.value),
        Unit::GopPerS => ops_per_s(f.value * 1e9),
        Unit::Other(unit) => format!("{:.3} {unit}", f.value),
    }
}

fn mark(change: Change) -> &'static str {
    match change {
        Change::Slower => "SLOWER",
        Change::Faster => "faster",
        Change::Moved => "moved",
        Change::Noise => "within the noise",
        Change::Unsure => "beyond the threshold, noise unknown (one run)",
        Change::Same => "",
    }
}

fn print_rows(comparison: &Comparison, all: bool) {
    let shown: Vec<&Row> = comparison.rows.iter().filter(|r| all || r.change != Change::Same).collect();
    if shown.is_empty() {
        outln!(
            "No figure moved beyond the threshold ({} compared; --all lists them).",
            comparison.rows.len()
        );
        return;
    }
    let width = shown.iter().map(|r| r.name.chars().count()).max().unwrap_or(6).max(6);
    outln!("{:<width$}  {:>12}  {:>12}  {:>22}", "figure", "base", "new", "new/base (range)");
    for r in shown {
        let range = r.ratio_range.map_or_else(
            || " (no interval)".to_owned(),
            |(l, h)| format!(" ({}–{})", ratio_text(l), ratio_text(h)),
        );
        outln!(
            "{:<width$}  {:>12}  {:>12}  {:>22}  {}",
            r.name,
            value_text(&r.base),
            value_text(&r.new),
            format!("{}{range}", ratio_text(r.ratio)),
            mark(r.change)
        );
    }
}

/// A ratio with two decimals, or as many as show two digits of one under 0.01: `0.0022`, not
/// `0.00`.
fn ratio_text(ratio: f64) -> String {
    let mut decimals = 2;
    while ratio > 0.0 && ratio < 0.01 && decimals < 20 && ratio * 10f64.powi(decimals) < 10.0 {
        decimals += 1;
    }
    format!("{ratio:.0$}", usize::try_from(decimals).unwrap_or(2))
}

/// The most figures of one side listed without `--all`.
const APART_LISTED: usize = 8;

/// The figures only one result has, by name (never only counted): each side's first
/// [`APART_LISTED`], or every one with `all`.
fn print_apart(c: &Comparison, all: bool) {
    for (side, names) in [("base", &c.only_base), ("new result", &c.only_new)] {
        if names.is_empty() {
            continue;
        }
        outln!();
        outln!("Only in the {side}, not compared ({}):", names.len());
        let listed = if all { names.len() } else { names.len().min(APART_LISTED) };
        for name in &names[..listed] {
            outln!("  {name}");
        }
        if listed < names.len() {
            outln!("  and {} more (--all lists them)", names.len() - listed);
        }
    }
}

/// The last line: what was compared, and the exit code's reason where it is 3 (never when
/// `nothing_in_common`: the exit is 1 then).
fn summary(c: &Comparison, nothing_in_common: bool) -> String {
    let mut text = if nothing_in_common {
        // The rows in both are the ceilings, not listed: counting them "compared" (and slower)
        // would report what was never shown.
        let ceilings = match c.rows.len() {
            0 => String::new(),
            n => format!("; {} in both left out", crate::system::units::count(n, "ceilings figure")),
        };
        format!("Nothing they ran was compared: 0 slower{ceilings}")
    } else {
        format!(
            "{} compared: {} slower, {} faster, {} moved, {} within the noise, {} unsure (one run), {} the same",
            c.rows.len(),
            c.count(Change::Slower),
            c.count(Change::Faster),
            c.count(Change::Moved),
            c.count(Change::Noise),
            c.count(Change::Unsure),
            c.count(Change::Same),
        )
    };
    if !c.only_base.is_empty() || !c.only_new.is_empty() {
        let _ = write!(
            text,
            "; {} only in the base, {} only in the new result",
            c.only_base.len(),
            c.only_new.len()
        );
    }
    if !c.verdicts.is_empty() {
        let _ = write!(text, "; {} turned", crate::system::units::count(c.verdicts.len(), "verdict"));
    }
    let slower = c.count(Change::Slower) > 0 && !nothing_in_common;
    text.push_str(if slower { ". Exit 3: something got slower." } else { "." });
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn seconds_since_1970_are_a_utc_date() {
        assert_eq!(super::utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(super::utc(1_796_358_000), "2026-12-04 04:20 UTC");
        assert_eq!(super::utc(951_782_400), "2000-02-29 00:00 UTC", "a leap day");
    }
}
