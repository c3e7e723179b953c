//! The verdict rules, written once: each takes the measured figures and the evidence (a ratio's
//! interval against the claim's threshold) and gives the [`Verdict`] with the sentence that says
//! why. Pure arithmetic, so every rule is tested on made-up measurements.

use std::fmt::Write as _;

use crate::engine::claims::{Evidence, Verdict};
use crate::engine::sampling::Decision;
use crate::system::units::{duration, ratio};

/// A duration in nanoseconds as text, e.g. `34.20 ms` or `12.35 s`.
fn t(ns: f64) -> String {
    duration(ns.max(0.0).round() as u64)
}

/// The verdict of a claim that holds when its ratio lies `holds` of the threshold.
fn verdict(e: &Evidence, holds: Decision) -> Verdict {
    match e.decision {
        Decision::Within => Verdict::Inconclusive,
        d if d == holds => Verdict::Holds,
        _ => Verdict::DoesNotHold,
    }
}

/// `why` with the evidence appended: "…; (upload + download) / GPU kernel 1.40 (95% CI …)".
fn with(why: &str, evidence: &[&Evidence]) -> String {
    let parts: Vec<String> = evidence.iter().map(|e| e.text()).collect();
    format!("{why}; {}", parts.join(", "))
}

/// Of levels in order (a count, a work level), each with its decision, the first that does not
/// lose: `Ok(Some(i))` when level `i` is decided a win and every level before it a loss,
/// `Ok(None)` when every level loses, `Err(i)` when level `i` is within the noise first.
fn first_win(decisions: &[Decision], win: Decision) -> Result<Option<usize>, usize> {
    match decisions.iter().position(|d| *d == win || *d == Decision::Within) {
        None => Ok(None),
        Some(i) if decisions[i] == win => Ok(Some(i)),
        Some(i) => Err(i),
    }
}

/// Claim 1: transfers cost more than the kernel. `e` is (upload + download) / kernel against 1;
/// the sentence also sets the upload against the CPU's whole conversion.
#[must_use]
pub fn transfers_are_slow(
    e: &Evidence,
    upload_ns: f64,
    download_ns: f64,
    kernel_ns: f64,
    cpu_total_ns: f64,
) -> (Verdict, String) {
    let v = verdict(e, Decision::Above);
    let compared = match v {
        Verdict::Holds => "longer",
        Verdict::DoesNotHold => "less time",
        _ => "about as long",
    };
    let against_kernel = format!(
        "moving the data, {} (upload {} + download {}), takes {compared} than the GPU kernel, {}",
        t(upload_ns + download_ns),
        t(upload_ns),
        t(download_ns),
        t(kernel_ns)
    )
    .replace("about as long than", "about as long as");
    let against_cpu = if upload_ns > cpu_total_ns {
        format!("the upload alone takes longer than the CPU's whole conversion, {}", t(cpu_total_ns))
    } else {
        format!("the CPU's whole conversion takes {}", t(cpu_total_ns))
    };
    (v, with(&format!("{against_kernel}; {against_cpu}"), &[e]))
}

/// Claim 2: keep the data on the GPU for several operations. `per_op` holds, per count of
/// operations a round trip, the GPU's and the CPU's median per operation and the evidence GPU /
/// CPU against 1; holds from the least count decided faster, every smaller one decided slower.
#[must_use]
pub fn keep_data_on_gpu(per_op: &[(u32, f64, f64, Evidence)]) -> (Verdict, String) {
    let decisions: Vec<Decision> = per_op.iter().map(|p| p.3.decision).collect();
    let sentence = |(n, gpu, cpu, _): &(u32, f64, f64, Evidence)| {
        format!(
            "with {n} operations per round trip the GPU takes {} per operation, the CPU {}",
            t(*gpu),
            t(*cpu)
        )
    };
    match first_win(&decisions, Decision::Below) {
        Ok(Some(0)) => (Verdict::Holds, with(&format!("even {}", sentence(&per_op[0])), &[&per_op[0].3])),
        Ok(Some(i)) => (
            Verdict::HoldsFrom(format!("{} operations per round trip", per_op[i].0)),
            with(&sentence(&per_op[i]), &[&per_op[i].3]),
        ),
        Ok(None) => per_op.last().map_or_else(
            || (Verdict::DoesNotHold, "nothing was measured".to_owned()),
            |last| (Verdict::DoesNotHold, with(&format!("even {}", sentence(last)), &[&last.3])),
        ),
        Err(i) => (
            Verdict::Inconclusive,
            with(&format!("{}: within the noise", sentence(&per_op[i])), &[&per_op[i].3]),
        ),
    }
}

