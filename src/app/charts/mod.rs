//! The timing charts in a resizable, collapsible dock under the viewer: one stacked bar per run
//! (phases − overlap + other = the run's wall time), a timeline of the last run, kernel time per
//! workgroup size, the size sweep with its roofline and its map of who wins, and the operations
//! per round trip, and every transfer path's bandwidth against size. Every series names the clock its figures came from; legends sit outside the
//! plots; every axis has at least three labelled ticks.

mod axes;
mod claims;
mod labels;
mod paths;
mod round_trips;
mod runs;
mod sweep;
mod timeline;
mod workgroups;

use egui::{Color32, RichText, Ui};
use egui_plot::{GridInput, GridMark};

use axes::{marks_at, nice_spacer, nice_x_spacer};

pub use claims::claim_chart_ui;
pub use paths::{path_colour, paths_chart_ui};
pub use round_trips::round_trips_chart_ui;
pub use sweep::SweepChart;
pub use sweep::roofline::roofline_ui;
pub use sweep::win_map::{map_levels, win_map_ui};

use super::look;
use super::session::Session;
use super::state::{RunRecord, RunSeries};
use super::work::jobs::Job;
use crate::engine::{Backend, ConvertSettings, Phase};

/// A segment of a stacked run bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Segment {
    Phase(Phase),
    /// Wall time no phase accounts for (waiting, submitting, bookkeeping).
    Other,
    /// Phase time that ran beside other phases (counted twice in the stack).
    Overlap,
}

impl Segment {
    fn name(self) -> &'static str {
        match self {
            Self::Phase(p) => p.name(),
            Self::Other => "other",
            Self::Overlap => "overlap",
        }
    }

    fn colour(self) -> Color32 {
        match self {
            Self::Phase(Phase::Decode) => Color32::from_rgb(150, 150, 150),
            Self::Phase(Phase::Setup) => Color32::from_rgb(170, 120, 200),
            Self::Phase(Phase::Upload) => Color32::from_rgb(230, 140, 60),
            Self::Phase(Phase::Kernel) => Color32::from_rgb(80, 170, 90),
            Self::Phase(Phase::Op) => Color32::from_rgb(150, 190, 60),
            Self::Phase(Phase::Display) => Color32::from_rgb(60, 180, 180),
            Self::Phase(Phase::Download) => Color32::from_rgb(70, 140, 220),
            Self::Phase(Phase::Encode) => Color32::from_rgb(200, 90, 90),
            Self::Other => Color32::from_gray(95),
            Self::Overlap => Color32::from_rgba_unmultiplied(20, 20, 20, 170),
        }
    }
}

/// The segments of one run in order, with their duration in ns and clock label: the phases, then
/// the rest of the wall time (the overlap is drawn over the top of the stack, see `runs`).
fn segments(run: &RunRecord) -> Vec<(Segment, u64, &'static str)> {
    let mut v: Vec<_> =
        run.report.phases.iter().map(|p| (Segment::Phase(p.phase), p.ns, p.source.short_label())).collect();
    if run.other_ns() > 0 || run.overlap_ns() == 0 {
        v.push((Segment::Other, run.other_ns(), "cpu"));
    }
    v
}

/// The CPU in blue, the GPU end to end in orange, the GPU on its input kept (its passes alone) in
/// green, on every chart that sets them side by side.
const CPU_COLOUR: Color32 = Color32::from_rgb(70, 140, 220);
const GPU_COLOUR: Color32 = Color32::from_rgb(230, 140, 60);
const KEPT_COLOUR: Color32 = Color32::from_rgb(80, 170, 90);

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// A plot that stays as drawn (no drag, zoom or scroll, no background), with axis labels whose
/// ticks may sit closer than `egui_plot`'s default (they are short), each with the decimals its
/// step needs (`egui_plot`'s own read marks 0.5 apart as "0, 0, 1, 2, 2"). It fills the height left in
/// its column under the title and the legend (which may wrap to more rows), and no more than
/// the width in sight.
fn fixed_plot<'a>(ui: &Ui, id: &str, x_label: &str, y_label: &str) -> egui_plot::Plot<'a> {
    egui_plot::Plot::new(id)
        .width(visible_width(ui))
        .height(ui.available_height().max(60.0))
        .show_background(false)
        .custom_x_axes(vec![
            egui_plot::AxisHints::new_x()
                .label(x_label)
                .label_spacing(28.0..=36.0)
                .formatter(|mark, _| axes::step_label(&mark)),
        ])
        .custom_y_axes(vec![
            egui_plot::AxisHints::new_y()
                .label(y_label)
                .label_spacing(14.0..=18.0)
                .formatter(|mark, _| axes::step_label(&mark)),
        ])
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
}

