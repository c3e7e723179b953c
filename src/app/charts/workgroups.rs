//! Median and spread of the GPU kernel time per workgroup size (warm runs, current image).

use egui::Ui;
use egui_plot::{BoxElem, BoxPlot, BoxSpread, Legend, Plot, PlotPoint, Text};

use super::{colour, ms};
use crate::app::state::RunRecord;
use crate::engine::{Backend, ClockSource, Phase, Stats, WorkgroupSize};

/// Median and spread of the GPU kernel time per workgroup size, for the current image, kernel
/// and formula (warm runs only).
pub fn workgroups_chart_ui(
    ui: &mut Ui,
    runs: &[RunRecord],
    image_id: Option<u64>,
    valid: &[WorkgroupSize],
    height: f32,
) {
    let Some(latest) =
        runs.iter().rev().find(|r| Some(r.image_id) == image_id && r.settings.backend == Backend::Gpu)
    else {
        ui.label("No GPU runs on this image yet: pick GPU and press \"Try every size\".");
        return;
    };
    let mut boxes = Vec::new();
    let mut source = None;
    for (i, wg) in valid.iter().enumerate() {
        let kernel_ns: Vec<u64> = runs
            .iter()
            .filter(|r| {
                Some(r.image_id) == image_id
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
        boxes.push(
            BoxElem::new(i as f64, BoxSpread::new(ms(s.min_ns), q1, ms(s.median_ns), q3, ms(s.max_ns)))
                .name(format!("{wg}: median {:.3} ms over {} runs", ms(s.median_ns), s.runs))
                .box_width(0.6),
        );
    }
    if boxes.is_empty() {
        ui.label("Only cold runs so far (they include pipeline compilation and are left out): press Run or \"Try every size\".");
        return;
    }
    let clock = source.map_or("", ClockSource::label);
    // Size names are drawn under each box: axis labels would be hidden at this density.
    let top = boxes.iter().map(|b| b.spread.upper_whisker).fold(0.0, f64::max);
    let labels: Vec<Text> = boxes
        .iter()
        .map(|b| {
            let name = valid.get(b.argument.round() as usize).map(ToString::to_string).unwrap_or_default();
            Text::new("", PlotPoint::new(b.argument, 0.0), egui::RichText::new(name).small())
                .anchor(egui::Align2::CENTER_TOP)
                .color(ui.visuals().text_color())
        })
        .collect();
    Plot::new("workgroups")
        .height(height)
        .legend(Legend::default())
        .x_axis_label("workgroup size")
        .y_axis_label("kernel ms")
        .include_y(-top * 0.12)
        .include_y(top * 1.15)
        .show_axes([false, true])
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.box_plot(
                BoxPlot::new(format!("GPU kernel ({clock}), warm runs"), boxes).color(colour(Phase::Kernel)),
            );
            for t in labels {
                plot.text(t);
            }
        });
}

/// First and third quartile (nearest rank) in milliseconds.
fn quartiles(values: &[u64]) -> (f64, f64) {
    let mut v = values.to_vec();
    v.sort_unstable();
    let at = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
    (at(0.25), at(0.75))
}
