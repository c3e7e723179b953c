//! One stacked bar per run of the current image (and of the previous one, faded and named, when
//! asked): the phases (display included), then the rest of the wall time, so each bar is as tall
//! as the run took. Where steps ran at once (a pipelined GPU run) the phases add up to more than
//! the wall time: the part above the wall time is shaded as overlap. Each bar stands at its run
//! number (the one Last run and the hover give) on a strip coloured by its backend. The last
//! run's wall time is written above its bar where no taller bar beside it takes the room (Last
//! run and the hover always give it); the hover is a tooltip with a background. Past
//! [`MAX_BARS`] runs of an image the chart shows the last ones, and says so.

use egui::{Color32, RichText, Ui};
use egui_plot::{Bar, BarChart, PlotPoint, Text};

use super::{Segment, fixed_plot, labels, legend_ui, look, nice_spacer, nice_x_spacer, segments};
use crate::app::state::{ComparedRuns, RunRecord};
use crate::engine::Backend;

/// Runs shown per image.
const MAX_BARS: usize = 60;

/// The backend strip's colour under each bar.
pub fn backend_colour(backend: Backend) -> Color32 {
    match backend {
        Backend::Cpu => Color32::from_rgb(240, 200, 70),
        Backend::Gpu => Color32::from_rgb(220, 90, 200),
    }
}

/// "run 3: GPU, workgroup 16x16, bt601, cold", "run 4: CPU, 2 threads, bt601 · 256 rounds/px";
/// a compared run (a saved bench's) is "loaded: …" instead of its number.
pub fn describe(run: &RunRecord) -> String {
    let what = match run.settings.backend {
        Backend::Cpu => {
            format!(
                "CPU, {}",
                crate::system::units::count(run.report.threads.unwrap_or(run.settings.threads), "thread")
            )
        }
        Backend::Gpu => format!("GPU, workgroup {}", run.settings.workgroup),
    };
    let which =
        if run.image_id == ComparedRuns::IMAGE { "loaded".to_owned() } else { format!("run {}", run.seq) };
    format!("{which}: {what}, {}{}", run.series().label(), if run.cold { ", cold" } else { "" })
}

/// What the runs chart's buttons asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunsAsked {
    /// Nothing.
    Nothing,
    /// "Compare with a saved bench…": the app asks for the file.
    Compare,
    /// "Clear comparison".
    ClearComparison,
}

