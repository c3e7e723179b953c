//! One claim's measurements as a small bar chart: the times per operation against the count per
//! round trip (claim 2), series side by side at each size (claims 5 and 9), else one lane per
//! timing, coloured by its clock (claims 1, 3, 4, 6). Only times (unit `ms`) are drawn; the
//! other figures are listed under the chart. Each bar's hover says its value, unit and clock.

use egui::{Color32, RichText, Ui};
use egui_plot::{Bar, BarChart, HLine, Orientation, PlotPoint, PlotResponse};

use super::{
    CPU_COLOUR, GPU_COLOUR, KEPT_COLOUR, fixed_plot, lane_marks, mark_name, nice_spacer, nice_x_spacer,
};
use crate::app::look::SMALL_TEXT;
use crate::engine::claims::{ClaimResult, Measurement};

/// Colour chips and names above a chart, wrapped to the width there is; a transparent chip is
/// a title.
fn legend_ui(ui: &mut Ui, entries: &[(Color32, String)]) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 6.0;
        for (colour, name) in entries {
            if *colour != Color32::TRANSPARENT {
                let (chip, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter().rect_filled(chip, 2.0, *colour);
            }
            ui.label(RichText::new(name).size(SMALL_TEXT));
        }
    });
}

/// Says so when some bars are too short to see, beside the tallest.
fn tiny_bars_note(ui: &mut Ui, times: &[&Measurement]) {
    let top = times.iter().map(|m| m.value).fold(0.0, f64::max);
    if times.iter().any(|m| m.value < top / 100.0) {
        ui.label(
            RichText::new(
                "Some bars are under 1% of the longest and barely show: hover a bar for its value.",
            )
            .size(SMALL_TEXT)
            .weak(),
        );
    }
}

/// The chart's height for `lanes` horizontal lanes.
fn lanes_height(lanes: usize) -> f32 {
    (lanes as f32 * 17.0 + 44.0).clamp(90.0, 260.0)
}

/// Lanes coloured by their clock use a palette of their own, so that no colour means a clock on
/// one card and a device on another.
fn clock_colour(clock: &str) -> Color32 {
    match clock {
        "gpu-timestamp" => Color32::from_rgb(60, 180, 170),
        "cpu-clock" => Color32::from_rgb(150, 130, 210),
        _ => Color32::from_rgb(210, 180, 60),
    }
}

/// A series' colour from its name ("CPU", "GPU end to end", "GPU, input kept"), else by place.
fn series_colour(name: &str, i: usize) -> Color32 {
    // A second op beside the first (claim 10's blur beside its dither): the backend's colour,
    // lighter, so the legend tells the four apart.
    let lighter = |c: Color32| if name.contains("blur") { c.lerp_to_gamma(Color32::WHITE, 0.45) } else { c };
    if name.contains("kept") {
        KEPT_COLOUR
    } else if name.starts_with("GPU") {
        lighter(GPU_COLOUR)
    } else if name.contains("CPU") {
        lighter(CPU_COLOUR)
    } else {
        [CPU_COLOUR, GPU_COLOUR, KEPT_COLOUR, Color32::from_rgb(200, 110, 200)][i % 4]
    }
}

/// What a bar's hover says: "upload: 9.835 ms (cpu-clock+gpu-timestamp), 95% CI 9.1–10.2".
fn hover(m: &Measurement) -> String {
    let interval = match (m.ci_low, m.ci_high, m.samples) {
        (Some(low), Some(high), Some(n)) => format!(", 95% CI {low:.3}\u{2013}{high:.3} over {n} rounds"),
        _ => String::new(),
    };
    // A size or a count no clock measured says no clock.
    let clock = if m.clock == "none" { String::new() } else { format!(" ({})", m.clock) };
    format!("{}: {:.3} {}{clock}{interval}", m.name, m.value, m.unit)
}

/// Whole-number marks, named by `names` (index 0 at 0).
fn named_axis<'a>(names: Vec<String>, x: bool) -> egui_plot::AxisHints<'a> {
    let hints = if x { egui_plot::AxisHints::new_x() } else { egui_plot::AxisHints::new_y() };
    hints.label_spacing(1.0..=2.0).formatter(move |mark, _| mark_name(&names, mark.value, 0.0))
}

