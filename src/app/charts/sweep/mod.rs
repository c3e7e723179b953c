//! The size sweep on log-log axes: the medians of every series, saved sweeps dashed beside them,
//! the crossovers marked, and what the GPU would take with every step at this machine's ceilings
//! (the model) dotted beside its measured line. The legend sits above the plot; clicking an entry hides its series.

mod notes;
pub(super) mod roofline;
mod roofs;
pub(super) mod win_map;

use std::collections::HashSet;

use egui::{Color32, RichText, Ui};
use egui_plot::{GridInput, GridMark, Line, LineStyle, Plot, PlotPoints, VLine};

use crate::engine::sweep::{Series, SweepResult};

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
            // Not at the very edge: a label centred on its mark would hang past the plot, and
            // past the window the plot fills (issue 17: "10.0" cut at the right).
            let inset = 0.03 * decades;
            if (lo + inset..=hi - inset).contains(&value) {
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
    /// Draws `result` and the saved sweeps in `compare`: the legend, the plot at most
    /// `max_plot_height` tall, its axis titles and the notes, all above `bottom_y` (the lowest
    /// the window may reach): the plot gives way, so a long legend or a loaded comparison never
    /// pushes the axes or the notes out of a window that does not scroll.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        result: &SweepResult,
        compare: &[(String, SweepResult)],
        max_plot_height: f32,
        bottom_y: f32,
    ) {
        let all = lines(result, compare, ui.visuals().dark_mode);
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("Series (click to hide; saved sweeps dashed):").small());
            let mut source = 0;
            for line in &all {
                let label = &line.key;
                // Each saved sweep on a row of its own, named once, its series by short names.
                if line.source != source {
                    source = line.source;
                    ui.end_row();
                    ui.label(RichText::new(format!("{}:", line.group)).small().weak());
                }
                let shown = !self.hidden.contains(label);
                if legend_entry(ui, (line.shown_as, label), (line.colour, line.style), shown).clicked() {
                    if shown {
                        self.hidden.insert(label.clone());
                    } else {
                        self.hidden.remove(label);
                    }
                }
            }
        });
        let notes: Vec<(String, bool)> =
            notes::notes(result, ui.visuals().dark_mode).into_iter().map(|n| (n, false)).collect();
        // In a short window the notes fold into one "Notes" line (opened on a click), so that
        // the plot keeps a height it can be read at.
        let with_notes = plot_height_ui(ui, &notes, max_plot_height, bottom_y);
        let fold = !notes.is_empty() && with_notes < READABLE_PLOT_HEIGHT;
        let plot_height = if fold && !notes_open(ui, "sweep notes") {
            let header = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
            (plot_height_ui(ui, &[], max_plot_height, bottom_y) - header).max(MIN_PLOT_HEIGHT)
        } else {
            with_notes
        };
        let crossovers = crossover_lines(result, ui.visuals());
        let hidden = &self.hidden;
        ui.label(RichText::new(Y_TITLE).small());
        Plot::new("sweep")
            .height(plot_height)
            // In its window's scroll area the wheel scrolls the window: panning the plot with it
            // scrolled the data out of view (an axis at 1e-19 ms). Ctrl+wheel still zooms (egui
            // reads it as a zoom, never a scroll), a drag pans, a double click resets.
            .allow_scroll(false)
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
                Some(format!(
                    "{name}\n{} MP, {}",
                    power_label(p.x),
                    crate::app::look::duration((10f64.powf(p.y) * 1e6) as u64)
                ))
            })
            .show(ui, |plot| {
                for ChartLine { key: label, colour, style, points, .. } in all {
                    if !hidden.contains(&label) {
                        plot.line(
                            Line::new(label, PlotPoints::from(points)).color(colour).style(style).width(2.0),
                        );
                    }
                }
                for (mp, name, colour, style) in crossovers {
                    if let Some(mp) = mp {
                        plot.vline(VLine::new(name, mp.log10()).color(colour).style(style));
                    }
                }
            });
        ui.vertical_centered(|ui| ui.label(RichText::new(X_TITLE).small()));
        notes_ui(ui, "sweep notes", &notes, fold);
    }
}

