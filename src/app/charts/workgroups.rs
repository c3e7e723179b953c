//! Median and spread of the GPU kernel time per workgroup size (warm runs, current image, same
//! kernel), for one series at a time (a formula and a work per pixel: runs at another work level
//! are another series), as horizontal boxes so the size names fit at the normal text size. The
//! series follows the latest GPU run once it has warm runs; until then the series measured
//! before stays, and any series with warm runs can be picked. "Try every size" races every
//! shape in turns on the open image (the engine's [`crate::engine::sweep::workgroups`]): its verdict
//! is drawn above the boxes, which then show the race's rounds.

use egui::{RichText, Ui};
use egui_plot::{BoxElem, BoxPlot, BoxSpread};

use super::{
    LANES_BELOW, Segment, fixed_plot, lane_axis, lane_marks, lanes_height, legend_ui, ms, nice_x_spacer,
    visible_width,
};
use crate::app::state::{RunRecord, RunSeries};
use crate::app::work::error::WorkError;
use crate::app::work::jobs::Answer;
use crate::engine::estimate::Estimate;
use crate::engine::sweep::WorkgroupRace;
use crate::engine::{Backend, Phase, Stats, WorkgroupSize};
use crate::system::clock::Clock;

/// The chart's race: the one asked and not answered yet, and the last answer with its image.
#[derive(Default)]
pub struct Race {
    /// The race in flight, until its answer arrives.
    pub pending: Option<u64>,
    /// The image the race in flight runs on (its answer is that image's, whatever is open then).
    pending_image: u64,
    /// The image raced and what the race said (or why it said nothing).
    shown: Option<(u64, Result<WorkgroupRace, WorkError>)>,
    /// What a race would take, said beside its button before it starts (`None`: it cannot).
    pub estimate: Option<Estimate>,
    /// The most a race can take (its budget), said beside a first estimate: before a race was
    /// seen here, when it decides is a guess.
    pub at_most_s: Option<f64>,
}

impl Race {
    /// Takes the worker's answer from the session, once there is one.
    pub fn poll(&mut self, session: &mut crate::app::session::Session) {
        if let Some(Answer::Raced(answer)) = self.pending.and_then(|id| session.take_answer(id)) {
            self.shown = Some((self.pending_image, answer));
            self.pending = None;
        }
    }

    /// The race of job `id` on image `image` is about to start; the last answer is dropped.
    pub fn start(&mut self, id: u64, image: u64) {
        self.pending = Some(id);
        self.pending_image = image;
        self.shown = None;
    }
}

/// What the user asked of the chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaceAsked {
    /// Nothing.
    Nothing,
    /// "Try every size": race every shape.
    Race,
    /// "Use it": set the panel's workgroup to the shape decided fastest.
    Use(WorkgroupSize),
}

/// The series of `image`'s warm GPU runs of its latest GPU run's kernel, the most recently run
/// last (what the box plot's picker offers).
#[must_use]
fn warm_series(runs: &[RunRecord], image: Option<u64>) -> Vec<RunSeries> {
    let gpu_runs = || runs.iter().filter(|r| Some(r.image_id) == image && r.settings.backend == Backend::Gpu);
    let kernel = gpu_runs().next_back().and_then(|l| l.report.kernel);
    let mut warm: Vec<RunSeries> = Vec::new();
    for r in gpu_runs().filter(|r| !r.cold && r.report.kernel == kernel) {
        warm.retain(|s| *s != r.series());
        warm.push(r.series());
    }
    warm
}

/// Each shape's median and interval and its clock, one line each, for the verdict's hover.
fn shapes_text(race: &WorkgroupRace) -> String {
    let lines: Vec<String> = race
        .shapes
        .iter()
        .map(|s| match s.kernel_ns {
            Some(i) => format!(
                "{}: {:.3} ms ({:.3}–{:.3} ms, 95%) over {} rounds, {}",
                s.workgroup,
                i.median / 1e6,
                i.ci_low / 1e6,
                i.ci_high / 1e6,
                i.samples,
                s.clock
            ),
            None => format!("{}: too few rounds", s.workgroup),
        })
        .collect();
    lines.join("\n")
}

/// A box of kernel times in nanoseconds at lane `y`, named by `name`.
fn kernel_box(y: f64, kernel_ns: &[u64], name: String) -> Option<BoxElem> {
    let s = Stats::of(kernel_ns)?;
    let (q1, q3) = quartiles(kernel_ns);
    Some(
        BoxElem::new(y, BoxSpread::new(ms(s.min_ns), q1, ms(s.median_ns), q3, ms(s.max_ns)))
            .name(name)
            .box_width(0.6),
    )
}

