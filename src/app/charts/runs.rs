//! One stacked bar per run of the current image (and of the previous one, faded, when asked):
//! the phases (display included), then the rest of the wall time, so each bar is as tall as the
//! run took. Where steps ran at once (a pipelined GPU run) the phases add up to more than the
//! wall time: the part above the wall time is shaded as overlap. The last run's wall time is
//! written above its bar.

use egui::{Color32, RichText, Ui};
use egui_plot::{Bar, BarChart, PlotPoint, Text};

use super::{Segment, fixed_plot, legend_ui, ms, nice_spacer, segments};
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
pub fn runs_chart_ui(ui: &mut Ui, runs: &[RunRecord], image: Option<u64>, previous: Option<u64>) {
    let shown = shown(runs, image, previous);
    ui.label(RichText::new("Each run: phases − overlap + other = wall time (ms)").strong());
    let mut kinds: Vec<(Segment, Vec<&str>)> = Vec::new();
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
            // The legend names every clock a segment's bars came from (runs may differ).
            match kinds.iter_mut().find(|(s, _)| *s == segment) {
                Some((_, clocks)) if !clocks.contains(&clock) => clocks.push(clock),
                Some(_) => {}
                None => kinds.push((segment, vec![clock])),
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
        if run.overlap_ns() > 0 {
            // The top of the stack beyond the wall time ran beside other phases.
            let (wall, overlap) = (ms(run.wall_ns()), ms(run.overlap_ns()));
            let bar = Bar::new(x, overlap)
                .base_offset(wall)
                .width(0.7)
                .fill(Segment::Overlap.colour())
                .stroke(egui::Stroke::new(1.0, ui.visuals().strong_text_color()))
                .name(format!("{}\noverlap [cpu]: −{overlap:.3} ms (steps ran at once)", describe(run)));
            if !kinds.iter().any(|(s, _)| *s == Segment::Overlap) {
                kinds.push((Segment::Overlap, vec!["cpu"]));
            }
            match charts.iter_mut().find(|(s, _)| *s == Segment::Overlap) {
                Some((_, bars)) => bars.push(bar),
                None => charts.push((Segment::Overlap, vec![bar])),
            }
        }
    }
    // The overlap is drawn last, over the phases it shades.
    charts.sort_by_key(|(s, _)| *s == Segment::Overlap);
    let legend: Vec<(Color32, String)> = kinds
        .iter()
        .map(|(s, clocks)| {
            let name = if *s == Segment::Overlap { "overlap: ran at once" } else { s.name() };
            (s.colour(), format!("{name} [{}]", clocks.join(", ")))
        })
        .collect();
    legend_ui(ui, &legend);
    if shown.is_empty() {
        ui.label("No run on this image yet.");
        return;
    }
    let last = shown.last().map(|(r, _)| *r);
    let n = shown.len() as f64;
    let top = shown.iter().map(|(r, _)| ms(r.wall_ns() + r.overlap_ns())).fold(0.0, f64::max);
    let text_colour = ui.visuals().strong_text_color();
    fixed_plot(ui, "runs", "run on this image", "ms")
        .x_grid_spacer(nice_spacer(48.0, true))
        .y_grid_spacer(nice_spacer(30.0, false))
        .include_x(0.4)
        .include_x(n.max(5.0) + 0.6)
        .include_y(0.0)
        .include_y(top * 1.18)
        .show(ui, |plot| {
            for (segment, bars) in charts {
                plot.bar_chart(BarChart::new(segment.name(), bars).color(segment.colour()));
            }
            if let Some(run) = last {
                let total = ms(run.wall_ns());
                let top = ms(run.wall_ns() + run.overlap_ns());
                plot.text(
                    Text::new(
                        "last run",
                        PlotPoint::new(n, top),
                        RichText::new(format!("{total:.1} ms")).strong(),
                    )
                    .anchor(egui::Align2::CENTER_BOTTOM)
                    .color(text_colour),
                );
            }
        });
}
