//! `graylab sweep`'s text: the table of every point, each point's comparison in turns, every
//! phase against its ceiling, the crossovers and the verdict (a grid's map is `grid.rs`'s).

use crate::cli::out::{errln, outln};
use crate::engine::sweep::{GridAxis, Series, SweepResult};
use crate::engine::{Backend, Phase};
use crate::system::units::ms;

use super::{clocks, grid};

/// The sweep as text on stdout: the table of every point (and the cells a stopped sweep did not
/// run), the comparisons, the ceilings, the crossovers, a grid's map and the verdict.
pub(super) fn print_table(r: &SweepResult) {
    let runs = crate::system::units::count(r.runs, "warm run");
    outln!("graylab sweep: {} images, {}, {runs} per point, median ms", r.source, r.formula);
    if let Some(a) = &r.adapter {
        outln!(
            "GPU: {a}, workgroup {}{}",
            r.workgroup,
            if r.gpu_timestamps { "" } else { " (no timestamps: CPU clock)" }
        );
    }
    outln!("{}", clocks::clocks_line(r));
    let grid = r.is_grid();
    let work = |k: Option<u32>| level_column(r, k);
    if grid {
        outln!("{}", axis_line(r));
    } else if !r.op.is_none() {
        outln!("op: {} on every size, timed with the kernel ({} ops/px)", r.op, r.op.ops_per_pixel());
    }
    outln!(
        "{}{:>8} {:>12} {:>10} {:>10} {:>11} {:>11} {:>11} {:>9} {:>9}",
        work(None),
        "MP",
        "size",
        "cpu 1 thr",
        format!("cpu {} thr", r.cpu_threads),
        "gpu total",
        "gpu kernel",
        "gpu resid.",
        "up GB/s",
        "down GB/s"
    );
    for p in &r.points {
        let cell = |s: Series| p.median_ns(s).map_or_else(|| "-".to_owned(), ms);
        let rate = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |g| format!("{g:.2}"));
        outln!(
            "{}{:>8.2} {:>12} {:>10} {:>10} {:>11} {:>11} {:>11} {:>9} {:>9}",
            work(Some(p.level(r.axis))),
            p.megapixels,
            format!("{}x{}", p.width, p.height),
            cell(Series::Cpu1),
            cell(Series::CpuAll),
            cell(Series::GpuTotal),
            cell(Series::GpuKernel),
            cell(Series::GpuResident),
            rate(p.upload_gb_per_s),
            rate(p.download_gb_per_s),
        );
    }
    for c in &r.not_run {
        let size = format!("{}x{}", c.width, c.height);
        outln!("{}{:>8.2} {size:>12} not run (stopped)", work(Some(c.level(r.axis))), c.megapixels);
    }
    if let Some(ns) = r.dispatch_latency_ns {
        let clock = r.dispatch_latency_clock.unwrap_or_default().label();
        outln!(
            "dispatch latency (resident, the two smallest sizes extended to 0 pixels): {} ms ({clock})",
            ms(ns)
        );
    }
    if let Some(l) = r.copy_latency {
        outln!(
            "copies' latency (fitted, 4 KiB to 4 MiB): {:.1} µs up, {:.1} µs down ({}): every end-to-end run pays them",
            l.up_ns / 1e3,
            l.down_ns / 1e3,
            l.clock.label()
        );
    }
    print_comparisons(r);
    print_ceilings_table(r);
    // Without a GPU series there is no crossover to state.
    let gpu_measured = r.points.iter().any(|p| p.median_ns(Series::GpuTotal).is_some());
    match r.crossover_mp {
        Some(mp) => outln!("crossover{}: the GPU end to end beats the CPU from {mp:.2} MP", lowest(r)),
        None if gpu_measured => outln!(
            "crossover{}: none (no size from which the GPU end to end is decided faster than the CPU at every larger size)",
            lowest(r)
        ),
        None => {}
    }
    if grid {
        grid::print_grid(r);
    }
    if let Some(m) = &r.model {
        let mp = |v: Option<f64>| v.map_or_else(|| "never".to_owned(), |mp| format!("{mp:.2} MP"));
        outln!(
            "modelled crossover (from the ceilings): {}; {} with host copies fully overlapping GPU work; {} with the data resident",
            mp(m.crossover_mp),
            mp(m.overlapped_crossover_mp),
            mp(m.resident_crossover_mp)
        );
    }
    outln!("{}", r.verdict);
}