/// The x axis of a chart of groups named `names`: each name in a font small enough to fit its
/// group (`egui_plot` leaves out a label wider than the marks' spacing: in a claims window's
/// column, four of claim 8's seven groups went unnamed), else without its unit ("1024 rounds"
/// as "1024", the axis saying "rounds").
fn category_axis<'a>(ui: &Ui, names: &[String]) -> egui_plot::AxisHints<'a> {
    let body = egui::TextStyle::Body.resolve(ui.style());
    let group = ui.available_width() / names.len().max(1) as f32;
    // A character is about 0.6 of the font's size wide; some space is left between names.
    let width = |names: &[String], size: f32| {
        names.iter().map(|n| n.chars().count()).max().unwrap_or(1) as f32 * size * 0.6
    };
    let smallest = 9.0;
    let short: Vec<String> =
        names.iter().map(|n| n.strip_suffix(" rounds").unwrap_or(n).to_owned()).collect();
    // Claim 8 has blur radii beside its rounds: the axis says both, not "rounds" under a blur.
    let all_rounds = names.iter().all(|n| n.ends_with(" rounds"));
    let (names, unit) = if width(names, smallest) <= group * 0.85 || short == names {
        (names.to_vec(), "")
    } else if all_rounds {
        (short, "rounds")
    } else {
        (short, "rounds per pixel, or a blur")
    };
    let size = (group * 0.85 / width(&names, 1.0)).clamp(smallest, body.size);
    egui_plot::AxisHints::new_x()
        .label_spacing(1.0..=2.0)
        .tick_label_font(egui::FontId::new(size, body.family))
        .formatter(move |mark, _| mark_name(&names, mark.value, 0.0))
        .label(unit)
}

/// "GPU per operation, 16 per round trip" -> 16.
fn per_round_trip(name: &str) -> Option<&str> {
    name.rsplit_once(", ")?.1.strip_suffix(" per round trip")
}

/// Series and categories when every time is named "series, category", every series has a time
/// at every category, and there are at least two of each (claims 5 and 9).
fn grouped(times: &[&Measurement]) -> Option<(Vec<String>, Vec<String>)> {
    let mut series: Vec<String> = Vec::new();
    let mut categories: Vec<String> = Vec::new();
    for m in times {
        let (s, c) = m.name.rsplit_once(", ")?;
        if !series.iter().any(|x| x == s) {
            series.push(s.to_owned());
        }
        if !categories.iter().any(|x| x == c) {
            categories.push(c.to_owned());
        }
    }
    // Every series at every category: claim 7's four names split at their last comma make
    // four series of one bar each, half the slots empty (drawn plainly instead).
    let full = series.len() * categories.len() == times.len();
    (full && series.len() >= 2 && categories.len() >= 2).then_some((series, categories))
}

/// Draws `claim`'s times; `salt` keeps two cards of the same claim apart.
pub fn claim_chart_ui(ui: &mut Ui, claim: &ClaimResult, salt: &str) {
    let times: Vec<&Measurement> = claim.measurements.iter().filter(|m| m.unit == "ms").collect();
    if times.is_empty() {
        return;
    }
    let id = format!("claim {} {salt}", claim.id);
    let ops: Vec<(&str, &Measurement)> =
        times.iter().filter_map(|m| per_round_trip(&m.name).map(|n| (n, *m))).collect();
    if ops.len() >= 2 {
        round_trips_ui(ui, &id, &ops, times.iter().find(|m| m.name == "one CPU pass").copied());
    } else if let Some((series, categories)) = grouped(&times) {
        grouped_ui(ui, &id, &times, &series, &categories);
    } else {
        lanes_ui(ui, &id, &times);
    }
}

/// Claim 2: the GPU's time per operation at each count per round trip, the CPU's pass as a line.
fn round_trips_ui(ui: &mut Ui, id: &str, ops: &[(&str, &Measurement)], cpu: Option<&Measurement>) {
    let colour = GPU_COLOUR;
    let mut legend = vec![(colour, "GPU, time per operation".to_owned())];
    if let Some(cpu) = cpu {
        legend.push((
            CPU_COLOUR,
            format!("{} ({}, {})", cpu.name, crate::app::look::duration((cpu.value * 1e6) as u64), cpu.clock),
        ));
    }
    legend_ui(ui, &legend);
    let bars: Vec<Bar> = ops
        .iter()
        .enumerate()
        .map(|(i, (_, m))| Bar::new(i as f64, m.value).name(hover(m)).fill(colour).width(0.6))
        .collect();
    let names = ops.iter().map(|(n, _)| (*n).to_owned()).collect();
    let top = ops.iter().map(|(_, m)| m.value).chain(cpu.map(|m| m.value)).fold(0.0, f64::max);
    let hovered = bars.clone();
    let response = fixed_plot(ui, id, "operations per round trip", "ms")
        .height(130.0)
        .custom_x_axes(vec![named_axis(names, true).label("operations per round trip")])
        .x_grid_spacer(|input| lane_marks(&input))
        .y_grid_spacer(nice_spacer(30.0, false))
        .include_x(-0.6)
        .include_x(ops.len() as f64 - 0.4)
        .include_y(0.0)
        .include_y(top * 1.1)
        .show(ui, |plot| {
            plot.bar_chart(
                BarChart::new("GPU per operation", bars).color(colour).element_formatter(no_label()),
            );
            if let Some(cpu) = cpu {
                plot.hline(HLine::new(cpu.name.clone(), cpu.value).color(CPU_COLOUR).width(2.0));
            }
        });
    bar_tooltip(&response, &hovered);
}