/// Where each series (formula and work per pixel) starts among `shown`, left to right: the
/// first run of each stretch of runs of one series, and the series' label. Empty when every run
/// shown is of one series of plain grayscale (nothing to tell apart).
pub fn series_starts(shown: &[(&RunRecord, bool)]) -> Vec<(usize, String)> {
    let one_plain = shown.windows(2).all(|w| w[0].0.series() == w[1].0.series())
        && shown.first().is_none_or(|(r, _)| r.settings.work.rounds == 0);
    if one_plain {
        return Vec::new();
    }
    let mut starts: Vec<(usize, String)> = Vec::new();
    let mut before = None;
    for (run, _) in shown {
        if before != Some(run.series()) {
            starts.push((run.seq, run.series().label()));
            before = Some(run.series());
        }
    }
    starts
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

/// Bars of one segment kind, and the clocks they came from (for the legend).
type Series = Vec<(Segment, Vec<&'static str>, Vec<Bar>)>;

fn push(series: &mut Series, segment: Segment, clock: &'static str, bar: Bar) {
    match series.iter_mut().find(|(s, _, _)| *s == segment) {
        Some((_, clocks, bars)) => {
            if !clocks.contains(&clock) {
                clocks.push(clock);
            }
            bars.push(bar);
        }
        None => series.push((segment, vec![clock], vec![bar])),
    }
}

/// The tooltip of one run: what ran, each segment with its clock, the wall time.
fn tooltip_ui(ui: &mut Ui, run: &RunRecord, image_name: &str) {
    ui.strong(describe(run));
    ui.label(RichText::new(image_name).weak());
    if run.image_id == ComparedRuns::IMAGE
        && let Some(note) = run.report.notes.first()
    {
        ui.label(RichText::new(note.as_str()).weak());
    }
    if let Some((work, _)) = crate::app::panels::work::work_line(run) {
        ui.label(format!("work: {work}"));
    }
    egui::Grid::new("run tooltip").num_columns(2).show(ui, |ui| {
        for (segment, ns, clock) in segments(run) {
            ui.label(format!("{} [{clock}]", segment.name()));
            ui.label(RichText::new(look::duration(ns)).monospace());
            ui.end_row();
        }
        if run.overlap_ns() > 0 {
            ui.label("− overlap (steps ran at once)");
            ui.label(RichText::new(format!("−{}", look::duration(run.overlap_ns()))).monospace());
            ui.end_row();
        }
        ui.strong("wall [cpu]");
        ui.label(RichText::new(look::duration(run.wall_ns())).monospace().strong());
        ui.end_row();
    });
}

/// Where each backend's strip goes under the bars: each run's place and fill, by backend.
type Strips = Vec<(Backend, Vec<(f64, Color32)>)>;

/// The stacked bars of `shown`, by segment, and the places of the backend strips under them
/// (their height is the chart's to set, once its legend has taken its room).
fn bars_of(shown: &[(&RunRecord, bool)], ns_per_unit: f64, outline: Color32) -> (Series, Strips) {
    let ms = |ns: u64| ns as f64 / ns_per_unit;
    let mut series: Series = Vec::new();
    let mut strips: Strips = Vec::new();
    for (run, faded) in shown {
        let x = run.seq as f64;
        let fade = |c: Color32| if *faded { c.gamma_multiply(0.35) } else { c };
        let mut base = 0.0;
        for (segment, ns, clock) in segments(run) {
            let value = ms(ns);
            let bar = Bar::new(x, value).base_offset(base).width(0.7).fill(fade(segment.colour())).name("");
            base += value;
            push(&mut series, segment, clock, bar);
        }
        if run.overlap_ns() > 0 {
            // The top of the stack beyond the wall time ran beside other phases.
            let bar = Bar::new(x, ms(run.overlap_ns()))
                .base_offset(ms(run.wall_ns()))
                .width(0.7)
                .fill(Segment::Overlap.colour())
                .stroke(egui::Stroke::new(1.0, outline))
                .name("");
            push(&mut series, Segment::Overlap, "cpu", bar);
        }
        let backend = run.settings.backend;
        let place = (x, fade(backend_colour(backend)));
        match strips.iter_mut().find(|(b, _)| *b == backend) {
            Some((_, places)) => places.push(place),
            None => strips.push((backend, vec![place])),
        }
    }
    (series, strips)
}

/// The height of a row of small text over the bars (rows any closer overlap: "linear" was drawn
/// over "bt601").
const ROW: f32 = look::SMALL_TEXT * 1.45;
/// The height of the wall-time label above the last bar.
const WALL_LABEL: f32 = 18.0;

/// The names of the series above the first bar of each, on one of two rows over the tallest
/// bar (`top`) and its wall-time label, below the image names along the top when `names_on_top`;
/// a name with no room on either row is left out, as are both rows in a chart too short for them
/// (a line still parts the series, and the hover names every run's series).
fn series_names_ui(
    plot: &mut egui_plot::PlotUi<'_>,
    starts: &[(usize, String)],
    (top, names_on_top): (f64, bool),
    colour: Color32,
) {
    /// Points per character of the small font, about.
    const CHAR_WIDTH: f32 = 6.5;
    let top_px = plot.screen_from_plot(PlotPoint::new(0.0, top)).y;
    let ceiling_px = plot.screen_from_plot(PlotPoint::new(0.0, plot.plot_bounds().max()[1])).y;
    // Each row's baseline, kept below the "previous / this image" names along the top.
    let reserved = if names_on_top { ROW } else { 0.0 };
    let rows: Vec<f64> = (0..2)
        .map(|r| top_px - WALL_LABEL - ROW * r as f32)
        .filter(|y| y - ROW >= ceiling_px + reserved)
        .map(|y| plot.plot_from_screen(egui::pos2(0.0, y)).y)
        .collect();
    let mut free_from = vec![f32::NEG_INFINITY; rows.len()];
    for (i, (seq, name)) in starts.iter().enumerate() {
        let x = *seq as f64 - 0.35;
        if i > 0 {
            plot.vline(egui_plot::VLine::new("series", *seq as f64 - 0.5).color(colour.gamma_multiply(0.5)));
        }
        let left = plot.screen_from_plot(PlotPoint::new(x, top)).x;
        let Some(row) = (0..rows.len()).find(|&r| left >= free_from[r]) else { continue };
        free_from[row] = left + CHAR_WIDTH * name.chars().count() as f32 + 8.0;
        plot.text(
            Text::new("series", PlotPoint::new(x, rows[row]), RichText::new(name.as_str()).small())
                .anchor(egui::Align2::LEFT_BOTTOM)
                .color(colour),
        );
    }
}

/// A line between two groups of bars at `x`, with the left group's name ending left of it and
/// the right group's (`right_width` points wide) starting right of it, along the top (`y`).
fn divider_ui(
    plot: &mut egui_plot::PlotUi<'_>,
    (x, y): (f64, f64),
    left: Option<(String, Color32)>,
    (right, right_colour): (String, Color32),
    right_width: f32,
) {
    let line = left.as_ref().map_or(right_colour, |l| l.1);
    plot.vline(egui_plot::VLine::new("divider", x).color(line));
    if let Some((name, colour)) = left {
        let at = PlotPoint::new(x - 0.1, y);
        plot.text(
            Text::new("left", at, RichText::new(name).small()).anchor(egui::Align2::RIGHT_TOP).color(colour),
        );
    }
    // Right of the line, or flush with the plot's right edge where it would run past it
    // ("loaded: be" was cut there).
    let start = plot.screen_from_plot(PlotPoint::new(x + 0.1, y)).x;
    let edge = plot.transform().frame().right() - 2.0;
    let (at, anchor) = if start + right_width > edge {
        (PlotPoint::new(plot.plot_from_screen(egui::pos2(edge, 0.0)).x, y), egui::Align2::RIGHT_TOP)
    } else {
        (PlotPoint::new(x + 0.1, y), egui::Align2::LEFT_TOP)
    };
    plot.text(Text::new("right", at, RichText::new(right).small()).anchor(anchor).color(right_colour));
}

/// The legend: each segment with its clocks, then each backend's strip.
fn legend_of(series: &Series, strips: &Strips) -> Vec<(Color32, String)> {
    let mut legend: Vec<(Color32, String)> = series
        .iter()
        .map(|(s, clocks, _)| {
            let name = if *s == Segment::Overlap { "overlap: ran at once" } else { s.name() };
            (s.colour(), format!("{name} [{}]", clocks.join(", ")))
        })
        .collect();
    for (backend, _) in strips {
        legend.push((
            backend_colour(*backend),
            format!("{} run (strip under the bar)", backend.name().to_uppercase()),
        ));
    }
    legend
}

/// The header: the chart's title and its comparison buttons.
fn header_ui(ui: &mut Ui, unit: &str, compared: Option<&ComparedRuns>) -> RunsAsked {
    let mut asked = RunsAsked::Nothing;
    // Wrapped: in a narrow column the buttons go under the title, never past the column's edge.
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("Each run: phases − overlap + other = wall time ({unit})")).strong());
        let load = ui.small_button("Compare with a saved bench…").on_hover_text(
            "Set a `graylab bench --json` file (this machine's or another's) beside these runs: one faded bar \
             per setting, its warm medians. Dropping the file on the window does the same.",
        );
        if load.clicked() {
            asked = RunsAsked::Compare;
        }
        if let Some(c) = compared
            && ui.small_button("Clear comparison").on_hover_text(c.label.as_str()).clicked()
        {
            asked = RunsAsked::ClearComparison;
        }
    });
    asked
}