/// The width left in `ui` that is not clipped: a wide row above (a header, a legend entry)
/// widens a column's `Ui` past its clip, and a plot as wide as that was cut on the right.
fn visible_width(ui: &Ui) -> f32 {
    let left = ui.available_rect_before_wrap().left();
    ui.available_width().min(ui.clip_rect().right() - left).max(60.0)
}

/// The dock's height at launch where the window allows it (half the room at most), in points:
/// its charts then keep plots of about 150 points, with their axis numbers (at 1024x640 a share
/// of 0.36 left them 50–60 points and no numbers).
const DOCK_START_PX: f32 = 300.0;

/// The least height of the dock (its header and a short chart) and of the viewer above it, in
/// points: the line between them can be dragged anywhere between.
const DOCK_LEAST_PX: f32 = 120.0;
const VIEWER_LEAST_PX: f32 = 140.0;

/// The heights the dock can be dragged to in `room` points (the viewer's and the dock's): from
/// [`DOCK_LEAST_PX`] to all but [`VIEWER_LEAST_PX`], at every window height (a range of one
/// value until the window was 765 points tall left the line between them stuck at 1024x640).
fn dock_range(room: f32) -> std::ops::RangeInclusive<f32> {
    let least = DOCK_LEAST_PX.min(room * 0.4);
    least..=(room - VIEWER_LEAST_PX.min(room * 0.4)).max(least)
}

/// The dock's height in `room` points until the user drags it: `share` of the room, at least
/// [`DOCK_START_PX`] (or half the room), within [`dock_range`].
fn dock_start(room: f32, share: f32) -> f32 {
    let range = dock_range(room);
    (room * share).max(DOCK_START_PX.min(room * 0.5)).clamp(*range.start(), *range.end())
}

/// The x axis and a lane chart's margins, in points.
const LANES_BELOW: f32 = 40.0;

/// The height a chart of `lanes` lanes needs for names of at least 10 px: with less, a chart
/// shows in a scroll area at this height (12 workgroup shapes in the dock at 1024x640 lost
/// every name).
fn lanes_height(lanes: usize) -> f32 {
    (lanes as f32 + 1.2) * 13.0 + LANES_BELOW
}

/// The y axis of a chart of lanes (horizontal bars or boxes) `height` points tall, named by
/// `names` from lane 1 up. `egui_plot` skips a label taller than its lane, so the names are in
/// the body font when the lanes are tall enough for it and smaller (never under 10 px) when the
/// dock is short.
fn lane_axis<'a>(ui: &Ui, height: f32, names: Vec<String>) -> egui_plot::AxisHints<'a> {
    let (font, thickness) = lane_axis_font(ui, height, &names);
    egui_plot::AxisHints::new_y()
        .label_spacing(1.0..=2.0)
        .tick_label_font(font)
        .min_thickness(thickness)
        .formatter(move |mark, _| mark_name(&names, mark.value, 1.0))
}

/// The font of [`lane_axis`]'s names and the axis' width, in points.
fn lane_axis_font(ui: &Ui, height: f32, names: &[String]) -> (egui::FontId, f32) {
    let lanes = names.len() as f32 + 1.2;
    let lane_height = (height - LANES_BELOW) / lanes;
    // egui_plot leaves out a label taller than its lane: in a short chart (many lanes, a small
    // window) the names get a smaller font rather than none (a row is about 1.2 font sizes).
    let body = egui::TextStyle::Body.resolve(ui.style());
    let font = egui::FontId::new((lane_height / 1.25).clamp(10.0, body.size), body.family);
    // The axis as wide as its widest name from the first frame: egui_plot otherwise keeps the
    // width of the frame before, and an idle window cut the names after a resize until the
    // pointer moved.
    let widest = names
        .iter()
        .map(|n| ui.painter().layout_no_wrap(n.clone(), font.clone(), egui::Color32::WHITE).size().x)
        .fold(0.0, f32::max);
    (font, widest + 8.0)
}

/// The name of the whole-number mark at `value`: `names[value - first]`; none between whole
/// numbers or below `first`.
fn mark_name(names: &[String], value: f64, first: f64) -> String {
    let i = value.round();
    if (value - i).abs() > 1e-6 || i < first {
        return String::new();
    }
    names.get((i - first) as usize).cloned().unwrap_or_default()
}

