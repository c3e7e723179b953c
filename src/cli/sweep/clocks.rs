//! `graylab sweep`'s table: which clock timed each of its columns, read from the measurements
//! (the GPU kernel on its timestamps, or on the CPU clock where the adapter gave none).

use crate::engine::Phase;
use crate::engine::sweep::{Series, SweepPoint, SweepResult};
use crate::system::clock::Clock;

/// The line under the table's title that names each column's clock: "clocks: cpu-clock (cpu 1
/// thr, cpu 2 thr, gpu total, gpu resid.), gpu-timestamp (gpu kernel), …". A column measured on
/// two clocks at different sizes is under both; one with no figure is under none.
pub(super) fn clocks_line(r: &SweepResult) -> String {
    let cpu_all = format!("cpu {} thr", r.cpu_threads);
    // The CPU series and the GPU's whole runs are timed on the CPU clock; the GPU's phases as
    // their rates keep it.
    let cpu_clock = |series| {
        let measured = r.points.iter().any(|p| p.median_ns(series).is_some());
        if measured { vec![Clock::CpuClock] } else { Vec::new() }
    };
    let gpu = |phase, measured: &dyn Fn(&SweepPoint) -> bool| -> Vec<Clock> {
        r.points.iter().filter(|p| measured(p)).filter_map(|p| p.gpu_phase_clock(phase)).collect()
    };
    let columns: [(&str, Vec<Clock>); 7] = [
        ("cpu 1 thr", cpu_clock(Series::Cpu1)),
        (&cpu_all, cpu_clock(Series::CpuAll)),
        ("gpu total", cpu_clock(Series::GpuTotal)),
        ("gpu kernel", gpu(Phase::Kernel, &|p| p.median_ns(Series::GpuKernel).is_some())),
        ("gpu resid.", cpu_clock(Series::GpuResident)),
        ("up GB/s", gpu(Phase::Upload, &|p| p.upload_gb_per_s.is_some())),
        ("down GB/s", gpu(Phase::Download, &|p| p.download_gb_per_s.is_some())),
    ];
    // Grouped by clock, in the order first named.
    let mut groups: Vec<(Clock, Vec<&str>)> = Vec::new();
    for (column, clocks) in &columns {
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
    format!("clocks: {}", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ceilings::{Ceiling, PhasePart, PhaseRate};

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
            ceiling_gb_per_s: None,
            ceiling_source: None,
            percent_of_ceiling: None,
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
}
