//! The size sweep on log-log axes: the medians of every series, saved sweeps dashed beside them,
//! and the crossovers marked.

use egui::{Color32, Ui};
use egui_plot::{Legend, Line, LineStyle, Plot, PlotPoints, VLine};

use crate::engine::{Series, SweepResult};

fn colour(series: Series) -> Color32 {
    match series {
        Series::Cpu1 => Color32::from_rgb(150, 150, 150),
        Series::CpuAll => Color32::from_rgb(230, 230, 230),
        Series::GpuTotal => Color32::from_rgb(230, 140, 60),
        Series::GpuKernel => Color32::from_rgb(80, 170, 90),
        Series::GpuResident => Color32::from_rgb(70, 140, 220),
    }
}

fn lines(result: &SweepResult, suffix: &str, style: LineStyle) -> Vec<Line<'static>> {
    Series::ALL
        .iter()
        .filter_map(|&s| {
            let points: Vec<[f64; 2]> = result
                .points
                .iter()
                .filter_map(|p| {
                    Some([p.megapixels.log10(), (p.median_ns(s)? as f64 / 1e6).max(1e-6).log10()])
                })
                .collect();
            (!points.is_empty()).then(|| {
                Line::new(format!("{}{suffix}", s.label()), PlotPoints::from(points))
                    .color(colour(s))
                    .style(style)
                    .width(2.0)
            })
        })
        .collect()
}

/// `10^v` as a readable number.
fn power_label(v: f64) -> String {
    let x = 10f64.powf(v);
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The log-log chart of one sweep and the saved ones beside it.
pub fn sweep_chart_ui(ui: &mut Ui, result: &SweepResult, compare: &[(String, SweepResult)]) {
    let mut all = lines(result, "", LineStyle::Solid);
    for (name, saved) in compare {
        all.extend(lines(saved, &format!(" [{name}]"), LineStyle::dashed_loose()));
    }
    let crossover = result
        .crossover_mp
        .map(|mp| VLine::new("crossover (GPU total < CPU)", mp.log10()).color(Color32::YELLOW));
    let resident = result.resident_crossover_mp.map(|mp| {
        VLine::new("crossover with data on the GPU", mp.log10())
            .color(Color32::LIGHT_BLUE)
            .style(LineStyle::dotted_dense())
    });
    Plot::new("sweep")
        .height(320.0)
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label("image size, megapixels (log)")
        .y_axis_label("median ms (log)")
        .x_axis_formatter(|mark, _| power_label(mark.value))
        .y_axis_formatter(|mark, _| power_label(mark.value))
        .label_formatter(|h| {
            let (name, p) = match h {
                egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => {
                    (*plot_name, *position)
                }
                egui_plot::HoverPosition::Elsewhere { position } => ("", *position),
            };
            Some(format!("{name}\n{} MP, {} ms", power_label(p.x), power_label(p.y)))
        })
        .show(ui, |plot| {
            for l in all {
                plot.line(l);
            }
            if let Some(v) = crossover {
                plot.vline(v);
            }
            if let Some(v) = resident {
                plot.vline(v);
            }
        });
}