/// One mark per whole number: the lanes of a chart of horizontal bars or boxes.
fn lane_marks(input: &GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    (lo.ceil() as i64..=hi.floor() as i64).map(|v| GridMark { value: v as f64, step_size: 1.0 }).collect()
}

/// Legend rows outside a plot: colour chips and names, wrapped to the width there is.
fn legend_ui(ui: &mut Ui, entries: &[(Color32, String)]) {
    key_rows(ui, entries, (10.0, 10.0, 4.0, 10.0), false, |painter, colour, centre| {
        painter.rect_filled(egui::Rect::from_center_size(centre, egui::vec2(10.0, 10.0)), 2.0, *colour);
    });
}

/// Legend rows: each entry's key (drawn by `draw` about its centre) and its name as one widget,
/// wrapped to the width there is (a nested `ui.horizontal` would claim the rest of the row and
/// never wrap), `spacing` apart, the key `width` points wide and `gap` from its name, each row at
/// least `least_height` tall; with `named`, its name in the accessibility tree.
fn key_rows<K>(
    ui: &mut Ui,
    entries: &[(K, String)],
    (spacing, width, gap, least_height): (f32, f32, f32, f32),
    named: bool,
    draw: impl Fn(&egui::Painter, &K, egui::Pos2),
) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = spacing;
        for (key, name) in entries {
            let galley = egui::WidgetText::from(RichText::new(name).small()).into_galley(
                ui,
                Some(egui::TextWrapMode::Extend),
                f32::INFINITY,
                egui::TextStyle::Small,
            );
            let size = egui::vec2(width + gap + galley.size().x, galley.size().y.max(least_height));
            let (rect, response) = ui.allocate_exact_size(size, egui::Sense::hover());
            if named {
                response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, name));
            }
            draw(ui.painter(), key, egui::pos2(rect.left() + width / 2.0, rect.center().y));
            let text_pos = egui::pos2(rect.left() + width + gap, rect.center().y - galley.size().y / 2.0);
            ui.painter().galley(text_pos, galley, ui.visuals().text_color());
        }
    });
}

/// Which chart a narrow dock shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Tab {
    #[default]
    Runs,
    Timeline,
    Workgroups,
}

/// The chart dock under the viewer.
pub struct ChartsDock {
    expanded: bool,
    /// Also draw the runs of the previous image (for comparison); else only the current one's.
    keep_previous: bool,
    tab: Tab,
    /// The series (formula and work per pixel) the workgroup chart shows, when the user picked
    /// one.
    box_series: Option<RunSeries>,
    /// The race of every workgroup size ("Try every size") and its answer.
    race: workgroups::Race,
    /// The dock's height at launch as a share of the room under the top bar (and after a
    /// resize, whatever height a smaller window left in egui's memory), until dragged.
    share: f32,
    /// The share of the room the user dragged the dock to, kept when the window is resized.
    dragged: Option<f32>,
    /// The room the dock had last frame.
    room: Option<f32>,
    /// A button that needs a file was clicked: the app opens its dialog.
    pub file_asked: Option<FileAsked>,
}

/// The dock's buttons that need a file dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileAsked {
    /// "Save trace…" (the Last run chart).
    SaveTrace,
    /// "Compare with a saved bench…" (the runs chart).
    CompareRuns,
}

impl Default for ChartsDock {
    fn default() -> Self {
        Self {
            expanded: true,
            keep_previous: false,
            tab: Tab::Runs,
            box_series: None,
            race: workgroups::Race::default(),
            share: 0.4,
            dragged: None,
            file_asked: None,
            room: None,
        }
    }
}

