//! The last run as a profiler timeline: one lane per segment, laid end to end, so the end of the
//! last lane is the run's wall time, plus the overlap where steps ran at once (marked).

use egui::{RichText, Ui};
use egui_plot::{Bar, BarChart};

use super::{fixed_plot, lane_axis, lane_marks, legend_ui, ms, nice_spacer, segments};
use crate::app::state::RunRecord;

/// Draws the timeline of `last`.
pub fn timeline_ui(ui: &mut Ui, last: Option<&RunRecord>) {
    ui.label(RichText::new("Last run, phase by phase (ms)").strong());
    let Some(run) = last else {
        ui.label("No run on this image yet.");
        return;
    };
    let parts = segments(run);
    let lanes = parts.len();
    let mut start = 0.0;
    let mut charts = Vec::new();
    let mut names = Vec::new();
    for (lane, (segment, ns, clock)) in parts.iter().enumerate() {
        let value = ms(*ns);
        let bar = Bar::new((lanes - lane) as f64, value)
            .base_offset(start)
            .width(0.6)
            .horizontal()
            .fill(segment.colour())
            .name(format!("{} [{clock}]: {value:.3} ms, from {start:.3} ms", segment.name()));
        charts.push(BarChart::new(segment.name(), vec![bar]).color(segment.colour()).horizontal());
        names.push(segment.name().to_owned());
        start += value;
    }
    let wall = ms(run.wall_ns());
    let legend = if run.overlap_ns() > 0 {
        format!("wall {wall:.3} ms, cpu-clock; steps overlapped by {:.3} ms", ms(run.overlap_ns()))
    } else {
        format!("wall {wall:.3} ms, cpu-clock")
    };
    legend_ui(ui, &[(ui.visuals().weak_text_color(), legend)]);
    let overlapped = run.overlap_ns() > 0;
    let ui_text = ui.visuals().strong_text_color();
    fixed_plot(ui, "timeline", "ms since the run started", "")
        .x_grid_spacer(nice_spacer(44.0, false))
        .y_grid_spacer(|input| lane_marks(&input))
        // Lane `lanes` (the top) is the first phase.
        .custom_y_axes(vec![lane_axis(ui, names.into_iter().rev().collect())])
        .include_x(0.0)
        .include_x(start.max(1e-3) * 1.05)
        .include_y(0.4)
        .include_y(lanes as f64 + 0.6)
        .show(ui, |plot| {
            for c in charts {
                plot.bar_chart(c);
            }
            if overlapped {
                plot.vline(
                    egui_plot::VLine::new("wall time", wall)
                        .color(ui_text)
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
        });
}