/// How much slower the worst workgroup shape may be than the best before the choice "matters".
pub const WORKGROUP_MATTERS_RATIO: f64 = 1.2;

/// Claim 3: the workgroup shape matters. `kernel_ns` has each shape's median kernel time; `e`
/// is the slowest shape's time over the fastest's, round by round, against
/// [`WORKGROUP_MATTERS_RATIO`].
#[must_use]
pub fn workgroup_matters(kernel_ns: &[(String, f64)], e: &Evidence) -> (Verdict, String) {
    let best = kernel_ns.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let worst = kernel_ns.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let (Some(best), Some(worst)) = (best, worst) else {
        return (Verdict::Inconclusive, "no workgroup shape could be measured".to_owned());
    };
    let near = |name: &str| {
        kernel_ns.iter().find(|(n, _)| n == name).map(|(_, ns)| {
            let off = (ns / best.1.max(1.0) - 1.0) * 100.0;
            format!("{name} is {off:.0}% slower than the best")
        })
    };
    let tutorial: Vec<String> = ["16x16", "32x32"].iter().filter_map(|n| near(n)).collect();
    let mut why = format!(
        "the slowest shape, {} ({}), against the fastest, {} ({}), needs {WORKGROUP_MATTERS_RATIO}x to matter",
        worst.0,
        t(worst.1),
        best.0,
        t(best.1)
    );
    if !tutorial.is_empty() {
        why.push_str("; of the tutorial's shapes, ");
        why.push_str(&tutorial.join(", "));
    }
    (verdict(e, Decision::Above), with(&why, &[e]))
}

/// What the waited time must be, at least, as a multiple of the submit alone for forgetting to
/// wait to mislead.
pub const FORGOT_TO_WAIT_RATIO: f64 = 2.0;

/// Claim 4: time only after synchronising. `e` is, pass by pass, the time until the GPU finished
/// over the submits' own cost, against [`FORGOT_TO_WAIT_RATIO`]: the monotonic clock around them
/// (`submit_only_ns`, what a program that forgets to wait reads), or on a software adapter the
/// CPU time the thread ran inside them (`own_cpu_ns`). There the "GPU"'s threads share the
/// cores, and whether the submitting thread gets its core back before they finish is up to the
/// scheduler: on a quiet 2-core machine, 1 run in about 20 read 94% of the waited time around
/// the submit alone, the others 1% (2026-12-05).
#[must_use]
pub fn synchronise_before_timing(
    e: &Evidence,
    (submit_only_ns, own_cpu_ns): (f64, Option<f64>),
    submit_wait_ns: f64,
    timestamp_ns: Option<f64>,
) -> (Verdict, String) {
    let share = submit_only_ns / submit_wait_ns.max(1.0) * 100.0;
    let share = if share < 1.0 { "under 1%".to_owned() } else { format!("{share:.0}%") };
    let mut why = format!(
        "timed without waiting, the kernel seems to take {}, {share} of the {} it takes when waited for",
        t(submit_only_ns),
        t(submit_wait_ns)
    );
    if let Some(own) = own_cpu_ns {
        let _ = write!(why, "; the submits themselves ran {} on the CPU", t(own));
        if submit_only_ns > 2.0 * own.max(1.0) {
            let _ = write!(
                why,
                ": the other {} this thread waited for a core the software adapter's threads held, so \
                 without waiting the reading is whatever the scheduler leaves",
                t(submit_only_ns - own)
            );
        }
    }
    if let Some(ts) = timestamp_ns {
        why = format!("{why}; the GPU's own timestamps say {}", t(ts));
    }
    (verdict(e, Decision::Above), with(&why, &[e]))
}

