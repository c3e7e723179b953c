//! What a size sweep means: the crossovers (those of a grid's lowest level), the fixed cost of a
//! dispatch, the share of GPU time spent moving data, the model, frontier and roofline, the
//! verdict, and the sweep as CSV.

use std::fmt::Write as _;

use crate::engine::ceilings::{PhasePart, PhaseRate};
use crate::engine::spans::Phase;
use crate::engine::sweep::grid::Series;
use crate::engine::sweep::result::{SweepPoint, SweepResult, Winner};
use crate::system::clock::Clock;

/// Fills in the crossovers, latency, transfer share, the model, for a work grid the frontier
/// and the roofline, and the verdict.
pub fn analyse(r: &mut SweepResult) {
    // A point decided "within the noise" is no crossover: only a decided win counts.
    let axis = r.axis;
    let lowest = r.points.iter().map(|p| p.level(axis)).min().unwrap_or(0);
    let mut plain: Vec<&SweepPoint> = r.points.iter().filter(|p| p.level(axis) == lowest).collect();
    plain.sort_by(|a, b| a.megapixels.total_cmp(&b.megapixels));
    r.crossover_mp = wins_from_mp(&plain, Series::GpuTotal);
    r.resident_crossover_mp = wins_from_mp(&plain, Series::GpuResident);
    r.dispatch_latency_ns = dispatch_latency_ns(&plain);
    // Timed as the resident series was.
    let resident = |p: &&SweepPoint| p.series.iter().find(|(s, _)| *s == Series::GpuResident)?.1.clock;
    r.dispatch_latency_clock = r.dispatch_latency_ns.and_then(|_| plain.first().and_then(resident));
    let near_8k =
        plain.iter().min_by(|a, b| (a.megapixels - 33.2).abs().total_cmp(&(b.megapixels - 33.2).abs()));
    r.transfer_share_mp = near_8k.map(|p| p.megapixels);
    r.transfer_share_at_8k = near_8k.and_then(|p| {
        // The upload and the download alone: setup and the other time are not moving data.
        let total = p.median_ns(Series::GpuTotal)? as f64;
        let ns = |phase| {
            let whole = |r: &&PhaseRate| r.phase == phase && r.part == PhasePart::Whole;
            p.rates.iter().find(whole).map(|r| r.ns as f64)
        };
        let moving = ns(Phase::Upload)? + ns(Phase::Download)?;
        (total > 0.0).then(|| (moving / total).clamp(0.0, 1.0))
    });
    crate::engine::sweep::model::model_sweep(r);
    let grid = r.is_grid();
    r.frontier = None;
    if grid {
        crate::engine::sweep::frontier::fill_frontier(r);
    }
    // Every sweep sits on the roofline, a plain one at the grayscale's own intensity.
    r.roofline = Some(crate::engine::sweep::roofline::roofline(r));
    // A grid's verdict is its frontier (the crossover over sizes at its lowest level is in the
    // fields and the tables); a plain sweep's is the crossover's.
    r.verdict = if grid { crate::engine::sweep::frontier::frontier_sentence(r) } else { verdict(r) };
    if r.stopped {
        r.verdict = stopped_verdict(r);
    }
}

/// A stopped sweep's verdict: what its points say, then how many were measured and that those
/// not run count neither way (or, with none measured, that alone).
fn stopped_verdict(r: &SweepResult) -> String {
    let all = r.points.len() + r.not_run.len();
    if r.points.is_empty() {
        let not_run = crate::system::units::count(all, "point");
        return format!("The sweep was stopped before any point was measured ({not_run} not run).");
    }
    format!(
        "{} The sweep was stopped: {} of {all} points measured; the {} not run count neither as a win nor as a loss.",
        r.verdict,
        r.points.len(),
        r.not_run.len()
    )
}

/// The smallest size of `plain` (smallest first) from which `series` beats the best CPU series
/// at it and at every larger size, as the round trips' count and the frontier's level are found:
/// a win at one size followed by a loss is no crossover. A size whose comparison was not decided
/// in its time budget is passed over, neither a win nor a loss.
fn wins_from_mp(plain: &[&SweepPoint], series: Series) -> Option<f64> {
    let mut from = None;
    for p in plain.iter().rev() {
        if series == Series::GpuTotal && p.end_to_end.is_some_and(|c| c.winner == Winner::Undecided) {
            continue;
        }
        if !p.gpu_wins(series) {
            break;
        }
        from = Some(p.megapixels);
    }
    from
}