/// Claims 5 and 9: each series' bar side by side at each size.
fn grouped_ui(ui: &mut Ui, id: &str, times: &[&Measurement], series: &[String], categories: &[String]) {
    let legend: Vec<(Color32, String)> =
        series.iter().enumerate().map(|(i, s)| (series_colour(s, i), s.clone())).collect();
    legend_ui(ui, &legend);
    let width = 0.8 / series.len() as f64;
    let charts: Vec<(String, Color32, Vec<Bar>)> = series
        .iter()
        .enumerate()
        .map(|(si, s)| {
            let bars = times
                .iter()
                .filter_map(|m| {
                    let (ms, mc) = m.name.rsplit_once(", ")?;
                    let ci = categories.iter().position(|c| c == mc)?;
                    let x = ci as f64 - 0.4 + width * (si as f64 + 0.5);
                    (ms == s).then(|| {
                        Bar::new(x, m.value).name(hover(m)).fill(series_colour(s, si)).width(width * 0.9)
                    })
                })
                .collect();
            (s.clone(), series_colour(s, si), bars)
        })
        .collect();
    let hovered: Vec<Bar> = charts.iter().flat_map(|(_, _, bars)| bars.iter().cloned()).collect();
    let top = times.iter().map(|m| m.value).fold(0.0, f64::max);
    let response = fixed_plot(ui, id, "", "ms")
        .height(150.0)
        .custom_x_axes(vec![category_axis(ui, categories)])
        .x_grid_spacer(|input| lane_marks(&input))
        .y_grid_spacer(nice_spacer(30.0, false))
        .include_x(-0.5)
        .include_x(categories.len() as f64 - 0.5)
        .include_y(0.0)
        .include_y(top * 1.1)
        .show(ui, |plot| {
            for (name, colour, bars) in charts {
                plot.bar_chart(BarChart::new(name, bars).color(colour).element_formatter(no_label()));
            }
        });
    bar_tooltip(&response, &hovered);
    tiny_bars_note(ui, times);
}

/// One horizontal lane per time, first at the top, coloured by the clock that measured it; a
/// prefix every name shares ("kernel, ") is said once above the chart.
fn lanes_ui(ui: &mut Ui, id: &str, times: &[&Measurement]) {
    let prefix = times
        .first()
        .and_then(|m| m.name.split_once(", "))
        .map(|(p, _)| format!("{p}, "))
        .filter(|p| times.len() >= 2 && times.iter().all(|m| m.name.starts_with(p.as_str())));
    let mut clocks: Vec<&str> = Vec::new();
    for m in times {
        if !clocks.contains(&m.clock.as_str()) {
            clocks.push(&m.clock);
        }
    }
    let mut legend: Vec<(Color32, String)> =
        clocks.iter().map(|c| (clock_colour(c), (*c).to_owned())).collect();
    if let Some(p) = &prefix {
        legend.insert(0, (Color32::TRANSPARENT, format!("{}:", p.trim_end_matches(", "))));
    }
    legend_ui(ui, &legend);
    let n = times.len();
    let bars: Vec<Bar> = times
        .iter()
        .enumerate()
        .map(|(i, m)| {
            // Horizontal as built (not only by the chart's `horizontal`): the tooltip finds
            // the bar under the pointer from these.
            Bar::new((n - 1 - i) as f64, m.value)
                .name(hover(m))
                .fill(clock_colour(&m.clock))
                .width(0.7)
                .horizontal()
        })
        .collect();
    let names: Vec<String> = times
        .iter()
        .rev()
        .map(|m| prefix.as_ref().and_then(|p| m.name.strip_prefix(p.as_str())).unwrap_or(&m.name).to_owned())
        .collect();
    let top = times.iter().map(|m| m.value).fold(0.0, f64::max);
    let hovered = bars.clone();
    let response = fixed_plot(ui, id, "ms", "")
        .height(lanes_height(n))
        .custom_y_axes(vec![named_axis(names, false)])
        .y_grid_spacer(|input| lane_marks(&input))
        .x_grid_spacer(nice_x_spacer(50.0, false))
        .include_x(0.0)
        .include_x(top * 1.1)
        .include_y(-0.6)
        .include_y(n as f64 - 0.4)
        .show(ui, |plot| {
            plot.bar_chart(BarChart::new("times", bars).horizontal().element_formatter(no_label()));
        });
    bar_tooltip(&response, &hovered);
    tiny_bars_note(ui, times);
}

