//! One stacked bar per run: setup, upload, kernel, download for GPU runs; kernel for CPU runs.

use egui::Ui;
use egui_plot::{Bar, BarChart, Corner, Legend, Plot};

use super::{colour, ms};
use crate::app::state::RunRecord;
use crate::engine::{Backend, Phase};

/// Runs shown in the per-run chart.
const MAX_BARS: usize = 60;

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