/// The fixed cost of one dispatch on resident data: where the line through the resident times
/// of the two smallest sizes meets 0 pixels, at most the smallest's time (the smallest size
/// alone counted its kernel too: 15.5 ms at 8 MP where the probe's submit takes 0.07). `None`
/// with fewer than two sizes, for a cell with an op (its resident series holds the op's passes),
/// or where the line falls below 0 (the noise of two close sizes).
fn dispatch_latency_ns(plain: &[&SweepPoint]) -> Option<u64> {
    let mut sized = plain.iter().map(|p| Some((p.megapixels, p.median_ns(Series::GpuResident)? as f64)));
    let ((mp1, t1), (mp2, t2)) = (sized.next()??, sized.next()??);
    if plain.iter().take(2).any(|p| !p.op.is_none()) || mp2 <= mp1 {
        return None;
    }
    let at_zero = t1 - mp1 * (t2 - t1) / (mp2 - mp1);
    (at_zero >= 0.0).then(|| at_zero.min(t1).round() as u64)
}

fn verdict(r: &SweepResult) -> String {
    let Some(adapter) = &r.adapter else {
        return "No GPU was measured: only the CPU series are shown.".to_owned();
    };
    let flags: Vec<&str> = [
        (r.software_adapter, "software adapter: these GPU figures describe a CPU emulation, not a GPU"),
        (r.build == "debug", "debug build: timings are meaningless"),
        (!r.gpu_timestamps, "no GPU timestamps: GPU phases from the CPU clock"),
        (r.was_busy(), "measured on a busy machine: other processes took part of the CPU"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    let share = match (r.transfer_share_at_8k, r.transfer_share_mp) {
        (Some(s), Some(mp)) => {
            // Whole megapixels from 10 up; a small sweep's 0.05 MP is not "0 MP".
            let places = if mp >= 10.0 { 0 } else { 2 };
            format!("; moving the data is {:.0}% of GPU time at {mp:.places$} MP", s * 100.0)
        }
        _ => String::new(),
    };
    // Sizes won end to end with no crossover: each a win with a loss at a larger size.
    let lone_wins: Vec<String> = r
        .points
        .iter()
        .filter(|p| r.crossover_mp.is_none() && p.gpu_wins(Series::GpuTotal))
        .map(|p| format!("{:.2} MP", p.megapixels))
        .collect();
    let main = match (r.crossover_mp, r.resident_crossover_mp) {
        (Some(mp), _) => format!(
            "On this machine ({adapter}) the GPU beats the CPU above {mp:.2} MP, transfers included{share}."
        ),
        _ if !lone_wins.is_empty() => format!(
            "On this machine ({adapter}) the GPU beats the CPU end to end at {} but not at every larger size, \
             so it has no crossover{share}.",
            lone_wins.join(", ")
        ),
        (None, Some(mp)) => format!(
            "On this machine ({adapter}) the GPU wins above {mp:.2} MP only when the image is already on the GPU{share}."
        ),
        (None, None) => format!(
            "On this machine ({adapter}) the GPU never beats the CPU at these sizes, not even with the data already on the GPU{share}."
        ),
    };
    // The flags go inside the sentence, before its full stop.
    let main = if flags.is_empty() {
        main
    } else {
        format!("{} ({}).", main.trim_end_matches('.'), flags.join("; "))
    };
    match modelled(r) {
        Some(m) => format!("{main} {m}"),
        None => main,
    }
}

/// The modelled crossover in one sentence, beside the measured one; with an op, why there is
/// none (the model prices no op); nothing where there is no model for another reason.
fn modelled(r: &SweepResult) -> Option<String> {
    let Some(m) = r.model.as_ref() else {
        let because = crate::engine::sweep::frontier::modelled_unknown_because(r);
        return r.has_op().then(|| format!("There is no modelled crossover: {because}."));
    };
    let measured = match r.crossover_mp {
        Some(mp) => format!("measured: {mp:.2} MP"),
        None => "measured: never at these sizes".to_owned(),
    };
    let c = &m.cost;
    Some(match (m.crossover_mp, m.overlapped_crossover_mp) {
        (Some(mp), Some(overlapped)) => format!(
            "From this machine's ceilings the GPU end to end should win above {mp:.2} MP ({overlapped:.2} MP \
             with host copies fully overlapping GPU work; {measured})."
        ),
        (None, Some(overlapped)) => format!(
            "From this machine's ceilings the GPU end to end wins only with host copies overlapping GPU \
             work, above {overlapped:.2} MP ({measured})."
        ),
        _ => format!(
            "From this machine's ceilings the GPU end to end never wins: moving and converting a \
             megapixel costs it at least {:.3} ms against the CPU's {:.3} ms at its memory-stream \
             baseline ({measured}).",
            c.gpu_overlapped_ns_per_pixel, c.cpu_ns_per_pixel
        ),
    })
}

/// The sweep as CSV: one row per point and series, ending with the clock that timed it (empty
/// in sweeps saved before it was said) and the op run after the grayscale (`none`, `blur:8`,
/// `dither`); a grid's rows start with the level of its axis (`work_rounds` or `blur_radius`).
#[must_use]
pub fn to_csv(r: &SweepResult) -> String {
    // The axis and the series by their names in the JSON.
    let name =
        |v: Option<serde_json::Value>| v.and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let grid = r.is_grid();
    let mut out = if grid { format!("{},", name(serde_json::to_value(r.axis).ok())) } else { String::new() };
    out.push_str("megapixels,width,height,series,runs,min_ms,median_ms,max_ms,clock,op\n");
    for p in &r.points {
        for (s, st) in &p.series {
            if grid {
                let _ = write!(out, "{},", p.level(r.axis));
            }
            let _ = writeln!(
                out,
                "{:.4},{},{},{},{},{:.6},{:.6},{:.6},{},{}",
                p.megapixels,
                p.width,
                p.height,
                name(serde_json::to_value(s).ok()),
                st.runs,
                st.min_ns as f64 / 1e6,
                st.median_ns as f64 / 1e6,
                st.max_ns as f64 / 1e6,
                st.clock.map_or("", Clock::label),
                p.op
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sweep::result::{assert_says, one_run};

    fn point(mp: f64, cpu: u64, total: u64, kernel: u64, resident: u64) -> SweepPoint {
        let series = [
            (Series::Cpu1, cpu * 2),
            (Series::CpuAll, cpu),
            (Series::GpuTotal, total),
            (Series::GpuKernel, kernel),
            (Series::GpuResident, resident),
        ];
        SweepPoint { cpu_stream: Some(one_run(cpu)), ..SweepPoint::for_tests(mp, &series) }
    }

    fn result(points: Vec<SweepPoint>) -> SweepResult {
        let mut r = SweepResult::for_tests(points);
        analyse(&mut r);
        r
    }

    #[test]
    fn finds_the_crossovers_and_the_transfer_share() {
        let r = result(vec![
            point(1.0, 100, 500, 50, 150),
            point(8.0, 800, 900, 100, 300),
            point(33.0, 3300, 2000, 400, 500),
        ]);
        assert_eq!(r.crossover_mp, Some(33.0));
        assert_eq!(r.resident_crossover_mp, Some(8.0));
        // Resident 150 ns at 1 MP and 300 at 8: the line meets 0 pixels at 150 - 150/7.
        assert_eq!(r.dispatch_latency_ns, Some(129));
        let two_small = result(vec![point(0.01, 1, 9, 1, 50), point(0.1, 10, 20, 2, 59)]);
        assert_eq!(two_small.dispatch_latency_ns, Some(49), "small sizes: about the smallest's time");
        let one = result(vec![point(8.0, 800, 900, 100, 300)]);
        assert_eq!(one.dispatch_latency_ns, None, "one size says nothing of a fixed cost");
        assert_eq!(r.transfer_share_at_8k, Some(0.8));
        assert_says(&r.verdict, "above 33.00 MP, transfers included");
        assert_says(&r.verdict, "80% of GPU time at 33 MP");
        // Setup and the other time are no transfer: an upload and a download of 200 ns each
        // in a 2000 ns total are 20% of it, whatever the kernel.
        let mut points = r.points.clone();
        for rate in &mut points[2].rates {
            rate.ns = 200;
        }
        assert_eq!(result(points).transfer_share_at_8k, Some(0.2));
    }

    #[test]
    fn the_dispatch_and_copy_latencies_name_their_clocks() {
        let mut points = vec![point(1.0, 100, 500, 50, 150), point(8.0, 800, 900, 100, 300)];
        for (s, st) in points.iter_mut().flat_map(|p| p.series.iter_mut()) {
            if *s == Series::GpuResident {
                st.clock = Some(Clock::GpuTimestamp);
            }
        }
        // The resident series' clock, in the JSON beside the figure.
        let r = result(points);
        assert_eq!((r.dispatch_latency_ns, r.dispatch_latency_clock), (Some(129), Some(Clock::GpuTimestamp)));
        let json = serde_json::to_value(&r).expect("serialise");
        assert_eq!(json["dispatch_latency_clock"], "gpu-timestamp");
        // No latency, no clock.
        assert_eq!(result(vec![point(8.0, 800, 900, 100, 300)]).dispatch_latency_clock, None);
        // The copies' latencies: the CPU clock, said in the JSON; a sweep saved before it reads.
        let copies = crate::engine::ceilings::CopyLatency {
            up_ns: 26_100.0,
            down_ns: 28_500.0,
            clock: Clock::CpuClock,
        };
        let json = serde_json::to_value(copies).expect("serialise");
        assert_eq!(json["clock"], "cpu-clock");
        let old: crate::engine::ceilings::CopyLatency =
            serde_json::from_str(r#"{"up_ns": 26100.0, "down_ns": 28500.0}"#).expect("an old sweep's copies");
        assert_eq!(old, copies);
    }

    #[test]
    fn an_inconclusive_size_is_never_the_crossover() {
        use crate::engine::sampling::Stop;
        use crate::engine::sweep::result::{Speedup, Winner};
        // The medians say the GPU wins from 8 MP, but at 8 MP the rounds hold 1 (±10%); at 33
        // MP they are clearly below it.
        let mut points = vec![
            point(1.0, 100, 500, 50, 150),
            point(8.0, 800, 790, 100, 300),
            point(33.0, 3300, 2000, 400, 500),
        ];
        let noisy = [0.9, 1.1, 0.95, 1.05, 1.0, 0.92, 1.08, 1.0, 0.97];
        let cpu = [800.0; 9];
        let gpu: Vec<f64> = noisy.iter().map(|r| 800.0 / r).collect();
        points[1].end_to_end = Some(Speedup::of(Some(Series::CpuAll), &cpu, &gpu, Stop::Time));
        points[2].end_to_end = Some(Speedup::of(
            Some(Series::CpuAll),
            &[3300.0; 6],
            &[2000.0, 2100.0, 1900.0, 2050.0, 1950.0, 2000.0],
            Stop::Decided,
        ));
        assert_eq!(points[1].end_to_end.map(|c| c.winner), Some(Winner::WithinNoise));
        assert_eq!(points[2].end_to_end.map(|c| c.winner), Some(Winner::GpuFaster));
        let r = result(points);
        assert_eq!(r.crossover_mp, Some(33.0));
        assert_says(&r.verdict, "above 33.00 MP, transfers included");
        // Decided "CPU faster" at every size: no crossover, whatever the medians say.
        let mut points = vec![point(8.0, 800, 700, 100, 300)];
        points[0].end_to_end =
            Some(Speedup::of(Some(Series::CpuAll), &[800.0; 6], &[900.0; 6], Stop::Decided));
        assert_eq!(result(points).crossover_mp, None);
    }

    #[test]
    fn the_crossover_is_the_size_from_which_the_gpu_keeps_winning() {
        // The GPU end to end wins at 1 MP, loses at 8 and wins at 33: from 33 on, not "above 1".
        let points = vec![
            point(1.0, 600, 500, 50, 150),
            point(8.0, 800, 900, 100, 300),
            point(33.0, 3300, 2000, 400, 500),
        ];
        let r = result(points.clone());
        assert_eq!(r.crossover_mp, Some(33.0));
        assert_says(&r.verdict, "the GPU beats the CPU above 33.00 MP, transfers included");
        // Winning at 1 MP alone, losing above: no crossover, and the verdict names the lone win.
        let r = result(points[..2].to_vec());
        assert_eq!(r.crossover_mp, None);
        assert_says(&r.verdict, "the GPU beats the CPU end to end at 1.00 MP but not at every larger size");
        // A size not decided in its time budget is passed over, neither a win nor a loss.
        let mut points = points;
        points[1].end_to_end = Some(crate::engine::sweep::result::Speedup::of(
            Some(Series::CpuAll),
            &[800.0; 3],
            &[900.0; 3],
            crate::engine::sampling::Stop::Time,
        ));
        assert_eq!(result(points).crossover_mp, Some(1.0));
    }

    #[test]
    fn the_resident_crossover_needs_every_run_faster_not_the_median() {
        use crate::engine::report::Stats;
        let runs = |min_ns, median_ns, max_ns, runs| Stats { min_ns, median_ns, max_ns, runs, clock: None };
        let at = |resident: Stats, cpu: Stats| {
            let mut p = point(8.0, 800, 900, 100, 300);
            for (s, st) in &mut p.series {
                match s {
                    Series::GpuResident => *st = resident,
                    Series::CpuAll => *st = cpu,
                    _ => {}
                }
            }
            result(vec![p]).resident_crossover_mp
        };
        let cpu = runs(780, 800, 850, 5);
        // The medians say 700 against 800, but the resident runs reach 900: within the noise.
        assert_eq!(at(runs(600, 700, 900, 5), cpu), None);
        // Every resident run under the CPU's fastest: decided (1 split in 252 by chance).
        assert_eq!(at(runs(600, 700, 770, 5), cpu), Some(8.0));
        // Three runs against three split cleanly 1 time in 20 by chance: not enough; four: 1 in 70.
        assert_eq!(at(runs(600, 700, 770, 3), runs(780, 800, 850, 3)), None);
        assert_eq!(at(runs(600, 700, 770, 4), runs(780, 800, 850, 4)), Some(8.0));
    }

    #[test]
    fn a_busy_sweep_says_so_in_its_verdict() {
        use crate::system::load::Busy;
        let mut points = vec![point(1.0, 100, 500, 50, 150)];
        points[0].busy = Some(Busy { others_share: 0.6, steal_share: 0.0 });
        let r = result(points);
        assert!(r.was_busy());
        assert_says(&r.verdict, "measured on a busy machine");
        let quiet = result(vec![point(1.0, 100, 500, 50, 150)]);
        assert!(!quiet.was_busy() && !quiet.verdict.contains("busy"), "{}", quiet.verdict);
        assert_eq!(quiet.busy_text(), None);
        // Quiet over the whole sweep but busy at one point: the text says which, never "0%".
        let mut r = r;
        r.points.push(point(2.0, 200, 900, 90, 250));
        r.busy = Some(Busy { others_share: 0.001, steal_share: 0.0 });
        assert_eq!(
            r.busy_text().as_deref(),
            Some(
                "other processes took 0% of the CPU over the sweep, 1 of 1 point measured busy, 1 too short to tell"
            )
        );
        r.busy = Some(Busy { others_share: 0.02, steal_share: 0.2 });
        r.points[0].busy = None;
        assert_eq!(
            r.busy_text().as_deref(),
            Some(
                "other processes took 2% of the CPU, a hypervisor 20% over the sweep, each point too short to tell on its own"
            )
        );
    }

    #[test]
    fn a_stopped_sweep_says_so_and_counts_its_points_not_run_neither_way() {
        use crate::engine::sweep::CellNotRun;
        let not_run = |megapixels| CellNotRun {
            megapixels,
            width: 1,
            height: 1,
            work_rounds: 0,
            op: crate::pixel::Op::None,
        };
        // The GPU loses at 1 MP; the two larger sizes were not run: no crossover, and not "never".
        let mut r = SweepResult::for_tests(vec![point(1.0, 100, 500, 50, 150)]);
        (r.stopped, r.not_run) = (true, vec![not_run(8.0), not_run(33.0)]);
        analyse(&mut r);
        assert_eq!((r.crossover_mp, r.resident_crossover_mp), (None, None));
        assert!(
            r.verdict.ends_with(
                "The sweep was stopped: 1 of 3 points measured; the 2 not run count neither as a win nor as a loss."
            ),
            "{}",
            r.verdict
        );
        let mut none = SweepResult::for_tests(Vec::new());
        (none.stopped, none.not_run) = (true, vec![not_run(1.0), not_run(8.0)]);
        analyse(&mut none);
        assert_eq!(none.verdict, "The sweep was stopped before any point was measured (2 points not run).");
    }

    #[test]
    fn says_so_when_the_gpu_never_wins() {
        let r = result(vec![point(1.0, 100, 500, 50, 150), point(33.0, 3300, 9000, 4000, 5000)]);
        assert_eq!((r.crossover_mp, r.resident_crossover_mp), (None, None));
        assert_says(&r.verdict, "never beats the CPU");
        let r = result(vec![point(1.0, 100, 500, 50, 90)]);
        assert_says(&r.verdict, "only when the image is already on the GPU");
        // A small sweep's largest size keeps its digits.
        let r = result(vec![point(0.01, 10, 500, 50, 150), point(0.05, 50, 500, 50, 150)]);
        assert_says(&r.verdict, "90% of GPU time at 0.05 MP");
    }

    #[test]
    fn the_modelled_crossover_sits_beside_the_measured_one() {
        // Stream baseline 1 ms at 1 MP: 4 GB/s, 1 ns a pixel on the CPU; the example ceilings
        // cost 0.1497 ns a pixel end to end; latency 20 µs (the probe's submit: one size gives
        // no dispatch latency).
        let with_ceilings = |points| {
            let mut r = SweepResult::for_tests(points);
            r.ceilings = Some(Box::new(crate::engine::ceilings::rates::example_ceilings()));
            analyse(&mut r);
            r
        };
        let mut points = vec![point(1.0, 1000, 5000, 50, 150)];
        points[0].cpu_stream = Some(one_run(1_000_000));
        let r = with_ceilings(points);
        let m = r.model.as_ref().expect("model");
        assert!((m.cpu_stream_mp - 1.0).abs() < 1e-12);
        assert!((m.cost.cpu_ns_per_pixel - 1.0).abs() < 1e-12, "{m:?}");
        let want = 20_000.0 / (1.0 - 0.149_687_5) / 1e6;
        assert!(m.crossover_mp.is_some_and(|mp| (mp - want).abs() < 1e-15), "{m:?}");
        assert_eq!(m.latency_from, "the probe's submit-and-wait latency");
        assert_eq!(r.points[0].modelled.map(|p| p.cpu_ns), Some(1_000_000));
        assert_says(&r.verdict, "should win above 0.02 MP");
        assert_says(&r.verdict, "measured: never at these sizes");
        // A fast CPU (stream 1 µs for 33 MP): never, and the sentence says what a megapixel costs.
        let r = with_ceilings(vec![point(33.0, 1000, 5000, 50, 150)]);
        assert_eq!(r.model.as_ref().and_then(|m| m.crossover_mp), None);
        assert_says(&r.verdict, "never wins: moving and converting a megapixel costs it at least 0.109 ms");
        // With an op there is no model, and the verdict says why.
        let mut points = vec![point(1.0, 1000, 5000, 50, 150)];
        points[0].cpu_stream = Some(one_run(1_000_000));
        points[0].op = crate::pixel::Op::Dither;
        let r = with_ceilings(points);
        assert!(r.model.is_none());
        assert!(
            r.verdict.ends_with(
                "GPU time at 1.00 MP. There is no modelled crossover: the model prices the grayscale and the \
                 synthetic rounds, not an op such as the blur or the dither."
            ),
            "{}",
            r.verdict
        );
        // Without ceilings there is no model and the verdict says nothing of one.
        let r = result(vec![point(33.0, 1000, 5000, 50, 150)]);
        assert!(r.model.is_none() && !r.verdict.contains("ceilings"), "{}", r.verdict);
    }
}