/// The race's boxes (each shape's rounds) with the shapes' names and the kernel's clock.
fn race_boxes(race: &WorkgroupRace) -> (Vec<BoxElem>, Vec<String>, Option<Clock>) {
    let (mut boxes, mut names) = (Vec::new(), Vec::new());
    for s in &race.shapes {
        let ns: Vec<u64> = s.samples_ns.iter().map(|&v| v.max(0.0) as u64).collect();
        let name = s.kernel_ns.map_or_else(
            || format!("{}: too few rounds", s.workgroup),
            |i| {
                format!(
                    "{}: median {:.3} ms ({:.3}–{:.3}, 95%) over {} rounds",
                    s.workgroup,
                    i.median / 1e6,
                    i.ci_low / 1e6,
                    i.ci_high / 1e6,
                    i.samples
                )
            },
        );
        if let Some(b) = kernel_box((names.len() + 1) as f64, &ns, name) {
            boxes.push(b);
            names.push(s.workgroup.to_string());
        }
    }
    (boxes, names, race.shapes.first().map(|s| s.clock))
}

/// The boxes of the warm runs of `series` on `image` (the latest GPU run's kernel), per shape.
fn run_boxes(
    runs: &[RunRecord],
    image: Option<u64>,
    valid: &[WorkgroupSize],
    latest: &RunRecord,
    series: RunSeries,
) -> (Vec<BoxElem>, Vec<String>, Option<Clock>) {
    let (mut boxes, mut names, mut source) = (Vec::new(), Vec::new(), None);
    for wg in valid {
        let kernel_ns: Vec<u64> = runs
            .iter()
            .filter(|r| {
                Some(r.image_id) == image
                    && !r.cold
                    && r.report.workgroup == Some(*wg)
                    && r.report.kernel == latest.report.kernel
                    && r.series() == series
            })
            .filter_map(|r| r.report.phase(Phase::Kernel).inspect(|p| source = Some(p.source)))
            .map(|p| p.ns)
            .collect();
        let name = format!(
            "{wg}: median {:.3} ms over {} runs",
            ms(Stats::of(&kernel_ns).map_or(0, |s| s.median_ns)),
            kernel_ns.len()
        );
        if let Some(b) = kernel_box((names.len() + 1) as f64, &kernel_ns, name) {
            boxes.push(b);
            names.push(wg.to_string());
        }
    }
    (boxes, names, source)
}

/// The race's verdict for `image`, if there is one: its line (each shape's interval on hover),
/// and "Use it" when the fastest is decided and not the panel's workgroup already.
fn verdict_ui(ui: &mut Ui, race: &Race, image: Option<u64>, current: WorkgroupSize, asked: &mut RaceAsked) {
    match &race.shown {
        Some((id, Ok(r))) if Some(*id) == image => {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(r.sentence()).strong()).on_hover_text(shapes_text(r));
                if let Some(fastest) = r.fastest.filter(|f| r.decided && *f != current)
                    && ui
                        .small_button("Use it")
                        .on_hover_text(format!("Set the workgroup size to {fastest}"))
                        .clicked()
                {
                    *asked = RaceAsked::Use(fastest);
                }
            });
        }
        Some((id, Err(why))) if Some(*id) == image => {
            ui.label(RichText::new(why.describe()).weak());
        }
        _ => {}
    }
}

/// "for the formula and work" and the series shown: a menu when there are several.
fn series_ui(ui: &mut Ui, warm: &[RunSeries], series: Option<RunSeries>, picked: &mut Option<RunSeries>) {
    if series.is_some() {
        ui.label("for the formula and work");
    }
    if warm.len() > 1 {
        let mut chosen = series.unwrap_or_default();
        egui::ComboBox::from_id_salt("box plot series")
            .selected_text(chosen.label())
            .show_ui(ui, |ui| {
                for s in warm {
                    ui.selectable_value(&mut chosen, *s, s.label());
                }
            })
            .response
            .on_hover_text("Runs of another formula or another work per pixel are another series");
        if Some(chosen) != series {
            *picked = Some(chosen);
        }
    } else if let Some(s) = series {
        ui.label(RichText::new(s.label()).strong());
    }
}

