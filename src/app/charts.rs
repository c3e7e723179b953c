//! The timing charts: one stacked bar per run, a profiler-style timeline of the last run, and
//! kernel time per workgroup size. Every series name carries the clock its figures came from.

use egui::{Color32, Ui};
use egui_plot::{
    Bar, BarChart, BoxElem, BoxPlot, BoxSpread, Corner, Legend, Plot, PlotPoint, Text, uniform_grid_spacer,
};

use super::state::RunRecord;
use crate::engine::{Backend, ClockSource, Phase, Stats, WorkgroupSize};

/// Runs shown in the per-run chart.
const MAX_BARS: usize = 60;

fn colour(phase: Phase) -> Color32 {
    match phase {
        Phase::Decode => Color32::from_rgb(150, 150, 150),
        Phase::Setup => Color32::from_rgb(170, 120, 200),
        Phase::Upload => Color32::from_rgb(230, 140, 60),
        Phase::Kernel => Color32::from_rgb(80, 170, 90),
        Phase::Display => Color32::from_rgb(60, 170, 170),
        Phase::Download => Color32::from_rgb(70, 140, 220),
        Phase::Encode => Color32::from_rgb(200, 90, 90),
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The clock of a series: the one its runs used, or "mixed clocks" when they differ.
fn clock_of(runs: &[&RunRecord], phase: Phase) -> String {
    let mut sources = runs.iter().filter_map(|r| r.report.phase(phase)).map(|p| p.source);
    let Some(first) = sources.next() else { return String::new() };
    if sources.all(|s| s == first) { first.label().to_owned() } else { "mixed clocks".to_owned() }
}

/// One stacked bar per run: setup, upload, kernel, download for GPU runs; kernel for CPU runs.
pub fn runs_chart_ui(ui: &mut Ui, runs: &[RunRecord], height: f32) {
    let shown: Vec<&RunRecord> = runs.iter().rev().take(MAX_BARS).rev().collect();
    let mut charts: Vec<(Backend, BarChart)> = Vec::new();
    for backend in [Backend::Gpu, Backend::Cpu] {
        let of_backend: Vec<&RunRecord> =
            shown.iter().copied().filter(|r| r.settings.backend == backend).collect();
        if of_backend.is_empty() {
            continue;
        }
        for phase in [Phase::Setup, Phase::Upload, Phase::Kernel, Phase::Download] {
            let bars: Vec<Bar> = of_backend
                .iter()
                .filter_map(|r| {
                    let p = r.report.phase(phase)?;
                    let name = format!("run {}{}", r.seq, if r.cold { " (cold)" } else { "" });
                    Some(Bar::new(r.seq as f64, ms(p.ns)).name(name).width(0.7))
                })
                .collect();
            if bars.is_empty() {
                continue;
            }
            let name =
                format!("{} {phase} ({})", backend.name().to_uppercase(), clock_of(&of_backend, phase));
            let mut chart = BarChart::new(name, bars).color(colour(phase));
            if backend == Backend::Cpu {
                chart = chart.color(colour(phase).gamma_multiply(0.6));
            }
            let below: Vec<&BarChart> =
                charts.iter().filter(|(b, _)| *b == backend).map(|(_, c)| c).collect();
            let chart = chart.stack_on(&below);
            charts.push((backend, chart));
        }
    }
    Plot::new("runs")
        .height(height)
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label("run")
        .y_axis_label("ms")
        .include_y(0.0)
        .allow_scroll(false)
        .show(ui, |plot| {
            for (_, c) in charts {
                plot.bar_chart(c);
            }
        });
}

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
