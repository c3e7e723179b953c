//! Figures as people read them, one writer per kind used by every front end and message: sizes
//! in binary units (KiB, MiB, GiB), durations (ms, seconds from 10 s on), and rates (GB/s,
//! op/s); megapixels too; counts with their noun ("1 cell", "2 cells").

/// `n` and its `noun`, plural with an "s" but for one: "1 warm run", "2 warm runs".
#[must_use]
pub fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// Megapixels of a `width` x `height` image (millions of pixels, as every figure and estimate
/// counts them).
#[must_use]
pub fn megapixels(width: u32, height: u32) -> f64 {
    f64::from(width) * f64::from(height) / 1e6
}

/// `1.5 GiB`-style sizes for messages.
#[must_use]
pub fn human_bytes(bytes: u64) -> String {
    human_bytes_to(bytes, 1)
}

/// `bytes` in the largest unit that keeps the figure at 1 or more, with `decimals` decimals.
fn human_bytes_to(bytes: u64, decimals: usize) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    match UNITS.get(unit) {
        Some(name) if unit > 0 => format!("{v:.decimals$} {name}"),
        _ => format!("{bytes} B"),
    }
}

/// Two sizes that a message compares ("needs A but only B may be used"), each as
/// [`human_bytes`] writes it but with as many decimals (up to 3) as tell them apart, and in
/// exact bytes where even 3 do not. Equal sizes are written alike.
#[must_use]
pub fn human_byte_pair(a_bytes: u64, b_bytes: u64) -> (String, String) {
    if a_bytes == b_bytes {
        return (human_bytes(a_bytes), human_bytes(b_bytes));
    }
    for decimals in 1..=3 {
        let (a, b) = (human_bytes_to(a_bytes, decimals), human_bytes_to(b_bytes, decimals));
        if a != b {
            return (a, b);
        }
    }
    (format!("{a_bytes} bytes"), format!("{b_bytes} bytes"))
}

/// Milliseconds with three decimals, for tables.
#[must_use]
pub fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// Durations from this long on are written in seconds, not milliseconds.
pub const SECONDS_FROM_NS: u64 = 10_000_000_000;

/// A duration for a sentence or a label, to four significant digits (at least to the
/// microsecond): "894.7 ms", "3.790 ms", "9999 ms", or in seconds from 10 s on ("12.35 s",
/// "159.0 s", never "158962.502 ms"). The engine's verdicts and the app's labels use it.
#[must_use]
pub fn duration(ns: u64) -> String {
    let (value, unit) = if ns >= SECONDS_FROM_NS { (ns as f64 / 1e9, "s") } else { (ns as f64 / 1e6, "ms") };
    let decimals = decimals_below(value, 1000.0);
    format!("{value:.decimals$} {unit}")
}

/// `4.2 s` under a minute, else [`duration_text`]: the time a job has run or has left, as
/// the status bar and the CLI's progress line say it.
#[must_use]
pub fn elapsed_text(secs: f64) -> String {
    if secs < 60.0 { format!("{:.1} s", secs.max(0.0)) } else { duration_text(secs) }
}

/// The longest duration [`duration_text`] writes in hours and minutes: 1000 h.
pub const LONGEST_WRITTEN_S: f64 = 1000.0 * 3600.0;

/// `5 s`, `1 min 05 s`, `1 h 01 min` (an hour's seconds say nothing: "60 min 58 s" read as
/// minutes); "over 1000 h" from [`LONGEST_WRITTEN_S`] on (infinity too), "an unknown time" for
/// NaN: never "inf h NaN min" nor a 300-digit hour count.
#[must_use]
pub fn duration_text(secs: f64) -> String {
    if secs.is_nan() {
        return "an unknown time".to_owned();
    }
    if secs >= LONGEST_WRITTEN_S {
        return "over 1000 h".to_owned();
    }
    let secs = secs.max(0.0).round();
    if secs < 60.0 {
        format!("{secs:.0} s")
    } else if secs < 3600.0 {
        format!("{:.0} min {:02.0} s", (secs / 60.0).floor(), secs % 60.0)
    } else {
        let minutes = (secs / 60.0).round();
        format!("{:.0} h {:02.0} min", (minutes / 60.0).floor(), minutes % 60.0)
    }
}

/// A rate with 3 significant digits, e.g. "31.0 GB/s", "0.512 GB/s".
#[must_use]
pub fn gb(gb_per_s: f64) -> String {
    let digits = decimals_below(gb_per_s, 100.0);
    format!("{gb_per_s:.digits$} GB/s")
}

/// A ratio: two decimals from 0.1 up ("1.40", "0.25"), two significant digits below it ("0.023",
/// "0.0041"), so that a real ratio never reads as "0.00".
#[must_use]
pub fn ratio(r: f64) -> String {
    if !r.is_finite() || r == 0.0 || r.abs() >= 0.1 {
        return format!("{r:.2}");
    }
    let decimals = (1.0 - r.abs().log10().floor()).clamp(2.0, 12.0) as usize;
    format!("{r:.decimals$}")
}

