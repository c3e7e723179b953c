//! `graylab sweep`'s tables: which clock timed each of their columns, read from the measurements
//! (the GPU kernel on its timestamps, or on the CPU clock where the adapter gave none), and for
//! the ceilings table the clocks its ceilings were probed on, and the rate each % column shows.

use crate::engine::ceilings::{Ceiling, PhasePart, PhaseRate};
use crate::engine::sweep::{Series, SweepPoint, SweepResult};
use crate::engine::{Backend, Phase};
use crate::system::clock::Clock;

/// The line under the table's title that names each column's clock: "clocks: cpu-clock (cpu 1
/// thr, cpu 2 thr, gpu total, gpu resid.), gpu-timestamp (gpu kernel), …". A column measured on
/// two clocks at different sizes is under both; one with no figure is under none.
pub(super) fn clocks_line(r: &SweepResult) -> String {
    let cpu_all = format!("cpu {} thr", r.cpu_threads);
    // The CPU series and the GPU's whole runs are timed on the CPU clock; the GPU's phases as
    // their rates keep it.
    let clocks = |series| series_clocks(r, series);
    let gpu = |phase, measured: &dyn Fn(&SweepPoint) -> bool| -> Vec<Clock> {
        r.points.iter().filter(|p| measured(p)).filter_map(|p| p.gpu_phase_clock(phase)).collect()
    };
    let columns: [(&str, Vec<Clock>); 7] = [
        ("cpu 1 thr", clocks(Series::Cpu1)),
        (&cpu_all, clocks(Series::CpuAll)),
        ("gpu total", clocks(Series::GpuTotal)),
        ("gpu kernel", gpu(Phase::Kernel, &|p| p.median_ns(Series::GpuKernel).is_some())),
        ("gpu resid.", clocks(Series::GpuResident)),
        ("up GB/s", gpu(Phase::Upload, &|p| p.upload_gb_per_s.is_some())),
        ("down GB/s", gpu(Phase::Download, &|p| p.download_gb_per_s.is_some())),
    ];
    format!("clocks: {}", grouped(&columns))
}

/// The line under the ceilings table's title, in the same words: the clock of each column's
/// run (a % column's rate, the measured medians), then the clock each % column's ceiling was
/// probed on, and the model's columns, which no clock timed: "clocks: cpu-clock (cpu %, gpu
/// total, cpu all), gpu-timestamp (kern. %), …; ceilings: …; model: no clock, from the ceilings".
pub(super) fn ceilings_clocks_line(r: &SweepResult) -> String {
    let clocks = |series| series_clocks(r, series);
    // A % column where it shows a figure: its rate's clock, or its ceiling's.
    let pct = |backend, phase, clock: fn(&PhaseRate) -> Option<Clock>| -> Vec<Clock> {
        let shown = |p| whole_rate(p, backend, phase).filter(|x| x.share_label().is_some());
        r.points.iter().filter_map(|p| shown(p).and_then(clock)).collect()
    };
    let percents = |clock: fn(&PhaseRate) -> Option<Clock>| {
        [
            ("cpu %", pct(Backend::Cpu, Phase::Kernel, clock)),
            ("upload %", pct(Backend::Gpu, Phase::Upload, clock)),
            ("kern. %", pct(Backend::Gpu, Phase::Kernel, clock)),
            ("down %", pct(Backend::Gpu, Phase::Download, clock)),
        ]
    };
    // In the table's order: the % columns, then the measured medians.
    let mut runs = percents(|x| Some(x.source)).to_vec();
    runs.push(("gpu total", clocks(Series::GpuTotal)));
    runs.push(("cpu all", clocks(Series::CpuAll)));
    let mut line = format!("clocks: {}", grouped(&runs));
    let ceilings = grouped(&percents(|x| x.ceiling_source));
    if !ceilings.is_empty() {
        line.push_str("; ceilings: ");
        line.push_str(&ceilings);
    }
    if r.points.iter().any(|p| p.modelled.is_some()) {
        line.push_str("; model: no clock, from the ceilings");
    }
    line
}