/// The vertical lines where the GPU starts to win: measured, with the data on the GPU, and
/// modelled; each in the colour of `visuals`' theme ([`crate::app::look::crossover`]).
fn crossover_lines(
    result: &SweepResult,
    visuals: &egui::Visuals,
) -> [(Option<f64>, &'static str, Color32, LineStyle); 3] {
    use crate::app::look::{crossover, resident_crossover};
    [
        (result.crossover_mp, "crossover (GPU total < CPU)", crossover(visuals), LineStyle::Solid),
        (
            result.resident_crossover_mp,
            "crossover with data on the GPU",
            resident_crossover(visuals),
            LineStyle::dotted_dense(),
        ),
        (
            result.model.as_ref().and_then(|m| m.crossover_mp),
            "modelled crossover (every step at its ceiling)",
            crossover(visuals),
            LineStyle::dotted_loose(),
        ),
    ]
}

/// Whether the notes folded under the header of id `id` ([`notes_ui`]) are open.
fn notes_open(ui: &Ui, id: &str) -> bool {
    let id = ui.make_persistent_id(id);
    egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, false).is_open()
}

/// `notes` in small text (a warning in the warning colour), folded into one line that opens on a
/// click, under a header of id `id`, when `fold`.
fn notes_ui(ui: &mut Ui, id: &str, notes: &[(String, bool)], fold: bool) {
    let each = |ui: &mut Ui| {
        for (note, warning) in notes {
            let text = RichText::new(note).small();
            if *warning {
                ui.colored_label(crate::app::look::warning(ui.visuals()), text);
            } else {
                ui.label(text);
            }
        }
    };
    if fold {
        egui::CollapsingHeader::new(format!("Notes on this chart ({})", notes.len()))
            .id_salt(id)
            .default_open(false)
            .show(ui, each);
    } else {
        each(ui);
    }
}

/// The height `text` takes in small text at the width available, with the gap under it.
fn small_text_height(ui: &Ui, text: &str) -> f32 {
    let small = egui::TextStyle::Small.resolve(ui.style());
    let galley = ui.painter().layout(text.to_owned(), small, Color32::WHITE, ui.available_width());
    galley.size().y + ui.spacing().item_spacing.y
}

/// The height `notes` take in small text at the width available, with the gaps between them.
fn notes_height(ui: &Ui, notes: &[(String, bool)]) -> f32 {
    notes.iter().map(|(note, _)| small_text_height(ui, note)).sum()
}

/// The x axis's title, drawn under the plot as a label of its own (never clipped with the plot).
const X_TITLE: &str = "image size, megapixels (log)";
/// The y axis's title, above the plot.
const Y_TITLE: &str = "median ms (log)";
/// The plot is never squeezed below this height, in points: room for a few y-axis numbers (at 60
/// a 1024x640 window showed none); its window scrolls instead.
const MIN_PLOT_HEIGHT: f32 = 100.0;
/// Below this height the notes fold away to give the plot their room.
const READABLE_PLOT_HEIGHT: f32 = 160.0;