/// A saved bench's settings as records right of `shown`, numbered on from its last run.
fn placed_after(shown: &[(&RunRecord, bool)], compared: Option<&ComparedRuns>) -> Vec<RunRecord> {
    let base = shown.last().map_or(1, |(r, _)| r.seq + 1);
    compared
        .map(|c| c.runs.iter().zip(base..).map(|(r, seq)| RunRecord { seq, ..r.clone() }).collect())
        .unwrap_or_default()
}

/// "loaded: FILE", the name cut at [`LABEL_CHARS`].
fn loaded_label(file: &str) -> String {
    let mut label: String = file.chars().take(LABEL_CHARS).collect();
    if file.chars().count() > LABEL_CHARS {
        label.push('…');
    }
    format!("loaded: {label}")
}

/// At most this many characters of a loaded file's name on the chart (the hover has it whole,
/// with the image and the adapter).
const LABEL_CHARS: usize = 24;

/// Past [`MAX_BARS`] runs of `image` the first ones leave the chart: said, not hidden.
fn cut_note_ui(ui: &mut Ui, runs: &[RunRecord], image: Option<u64>) {
    let of_image = runs.iter().filter(|r| image.is_some() && Some(r.image_id) == image).count();
    if of_image > MAX_BARS {
        let note =
            format!("the last {MAX_BARS} of {of_image} runs on this image (Save trace… keeps them all)");
        ui.label(RichText::new(note).small().weak());
    }
}

