//! The last run as a profiler timeline: one lane per phase, phases laid end to end.

use egui::Ui;
use egui_plot::{Bar, BarChart, Plot, uniform_grid_spacer};

use super::{colour, ms};
use crate::app::state::RunRecord;

/// The last run as a profiler timeline: one lane per phase, phases laid end to end.
pub fn timeline_ui(ui: &mut Ui, last: Option<&RunRecord>, height: f32) {
    let Some(run) = last else {
        ui.label("No run yet.");
        return;
    };
    let mut start = 0.0;
    let mut charts = Vec::new();
    let lanes = run.report.phases.len();
    let mut names = Vec::new();
    for (lane, p) in run.report.phases.iter().enumerate() {
        let label = format!("{} [{}]", p.phase, p.source.short_label());
        let bar = Bar::new((lanes - lane) as f64, ms(p.ns))
            .base_offset(start)
            .width(0.6)
            .horizontal()
            .name(format!("{} ({}): {:.3} ms", p.phase, p.source, ms(p.ns)));
        charts.push(BarChart::new(label.clone(), vec![bar]).color(colour(p.phase)).horizontal());
        names.push(label);
        start += ms(p.ns);
    }
    Plot::new("timeline")
        .height(height)
        .x_axis_label("ms, phases end to end [clock]")
        .include_x(0.0)
        .include_y(0.4)
        .include_y(lanes as f64 + 0.6)
        .y_grid_spacer(uniform_grid_spacer(|_| [1.0, 1.0, 1.0]))
        .y_axis_formatter(move |mark, _| {
            let i = lanes as f64 - mark.value;
            if (i - i.round()).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            names.get(i.round() as usize).cloned().unwrap_or_default()
        })
        .allow_scroll(false)
        .show(ui, |plot| {
            for c in charts {
                plot.bar_chart(c);
            }
        });
}
