//! The verdict rules, written once: each takes measured numbers and says whether a claim holds
//! here, does not, or holds from a threshold on, with the sentence that says why. Pure
//! arithmetic on the figures, so every rule is tested on made-up measurements.

use crate::engine::claims::Verdict;
use crate::engine::report::ms;

/// A duration in nanoseconds as text, e.g. `34.200 ms`.
fn t(ns: f64) -> String {
    format!("{} ms", ms(ns.max(0.0).round() as u64))
}

/// Claim 1: transfers cost more than the kernel. Holds when upload + download take longer than
/// the GPU kernel; the sentence also sets the upload against the CPU's whole conversion.
#[must_use]
pub fn transfers_are_slow(
    upload_ns: f64,
    download_ns: f64,
    kernel_ns: f64,
    cpu_total_ns: f64,
) -> (Verdict, String) {
    let moving = upload_ns + download_ns;
    let holds = moving > kernel_ns;
    let verdict = if holds { Verdict::Holds } else { Verdict::DoesNotHold };
    let against_kernel = format!(
        "moving the data, {} (upload {} + download {}), takes {} than the GPU kernel, {}",
        t(moving),
        t(upload_ns),
        t(download_ns),
        if holds { "longer" } else { "less time" },
        t(kernel_ns)
    );
    let against_cpu = if upload_ns > cpu_total_ns {
        format!("the upload alone takes longer than the CPU's whole conversion, {}", t(cpu_total_ns))
    } else {
        format!("the CPU's whole conversion takes {}", t(cpu_total_ns))
    };
    (verdict, format!("{against_kernel}; {against_cpu}"))
}

/// Claim 2: keeping the data on the GPU for several operations. `per_op` holds, for each count
/// of operations per round trip, the GPU's and the CPU's time per operation; the claim holds
/// from the smallest count at which the GPU is faster.
#[must_use]
pub fn keep_data_on_gpu(per_op: &[(u32, f64, f64)]) -> (Verdict, String) {
    let first_win = per_op.iter().find(|(_, gpu, cpu)| gpu < cpu);
    match (first_win, per_op.first(), per_op.last()) {
        (Some(&(n, gpu, cpu)), Some(&(first, ..)), _) if n == first => (
            Verdict::Holds,
            format!(
                "even with one operation per round trip the GPU takes {} against the CPU's {}",
                t(gpu),
                t(cpu)
            ),
        ),
        (Some(&(n, gpu, cpu)), ..) => (
            Verdict::HoldsFrom(format!("{n} operations per round trip")),
            format!(
                "with {n} operations per upload and download the GPU takes {} per operation, the CPU {}",
                t(gpu),
                t(cpu)
            ),
        ),
        (None, _, Some(&(n, gpu, cpu))) => (
            Verdict::DoesNotHold,
            format!(
                "even with {n} operations per round trip the GPU takes {} per operation, the CPU {}",
                t(gpu),
                t(cpu)
            ),
        ),
        (None, _, None) => (Verdict::DoesNotHold, "nothing was measured".to_owned()),
    }
}

/// How much slower the worst workgroup shape may be than the best before the choice "matters".
pub const WORKGROUP_MATTERS_RATIO: f64 = 1.2;

/// Claim 3: the workgroup shape matters. `kernel_ns` has each shape's kernel time; holds when
/// the slowest is at least [`WORKGROUP_MATTERS_RATIO`] times the fastest.
#[must_use]
pub fn workgroup_matters(kernel_ns: &[(String, f64)]) -> (Verdict, String) {
    let best = kernel_ns.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let worst = kernel_ns.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let (Some(best), Some(worst)) = (best, worst) else {
        return (Verdict::DoesNotHold, "no workgroup shape could be measured".to_owned());
    };
    let ratio = worst.1 / best.1.max(1.0);
    let near = |name: &str| {
        kernel_ns.iter().find(|(n, _)| n == name).map(|(_, ns)| {
            let off = (ns / best.1.max(1.0) - 1.0) * 100.0;
            format!("{name} is {off:.0}% slower than the best")
        })
    };
    let tutorial: Vec<String> = ["16x16", "32x32"].iter().filter_map(|n| near(n)).collect();
    let verdict = if ratio >= WORKGROUP_MATTERS_RATIO { Verdict::Holds } else { Verdict::DoesNotHold };
    let mut why = format!(
        "the slowest shape, {} ({}), takes {ratio:.1}x as long as the fastest, {} ({})",
        worst.0,
        t(worst.1),
        best.0,
        t(best.1)
    );
    if !tutorial.is_empty() {
        why.push_str("; of the tutorial's shapes, ");
        why.push_str(&tutorial.join(", "));
    }
    (verdict, why)
}