/// Draws the chart of `image`'s runs (and `previous`'s, faded and named, on the left; a saved
/// bench's settings, faded and named, on the right); what its buttons asked for.
pub fn runs_chart_ui(
    ui: &mut Ui,
    (runs, compared): (&[RunRecord], Option<&ComparedRuns>),
    image: Option<u64>,
    previous: Option<u64>,
    name_of: &dyn Fn(u64) -> String,
) -> RunsAsked {
    let mut shown = shown(runs, image, previous);
    let placed = placed_after(&shown, compared);
    shown.extend(placed.iter().map(|r| (r, true)));
    let top_ns = shown.iter().map(|(r, _)| r.wall_ns() + r.overlap_ns()).max().unwrap_or(0);
    // Seconds from 10 s on: no axis reads "200000 ms".
    let (unit, ns_per_unit) = look::time_unit(top_ns);
    let ms = |ns: u64| ns as f64 / ns_per_unit;
    let asked = header_ui(ui, unit, compared);
    let top = ms(top_ns);
    let (mut series, strips) = bars_of(&shown, ns_per_unit, ui.visuals().strong_text_color());
    // The overlap is drawn last, over the phases it shades.
    series.sort_by_key(|(s, _, _)| *s == Segment::Overlap);
    legend_ui(ui, &legend_of(&series, &strips));
    cut_note_ui(ui, runs, image);
    let (Some((first, _)), Some((end, _))) = (shown.first(), shown.last()) else {
        ui.label("No run on this image yet.");
        return asked;
    };
    let (lo, hi) = (first.seq as f64, end.seq as f64);
    // The last run of this session (its wall time is written above it), if one is shown.
    let last = shown.iter().rev().map(|(r, _)| *r).find(|r| r.image_id != ComparedRuns::IMAGE);
    // Where the previous image's runs end and this image's begin.
    let boundary =
        shown.iter().find(|(_, faded)| !faded).filter(|_| shown[0].1).map(|(r, _)| r.seq as f64 - 0.5);
    // Where the saved bench's settings begin, and its label.
    let loaded = placed.first().zip(compared).map(|(r, c)| (r.seq as f64 - 0.5, loaded_label(&c.file)));
    let fonts = [egui::TextStyle::Body, egui::TextStyle::Small].map(|t| t.resolve(ui.style()));
    let painter = ui.painter().clone();
    let text_width = move |text: &str| {
        fonts.clone().map(|f| painter.layout_no_wrap(text.to_owned(), f, Color32::WHITE).size().x)
    };
    let text_colour = ui.visuals().strong_text_color();
    let weak = ui.visuals().weak_text_color();
    let names = (previous.map(name_of), image.map(name_of));
    // The backend named on its strip where the bars are wide and the strip is tall enough.
    let label_backends = shown.len() <= 16 && ui.available_height() > 170.0;
    // Each series (formula and work per pixel) named above its first bar, with room above the
    // bars for the names.
    let starts = series_starts(&shown);
    // Room above the tallest bar, in points, for its wall-time label, the two rows of series
    // names and the image names along the top, so that none is drawn over another ("cmyk.jpg"
    // was drawn over "97.4 ms"): as a share of the plot's height (about its column's height less
    // the axes).
    let named_on_top = boundary.is_some() || loaded.is_some();
    let rows_above = if starts.is_empty() { 0.0 } else { 2.0 } + if named_on_top { 1.0 } else { 0.0 };
    let room = WALL_LABEL + ROW * rows_above + 6.0;
    let plot_px = (ui.available_height() - 44.0).max(80.0);
    let free_share = f64::from(1.0 - (room / plot_px).min(0.6));
    let head = (1.0 / free_share).max(if starts.is_empty() { 1.25 } else { 1.7 });
    // The backend strip under the bars, a fixed height on screen: as tall as its label where
    // named (at 6% of the bars' height it was 6 points, and "GPU" stood over bar and strip),
    // else a thin line. egui_plot adds 5% of the range on each side.
    let strip_px = if label_backends { look::SMALL_TEXT + 3.0 } else { 6.0 };
    let share = f64::from(strip_px / plot_px) * 1.1;
    let strip = (top * head * share / (1.0 - 1.4 * share).max(0.5)).max(1e-3);
    let response = fixed_plot(ui, "runs", "run number (as in Last run)", unit)
        .x_grid_spacer(nice_x_spacer(48.0, true))
        // No time below zero: the backend strips' room under the axis has no marks ("-20 ms").
        .y_grid_spacer(|input| {
            nice_spacer(30.0, false)(input).into_iter().filter(|m| m.value >= 0.0).collect()
        })
        .include_x(lo - 0.6)
        .include_x(hi.max(lo + 4.0) + 0.6)
        .include_y(-strip * 1.4)
        .include_y(top * head)
        .show(ui, |plot| {
            for (segment, _, bars) in series {
                plot.bar_chart(
                    BarChart::new(segment.name(), bars)
                        .color(segment.colour())
                        .element_formatter(Box::new(|_, _| String::new())),
                );
            }
            for (backend, places) in strips {
                let name = backend.name().to_uppercase();
                let bar = |&(x, fill): &(f64, Color32)| {
                    Bar::new(x, strip).base_offset(-strip * 1.3).width(0.7).fill(fill).name("")
                };
                let bars = places.iter().map(bar).collect();
                plot.bar_chart(
                    BarChart::new(name, bars)
                        .color(backend_colour(backend))
                        .element_formatter(Box::new(|_, _| String::new())),
                );
            }
            if label_backends {
                for (run, _) in &shown {
                    let at = PlotPoint::new(run.seq as f64, -strip * 0.8);
                    let mark = RichText::new(run.settings.backend.name().to_uppercase())
                        .small()
                        .color(Color32::BLACK);
                    plot.text(Text::new("backend", at, mark).anchor(egui::Align2::CENTER_CENTER));
                }
            }
            let y = top * (head - 0.01);
            if let Some(x) = boundary {
                let previous = format!("previous: {}", names.0.clone().unwrap_or_default());
                let this = names.1.clone().unwrap_or_default();
                let width = text_width(&this)[1];
                divider_ui(plot, (x, y), Some((previous, weak)), (this, text_colour), width);
            }
            if let Some((x, label)) = loaded {
                let width = text_width(&label)[1];
                divider_ui(plot, (x, y), None, (label, weak), width);
            }
            series_names_ui(plot, &starts, (top, named_on_top), weak);
            wall_labels_ui(plot, (&shown, &placed), last, (ms, unit), (text_colour, weak), &text_width);
        });
    let transform = response.transform;
    let hovered = response.response.hover_pos().map(|p| transform.value_from_position(p).x.round());
    if let Some((run, _)) = hovered.and_then(|x| shown.iter().find(|(r, _)| (r.seq as f64 - x).abs() < 0.5)) {
        let name =
            if run.image_id == ComparedRuns::IMAGE { run.image_name.clone() } else { name_of(run.image_id) };
        response.response.on_hover_ui_at_pointer(|ui| tooltip_ui(ui, run, &name));
    }
    asked
}