/// One legend entry, swatch and name as one widget, so that wrapping never parts them; a click
/// toggles the series (a hidden one has a hollow swatch and weak text). `(label, full)`: the
/// name shown, and the one screen readers and tests get (with the saved sweep's name). A dotted
/// series' swatch is a row of dots, so that it never reads as the solid line of its colour.
fn legend_entry(
    ui: &mut Ui,
    (label, full): (&str, &str),
    (colour, style): (Color32, LineStyle),
    shown: bool,
) -> egui::Response {
    const SWATCH: f32 = 10.0;
    let text_colour = if shown { ui.visuals().text_color() } else { ui.visuals().weak_text_color() };
    let font = egui::TextStyle::Small.resolve(ui.style());
    let galley = ui.painter().layout_no_wrap(label.to_owned(), font, text_colour);
    let pad = ui.spacing().button_padding;
    let gap = ui.spacing().icon_spacing;
    let size =
        egui::vec2(pad.x * 2.0 + SWATCH + gap + galley.size().x, pad.y * 2.0 + galley.size().y.max(SWATCH));
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click());
    response.widget_info(|| egui::WidgetInfo::selected(egui::Role::CheckBox, ui.is_enabled(), shown, full));
    if ui.is_rect_visible(rect) {
        let painter = ui.painter();
        if response.hovered() {
            painter.rect_filled(rect, 2.0, ui.visuals().widgets.hovered.weak_bg_fill);
        }
        let chip = egui::Rect::from_center_size(
            egui::pos2(rect.left() + pad.x + SWATCH / 2.0, rect.center().y),
            egui::vec2(SWATCH, SWATCH),
        );
        if matches!(style, LineStyle::Dotted { .. }) {
            // Three dots across the chip: the dotted line's own look.
            for dx in [-1.0, 0.0, 1.0] {
                let at = chip.center() + egui::vec2(dx * SWATCH * 0.4, 0.0);
                if shown {
                    painter.circle_filled(at, 1.8, colour);
                } else {
                    painter.circle_stroke(at, 1.8, egui::Stroke::new(1.0, colour));
                }
            }
        } else {
            painter.rect_filled(chip, 2.0, if shown { colour } else { Color32::TRANSPARENT });
            painter.rect_stroke(chip, 2.0, egui::Stroke::new(1.0, colour), egui::StrokeKind::Inside);
        }
        let text_at = egui::pos2(chip.right() + gap, rect.center().y - galley.size().y / 2.0);
        painter.galley(text_at, galley, text_colour);
    }
    response
}

/// The plot's height: what is left above `bottom_y` once the axis titles and `notes` (laid out
/// at this width) have their room, at most `max_height` and at least [`MIN_PLOT_HEIGHT`]. (A
/// window's `available_height` is its size of the last frame, which would never let it grow.)
fn plot_height_ui(ui: &Ui, notes: &[(String, bool)], max_height: f32, bottom_y: f32) -> f32 {
    let gap = ui.spacing().item_spacing.y;
    let below = small_text_height(ui, X_TITLE) + notes_height(ui, notes);
    let above = small_text_height(ui, Y_TITLE);
    // A little slack for rounding and the window's bottom margin.
    let room = bottom_y - ui.cursor().top() - above - below - gap - 4.0;
    room.min(max_height).max(MIN_PLOT_HEIGHT)
}

/// One line on the chart.
struct ChartLine<'a> {
    /// Its name in the plot and in the hidden set (the saved sweep's name in brackets).
    key: String,
    /// Its name in the legend.
    shown_as: &'static str,
    /// The saved sweep it belongs to; empty for this sweep.
    group: &'a str,
    /// Its sweep: 0 for this one, then 1, 2, … for the saved ones.
    source: usize,
    colour: Color32,
    style: LineStyle,
    /// (log MP, log ms) points.
    points: Vec<[f64; 2]>,
}

/// A series' name in the legend row of a saved sweep.
fn short_label(series: Series) -> &'static str {
    match series {
        Series::Cpu1 => "CPU, 1 thread",
        Series::CpuAll => "CPU, all threads",
        Series::GpuTotal => "GPU total",
        Series::GpuKernel => "GPU kernel only",
        Series::GpuResident => "GPU, data resident",
    }
}

/// A point of the chart: (log MP, log ms).
fn log_point(megapixels: f64, ns: u64) -> [f64; 2] {
    [megapixels.log10(), (ns as f64 / 1e6).max(1e-6).log10()]
}