/// Claim 4: time only after synchronising. Holds when the CPU clock around the submit alone
/// reads less than half of what the same kernel takes when waited for.
#[must_use]
pub fn synchronise_before_timing(
    submit_only_ns: f64,
    submit_wait_ns: f64,
    timestamp_ns: Option<f64>,
) -> (Verdict, String) {
    let share = submit_only_ns / submit_wait_ns.max(1.0) * 100.0;
    let verdict = if submit_only_ns * 2.0 < submit_wait_ns { Verdict::Holds } else { Verdict::DoesNotHold };
    let mut why = format!(
        "timed without waiting, the kernel seems to take {}, {share:.0}% of the {} it takes when waited for",
        t(submit_only_ns),
        t(submit_wait_ns)
    );
    if let Some(ts) = timestamp_ns {
        why = format!("{why}; the GPU's own timestamps say {}", t(ts));
    }
    (verdict, why)
}

/// Claim 5: data that fits the CPU's cache (under 256 KB) loses on the GPU. `points` are (input
/// bytes, CPU ns, GPU end-to-end ns, GPU ns with the input kept), smallest first. Holds when the
/// CPU wins at every size up to 256 KB; the sentence names the first size where the GPU wins.
#[must_use]
pub fn cache_sized_data_loses(
    points: &[(u64, f64, f64, Option<f64>)],
    l2_bytes: Option<u64>,
) -> (Verdict, String) {
    const LINE: u64 = 256 << 10;
    let gpu_best = |p: &(u64, f64, f64, Option<f64>)| p.3.map_or(p.2, |kept| kept.min(p.2));
    let small_lose = points.iter().filter(|p| p.0 <= LINE).all(|p| gpu_best(p) >= p.1);
    let first_win = points.iter().find(|p| gpu_best(p) < p.1);
    let verdict = if small_lose { Verdict::Holds } else { Verdict::DoesNotHold };
    let mut why = match first_win {
        Some(p) => {
            format!("the GPU first wins at {}: {} against the CPU's {}", human(p.0), t(gpu_best(p)), t(p.1))
        }
        None => match points.last() {
            Some(p) => format!(
                "the CPU wins at every size up to {}: {} against the GPU's best {}",
                human(p.0),
                t(p.1),
                t(gpu_best(p))
            ),
            None => "nothing was measured".to_owned(),
        },
    };
    if let Some(l2) = l2_bytes {
        why = format!("{why}; this CPU's L2 cache holds {}", human(l2));
    }
    (verdict, why)
}

/// Claim 6: one run alone may lose on the GPU. Holds when a cold GPU run (device, pipeline,
/// first submission) takes longer than one CPU run.
#[must_use]
pub fn run_once_loses(cold_gpu_ns: f64, warm_gpu_ns: f64, cpu_ns: f64) -> (Verdict, String) {
    let verdict = if cold_gpu_ns > cpu_ns { Verdict::Holds } else { Verdict::DoesNotHold };
    let why = format!(
        "a cold GPU run takes {} ({:.0}x a warm one, {}), one CPU run {}",
        t(cold_gpu_ns),
        cold_gpu_ns / warm_gpu_ns.max(1.0),
        t(warm_gpu_ns),
        t(cpu_ns)
    );
    (verdict, why)
}

/// How much slower the divergent variant may be than uniform work of the same average before
/// branching "hurts".
pub const BRANCHING_HURTS_RATIO: f64 = 1.3;

/// Claim 7: branching hurts the GPU. Compares each backend's divergent run (k rounds on half the
/// pixels) with uniform work of the same average (k/2 rounds on every pixel). Holds when the
/// GPU's slowdown is at least [`BRANCHING_HURTS_RATIO`] and larger than the CPU's.
#[must_use]
pub fn branching_hurts(gpu: (f64, f64), cpu: (f64, f64)) -> (Verdict, String) {
    let slow = |(divergent, uniform): (f64, f64)| divergent / uniform.max(1.0);
    let (g, c) = (slow(gpu), slow(cpu));
    let verdict = if g >= BRANCHING_HURTS_RATIO && g > c { Verdict::Holds } else { Verdict::DoesNotHold };
    let why = format!(
        "branching makes the GPU kernel {g:.2}x as slow as uniform work of the same average ({} against {}), the CPU {c:.2}x ({} against {})",
        t(gpu.0),
        t(gpu.1),
        t(cpu.0),
        t(cpu.1)
    );
    (verdict, why)
}