/// The wall time over the last run's bar and over each loaded setting's bar (at another
/// machine's or size's scale its bar may be a sliver beside this image's runs): each on its own
/// bar ([`labels::place`]), in a smaller font or left out where a taller bar beside it leaves
/// no room (the hover says it). `width` gives a text's width in points, in the body font and in
/// the small one.
fn wall_labels_ui(
    plot: &mut egui_plot::PlotUi<'_>,
    (shown, placed): (&[(&RunRecord, bool)], &[RunRecord]),
    last: Option<&RunRecord>,
    (ms, unit): (impl Fn(u64) -> f64, &str),
    (text_colour, weak): (Color32, Color32),
    width: &dyn Fn(&str) -> [f32; 2],
) {
    let bar_top = |r: &RunRecord| ms(r.wall_ns() + r.overlap_ns());
    let transform = *plot.transform();
    let px = |r: &RunRecord| {
        let (x, top) = (r.seq as f64, bar_top(r));
        let left = transform.position_from_point(&PlotPoint::new(x - 0.35, top));
        let right = transform.position_from_point(&PlotPoint::new(x + 0.35, top));
        labels::BarPx { left: left.x, right: right.x, top: left.y }
    };
    let bars: Vec<(usize, labels::BarPx)> = shown.iter().map(|(r, _)| (r.seq, px(r))).collect();
    let frame = *transform.frame();
    let mut labelled: Vec<(&RunRecord, String, Color32, bool)> =
        placed.iter().map(|r| (r, look::duration(r.wall_ns()), weak, false)).collect();
    if let Some(last) = last {
        labelled.push((last, format!("{:.1} {unit}", ms(last.wall_ns())), text_colour, true));
    }
    // Each label drawn counts as a bar for the next: none is drawn over another.
    let mut taken: Vec<labels::BarPx> = Vec::new();
    for (run, text, colour, strong) in labelled {
        let own = px(run);
        let mut others: Vec<labels::BarPx> =
            bars.iter().filter(|(seq, _)| *seq != run.seq).map(|(_, b)| *b).collect();
        others.extend(taken.iter().copied());
        let [body, small] = width(&text);
        let widths = if strong { vec![body, small] } else { vec![small] };
        let Some((x, anchor, font)) =
            labels::place(own, &others, (frame.left(), frame.right()), &widths, 2.0)
        else {
            continue;
        };
        let used = widths[font];
        let left = match anchor.x() {
            egui::Align::Min => x,
            egui::Align::Center => x - used / 2.0,
            egui::Align::Max => x - used,
        };
        taken.push(labels::BarPx { left, right: left + used, top: own.top - look::SMALL_TEXT * 1.6 });
        let at = transform.value_from_position(egui::pos2(x, own.top));
        let rich =
            if strong && font == 0 { RichText::new(text).strong() } else { RichText::new(text).small() };
        plot.text(Text::new("wall", at, rich).anchor(anchor).color(colour));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Span, Track};

    fn run(seq: usize, wall_ns: u64) -> RunRecord {
        RunRecord::of_spans(seq, vec![Span::cpu(Track::Kernel, 0, wall_ns)], wall_ns)
    }

    /// The top of the runs chart's y axis after each of `frames` frames of `runs` drawn in a
    /// chart `height` points tall.
    fn tops(ctx: &egui::Context, runs: &[RunRecord], height: f32, frames: usize) -> Vec<f64> {
        let mut tops = Vec::new();
        for _ in 0..frames {
            let mut id = egui::Id::NULL;
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(500.0, height))),
                ..Default::default()
            };
            let _ = ctx.run_ui(input, |ui| {
                id = ui.make_persistent_id(egui::IdSalt::new("runs"));
                runs_chart_ui(ui, (runs, None), Some(1), None, &|_| "a.png".to_owned());
            });
            let memory = egui_plot::PlotMemory::load(ctx, id).expect("the plot's memory");
            tops.push(memory.bounds().max()[1]);
        }
        tops
    }

    #[test]
    fn the_y_axis_fits_the_tallest_bar_in_every_frame() {
        // Runs of 8.6 s (an axis in ms), then one of 48 s (an axis in s), in a tall chart and in
        // short ones. The labels above the bars are placed from the last frame's axis and count
        // in the plot's bounds: they must not hold the axis at the old scale, nor grow it frame
        // by frame (a 600 s axis over a 48 s bar was reported, #44).
        for height in [400.0, 160.0, 110.0] {
            let ctx = egui::Context::default();
            let mut runs: Vec<RunRecord> = (1..=3).map(|seq| run(seq, 8_600_000_000)).collect();
            let before = tops(&ctx, &runs, height, 3);
            assert!(before.iter().all(|&t| (8_600.0..=8_600.0 * 2.6).contains(&t)), "{height}: {before:?}");
            runs.push(run(4, 48_000_000_000));
            let after = tops(&ctx, &runs, height, 6);
            assert!(after.iter().all(|&t| (48.0..=48.0 * 2.6).contains(&t)), "{height}: {after:?}");
        }
    }
}
