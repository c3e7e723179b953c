//! Median and spread of the GPU kernel time per workgroup size (warm runs, current image, same
//! kernel and formula), as horizontal boxes so the size names fit at the normal text size.

use egui::{RichText, Ui};
use egui_plot::{BoxElem, BoxPlot, BoxSpread};

use super::{Segment, fixed_plot, lane_axis, lane_marks, legend_ui, ms, nice_spacer};
use crate::app::state::RunRecord;
use crate::engine::{Backend, ClockSource, Phase, Stats, WorkgroupSize};

/// Draws the chart; returns whether "Try every size" was pressed.
pub fn workgroups_chart_ui(
    ui: &mut Ui,
    runs: &[RunRecord],
    image: Option<u64>,
    valid: &[WorkgroupSize],
    enabled: bool,
) -> bool {
    let mut try_all = false;
    ui.horizontal(|ui| {
        ui.label(RichText::new("GPU kernel by workgroup size (ms)").strong());
        try_all = ui
            .add_enabled(enabled, egui::Button::new("Try every size ×5").small())
            .on_hover_text("One cold run and five warm runs per size, sizes interleaved; Stop or Esc cancels")
            .clicked();
    });
    let Some(latest) =
        runs.iter().rev().find(|r| Some(r.image_id) == image && r.settings.backend == Backend::Gpu)
    else {
        ui.label("No GPU runs on this image yet: pick GPU and press \"Try every size\".");
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
                    && r.settings.formula == latest.settings.formula
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
        ui.label("Only cold runs so far (they include pipeline compilation and are left out): press Run or \"Try every size\".");
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