/// The size up to which claim 5 says data "fits in CPU cache".
pub const CACHE_LINE_BYTES: u64 = 256 << 10;

/// Claim 5: data that fits the CPU's cache loses on the GPU. `points` are (input bytes, CPU ns, the
/// GPU's best ns, the evidence GPU / CPU against 1), smallest first. Holds when the CPU is decided
/// faster at every size under 256 KiB, does not when the GPU is at one; larger sizes only go into
/// the sentence. `floor` is the clause on the copies' latency floor ([`latency_floor`]), if
/// fitted; the sentence ends with the evidence of the sizes that decide, those under 256 KiB.
#[must_use]
pub fn cache_sized_data_loses(
    points: &[(u64, f64, f64, Evidence)],
    l2_bytes: Option<u64>,
    floor: Option<&str>,
) -> (Verdict, String) {
    let small: Vec<&(u64, f64, f64, Evidence)> = points.iter().filter(|p| p.0 < CACHE_LINE_BYTES).collect();
    let v = if small.iter().any(|p| p.3.decision == Decision::Below) {
        Verdict::DoesNotHold
    } else if !small.is_empty() && small.iter().all(|p| p.3.decision == Decision::Above) {
        Verdict::Holds
    } else {
        Verdict::Inconclusive
    };
    let first_win = points.iter().find(|p| p.3.decision == Decision::Below);
    let mut why = match (first_win, points.last()) {
        (Some(p), _) => {
            format!("the GPU is faster from {}: {} against the CPU's {}", human(p.0), t(p.2), t(p.1))
        }
        (None, Some(p)) => format!(
            "the GPU is not faster at any size up to {}: the CPU {} against the GPU's best {}",
            human(p.0),
            t(p.1),
            t(p.2)
        ),
        (None, None) => "nothing was measured".to_owned(),
    };
    if v == Verdict::Inconclusive
        && let Some(p) = small.iter().find(|p| p.3.decision == Decision::Within)
    {
        let _ = write!(why, "; at {} the two are within the noise", human(p.0));
    }
    if let Some(l2) = l2_bytes {
        let _ = write!(why, "; this CPU's L2 cache holds {}", human(l2));
    }
    why.push_str(floor.unwrap_or_default());
    if small.is_empty() {
        return (v, why);
    }
    let sizes: Vec<String> = small.iter().map(|p| human(p.0)).collect();
    let deciding: Vec<&Evidence> = small.iter().map(|p| &p.3).collect();
    (v, with(&format!("{why}; at the sizes the claim names, {}", sizes.join(" and ")), &deciding))
}

/// Claim 6: one run alone may lose on the GPU. `e` is a cold GPU run (a device opened for it,
/// its pipeline, its first submission) over one CPU run, round by round, against 1.
#[must_use]
pub fn run_once_loses(e: &Evidence, cold_gpu_ns: f64, warm_gpu_ns: f64, cpu_ns: f64) -> (Verdict, String) {
    let why = format!(
        "a cold GPU run takes {} ({:.1}x a warm one, {}), one CPU run {}",
        t(cold_gpu_ns),
        cold_gpu_ns / warm_gpu_ns.max(1.0),
        t(warm_gpu_ns),
        t(cpu_ns)
    );
    (verdict(e, Decision::Above), with(&why, &[e]))
}

/// How much slower the divergent variant may be than uniform work of the same average before
/// branching "hurts".
pub const BRANCHING_HURTS_RATIO: f64 = 1.3;

