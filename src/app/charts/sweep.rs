//! The size sweep on log-log axes: the medians of every series, saved sweeps dashed beside them,
//! the crossovers marked, and what the GPU would take with every step at this machine's ceilings
//! (the model) dotted beside its measured line. The legend sits above the plot; clicking an entry hides its series.

use std::collections::HashSet;

use egui::{Color32, RichText, Ui};
use egui_plot::{GridInput, GridMark, Line, LineStyle, Plot, PlotPoints, VLine};

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

/// `10^v` as a readable number.
fn power_label(v: f64) -> String {
    let x = 10f64.powf(v);
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.1}")
    } else if x >= 0.01 {
        format!("{x:.2}")
    } else {
        format!("{x:.0e}")
    }
}

/// Marks at 1, 2 and 5 times each power of ten (in log10 units), decades stronger.
fn log_spacer(input: &GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let decades = hi - lo;
    let mut marks = Vec::new();
    for k in (lo.floor() as i32 - 1)..=(hi.ceil() as i32) {
        for (m, step) in [(1.0f64, 1.0), (2.0, 0.3), (5.0, 0.3)] {
            // Fewer marks when many decades are shown.
            if m > 1.0 && decades > 4.0 {
                continue;
            }
            let value = f64::from(k) + m.log10();
            if (lo..=hi).contains(&value) {
                marks.push(GridMark { value, step_size: step });
            }
        }
    }
    marks
}

/// The sweep chart's state: which series are hidden.
#[derive(Default)]
pub struct SweepChart {
    hidden: HashSet<String>,
}

impl SweepChart {
    /// Draws `result` and the saved sweeps in `compare`.
    pub fn ui(&mut self, ui: &mut Ui, result: &SweepResult, compare: &[(String, SweepResult)], height: f32) {
        let all = lines(result, compare);
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("Series (click to hide; saved sweeps dashed):").small());
            for (label, colour, _, _) in &all {
                let shown = !self.hidden.contains(label);
                let (chip, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter().rect_filled(chip, 2.0, if shown { *colour } else { Color32::TRANSPARENT });
                ui.painter().rect_stroke(
                    chip,
                    2.0,
                    egui::Stroke::new(1.0, *colour),
                    egui::StrokeKind::Inside,
                );
                let weak = ui.visuals().weak_text_color();
                let text =
                    RichText::new(label).small().color(if shown { ui.visuals().text_color() } else { weak });
                if ui.selectable_label(false, text).clicked() {
                    if shown {
                        self.hidden.insert(label.clone());
                    } else {
                        self.hidden.remove(label);
                    }
                }
            }
        });
        let crossover = result
            .crossover_mp
            .map(|mp| VLine::new("crossover (GPU total < CPU)", mp.log10()).color(Color32::YELLOW));
        let resident = result.resident_crossover_mp.map(|mp| {
            VLine::new("crossover with data on the GPU", mp.log10())
                .color(Color32::LIGHT_BLUE)
                .style(LineStyle::dotted_dense())
        });
        let modelled_crossover = result.model.as_ref().and_then(|m| m.crossover_mp).map(|mp| {
            VLine::new("modelled crossover (every step at its ceiling)", mp.log10())
                .color(Color32::YELLOW)
                .style(LineStyle::dotted_loose())
        });
        let hidden = &self.hidden;
        Plot::new("sweep")
            .height(height)
            .x_axis_label("image size, megapixels (log)")
            .y_axis_label("median ms (log)")
            .x_grid_spacer(|input| log_spacer(&input))
            .y_grid_spacer(|input| log_spacer(&input))
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
                for (label, colour, style, points) in all {
                    if !hidden.contains(&label) {
                        plot.line(
                            Line::new(label, PlotPoints::from(points)).color(colour).style(style).width(2.0),
                        );
                    }
                }
                if let Some(v) = crossover {
                    plot.vline(v);
                }
                if let Some(v) = resident {
                    plot.vline(v);
                }
                if let Some(v) = modelled_crossover {
                    plot.vline(v);
                }
            });
        notes_ui(ui, result);
    }
}

/// One line on the chart: label, colour, style, (log MP, log ms) points.
type ChartLine = (String, Color32, LineStyle, Vec<[f64; 2]>);

/// Every series of `result` (solid) and of the saved sweeps (dashed), and the model (dotted).
fn lines(result: &SweepResult, compare: &[(String, SweepResult)]) -> Vec<ChartLine> {
    let mut all: Vec<ChartLine> = Vec::new();
    let sources = std::iter::once(("", result)).chain(compare.iter().map(|(n, r)| (n.as_str(), r)));
    for (i, (name, r)) in sources.enumerate() {
        let style = if i == 0 { LineStyle::Solid } else { LineStyle::dashed_loose() };
        for s in Series::ALL {
            let points: Vec<[f64; 2]> = r
                .points
                .iter()
                .filter_map(|p| {
                    Some([p.megapixels.log10(), (p.median_ns(s)? as f64 / 1e6).max(1e-6).log10()])
                })
                .collect();
            if !points.is_empty() {
                let label =
                    if name.is_empty() { s.label().to_owned() } else { format!("{} [{name}]", s.label()) };
                all.push((label, colour(s), style, points));
            }
        }
    }
    // The model: the GPU end to end with every step at its probed ceiling.
    let modelled: Vec<[f64; 2]> = result
        .points
        .iter()
        .filter_map(|p| {
            let ms = p.modelled?.gpu_total_ns as f64 / 1e6;
            Some([p.megapixels.log10(), ms.max(1e-6).log10()])
        })
        .collect();
    if !modelled.is_empty() {
        let label = "GPU end to end at the ceilings (model)".to_owned();
        all.push((label, colour(Series::GpuTotal), LineStyle::dotted_loose(), modelled));
    }
    all
}

/// What the crossover lines mean, and the model's crossovers.
fn notes_ui(ui: &mut Ui, result: &SweepResult) {
    if result.crossover_mp.is_some() || result.resident_crossover_mp.is_some() {
        ui.label(RichText::new("Yellow line: GPU end to end beats the CPU from here; dotted blue: with the data already on the GPU.").small());
    }
    if let Some(m) = &result.model {
        let at = |mp: Option<f64>| mp.map_or_else(|| "never".to_owned(), |mp| format!("{mp:.2} MP"));
        ui.label(
            RichText::new(format!(
                "Model from this machine's ceilings (dotted): the GPU would win from {} with every step at its \
                 ceiling, {} with host copies fully overlapped, {} with the data on the GPU.",
                at(m.crossover_mp),
                at(m.overlapped_crossover_mp),
                at(m.resident_crossover_mp)
            ))
            .small(),
        );
    }
}