/// Claim 8: image processing is where the GPU shines. `speedups` are (work rounds per pixel, GPU
/// end-to-end speed-up over the best CPU); holds from the least work at which the GPU wins.
#[must_use]
pub fn image_processing_shines(speedups: &[(u32, f64)]) -> (Verdict, String) {
    let best = speedups.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let first_win = speedups.iter().find(|(_, s)| *s > 1.0);
    let best_text = best.map_or_else(String::new, |(k, s)| {
        format!("; the largest speed-up measured is {s:.2}x at {k} rounds per pixel")
    });
    match (speedups.first(), first_win) {
        (Some(&(k0, s0)), _) if s0 > 1.0 => (
            Verdict::Holds,
            format!("the GPU wins end to end already at {k0} rounds per pixel ({s0:.2}x){best_text}"),
        ),
        (_, Some(&(k, s))) => (
            Verdict::HoldsFrom(format!("{k} rounds per pixel")),
            format!("the GPU wins end to end from {k} rounds of work per pixel ({s:.2}x){best_text}"),
        ),
        (Some(&(k0, s0)), None) => (
            Verdict::DoesNotHold,
            format!("the GPU never wins end to end: {s0:.2}x at {k0} rounds per pixel{best_text}"),
        ),
        (None, _) => (Verdict::DoesNotHold, "nothing was measured".to_owned()),
    }
}

/// Claim 9: small data loses to the transfer overhead. Holds when the GPU end to end loses at
/// the smallest size measured; the sentence gives the measured and the modelled crossovers.
#[must_use]
pub fn small_data_loses(
    smallest: (f64, f64, f64),
    measured_crossover_mp: Option<f64>,
    modelled_crossover_mp: Option<f64>,
    largest_mp: f64,
) -> (Verdict, String) {
    let (mp, gpu, cpu) = smallest;
    let verdict = if gpu > cpu { Verdict::Holds } else { Verdict::DoesNotHold };
    let measured = measured_crossover_mp.map_or_else(
        || format!("it never wins up to {largest_mp:.2} MP"),
        |x| format!("it wins from about {x:.2} MP"),
    );
    let modelled = modelled_crossover_mp.map_or_else(
        || "the ceilings say it never would".to_owned(),
        |x| format!("the ceilings put the crossover at {x:.2} MP"),
    );
    let why = format!(
        "at {mp:.2} MP the GPU takes {} end to end against the CPU's {}; {measured}, and {modelled}",
        t(gpu),
        t(cpu)
    );
    (verdict, why)
}