/// Every series of `result` (solid) and of the saved sweeps (dashed), and the model (dotted), in
/// the colours of the theme (`dark_mode`).
fn lines<'a>(
    result: &SweepResult,
    compare: &'a [(String, SweepResult)],
    dark_mode: bool,
) -> Vec<ChartLine<'a>> {
    let mut all: Vec<ChartLine<'a>> = Vec::new();
    let sources = std::iter::once(("", result)).chain(compare.iter().map(|(n, r)| (n.as_str(), r)));
    for (i, (name, r)) in sources.enumerate() {
        let style = if i == 0 { LineStyle::Solid } else { LineStyle::dashed_loose() };
        for s in Series::ALL {
            let points: Vec<[f64; 2]> =
                r.points.iter().filter_map(|p| Some(log_point(p.megapixels, p.median_ns(s)?))).collect();
            if !points.is_empty() {
                let (key, shown_as) = if name.is_empty() {
                    (s.label().to_owned(), s.label())
                } else {
                    (format!("{} [{name}]", s.label()), short_label(s))
                };
                all.push(ChartLine {
                    key,
                    shown_as,
                    group: name,
                    source: i,
                    colour: roofs::series_colour(s, dark_mode),
                    style,
                    points,
                });
            }
        }
    }
    // The model: the GPU end to end with every step at its probed ceiling.
    let modelled: Vec<[f64; 2]> = result
        .points
        .iter()
        .filter_map(|p| Some(log_point(p.megapixels, p.modelled?.gpu_total_ns)))
        .collect();
    if !modelled.is_empty() {
        const MODEL: &str = "GPU end to end at the ceilings (model)";
        // Beside this sweep's series, before the saved ones.
        let at = all.iter().position(|l| l.source > 0).unwrap_or(all.len());
        let style = LineStyle::dotted_loose();
        let line = ChartLine {
            key: MODEL.to_owned(),
            shown_as: MODEL,
            group: "",
            source: 0,
            colour: roofs::series_colour(Series::GpuTotal, dark_mode),
            style,
            points: modelled,
        };
        all.insert(at, line);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::look::contrast;

    #[test]
    fn series_are_drawn_in_the_colours_of_the_theme_shown() {
        let medians = [(Series::Cpu1, 400), (Series::CpuAll, 200), (Series::GpuTotal, 1000)];
        let result = SweepResult::for_tests(vec![crate::engine::sweep::SweepPoint::for_tests(1.0, &medians)]);
        for visuals in [egui::Visuals::dark(), egui::Visuals::light()] {
            let all = lines(&result, &[], visuals.dark_mode);
            let cpu_all = all.iter().find(|l| l.key == Series::CpuAll.label()).expect("CPU, all threads");
            assert_eq!(cpu_all.colour, roofs::series_colour(Series::CpuAll, visuals.dark_mode));
            let ratio = contrast(cpu_all.colour, visuals.window_fill);
            assert!(ratio >= 3.0, "CPU, all threads at {ratio:.2}:1 on the window");
        }
        let light = lines(&result, &[], false);
        let cpu_all = light.iter().find(|l| l.key == Series::CpuAll.label()).expect("CPU, all threads");
        assert_eq!(cpu_all.colour, Color32::from_rgb(45, 45, 45), "dark on the light theme");
    }

    #[test]
    fn crossover_lines_are_drawn_in_the_colours_of_the_theme_shown() {
        let medians = [(Series::CpuAll, 200), (Series::GpuTotal, 100)];
        let mut result =
            SweepResult::for_tests(vec![crate::engine::sweep::SweepPoint::for_tests(1.0, &medians)]);
        result.crossover_mp = Some(2.0);
        result.resident_crossover_mp = Some(0.5);
        for visuals in [egui::Visuals::dark(), egui::Visuals::light()] {
            let [measured, resident, modelled] = crossover_lines(&result, &visuals);
            assert_eq!((measured.0, resident.0, modelled.0), (Some(2.0), Some(0.5), None));
            assert_eq!(measured.2, crate::app::look::crossover(&visuals));
            assert_eq!(modelled.2, measured.2, "the model's crossover in the measured one's colour");
            assert_eq!(resident.2, crate::app::look::resident_crossover(&visuals));
            for (_, name, colour, _) in [measured, resident] {
                let ratio = contrast(colour, visuals.extreme_bg_color);
                assert!(ratio >= 3.0, "{name} at {ratio:.2}:1 on the plot");
            }
        }
        // The light theme's lines are not the dark one's yellow and light blue (1.1:1 and 2.9:1
        // on its white plot).
        let [measured, resident, _] = crossover_lines(&result, &egui::Visuals::light());
        assert_ne!(measured.2, Color32::YELLOW);
        assert_ne!(resident.2, Color32::LIGHT_BLUE);
    }
}