/// No decimal from `top` on, then one more for each power of ten below it, at most three.
fn decimals_below(value: f64, top: f64) -> usize {
    match value {
        v if v >= top => 0,
        v if v >= top / 10.0 => 1,
        v if v >= top / 100.0 => 2,
        _ => 3,
    }
}

/// "12.3 Gop/s", "850 Mop/s".
#[must_use]
pub fn ops_per_s(rate: f64) -> String {
    match rate {
        r if r >= 100e9 => format!("{:.0} Gop/s", r / 1e9),
        r if r >= 1e9 => format!("{:.1} Gop/s", r / 1e9),
        r => format!("{:.0} Mop/s", r / 1e6),
    }
}

/// A share above this percentage of a ceiling counts as beating it; below it is the noise
/// between two measurements of the same copy.
pub const BEATEN_PERCENT: f64 = 105.0;

/// A share of a ceiling, `percent`, for a narrow column: "41%", "~100%" above the ceiling it only
/// matched (within the noise), ">100%" when it beat it (then the ceiling was measured low, and
/// no share of it means anything), a decimal below 1% ("0.4%", "<0.1%": a learner's dither at
/// a fraction of the ceiling is no "0%"). Every share of a ceiling, the phases' and the
/// compute's, is written so.
#[must_use]
pub fn share_label(percent: f64) -> String {
    match percent {
        p if p > BEATEN_PERCENT => ">100%".to_owned(),
        p if p > 100.0 => "~100%".to_owned(),
        p if p < 0.05 => "<0.1%".to_owned(),
        p if p < 0.95 => format!("{p:.1}%"),
        p => format!("{p:.0}%"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_is_never_written_inf_or_nan() {
        assert_eq!(duration_text(65.0), "1 min 05 s");
        assert_eq!(duration_text(3660.0), "1 h 01 min");
        assert_eq!(duration_text(999.0 * 3600.0), "999 h 00 min");
        assert_eq!(duration_text(f64::INFINITY), "over 1000 h");
        assert_eq!(duration_text(1.5e301), "over 1000 h");
        assert_eq!(duration_text(f64::NAN), "an unknown time");
        assert_eq!(duration_text(f64::NEG_INFINITY), "0 s");
        assert_eq!(elapsed_text(f64::NAN), "an unknown time");
    }

    #[test]
    fn a_ratio_keeps_two_significant_digits_below_a_tenth() {
        let said: Vec<String> = [1.404, 0.25, 0.1, 0.0234, 0.00412, 0.0, 12.0].map(ratio).to_vec();
        assert_eq!(said, ["1.40", "0.25", "0.10", "0.023", "0.0041", "0.00", "12.00"]);
    }

    #[test]
    fn a_pair_of_sizes_is_written_so_that_the_two_differ() {
        let mib = 1 << 20;
        // Far apart: one decimal, as human_bytes writes them.
        assert_eq!(human_byte_pair(37 << 30, 1 << 30), ("37.0 GiB".into(), "1.0 GiB".into()));
        assert_eq!(human_byte_pair(100, 99), ("100 B".into(), "99 B".into()));
        // The case: 95.4 MiB against 95.4 MiB, told apart by the second decimal.
        let (needed, budget) = (100_000_000, 99_990_000);
        assert_eq!(human_bytes(needed), human_bytes(budget));
        assert_eq!(human_byte_pair(needed, budget), ("95.37 MiB".into(), "95.36 MiB".into()));
        // The third decimal, then exact bytes.
        assert_eq!(
            human_byte_pair(100 * mib + 1024, 100 * mib),
            ("100.001 MiB".into(), "100.000 MiB".into())
        );
        assert_eq!(
            human_byte_pair(100 * mib + 1, 100 * mib),
            ("104857601 bytes".into(), "104857600 bytes".into())
        );
        // Equal sizes, and units apart.
        assert_eq!(human_byte_pair(mib, mib), ("1.0 MiB".into(), "1.0 MiB".into()));
        assert_eq!(human_byte_pair(mib, 1000), ("1.0 MiB".into(), "1000 B".into()));
    }

    #[test]
    fn durations_from_ten_seconds_on_are_in_seconds() {
        assert_eq!(duration(894_700_000), "894.7 ms");
        assert_eq!(duration(9_999_000_000), "9999 ms");
        assert_eq!(duration(30_811_000), "30.81 ms");
        assert_eq!(duration(3_790_400), "3.790 ms");
        assert_eq!(duration(12_345), "0.012 ms");
        assert_eq!(duration(158_962_502_000), "159.0 s");
        assert_eq!(duration(12_345_678_901), "12.35 s");
    }

    #[test]
    fn a_job_time_reads_in_seconds_minutes_or_hours() {
        assert_eq!(
            [duration_text(5.4), duration_text(59.6), duration_text(496.0)],
            ["5 s", "1 min 00 s", "8 min 16 s"]
        );
        // An hour's seconds say nothing ("60 min 58 s" read as minutes).
        let long = [duration_text(3599.4), duration_text(3658.0), duration_text(7199.0)];
        assert_eq!(long, ["59 min 59 s", "1 h 01 min", "2 h 00 min"]);
        // Elapsed and left: tenths under a minute.
        assert_eq!([elapsed_text(4.24), elapsed_text(125.0)], ["4.2 s", "2 min 05 s"]);
    }
}