/// What `egui_plot` writes beside a hovered bar.
type BarLabel = Box<dyn Fn(&Bar, &BarChart) -> String>;

/// No label inside the plot: a bar's sentence is its tooltip ([`bar_tooltip`]), where the plot's
/// edges cannot cut it ("upload: 23.155 ms (…" lost its top line, "GPU kernel: 2" its end).
fn no_label() -> BarLabel {
    Box::new(|_, _| String::new())
}

/// The sentence of the bar under the pointer (its value, unit and clock), as a tooltip at the
/// pointer, wrapped to the tooltip's width.
fn bar_tooltip(response: &PlotResponse<()>, bars: &[Bar]) {
    let Some(pointer) = response.response.hover_pos() else { return };
    if let Some(bar) = bar_at(bars, response.transform.value_from_position(pointer)) {
        response.response.clone().on_hover_ui_at_pointer(|ui| {
            ui.label(&bar.name);
        });
    }
}

/// The bar of `bars` that covers `point` (plot coordinates), if any.
fn bar_at(bars: &[Bar], point: PlotPoint) -> Option<&Bar> {
    bars.iter().find(|b| {
        let (across, along) = match b.orientation {
            Orientation::Vertical => (point.x, point.y),
            Orientation::Horizontal => (point.y, point.x),
        };
        let base = b.base_offset.unwrap_or(0.0);
        let (low, high) = (base.min(base + b.value), base.max(base + b.value));
        (across - b.argument).abs() <= b.bar_width / 2.0 && (low..=high).contains(&along)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str) -> Measurement {
        Measurement::ms(name, 1e6, "cpu-clock")
    }

    #[test]
    fn the_bar_under_the_pointer_gives_its_whole_sentence() {
        let upload = Measurement::ms("upload", 23.155e6, "cpu-clock");
        let bars = [
            Bar::new(0.0, 23.155).name(hover(&upload)).width(0.6),
            Bar::new(1.0, 2.0).name("GPU kernel: 2.000 ms (gpu-timestamp)").width(0.6),
        ];
        let at = |x, y| bar_at(&bars, PlotPoint::new(x, y)).map(|b| b.name.as_str());
        assert_eq!(at(0.2, 20.0), Some("upload: 23.155 ms (cpu-clock)"));
        assert_eq!(at(1.0, 1.0), Some("GPU kernel: 2.000 ms (gpu-timestamp)"));
        assert_eq!(at(1.0, 3.0), None, "above the bar");
        assert_eq!(at(0.5, 1.0), None, "between the bars");
        // Lanes: horizontal bars, the value along x.
        let lanes = [Bar::new(2.0, 5.0).name("kernel").width(0.7).horizontal()];
        assert_eq!(bar_at(&lanes, PlotPoint::new(4.0, 2.2)).map(|b| b.name.as_str()), Some("kernel"));
        assert!(bar_at(&lanes, PlotPoint::new(6.0, 2.0)).is_none());
    }

    #[test]
    fn charts_are_picked_from_the_names() {
        assert_eq!(per_round_trip("GPU per operation, 16 per round trip"), Some("16"));
        assert_eq!(per_round_trip("one CPU pass"), None);
        let sizes =
            [m("CPU, 16 KB"), m("GPU end to end, 16 KB"), m("CPU, 64 KB"), m("GPU end to end, 64 KB")];
        let (series, categories) = grouped(&sizes.iter().collect::<Vec<_>>()).expect("grouped");
        assert_eq!(series, ["CPU", "GPU end to end"]);
        assert_eq!(categories, ["16 KB", "64 KB"]);
        // One series (the workgroup shapes) or names without a comma: lanes.
        let shapes = [m("kernel, workgroup 32"), m("kernel, workgroup 64")];
        assert!(grouped(&shapes.iter().collect::<Vec<_>>()).is_none());
        let transfers = [m("upload"), m("CPU, whole conversion")];
        assert!(grouped(&transfers.iter().collect::<Vec<_>>()).is_none());
    }
}