/// Each point's sampled comparison: who is faster, the GPU's speed-up with its interval, the
/// rounds taken, and "busy" where other processes took part of the machine; then a warning when
/// the sweep ran on a busy machine.
fn print_comparisons(r: &SweepResult) {
    if r.points.iter().any(|p| p.end_to_end.is_some()) {
        outln!();
        outln!(
            "GPU end to end against the best CPU series, run in turns until decided (the GPU's speed-up, 95% interval)"
        );
        for p in &r.points {
            let Some(c) = &p.end_to_end else { continue };
            let level =
                if r.is_grid() { format!(" at {}", r.axis.short(p.level(r.axis))) } else { String::new() };
            outln!(
                "{:>8.2} MP{level}: {}, {} rounds against {}{}",
                p.megapixels,
                c.label(),
                c.rounds,
                c.cpu_series.map_or("the CPU", |s| s.label()),
                if p.was_busy() { " (busy)" } else { "" }
            );
        }
    }
    if let Some(busy) = r.busy_text() {
        errln!("warning: the machine was busy ({busy}): the figures are noisier than on a quiet machine");
    }
}

/// Each phase as % of its ceiling at each size, and the modelled times beside the measured ones.
fn print_ceilings_table(r: &SweepResult) {
    if r.points.iter().all(|p| p.rates.is_empty()) {
        return;
    }
    outln!();
    outln!(
        "against this machine's ceilings (% of ceiling at the median; cpu: all threads vs the memory-stream baseline){}",
        if r.model.is_some() { ", and the model's times in ms" } else { "" }
    );
    outln!("{}", clocks::ceilings_clocks_line(r));
    if let Some(note) = clocks::op_shares_note(r) {
        outln!("{note}");
    }
    let work = |k: Option<u32>| level_column(r, k);
    outln!(
        "{}{:>8} {:>8} {:>9} {:>8} {:>8} {:>11} {:>11} {:>11} {:>11}",
        work(None),
        "MP",
        "cpu %",
        "upload %",
        "kern. %",
        "down %",
        "gpu total",
        "model",
        "cpu all",
        "model"
    );
    for p in &r.points {
        let pct = |backend: Backend, phase: Phase| {
            clocks::whole_rate(p, backend, phase)
                .and_then(crate::engine::ceilings::PhaseRate::share_label)
                .map_or_else(|| "-".to_owned(), |v| v.trim_end_matches('%').to_owned())
        };
        let cell = |ns: Option<u64>| ns.map_or_else(|| "-".to_owned(), ms);
        outln!(
            "{}{:>8.2} {:>8} {:>9} {:>8} {:>8} {:>11} {:>11} {:>11} {:>11}",
            work(Some(p.level(r.axis))),
            p.megapixels,
            pct(Backend::Cpu, Phase::Kernel),
            pct(Backend::Gpu, Phase::Upload),
            pct(Backend::Gpu, Phase::Kernel),
            pct(Backend::Gpu, Phase::Download),
            cell(p.median_ns(Series::GpuTotal)),
            cell(p.modelled.map(|m| m.gpu_total_ns)),
            cell(p.median_ns(Series::CpuAll)),
            cell(p.modelled.map(|m| m.cpu_ns)),
        );
    }
}

/// For a grid, the level the crossover over sizes is taken at, e.g. ` at 0 rounds per pixel`.
fn lowest(r: &SweepResult) -> String {
    match r.points.iter().map(|p| p.level(r.axis)).min() {
        Some(k) if r.is_grid() => format!(" at {}", r.axis.level_text(f64::from(k))),
        _ => String::new(),
    }
}

/// A grid's first column (its header with `None`): the work rounds or the blur's radius.
fn level_column(r: &SweepResult, level: Option<u32>) -> String {
    let header = match r.axis {
        GridAxis::WorkRounds => "work",
        GridAxis::BlurRadius => "radius",
    };
    match (r.is_grid(), level) {
        (false, _) => String::new(),
        (true, None) => format!("{header:>6} "),
        (true, Some(k)) => format!("{k:>6} "),
    }
}

/// What a grid's second axis is, and each level's operations per pixel.
fn axis_line(r: &SweepResult) -> String {
    let per_level: Vec<String> =
        r.levels.iter().map(|l| format!("{} {} ops/px", l.level, l.ops_per_pixel)).collect();
    let what = match r.axis {
        GridAxis::WorkRounds => format!(
            "work rounds: synthetic rounds per pixel (3 integer operations each){}{}",
            if r.divergent { ", divergent: odd grays only" } else { "" },
            if r.op.is_none() { String::new() } else { format!(", then {} on every cell", r.op) }
        ),
        GridAxis::BlurRadius => {
            "blur radius: each cell runs blur:R at 0 rounds (4 (2R + 1) integer operations per pixel)"
                .to_owned()
        }
    };
    format!("axis: {what}; operations per pixel with the formula's: {}", per_level.join(", "))
}
