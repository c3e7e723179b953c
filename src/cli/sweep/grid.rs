//! `graylab sweep --work` or `--radii`: the grid's map of who wins (the GPU's speed-up over the
//! best CPU at each size and level, work rounds or blur radius, end to end and with the data kept
//! on the GPU) and its frontier, measured and modelled.

use crate::cli::out::outln;
use crate::engine::sweep::{FrontierPoint, Series, SweepPoint, SweepResult};

/// One figure of a cell: the GPU's speed-up with `series` ([`SweepPoint::speed_up`], the figure
/// the cell's line of comparisons prints where it was run in turns); end to end marked "~" within
/// the noise, "?" not decided (too few rounds for an interval), "*" from the medians of separate
/// runs (no rounds run in turns; the data kept on the GPU always is, as the map's title says);
/// "-" where a series is missing.
fn figure(p: Option<&SweepPoint>, series: Series) -> String {
    let Some(x) = p.and_then(|p| p.speed_up(series)) else { return "-".to_owned() };
    // As the comparison's line writes it (two decimals, or two significant digits below 0.1).
    let ratio = crate::system::units::ratio(x.ratio);
    if series != Series::GpuTotal {
        return format!("{ratio}x");
    }
    let noise = p.and_then(|p| p.end_to_end).map_or("", |c| c.winner.mark());
    format!("{ratio}x{noise}{}", x.mark())
}

/// The map (sizes down, work levels across) and the frontier lines.
pub(super) fn print_grid(r: &SweepResult) {
    let mut sizes: Vec<f64> =
        r.points.iter().map(|p| p.megapixels).chain(r.not_run.iter().map(|c| c.megapixels)).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if r.adapter.is_some() {
        outln!();
        outln!(
            "who wins: the GPU's speed-up over the best CPU series (above 1.00x the GPU wins), end to end / data kept on the GPU"
        );
        outln!(
            "end to end: the median of the rounds run in turns, as each cell's line above says; data kept on the GPU: the medians of the warm runs"
        );
        outln!(
            "~: end to end within the noise (its sampled interval holds 1.00x); ?: not decided (too few rounds in the time budget): no win either way; *: end to end not run in turns, from the medians of the warm runs"
        );
        outln!("across: {}", r.axis.name());
        let levels = r.grid_levels();
        let header = levels.iter().map(|&k| format!(" {:>17}", r.axis.short(k))).collect::<Vec<_>>().concat();
        outln!("{:>8}{header}", "MP");
        for &mp in &sizes {
            let row = levels
                .iter()
                .map(|&k| {
                    let p =
                        r.points.iter().find(|p| p.level(r.axis) == k && p.megapixels.total_cmp(&mp).is_eq());
                    let skipped = || {
                        r.not_run.iter().any(|c| c.level(r.axis) == k && c.megapixels.total_cmp(&mp).is_eq())
                    };
                    let cell = if p.is_none() && skipped() {
                        "not run".to_owned()
                    } else {
                        format!("{} / {}", figure(p, Series::GpuTotal), figure(p, Series::GpuResident))
                    };
                    format!(" {cell:>17}")
                })
                .collect::<Vec<_>>()
                .concat();
            outln!("{mp:>8.2}{row}");
        }
    }
    let Some(f) = &r.frontier else { return };
    let level = |v: Option<f64>| {
        v.map_or_else(|| "never".to_owned(), |k| format!("from {}", r.axis.short(k.round() as u32)))
    };
    let line = |p: &FrontierPoint| {
        format!(
            "{:.2} MP: end to end {}, data kept on the GPU {}",
            p.megapixels,
            level(p.end_to_end_from_rounds),
            level(p.resident_from_rounds)
        )
    };
    if r.adapter.is_some() {
        let measured: Vec<String> = f.measured.iter().map(line).collect();
        outln!(
            "frontier (measured, the GPU wins at that level and every higher one): {}",
            measured.join("; ")
        );
        if f.modelled.is_empty() {
            outln!("frontier (modelled from the ceilings): unknown, see the verdict");
        } else {
            let modelled: Vec<String> = f.modelled.iter().map(line).collect();
            outln!("frontier (modelled from the ceilings): {}", modelled.join("; "));
        }
    }
    if let Some(roof) = &r.roofline {
        outln!("roofline: {} measured points (--json holds them with the roofs)", roof.points.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sampling::Stop;
    use crate::engine::sweep::Speedup;

    #[test]
    fn a_cell_shows_the_figure_its_comparison_printed_and_marks_the_medians() {
        let medians = [(Series::CpuAll, 1600), (Series::GpuTotal, 5000), (Series::GpuResident, 800)];
        let plain = SweepPoint::for_tests(1.0, &medians);
        // Run in turns, the CPU faster 0.05x: the map says that, not the medians' 0.32x.
        let end_to_end = Some(Speedup::of(Some(Series::CpuAll), &[100.0; 6], &[2000.0; 6], Stop::Decided));
        let p = SweepPoint { end_to_end, ..plain.clone() };
        assert_eq!(p.end_to_end.map(|c| c.label()), Some("CPU faster: 0.050x (0.050–0.050)".to_owned()));
        assert_eq!(figure(Some(&p), Series::GpuTotal), "0.050x");
        // The data kept on the GPU: the medians, as every cell of it is.
        assert_eq!(figure(Some(&p), Series::GpuResident), "2.00x");
        // Within the noise: its median and "~"; no comparison: the medians, "*".
        let tie = Some(Speedup::of(
            Some(Series::CpuAll),
            &[1000.0, 1100.0, 900.0, 1000.0, 1000.0, 1050.0],
            &[1000.0; 6],
            Stop::Rounds,
        ));
        assert_eq!(
            figure(Some(&SweepPoint { end_to_end: tie, ..plain.clone() }), Series::GpuTotal),
            "1.00x~"
        );
        assert_eq!(figure(Some(&plain), Series::GpuTotal), "0.32x*");
        // A comparison that took no rounds: not decided, from the medians.
        let none = Some(Speedup::of(Some(Series::CpuAll), &[], &[], Stop::Time));
        assert_eq!(
            figure(Some(&SweepPoint { end_to_end: none, ..plain.clone() }), Series::GpuTotal),
            "0.32x?*"
        );
        assert_eq!(figure(None, Series::GpuTotal), "-");
    }
}
