//! Median and spread of the GPU kernel time per workgroup size (warm runs, current image, same
//! kernel), for one formula at a time, as horizontal boxes so the size names fit at the normal
//! text size. The formula follows the latest GPU run once it has warm runs; until then the
//! formula measured before stays, and any formula with warm runs can be picked.

use egui::{RichText, Ui};
use egui_plot::{BoxElem, BoxPlot, BoxSpread};

use super::{Segment, fixed_plot, lane_axis, lane_marks, legend_ui, ms, nice_spacer};
use crate::app::state::RunRecord;
use crate::engine::{Backend, ClockSource, Formula, Phase, Stats, WorkgroupSize};

/// Draws the chart; `picked` is the formula the user chose to see (`None`: follow the runs);
/// returns whether "Try every size" was pressed.
pub fn workgroups_chart_ui(
    ui: &mut Ui,
    runs: &[RunRecord],
    image: Option<u64>,
    valid: &[WorkgroupSize],
    enabled: bool,
    picked: &mut Option<Formula>,
) -> bool {
    let gpu_runs = || runs.iter().filter(|r| Some(r.image_id) == image && r.settings.backend == Backend::Gpu);
    let latest = gpu_runs().next_back();
    // Formulas with warm runs of the latest kernel, the most recently run last.
    let mut warm: Vec<Formula> = Vec::new();
    for r in gpu_runs().filter(|r| !r.cold && r.report.kernel == latest.and_then(|l| l.report.kernel)) {
        warm.retain(|f| *f != r.settings.formula);
        warm.push(r.settings.formula);
    }
    let latest_formula = latest.map(|l| l.settings.formula);
    let formula = picked
        .filter(|f| warm.contains(f))
        .or_else(|| latest_formula.filter(|f| warm.contains(f)))
        .or_else(|| warm.last().copied())
        .or(latest_formula);
    let mut try_all = false;
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("GPU kernel by workgroup size (ms)").strong());
        if formula.is_some() {
            ui.label("for the formula");
        }
        if warm.len() > 1 {
            let mut chosen = formula.unwrap_or_default();
            egui::ComboBox::from_id_salt("box plot formula").selected_text(chosen.name()).show_ui(ui, |ui| {
                for f in &warm {
                    ui.selectable_value(&mut chosen, *f, f.name());
                }
            });
            if Some(chosen) != formula {
                *picked = Some(chosen);
            }
        } else if let Some(f) = formula {
            ui.label(RichText::new(f.name()).strong());
        }
        try_all = ui
            .add_enabled(enabled, egui::Button::new("Try every size ×5").small())
            .on_hover_text("One cold run and five warm runs per size, sizes interleaved; Stop or Esc cancels")
            .clicked();
    });
    let (Some(latest), Some(formula)) = (latest, formula) else {
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
                    && r.settings.formula == formula
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