/// Bytes as KB or MB with one decimal, for the size claims (`256 KB`, `1.0 MB`).
#[must_use]
pub fn human(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{} KB", bytes >> 10)
    } else {
        format!("{:.1} MB", bytes as f64 / f64::from(1 << 20))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: f64 = 1e6;

    #[test]
    fn transfers_hold_when_moving_costs_more_than_the_kernel() {
        let (v, why) = transfers_are_slow(34.0 * MS, 10.0 * MS, 2.0 * MS, 7.0 * MS);
        assert_eq!(v, Verdict::Holds);
        assert_eq!(
            why,
            "moving the data, 44.000 ms (upload 34.000 ms + download 10.000 ms), takes longer than the GPU kernel, \
             2.000 ms; the upload alone takes longer than the CPU's whole conversion, 7.000 ms"
        );
        let (v, why) = transfers_are_slow(0.5 * MS, 0.5 * MS, 3.0 * MS, 7.0 * MS);
        assert!(why.contains("takes less time than the GPU kernel"), "{why}");
        assert_eq!(v, Verdict::DoesNotHold);
    }

    #[test]
    fn keeping_data_holds_from_the_first_winning_count() {
        let (v, why) =
            keep_data_on_gpu(&[(1, 10.0 * MS, 5.0 * MS), (4, 6.0 * MS, 5.0 * MS), (16, 4.0 * MS, 5.0 * MS)]);
        assert_eq!(v, Verdict::HoldsFrom("16 operations per round trip".into()));
        assert!(why.contains("16 operations"), "{why}");
        assert_eq!(keep_data_on_gpu(&[(1, 1.0, 2.0), (4, 1.0, 2.0)]).0, Verdict::Holds);
        assert_eq!(keep_data_on_gpu(&[(1, 9.0, 2.0), (16, 3.0, 2.0)]).0, Verdict::DoesNotHold);
    }

    #[test]
    fn workgroups_matter_above_the_ratio() {
        let shapes = |a: f64, b: f64| vec![("256".to_owned(), a), ("16x16".to_owned(), b)];
        let (v, why) = workgroup_matters(&shapes(1.0 * MS, 3.0 * MS));
        assert_eq!(v, Verdict::Holds);
        assert!(why.contains("3.0x") && why.contains("16x16 is 200% slower"), "{why}");
        assert_eq!(workgroup_matters(&shapes(1.0 * MS, 1.1 * MS)).0, Verdict::DoesNotHold);
        assert_eq!(workgroup_matters(&[]).0, Verdict::DoesNotHold);
    }

    #[test]
    fn forgetting_to_wait_holds_when_the_reading_is_far_off() {
        let (v, why) = synchronise_before_timing(0.05 * MS, 4.0 * MS, Some(3.5 * MS));
        assert_eq!(v, Verdict::Holds);
        assert!(why.contains("1%") && why.contains("timestamps say 3.500 ms"), "{why}");
        assert_eq!(synchronise_before_timing(3.0 * MS, 4.0 * MS, None).0, Verdict::DoesNotHold);
    }

    #[test]
    fn cache_sized_data_holds_when_the_cpu_wins_below_256_kb() {
        let kb = |k: u64| k << 10;
        let points = [
            (kb(16), 0.01 * MS, 1.0 * MS, Some(0.2 * MS)),
            (kb(256), 0.1 * MS, 1.5 * MS, Some(0.3 * MS)),
            (kb(4096), 2.0 * MS, 3.0 * MS, Some(1.0 * MS)),
        ];
        let (v, why) = cache_sized_data_loses(&points, Some(kb(512)));
        assert_eq!(v, Verdict::Holds);
        assert!(
            why.starts_with("the GPU first wins at 4.0 MB") && why.ends_with("L2 cache holds 512 KB"),
            "{why}"
        );
        let gpu_wins_small = [(kb(16), 1.0 * MS, 0.5 * MS, None)];
        assert_eq!(cache_sized_data_loses(&gpu_wins_small, None).0, Verdict::DoesNotHold);
    }

    #[test]
    fn one_run_loses_when_the_cold_gpu_is_slower_than_the_cpu() {
        let (v, why) = run_once_loses(300.0 * MS, 3.0 * MS, 5.0 * MS);
        assert_eq!(v, Verdict::Holds);
        assert!(why.contains("100x a warm one"), "{why}");
        assert_eq!(run_once_loses(4.0 * MS, 3.0 * MS, 5.0 * MS).0, Verdict::DoesNotHold);
    }

    #[test]
    fn branching_hurts_only_when_the_gpu_slows_down_more() {
        assert_eq!(branching_hurts((2.0 * MS, 1.0 * MS), (1.0 * MS, 1.0 * MS)).0, Verdict::Holds);
        assert_eq!(branching_hurts((1.1 * MS, 1.0 * MS), (1.0 * MS, 1.0 * MS)).0, Verdict::DoesNotHold);
        assert_eq!(branching_hurts((2.0 * MS, 1.0 * MS), (2.5 * MS, 1.0 * MS)).0, Verdict::DoesNotHold);
    }

    #[test]
    fn image_processing_holds_from_the_first_winning_work_level() {
        let (v, why) = image_processing_shines(&[(0, 0.2), (16, 0.7), (256, 3.0), (4096, 9.5)]);
        assert_eq!(v, Verdict::HoldsFrom("256 rounds per pixel".into()));
        assert!(why.contains("9.50x at 4096"), "{why}");
        assert_eq!(image_processing_shines(&[(0, 1.5)]).0, Verdict::Holds);
        assert_eq!(image_processing_shines(&[(0, 0.1), (4096, 0.9)]).0, Verdict::DoesNotHold);
    }

    #[test]
    fn small_data_loses_when_the_smallest_size_loses() {
        let (v, why) = small_data_loses((0.25, 5.0 * MS, 0.1 * MS), Some(12.0), None, 16.0);
        assert_eq!(v, Verdict::Holds);
        assert!(why.contains("wins from about 12.00 MP") && why.contains("never would"), "{why}");
        assert_eq!(small_data_loses((0.25, 0.05 * MS, 0.1 * MS), None, None, 1.0).0, Verdict::DoesNotHold);
    }
}