/// How much more branching must slow the GPU than the CPU before it hurts the GPU in
/// particular: a margin that a real effect clears (a warp running both sides of a branch pays
/// up to 2x), where a few percent of drift between runs does not.
pub const BRANCHING_HURTS_GPU_MORE_RATIO: f64 = 1.2;

/// Claim 7: branching hurts the GPU. `slowdown` is the GPU's divergent over uniform kernel time,
/// `more` the GPU's slowdown over the CPU's, each the median of its per-round ratios with its
/// interval. Holds when both are decided above, does not when either is decided below. The
/// sentence quotes those medians, the ones that decided, never a ratio of the sides' medians
/// (load that drifts between rounds moves those apart: 1.82x and 1.85x beside a decided 0.72).
#[must_use]
pub fn branching_hurts(slowdown: &Evidence, more: &Evidence) -> (Verdict, String) {
    let v = match (slowdown.decision, more.decision) {
        (Decision::Above, Decision::Above) => Verdict::Holds,
        (Decision::Below, _) | (_, Decision::Below) => Verdict::DoesNotHold,
        _ => Verdict::Inconclusive,
    };
    let why = match (slowdown.interval, more.interval) {
        (Some(gpu), Some(more)) => format!(
            "round by round, branching makes the GPU kernel {}x as slow as uniform work of the same average, and that slowdown is {}x the CPU's",
            ratio(gpu.median),
            ratio(more.median)
        ),
        _ => "too few rounds to say how much branching slows either kernel".to_owned(),
    };
    (v, with(&why, &[slowdown, more]))
}

/// Where, over one knob's levels in order, the GPU first wins end to end.
enum Knob {
    /// From level `i`, every lighter level decided slower.
    From(usize),
    /// At no level.
    Never,
    /// Level `i` is within the noise before any win.
    Noise(usize),
    /// Nothing was measured.
    Empty,
}

fn knob(levels: &[(String, Evidence)]) -> Knob {
    if levels.is_empty() {
        return Knob::Empty;
    }
    let decisions: Vec<Decision> = levels.iter().map(|s| s.1.decision).collect();
    match first_win(&decisions, Decision::Above) {
        Ok(Some(i)) => Knob::From(i),
        Ok(None) => Knob::Never,
        Err(i) => Knob::Noise(i),
    }
}

/// Level `i` of `levels`: its name and evidence.
fn at(levels: &[(String, Evidence)], i: usize) -> (String, &Evidence) {
    (levels[i].0.clone(), &levels[i].1)
}

/// The largest speed-up measured over `levels`: "2.50x at 256 rounds per pixel".
fn best_of(levels: &[(String, Evidence)]) -> Option<String> {
    let median = |e: &Evidence| e.interval.map_or(0.0, |i| i.median);
    levels
        .iter()
        .max_by(|a, b| median(&a.1).total_cmp(&median(&b.1)))
        .map(|(k, e)| format!("{}x at {k}", ratio(median(e))))
}