impl ChartsDock {
    /// Shows the dock at the bottom of the remaining space: a header, and the charts when
    /// expanded (resizable; the viewer keeps most of the height).
    pub fn dock_ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let frame = look::panel_frame(ui.style());
        let room = ui.available_height();
        if self.expanded {
            let range = dock_range(room);
            // The user's share once dragged; else the share at launch, at least its height.
            let wanted = match self.dragged {
                Some(share) => (room * share).clamp(*range.start(), *range.end()),
                None => dock_start(room, self.share),
            };
            let mut panel = egui::Panel::bottom("charts")
                .frame(frame)
                .resizable(true)
                .default_size(wanted)
                .size_range(range);
            // A new window size (or the first frame: egui's memory may hold a height from another
            // window size) puts the dock back at its share of the room.
            let resized = self.room.is_none_or(|r| (r - room).abs() > 0.5);
            if resized {
                panel = panel.exact_size(wanted);
            }
            let height = panel
                .show(ui, |ui| {
                    // Fill the panel, or it shrinks to its first frame's contents.
                    ui.set_min_height(ui.available_height());
                    self.header_ui(ui, session);
                    self.charts_ui(ui, session);
                })
                .response
                .rect
                .height();
            if !resized && room > 0.0 && (height - wanted).abs() > 0.5 {
                // Dragged by the user: keep the new share.
                self.dragged = Some(height / room);
            }
            self.room = Some(room);
        } else {
            egui::Panel::bottom("charts collapsed").frame(frame).show(ui, |ui| self.header_ui(ui, session));
        }
    }

    /// The run numbers the runs chart shows now (the current image's, and the previous image's
    /// when kept).
    #[must_use]
    pub fn charted_runs(&self, session: &Session) -> Vec<usize> {
        let image = session.input().map(|i| i.id);
        let previous = self.keep_previous.then(|| previous_image(session.runs(), image)).flatten();
        runs::shown(session.runs(), image, previous).iter().map(|(r, _)| r.seq).collect()
    }

    fn header_ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let mut facts = Vec::new();
        if let Some(input) = session.input() {
            facts.push(format!("decode {} (cpu-clock)", crate::app::look::duration(input.decode_ns)));
        }
        // The open image's last export: another image's says nothing of this one.
        let image_id = session.input().map(|i| i.id);
        if let Some(e) = session.exports().iter().rev().find(|e| e.image_id == image_id) {
            facts.push(format!(
                "export {} ({}): encode {} (cpu-clock)",
                e.seq,
                e.format,
                crate::app::look::duration(e.encode_ns)
            ));
        }
        let text = facts.join(" · ");
        let hover = format!("{text}\nExports are listed apart from the runs (Last run panel, Exports).");
        let mut below = false;
        ui.horizontal(|ui| {
            ui.strong("Where the time goes");
            let toggle = if self.expanded { "Hide" } else { "Show" };
            if ui
                .small_button(toggle)
                .on_hover_text("Show or hide the charts (the viewer gets the room)")
                .clicked()
            {
                self.expanded = !self.expanded;
            }
            // The controls at the right first; the facts between them where they fit whole, else
            // on a row of their own under them (cut short, "export 1 (JPEG): encod…" hid its
            // figure in a narrow window).
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui.small_button("Clear").on_hover_text("Forget every measured run and export").clicked() {
                    session.clear_runs();
                }
                ui.checkbox(&mut self.keep_previous, "keep previous image")
                    .on_hover_text("Also show the runs of the image opened before this one, for comparison");
                ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                    let font = egui::TextStyle::Body.resolve(ui.style());
                    let width = ui.painter().layout_no_wrap(text.clone(), font, Color32::WHITE).size().x;
                    if text.is_empty() {
                    } else if width <= ui.available_width() {
                        ui.label(&text).on_hover_text(&hover);
                    } else {
                        below = true;
                    }
                });
            });
        });
        if below {
            ui.add(egui::Label::new(RichText::new(&text).small()).wrap()).on_hover_text(hover);
        }
    }

    fn charts_ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let image = session.input().map(|i| i.id);
        let previous = self.keep_previous.then(|| previous_image(session.runs(), image)).flatten();
        let valid = session.gpu().map(|g| g.valid_workgroups()).unwrap_or_default();
        self.race.poll(session);
        let racing = self.race.pending.is_some() && session.current_job().is_some();
        // "Luma as stored" has no kernel to race: nothing of it goes to the GPU.
        let stored_luma = session.settings().convert.formula == crate::pixel::Formula::StoredLuma;
        let enabled = session.input().is_some() && session.gpu_usable() && !racing && !stored_luma;
        // What the race would take, said before it starts.
        let race_parts = race_parts(session, valid.len());
        let task = crate::engine::estimate::Task::Workgroups;
        self.race.estimate =
            race_parts.as_ref().filter(|_| enabled).map(|(_, parts)| session.pace().job(task, parts));
        self.race.at_most_s = race_parts
            .as_ref()
            .filter(|_| !session.pace().has_seen(task))
            .and_then(|(_, parts)| session.pace().at_most_s(task, parts));
        let current = session.settings().convert.workgroup;
        let narrow = ui.available_width() < 760.0;
        if narrow {
            ui.horizontal(|ui| {
                ui.selectable_value(&mut self.tab, Tab::Runs, "Each run");
                ui.selectable_value(&mut self.tab, Tab::Timeline, "Last run");
                ui.selectable_value(&mut self.tab, Tab::Workgroups, "By workgroup size");
            });
        }
        let height = (ui.available_height() - 44.0).max(80.0);
        let width = ui.available_width();
        let mut asked = workgroups::RaceAsked::Nothing;
        let mut trace_asked = false;
        let mut runs_asked = runs::RunsAsked::Nothing;
        let (runs, compared) = (session.runs(), session.compared_runs());
        let last = runs.iter().rev().find(|r| Some(r.image_id) == image);
        let shown_tab = self.tab;
        let box_series = &mut self.box_series;
        let race = &self.race;
        ui.horizontal_top(|ui| {
            let column = |ui: &mut Ui, share: f32, tab: Tab, add: &mut dyn FnMut(&mut Ui)| {
                if narrow && shown_tab != tab {
                    return;
                }
                let w = if narrow { width } else { width * share - 8.0 };
                // A column of its own width exactly, clipped to it: a wide legend or header in one
                // column never pushes the next one off the window.
                let (rect, _) = ui.allocate_exact_size(egui::vec2(w, height + 40.0), egui::Sense::hover());
                let mut column = ui.new_child(
                    egui::UiBuilder::new().max_rect(rect).layout(egui::Layout::top_down(egui::Align::Min)),
                );
                column.set_clip_rect(rect.intersect(ui.clip_rect()));
                add(&mut column);
            };
            let name_of = |id: u64| {
                runs.iter().find(|r| r.image_id == id).map(|r| r.image_name.clone()).unwrap_or_default()
            };
            column(ui, 0.40, Tab::Runs, &mut |ui| {
                runs_asked = runs::runs_chart_ui(ui, (runs, compared), image, previous, &name_of);
            });
            column(ui, 0.25, Tab::Timeline, &mut |ui| trace_asked = timeline::timeline_ui(ui, last));
            column(ui, 0.35, Tab::Workgroups, &mut |ui| {
                asked = workgroups::workgroups_chart_ui(
                    ui, runs, image, &valid, enabled, box_series, race, current,
                );
            });
        });
        if trace_asked {
            self.file_asked = Some(FileAsked::SaveTrace);
        }
        match runs_asked {
            runs::RunsAsked::Nothing => {}
            runs::RunsAsked::Compare => self.file_asked = Some(FileAsked::CompareRuns),
            runs::RunsAsked::ClearComparison => session.clear_compared_runs(),
        }
        match asked {
            workgroups::RaceAsked::Nothing => {}
            workgroups::RaceAsked::Use(workgroup) => session.settings_mut().convert.workgroup = workgroup,
            workgroups::RaceAsked::Race => {
                let (Some(input), Some((settings, parts))) = (session.input().cloned(), race_parts) else {
                    return;
                };
                let raced = input.id;
                let job = Job::Workgroups { input, settings };
                let id = session.send_estimated(job, task, parts);
                self.race.start(id, raced);
            }
        }
    }
}

