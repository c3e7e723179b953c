//! One stacked bar per run of the current image (and of the previous one, faded, when asked):
//! the engine's phases, the display, and the rest of the wall time, so each bar is as tall as
//! the run took. The last run's total is written above its bar.

use egui::{RichText, Ui};
use egui_plot::{Bar, BarChart, Plot, PlotPoint, Text};

use super::{Segment, axes, legend_ui, ms, nice_spacer, segments};
use crate::app::state::{RunKind, RunRecord};
use crate::engine::Backend;

/// Runs shown per image.
const MAX_BARS: usize = 60;

fn describe(run: &RunRecord) -> String {
    let what = match (run.kind, run.settings.backend) {
        (RunKind::Export, _) => "export".to_owned(),
        (RunKind::Convert, Backend::Cpu) => {
            format!("CPU, {} thr", run.report.threads.unwrap_or(run.settings.threads))
        }
        (RunKind::Convert, Backend::Gpu) => format!("GPU, wg {}", run.settings.workgroup),
    };
    format!("run {}: {what}{}", run.seq, if run.cold { ", cold" } else { "" })
}

/// The runs the chart shows, left to right: the last runs of `previous` (faded) and of `image`.
pub fn shown(runs: &[RunRecord], image: Option<u64>, previous: Option<u64>) -> Vec<(&RunRecord, bool)> {
    let mut shown = Vec::new();
    for (id, faded) in [(previous, true), (image, false)] {
        let of: Vec<&RunRecord> = runs.iter().filter(|r| id.is_some() && Some(r.image_id) == id).collect();
        shown.extend(of[of.len().saturating_sub(MAX_BARS)..].iter().map(|r| (*r, faded)));
    }
    shown
}

/// Draws the chart of `image`'s runs (and `previous`'s, faded, on the left).
pub fn runs_chart_ui(
    ui: &mut Ui,
    runs: &[RunRecord],
    image: Option<u64>,
    previous: Option<u64>,
    height: f32,
) {
    let shown = shown(runs, image, previous);
    ui.label(RichText::new("Each run: phases + display + other = wall time (ms)").strong());
    let mut kinds: Vec<(Segment, String)> = Vec::new();
    let mut charts: Vec<(Segment, Vec<Bar>)> = Vec::new();
    for (i, (run, faded)) in shown.iter().enumerate() {
        let x = (i + 1) as f64;
        let mut base = 0.0;
        for (segment, ns, clock) in segments(run) {
            let value = ms(ns);
            let mut colour = segment.colour();
            if *faded {
                colour = colour.gamma_multiply(0.35);
            } else if run.settings.backend == Backend::Cpu && run.kind == RunKind::Convert {
                colour = colour.gamma_multiply(0.75);
            }
            let label = format!("{} [{clock}]", segment.name());
            if !kinds.iter().any(|(s, _)| *s == segment) {
                kinds.push((segment, label.clone()));
            }
            let bar = Bar::new(x, value)
                .base_offset(base)
                .width(0.7)
                .fill(colour)
                .name(format!("{}\n{label}: {value:.3} ms", describe(run)));
            base += value;
            match charts.iter_mut().find(|(s, _)| *s == segment) {
                Some((_, bars)) => bars.push(bar),
                None => charts.push((segment, vec![bar])),
            }
        }
    }
    legend_ui(ui, &kinds.iter().map(|(s, l)| (s.colour(), l.clone())).collect::<Vec<_>>());
    if shown.is_empty() {
        ui.label("No run on this image yet.");
        return;
    }
    let last = shown.last().map(|(r, _)| *r);
    let n = shown.len() as f64;
    let top = shown
        .iter()
        .map(|(r, _)| ms(r.wall_ns.max(r.report.phases.iter().map(|p| p.ns).sum())))
        .fold(0.0, f64::max);
    let (x_axes, y_axes) = axes("run on this image", "ms");
    let text_colour = ui.visuals().strong_text_color();
    Plot::new("runs")
        .height(height)
        .show_background(false)
        .custom_x_axes(x_axes)
        .custom_y_axes(y_axes)
        .x_grid_spacer(nice_spacer(48.0, true))
        .y_grid_spacer(nice_spacer(30.0, false))
        .include_x(0.4)
        .include_x(n.max(5.0) + 0.6)
        .include_y(0.0)
        .include_y(top * 1.18)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .show(ui, |plot| {
            for (segment, bars) in charts {
                plot.bar_chart(BarChart::new(segment.name(), bars).color(segment.colour()));
            }
            if let Some(run) = last {
                let total = ms(run.wall_ns);
                plot.text(
                    Text::new(
                        "last run",
                        PlotPoint::new(n, total),
                        RichText::new(format!("{total:.1} ms")).strong(),
                    )
                    .anchor(egui::Align2::CENTER_BOTTOM)
                    .color(text_colour),
                );
            }
        });
}