/// The clocks of a column of `series`' medians, as each point's figures name them (the CPU clock
/// where a figure names none: a file written before figures did); the GPU's resident passes
/// with an op on the GPU are on both clocks.
fn series_clocks(r: &SweepResult, series: Series) -> Vec<Clock> {
    let stats = r.points.iter().filter_map(|p| p.series.iter().find(|(s, _)| *s == series));
    let mut clocks: Vec<Clock> = Vec::new();
    for clock in stats.map(|(_, st)| st.clock.unwrap_or(Clock::CpuClock)) {
        if !clocks.contains(&clock) {
            clocks.push(clock);
        }
    }
    clocks
}

/// `columns` grouped by clock, in the order each clock is first named: "cpu-clock (a, b),
/// gpu-timestamp (c)"; a column of two clocks is under both, one of none under none.
fn grouped(columns: &[(&str, Vec<Clock>)]) -> String {
    let mut groups: Vec<(Clock, Vec<&str>)> = Vec::new();
    for (column, clocks) in columns {
        for clock in clocks {
            match groups.iter_mut().find(|g| g.0 == *clock) {
                Some(g) if !g.1.contains(column) => g.1.push(column),
                Some(_) => {}
                None => groups.push((*clock, vec![column])),
            }
        }
    }
    let named: Vec<String> =
        groups.iter().map(|(clock, columns)| format!("{} ({})", clock.label(), columns.join(", "))).collect();
    named.join(", ")
}

/// What the ceilings table's shares are where a cell ran an op: the grayscale kernel's alone
/// (the phase held against the stream and the device copy), while the times beside them include
/// the op; `None` without one.
pub(super) fn op_shares_note(r: &SweepResult) -> Option<String> {
    let mut ops: Vec<String> =
        r.points.iter().filter(|p| !p.op.is_none()).map(|p| p.op.to_string()).collect();
    ops.dedup();
    let ops = match ops.len() {
        0 => return None,
        1..=3 => ops.join(", "),
        n => format!("{} to {}", ops[0], ops[n - 1]),
    };
    Some(format!(
        "cpu % and kern. % are of the grayscale kernel alone, without the op ({ops}); gpu total and cpu all \
         include it"
    ))
}

/// The rate of `phase` as a whole on `backend` at `p`: what a % column of the ceilings table shows.
pub(super) fn whole_rate(p: &SweepPoint, backend: Backend, phase: Phase) -> Option<&PhaseRate> {
    p.rates
        .iter()
        .find(|x| x.phase == phase && x.part == PhasePart::Whole && backend_of(x.ceiling) == Some(backend))
}