/// The settings of a race of `shapes` shapes on the open image (the GPU's), and what it runs
/// at least, for its estimate; `None` without an image.
fn race_parts(
    session: &Session,
    shapes: usize,
) -> Option<(ConvertSettings, Vec<crate::engine::estimate::Part>)> {
    let input = session.input()?;
    let settings = ConvertSettings { backend: Backend::Gpu, ..session.settings().convert };
    let megapixels = crate::system::units::megapixels(input.image.width(), input.image.height());
    let budget = crate::engine::sampling::Budget::FULL;
    Some((settings, crate::engine::sweep::race_parts(shapes, &settings, megapixels, &budget)))
}

/// The image opened before `current` that has runs.
fn previous_image(runs: &[RunRecord], current: Option<u64>) -> Option<u64> {
    runs.iter().rev().map(|r| r.image_id).find(|id| Some(*id) != current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dock_resizes_over_a_real_range_at_every_window_height() {
        // The room under the top bar at 1024x640, 1280x720, 1440x900 and a tiny window.
        for room in [250.0, 560.0, 640.0, 820.0] {
            let range = dock_range(room);
            let (least, most) = (*range.start(), *range.end());
            assert!(most - least >= room * 0.2, "{room}: {range:?} is too narrow to drag");
            assert!(room - most >= VIEWER_LEAST_PX.min(room * 0.4) - 1e-3, "{room}: the viewer keeps room");
            let start = dock_start(room, 0.4);
            assert!(range.contains(&start), "{room}: starts at {start} within {range:?}");
        }
        assert!(dock_start(560.0, 0.4) >= 270.0, "at 1024x640 the dock starts tall enough for its numbers");
    }
}