/// Draws the chart; `picked` is the series the user chose to see (`None`: follow the runs),
/// `current` the panel's workgroup; returns what the user asked.
#[expect(clippy::too_many_arguments, reason = "the chart's inputs, each read once")]
pub fn workgroups_chart_ui(
    ui: &mut Ui,
    runs: &[RunRecord],
    image: Option<u64>,
    valid: &[WorkgroupSize],
    enabled: bool,
    picked: &mut Option<RunSeries>,
    race: &Race,
    current: WorkgroupSize,
) -> RaceAsked {
    let latest = runs.iter().rev().find(|r| Some(r.image_id) == image && r.settings.backend == Backend::Gpu);
    let warm = warm_series(runs, image);
    let latest_series = latest.map(RunRecord::series);
    let series = picked
        .filter(|s| warm.contains(s))
        .or_else(|| latest_series.filter(|s| warm.contains(s)))
        .or_else(|| warm.last().copied())
        .or(latest_series);
    let raced = match &race.shown {
        Some((id, Ok(r))) if Some(*id) == image => Some(r),
        _ => None,
    };
    let mut asked = RaceAsked::Nothing;
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("GPU kernel by workgroup size (ms)").strong());
        if raced.is_some() {
            ui.label("raced in turns");
        } else {
            series_ui(ui, &warm, series, picked);
        }
        let hover = "Every size this GPU allows, in turns on this image after a warm-up round, until \
                     the 95% interval of every other size's kernel time over the fastest's lies above 1 \
                     (at most 42 rounds, or 6 s once 6 rounds are in); Stop or Esc cancels";
        let needs = "Needs an open image, a usable GPU, no race running, and a formula with a kernel (\"Luma as \
                     stored\" runs none)";
        if ui
            .add_enabled(enabled, egui::Button::new("Try every size").small())
            .on_hover_text(hover)
            .on_disabled_hover_text(needs)
            .clicked()
        {
            asked = RaceAsked::Race;
        }
    });
    if let Some(estimate) = race.estimate.filter(|_| race.pending.is_none()) {
        let text = format!("Trying every size takes {}.", estimate.brief_within(race.at_most_s));
        crate::app::look::estimate_line(ui, text);
    }
    verdict_ui(ui, race, image, current, &mut asked);
    let (boxes, names, source, what) = if let Some(r) = raced {
        let (b, n, s) = race_boxes(r);
        (b, n, s, format!("{} rounds in turns", r.rounds))
    } else {
        let (Some(latest), Some(series)) = (latest, series) else {
            ui.label("No GPU runs on this image yet: run it on the GPU, or press \"Try every size\".");
            return asked;
        };
        let (b, n, s) = run_boxes(runs, image, valid, latest, series);
        (b, n, s, "warm runs".to_owned())
    };
    if boxes.is_empty() {
        ui.label("Only cold runs so far (they include pipeline compilation and are left out): press Run or \"Try every size\".");
        return asked;
    }
    let clock = source.map_or("", Clock::label);
    legend_ui(
        ui,
        &[(
            Segment::Phase(Phase::Kernel).colour(),
            format!("kernel [{clock}], {what}: median, quartiles, min-max"),
        )],
    );
    boxes_ui(ui, boxes, names);
    asked
}

/// The boxes, one lane each named by `names`, filling the height left; too many for it, they
/// scroll over an axis of times that stays in sight.
fn boxes_ui(ui: &mut Ui, boxes: Vec<BoxElem>, names: Vec<String>) {
    let rows = names.len();
    let top = boxes.iter().map(|b| b.spread.upper_whisker).fold(0.0, f64::max);
    let width = visible_width(ui);
    let (available, needed) = (ui.available_height().max(60.0), lanes_height(rows));
    // The names' column as wide as the widest name in the body font (the largest the lanes
    // use), so that scrolled boxes and the axis under them share their left edge.
    let body = egui::TextStyle::Body.resolve(ui.style());
    let names_px = names
        .iter()
        .map(|n| ui.painter().layout_no_wrap(n.clone(), body.clone(), egui::Color32::WHITE).size().x)
        .fold(0.0, f32::max)
        + 8.0;
    // A plot `height` points tall with lanes named for a chart `lanes_px` tall (axis included).
    let plot = |ui: &mut Ui, id: &str, (height, lanes_px): (f32, f32), names: Vec<String>| {
        let axis = lane_axis(ui, lanes_px, names).min_thickness(names_px);
        fixed_plot(ui, id, "kernel ms", "")
            .width(width)
            .height(height)
            .x_grid_spacer(nice_x_spacer(44.0, false))
            .y_grid_spacer(|input| lane_marks(&input))
            .custom_y_axes(vec![axis])
            .include_x(0.0)
            .include_x(top * 1.1)
            .include_y(0.4)
            .include_y(rows as f64 + 0.6)
    };
    if available >= needed {
        plot(ui, "workgroups", (available, available), names).show(ui, |plot| {
            plot.box_plot(BoxPlot::new("GPU kernel", boxes).color(kernel_colour()).horizontal());
        });
    } else {
        // Too many shapes for the dock: the boxes scroll, every one with its name, over an axis
        // of times that stays in sight under them (scrolled with them, it went out of view).
        let link = ui.make_persistent_id("workgroups time");
        egui::ScrollArea::vertical().id_salt("workgroups scroll").max_height(available - LANES_BELOW).show(
            ui,
            |ui| {
                plot(ui, "workgroups", (needed - LANES_BELOW, needed), names)
                    .show_axes([false, true])
                    .link_axis(link, [true, false])
                    .show(ui, |plot| {
                        plot.box_plot(BoxPlot::new("GPU kernel", boxes).color(kernel_colour()).horizontal());
                    });
            },
        );
        plot(ui, "workgroups axis", (LANES_BELOW, needed), Vec::new())
            .show_grid([true, false])
            .link_axis(link, [true, false])
            .show(ui, |_| {});
    }
}

/// The kernel's colour, the boxes'.
fn kernel_colour() -> egui::Color32 {
    Segment::Phase(Phase::Kernel).colour()
}

/// First and third quartile (nearest rank) in milliseconds.
fn quartiles(values: &[u64]) -> (f64, f64) {
    let mut v = values.to_vec();
    v.sort_unstable();
    let at = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
    (at(0.25), at(0.75))
}
