//! `graylab sweep --work` or `--radii`: the grid's map of who wins (the GPU's speed-up over the
//! best CPU at each size and level, work rounds or blur radius, end to end and with the data kept
//! on the GPU) and its frontier, measured and modelled.

use crate::cli::out::outln;
use crate::engine::sweep::{FrontierPoint, Series, SweepPoint, SweepResult};

/// The best CPU median over the GPU series' median at `p`: above 1 the GPU wins.
fn speed_up(p: &SweepPoint, series: Series) -> Option<f64> {
    let gpu = p.median_ns(series)?;
    Some(p.best_cpu_ns()? as f64 / gpu.max(1) as f64)
}

/// The map (sizes down, work levels across) and the frontier lines.
pub(super) fn print_grid(r: &SweepResult) {
    let mut sizes: Vec<f64> = r.points.iter().map(|p| p.megapixels).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if r.adapter.is_some() {
        outln!();
        outln!(
            "who wins: the GPU's speed-up over the best CPU series at the median (above 1.00x the GPU wins), end to end / data kept on the GPU"
        );
        outln!(
            "~: end to end within the noise (its sampled interval holds 1.00x); ?: not decided (too few rounds in the time budget): no win either way"
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
                    // A cell whose sampled comparison did not decide is marked: "~" within the
                    // noise, "?" too few rounds for an interval.
                    let noise = |s| match p.and_then(|p| p.end_to_end) {
                        Some(c) if s == Series::GpuTotal => c.winner.mark(),
                        _ => "",
                    };
                    let x = |s| {
                        p.and_then(|p| speed_up(p, s))
                            .map_or_else(|| "-".to_owned(), |v| format!("{v:.2}x{}", noise(s)))
                    };
                    format!(" {:>17}", format!("{} / {}", x(Series::GpuTotal), x(Series::GpuResident)))
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