/// Which backend a rate's ceiling belongs to.
fn backend_of(ceiling: Option<Ceiling>) -> Option<Backend> {
    match ceiling? {
        Ceiling::MemoryStream => Some(Backend::Cpu),
        _ => Some(Backend::Gpu),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ceilings::{Ceiling, PhasePart, PhaseRate};
    use crate::pixel::Op;

    /// A point with every series, its GPU kernel timed by `kernel`, its copies by `copies`.
    fn point(kernel: Clock, copies: Clock) -> SweepPoint {
        let medians = [
            (Series::Cpu1, 400),
            (Series::CpuAll, 200),
            (Series::GpuTotal, 1000),
            (Series::GpuKernel, 100),
            (Series::GpuResident, 150),
        ];
        let rate = |phase, source, ceiling| PhaseRate {
            phase,
            part: PhasePart::Whole,
            bytes: 3,
            ns: 100,
            source,
            gb_per_s: 0.03,
            ceiling: Some(ceiling),
            ceiling_gb_per_s: Some(0.06),
            // The CPU's stream probed on its clock, the GPU's ceilings on its timestamps.
            ceiling_source: Some(if ceiling == Ceiling::MemoryStream {
                Clock::CpuClock
            } else {
                Clock::GpuTimestamp
            }),
            percent_of_ceiling: Some(50.0),
            ceiling_bytes: None,
        };
        let rates = vec![
            rate(Phase::Kernel, Clock::CpuClock, Ceiling::MemoryStream),
            rate(Phase::Upload, copies, Ceiling::HostToGpu),
            rate(Phase::Kernel, kernel, Ceiling::DeviceCopy),
            rate(Phase::Download, copies, Ceiling::GpuToHost),
        ];
        SweepPoint {
            rates,
            upload_gb_per_s: Some(1.0),
            download_gb_per_s: Some(1.0),
            ..SweepPoint::for_tests(1.0, &medians)
        }
    }

    #[test]
    fn every_column_says_the_clock_that_timed_it() {
        let stamped = point(Clock::GpuTimestamp, Clock::Mixed);
        let r = SweepResult::for_tests(vec![stamped.clone()]);
        assert_eq!(
            clocks_line(&r),
            "clocks: cpu-clock (cpu 1 thr, cpu 2 thr, gpu total, gpu resid.), gpu-timestamp (gpu kernel), \
             cpu-clock+gpu-timestamp (up GB/s, down GB/s)"
        );
        // No timestamps: the kernel and the copies on the CPU clock, as the runs timed them.
        let r = SweepResult::for_tests(vec![point(Clock::CpuClock, Clock::CpuClock)]);
        assert_eq!(
            clocks_line(&r),
            "clocks: cpu-clock (cpu 1 thr, cpu 2 thr, gpu total, gpu kernel, gpu resid., up GB/s, down GB/s)"
        );
        // Timestamps at one size only: the kernel column under both clocks.
        let r = SweepResult::for_tests(vec![stamped, point(Clock::CpuClock, Clock::Mixed)]);
        assert!(
            clocks_line(&r).contains("gpu kernel, gpu resid.), gpu-timestamp (gpu kernel)"),
            "{}",
            clocks_line(&r)
        );
        // The CPU alone: its columns only.
        let cpu = SweepPoint::for_tests(1.0, &[(Series::Cpu1, 400), (Series::CpuAll, 200)]);
        let r = SweepResult { adapter: None, ..SweepResult::for_tests(vec![cpu]) };
        assert_eq!(clocks_line(&r), "clocks: cpu-clock (cpu 1 thr, cpu 2 thr)");
    }

    #[test]
    fn the_ceilings_table_says_the_clock_of_each_run_each_ceiling_and_the_model() {
        use crate::engine::sweep::ModelledPoint;
        let modelled =
            ModelledPoint { gpu_total_ns: 900, gpu_overlapped_ns: 800, gpu_resident_ns: 100, cpu_ns: 300 };
        let stamped = SweepPoint { modelled: Some(modelled), ..point(Clock::GpuTimestamp, Clock::Mixed) };
        let r = SweepResult::for_tests(vec![stamped.clone()]);
        assert_eq!(
            ceilings_clocks_line(&r),
            "clocks: cpu-clock (cpu %, gpu total, cpu all), cpu-clock+gpu-timestamp (upload %, down %), \
             gpu-timestamp (kern. %); ceilings: cpu-clock (cpu %), gpu-timestamp (upload %, kern. %, down %); \
             model: no clock, from the ceilings"
        );
        // No timestamps and no model: every run on the CPU clock, nothing said of a model.
        let plain = point(Clock::CpuClock, Clock::CpuClock);
        let r = SweepResult::for_tests(vec![plain.clone()]);
        assert!(
            ceilings_clocks_line(&r).starts_with(
                "clocks: cpu-clock (cpu %, upload %, kern. %, down %, gpu total, cpu all); ceilings: "
            ),
            "{}",
            ceilings_clocks_line(&r)
        );
        assert!(!ceilings_clocks_line(&r).contains("model"));
        // A % with no ceiling to hold it against shows no figure: its column is under no clock.
        let mut bare = plain;
        for rate in &mut bare.rates {
            (rate.percent_of_ceiling, rate.ceiling_source) = (None, None);
        }
        let r = SweepResult::for_tests(vec![bare]);
        assert_eq!(ceilings_clocks_line(&r), "clocks: cpu-clock (gpu total, cpu all)");
    }

    #[test]
    fn the_ceilings_table_says_its_shares_leave_the_op_out() {
        let point = |op| SweepPoint { megapixels: 0.25, op, ..SweepPoint::default() };
        let mut r = SweepResult { points: vec![point(Op::None)], ..SweepResult::default() };
        assert_eq!(super::op_shares_note(&r), None);
        r.points = vec![point(Op::Blur { radius: 1 }), point(Op::Blur { radius: 4 })];
        assert_eq!(
            super::op_shares_note(&r).as_deref(),
            Some(
                "cpu % and kern. % are of the grayscale kernel alone, without the op (blur:1, blur:4); \
                 gpu total and cpu all include it"
            )
        );
        r.points = vec![point(Op::Dither); 2];
        assert!(super::op_shares_note(&r).is_some_and(|n| n.contains("without the op (dither);")));
    }
}
