//! Median and spread of the GPU kernel time per workgroup size (warm runs, current image, same
//! kernel), for one series at a time (a formula and a work per pixel: runs at another work level
//! are another series), as horizontal boxes so the size names fit at the normal text size. The
//! series follows the latest GPU run once it has warm runs; until then the series measured
//! before stays, and any series with warm runs can be picked.

use egui::{RichText, Ui};
use egui_plot::{BoxElem, BoxPlot, BoxSpread};

use super::{Segment, fixed_plot, lane_axis, lane_marks, legend_ui, ms, nice_spacer};
use crate::app::state::{RunRecord, RunSeries};
use crate::engine::{Backend, ClockSource, Phase, Stats, WorkgroupSize};

/// The series of `image`'s warm GPU runs of its latest GPU run's kernel, the most recently run
/// last (what the box plot's picker offers).
#[must_use]
fn warm_series(runs: &[RunRecord], image: Option<u64>) -> Vec<RunSeries> {
    let gpu_runs = || runs.iter().filter(|r| Some(r.image_id) == image && r.settings.backend == Backend::Gpu);
    let kernel = gpu_runs().next_back().and_then(|l| l.report.kernel);
    let mut warm: Vec<RunSeries> = Vec::new();
    for r in gpu_runs().filter(|r| !r.cold && r.report.kernel == kernel) {
        warm.retain(|s| *s != r.series());
        warm.push(r.series());
    }
    warm
}

/// Draws the chart; `picked` is the series the user chose to see (`None`: follow the runs);
/// returns whether "Try every size" was pressed.
pub fn workgroups_chart_ui(
    ui: &mut Ui,
    runs: &[RunRecord],
    image: Option<u64>,
    valid: &[WorkgroupSize],
    enabled: bool,
    picked: &mut Option<RunSeries>,
) -> bool {
    let latest = runs.iter().rev().find(|r| Some(r.image_id) == image && r.settings.backend == Backend::Gpu);
    let warm = warm_series(runs, image);
    let latest_series = latest.map(RunRecord::series);
    let series = picked
        .filter(|s| warm.contains(s))
        .or_else(|| latest_series.filter(|s| warm.contains(s)))
        .or_else(|| warm.last().copied())
        .or(latest_series);
    let mut try_all = false;
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("GPU kernel by workgroup size (ms)").strong());
        if series.is_some() {
            ui.label("for the formula and work");
        }
        if warm.len() > 1 {
            let mut chosen = series.unwrap_or_default();
            egui::ComboBox::from_id_salt("box plot series")
                .selected_text(chosen.label())
                .show_ui(ui, |ui| {
                    for s in &warm {
                        ui.selectable_value(&mut chosen, *s, s.label());
                    }
                })
                .response
                .on_hover_text("Runs of another formula or another work per pixel are another series");
            if Some(chosen) != series {
                *picked = Some(chosen);
            }
        } else if let Some(s) = series {
            ui.label(RichText::new(s.label()).strong());
        }
        try_all = ui
            .add_enabled(enabled, egui::Button::new("Try every size ×5").small())
            .on_hover_text("One cold run and five warm runs per size, sizes interleaved; Stop or Esc cancels")
            .clicked();
    });
    let (Some(latest), Some(series)) = (latest, series) else {
        ui.label("No GPU runs on this image yet: pick GPU and press \"Try every size ×5\".");
        return try_all;
    };
    let mut boxes = Vec::new();
    let mut names = Vec::new();
    let mut source = None;
    for wg in valid {
        let kernel_ns: Vec<u64> = runs
            .iter()
            .filter(|r| {
                Some(r.image_id) == image
                    && !r.cold
                    && r.workgroup() == Some(*wg)
                    && r.report.kernel == latest.report.kernel
                    && r.series() == series
            })
            .filter_map(|r| r.report.phase(Phase::Kernel).inspect(|p| source = Some(p.source)))
            .map(|p| p.ns)
            .collect();
        let Some(s) = Stats::of(&kernel_ns) else { continue };
        let (q1, q3) = quartiles(&kernel_ns);
        let y = (names.len() + 1) as f64;
        boxes.push(
            BoxElem::new(y, BoxSpread::new(ms(s.min_ns), q1, ms(s.median_ns), q3, ms(s.max_ns)))
                .name(format!("{wg}: median {:.3} ms over {} runs", ms(s.median_ns), s.runs))
                .box_width(0.6),
        );
        names.push(wg.to_string());
    }
    if boxes.is_empty() {
        ui.label("Only cold runs so far (they include pipeline compilation and are left out): press Run or \"Try every size ×5\".");
        return try_all;
    }
    let clock = source.map_or("", ClockSource::label);
    legend_ui(
        ui,
        &[(
            Segment::Phase(Phase::Kernel).colour(),
            format!("kernel [{clock}], warm runs: median, quartiles, min-max"),
        )],
    );
    let rows = names.len();
    let top = boxes.iter().map(|b| b.spread.upper_whisker).fold(0.0, f64::max);
    fixed_plot(ui, "workgroups", "kernel ms", "")
        .x_grid_spacer(nice_spacer(44.0, false))
        .y_grid_spacer(|input| lane_marks(&input))
        .custom_y_axes(vec![lane_axis(ui, names)])
        .include_x(0.0)
        .include_x(top * 1.1)
        .include_y(0.4)
        .include_y(rows as f64 + 0.6)
        .show(ui, |plot| {
            plot.box_plot(
                BoxPlot::new("GPU kernel", boxes).color(Segment::Phase(Phase::Kernel).colour()).horizontal(),
            );
        });
    try_all
}

/// First and third quartile (nearest rank) in milliseconds.
fn quartiles(values: &[u64]) -> (f64, f64) {
    let mut v = values.to_vec();
    v.sort_unstable();
    let at = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
    (at(0.25), at(0.75))
}