/// Claim 8: image processing is where the GPU shines. `work` and `blur` are, in order of growing
/// work per pixel, (the level, "a radius-8 blur"; the evidence CPU / GPU end to end against 1).
/// Each knob holds from its least level decided a win, every lighter one a loss; the claim holds
/// where both do (or the one measured), from the winner's level where the other never wins, and
/// any level within the noise before a win leaves it inconclusive.
#[must_use]
pub fn image_processing_shines(
    work: &[(String, Evidence)],
    blur: &[(String, Evidence)],
) -> (Verdict, String) {
    let best: Vec<String> = [best_of(work), best_of(blur)].into_iter().flatten().collect();
    let best = match best.len() {
        0 => String::new(),
        1 => format!("; the largest speed-up measured is {}", best[0]),
        _ => format!("; the largest speed-ups measured are {}", best.join(" and ")),
    };
    let last = |levels: &[(String, Evidence)]| levels.last().map_or_else(String::new, |l| l.0.clone());
    let (on_work, on_blur) = (knob(work), knob(blur));
    // A level within the noise before any win leaves the claim undecided, on either knob.
    for (levels, reading) in [(work, &on_work), (blur, &on_blur)] {
        if let Knob::Noise(i) = *reading {
            let (k, e) = at(levels, i);
            return (
                Verdict::Inconclusive,
                with(&format!("at {k} the two are within the noise{best}"), &[e]),
            );
        }
    }
    match (on_work, on_blur) {
        (Knob::From(i), Knob::From(j)) => {
            let ((level, on_work), (radius, on_blur)) = (at(work, i), at(blur, j));
            if i == 0 && j == 0 {
                let why = format!("the GPU wins end to end already at {level} and with {radius}{best}");
                (Verdict::Holds, with(&why, &[on_work, on_blur]))
            } else {
                let why = format!("the GPU wins end to end from {level}, and from {radius}{best}");
                (Verdict::HoldsFrom(format!("{level} and {radius}")), with(&why, &[on_work, on_blur]))
            }
        }
        (Knob::From(i), Knob::Empty) | (Knob::Empty, Knob::From(i)) => {
            let (k, e) = at(if work.is_empty() { blur } else { work }, i);
            let verdict = if i == 0 { Verdict::Holds } else { Verdict::HoldsFrom(k.clone()) };
            (verdict, with(&format!("the GPU wins end to end from {k}{best}"), &[e]))
        }
        (Knob::From(i), Knob::Never) | (Knob::Never, Knob::From(i)) => {
            let (winner, loser) =
                if matches!(knob(work), Knob::From(_)) { (work, blur) } else { (blur, work) };
            let (k, e) = at(winner, i);
            let none = last(loser);
            let shown: Vec<&Evidence> = [Some(e), loser.last().map(|l| &l.1)].into_iter().flatten().collect();
            let why = format!("the GPU wins end to end from {k}, but never up to {none}{best}");
            (Verdict::HoldsFrom(format!("{k} (never up to {none})")), with(&why, &shown))
        }
        _ => {
            let tops: Vec<String> = [last(work), last(blur)].into_iter().filter(|t| !t.is_empty()).collect();
            if tops.is_empty() {
                return (Verdict::DoesNotHold, "nothing was measured".to_owned());
            }
            let shown: Vec<&Evidence> =
                [work.last(), blur.last()].into_iter().flatten().map(|l| &l.1).collect();
            let why = format!("the GPU never wins end to end, up to {}{best}", tops.join(" or "));
            (Verdict::DoesNotHold, with(&why, &shown))
        }
    }
}

/// Claim 9: small data loses to the transfer overhead. `e` is the GPU's end-to-end time over the
/// CPU's at the smallest size; the sentence adds the measured and modelled crossovers and the
/// floor, where the copies' latencies were fitted (their sum in ns, the CPU's megapixels then).
#[must_use]
pub fn small_data_loses(
    e: &Evidence,
    smallest: (f64, f64, f64),
    (measured_crossover_mp, modelled_crossover_mp, floor): (Option<f64>, Option<f64>, Option<(f64, f64)>),
    largest_mp: f64,
) -> (Verdict, String) {
    let (mp, gpu, cpu) = smallest;
    let measured = measured_crossover_mp.map_or_else(
        || format!("it never wins up to {largest_mp:.2} MP"),
        |x| format!("it wins from about {x:.2} MP"),
    );
    let modelled = modelled_crossover_mp.map_or_else(
        || "the ceilings say it never would".to_owned(),
        |x| format!("the ceilings put the crossover at {x:.2} MP"),
    );
    let floor = floor.map_or_else(String::new, |(latency_ns, floor_mp)| {
        latency_floor(latency_ns, &format!("{floor_mp:.3} MP"), &format!("{mp:.2} MP"))
    });
    let why = format!(
        "at {mp:.2} MP the GPU takes {} end to end against the CPU's {}; {measured}, and {modelled}{floor}",
        t(gpu),
        t(cpu)
    );
    (verdict(e, Decision::Above), with(&why, &[e]))
}

/// The clause of claims 5 and 9 on the copies' fitted latencies (`latency_ns` up and down):
/// they alone take the CPU's time for `size` at its rate at `rate_at` (each claim's own size:
/// the CPU's rate, and so the floor, differs between them), so below it no GPU wins.
#[must_use]
pub fn latency_floor(latency_ns: f64, size: &str, rate_at: &str) -> String {
    format!(
        "; the copies' fixed costs alone ({} up and down, fitted) are the CPU's time for {size} at its \
         rate at {rate_at}, so below that size no GPU wins, however fast",
        t(latency_ns)
    )
}

/// Claim 10's margin: the GPU's dither passes must take at least 1.2x the CPU's loop for the
/// claim to hold (as claims 3 and 7's second ratio: a drift of a few percent decides nothing).
pub const SEQUENTIAL_LOSES_RATIO: f64 = 1.2;

/// A wavefront's shape: the steps that wait each for the one before, and the most pixels one
/// step holds, out of the image's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wavefront {
    /// Steps, each after the one before.
    pub steps: u64,
    /// The most pixels a step holds (its parallel width).
    pub widest: u64,
    /// The image's pixels (an independent operation's parallel width).
    pub pixels: u64,
}

/// Claim 10: sequential operations lose on the GPU. `per_size` are (size, the GPU's dither ns, the
/// CPU's, the evidence GPU / CPU against [`SEQUENTIAL_LOSES_RATIO`]); holds when the GPU is
/// decided slower at every size, does not when not slower at one. The sentence says why from the
/// largest size's `wavefront`, with the blur's speed-ups (size, CPU / GPU) beside it.
#[must_use]
pub fn sequential_loses(
    per_size: &[(String, f64, f64, Evidence)],
    wavefront: Wavefront,
    blur_speedups: &[(String, f64)],
) -> (Verdict, String) {
    let Wavefront { steps, widest, pixels } = wavefront;
    let chain = format!(
        "each of the wavefront's {steps} steps waits for the one before, and a step holds at most {widest} of \
         the {pixels} pixels ({:.2}%), where an independent operation offers all of them at once",
        widest as f64 / pixels.max(1) as f64 * 100.0
    );
    let blur = if blur_speedups.is_empty() {
        String::new()
    } else {
        let each: Vec<String> =
            blur_speedups.iter().map(|(size, s)| format!("{}x at {size}", ratio(*s))).collect();
        format!(
            "; the blur beside it (every pixel independent), GPU speed over the CPU's: {}",
            each.join(", ")
        )
    };
    let evidence: Vec<&Evidence> = per_size.iter().map(|s| &s.3).collect();
    let text = |(size, gpu, cpu, _): &(String, f64, f64, Evidence)| {
        format!("{} against {} at {size}", t(*gpu), t(*cpu))
    };
    let figures = per_size.iter().map(text).collect::<Vec<_>>().join(", ");
    let not_slower = per_size.iter().find(|s| s.3.decision == Decision::Below);
    let (verdict, lead) = if let Some((size, ..)) = not_slower {
        (
            Verdict::DoesNotHold,
            format!(
                "the GPU's dither is not {SEQUENTIAL_LOSES_RATIO}x slower than the CPU's loop at {size} ({figures})"
            ),
        )
    } else if per_size.is_empty() || per_size.iter().any(|s| s.3.decision == Decision::Within) {
        (
            Verdict::Inconclusive,
            format!("the GPU's dither against the CPU's loop is within the noise at some size ({figures})"),
        )
    } else {
        (
            Verdict::Holds,
            format!(
                "the GPU's dither is slower than the CPU's sequential loop at every size ({figures}): {chain}"
            ),
        )
    };
    (verdict, with(&format!("{lead}{blur}"), &evidence))
}

/// Bytes as KiB or MiB with one decimal, for the size claims (`256 KiB`, `1.0 MiB`).
#[must_use]
pub fn human(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
