//! The last run as a profiler timeline: one lane per kind of step (a lane per thread for host
//! copies, the GPU's copies, the kernel, display, encode), each step drawn from its real start to
//! its real end (the run report's spans), so steps that ran at once are seen side by side and
//! nothing passes the wall line, which is always drawn.

use egui::{Color32, RichText, Ui};
use egui_plot::{Bar, BarChart};

use super::{
    Segment, fixed_plot, lane_axis, lane_axis_font, lane_marks, legend_ui, look, nice_x_spacer, visible_width,
};
use crate::app::state::RunRecord;
use crate::engine::{Phase, SpanClock, Track};

/// One bar of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineBar {
    /// Its lane, an index into [`Timeline::lanes`].
    pub lane: usize,
    /// Its start, ms since the run started.
    pub start_ms: f64,
    /// Its end, ms since the run started.
    pub end_ms: f64,
    /// How its start and end were found.
    pub clock: SpanClock,
}

/// What the timeline chart draws for one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The lanes, top first.
    pub lanes: Vec<Track>,
    /// The bars, in lane order and by start.
    pub bars: Vec<TimelineBar>,
    /// The run's wall time, ms.
    pub wall_ms: f64,
}

/// The timeline of `run` from its report's spans, in units of `ns_per_unit` since the run
/// started (1e6: ms): a lane for each lane that has a span.
fn timeline_in(run: &RunRecord, ns_per_unit: f64) -> Timeline {
    let ms = |ns: u64| ns as f64 / ns_per_unit;
    // A parallel CPU kernel's threads and the op's submissions are the trace's to show: one lane
    // per core, or a bar per chunk of wavefront steps, would crowd the chart.
    let mut spans: Vec<_> = run
        .report
        .spans
        .iter()
        .filter(|s| !matches!(s.lane, Track::KernelThread { .. } | Track::OpSubmission))
        .copied()
        .collect();
    spans.sort_by_key(|s| (s.lane, s.start_ns));
    let mut lanes: Vec<Track> = spans.iter().map(|s| s.lane).collect();
    lanes.dedup();
    let bars = spans
        .iter()
        .map(|s| TimelineBar {
            lane: lanes.iter().position(|l| *l == s.lane).unwrap_or_default(),
            start_ms: ms(s.start_ns),
            end_ms: ms(s.end_ns),
            clock: s.clock,
        })
        .collect();
    Timeline { lanes, bars, wall_ms: ms(run.wall_ns()) }
}

/// The colour of a lane: its phase's; host copies (inside the upload and the download, on
/// the CPU's threads) in the grey of time outside the phases, apart from the decode's.
fn colour(lane: Track) -> Color32 {
    let segment = match lane {
        Track::HostCopy { .. } => Segment::Other,
        Track::KernelThread { .. } => Segment::Phase(Phase::Kernel),
        Track::OpSubmission => Segment::Phase(Phase::Op),
        Track::EncodeStripe { .. } => Segment::Phase(Phase::Encode),
        other => other.phase().map_or(Segment::Other, Segment::Phase),
    };
    segment.colour()
}

/// Draws the timeline of `last`; whether "Save trace…" was clicked.
pub fn timeline_ui(ui: &mut Ui, last: Option<&RunRecord>) -> bool {
    let Some(run) = last else {
        ui.label(RichText::new("Last run, step by step").strong());
        ui.label("No run on this image yet.");
        return false;
    };
    // Seconds from 10 s on.
    let (unit, ns_per_unit) = look::time_unit(run.wall_ns());
    // Wrapped: in a narrow column the button goes under the title (in one row it widened the
    // column past its edge, and the chart under it was cut on the right).
    let trace = ui
        .horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("Last run, step by step ({unit})")).strong());
            ui.small_button("Save trace…").on_hover_text(
                "Every run of this image as a Chrome trace, a track per lane and a process per run: \
                 open it in ui.perfetto.dev to zoom into each step.",
            )
        })
        .inner
        .clicked();
    let timeline = timeline_in(run, ns_per_unit);
    let lanes = timeline.lanes.len();
    let wall = timeline.wall_ms;
    let mut charts = Vec::new();
    for (index, lane) in timeline.lanes.iter().enumerate() {
        let bars: Vec<Bar> = timeline
            .bars
            .iter()
            .filter(|b| b.lane == index)
            .map(|b| {
                Bar::new((lanes - index) as f64, b.end_ms - b.start_ms)
                    .base_offset(b.start_ms)
                    .width(0.6)
                    .horizontal()
                    .fill(colour(*lane))
                    .name(format!(
                        "{} [{}]: {:.3} {unit}, from {:.3} to {:.3} {unit}",
                        lane.name(),
                        b.clock,
                        b.end_ms - b.start_ms,
                        b.start_ms,
                        b.end_ms
                    ))
            })
            .collect();
        charts.push(BarChart::new(lane.name(), bars).color(colour(*lane)).horizontal());
    }
    // Short entries, each one widget that wraps as a whole: one long entry widened the column
    // and pushed the chart beside it off the window.
    let mut legend = vec![(
        ui.visuals().strong_text_color(),
        format!("wall {} [cpu-clock], dashed", look::duration(run.wall_ns())),
    )];
    let mut clocks: Vec<&str> = timeline.bars.iter().map(|b| b.clock.label()).collect();
    clocks.sort_unstable();
    clocks.dedup();
    legend.extend(clocks.iter().map(|c| (ui.visuals().weak_text_color(), format!("bars: {c}"))));
    if lanes == 0 {
        legend.push((ui.visuals().weak_text_color(), "no step of this run was timed on its own".to_owned()));
    }
    legend_ui(ui, &legend);
    let names: Vec<String> = timeline.lanes.iter().rev().map(|l| l.name()).collect();
    let ui_text = ui.visuals().strong_text_color();
    // The x axis' title is centred under the plot, beside the lanes' names: a long one, in a
    // narrow column, ran past the column's edge ("ms since the run startec").
    let room = visible_width(ui) - lane_axis_font(ui, ui.available_height(), &names).1;
    let body = egui::TextStyle::Body.resolve(ui.style());
    let width = |t: &str| ui.painter().layout_no_wrap(t.to_owned(), body.clone(), ui_text).size().x;
    fixed_plot(ui, "timeline", &axis_title(unit, room, width), "")
        .x_grid_spacer(nice_x_spacer(44.0, false))
        .y_grid_spacer(|input| lane_marks(&input))
        // Track `lanes` (the top) is the first lane.
        .custom_y_axes(vec![lane_axis(ui, ui.available_height(), names)])
        .include_x(0.0)
        .include_x(wall.max(1e-3) * 1.05)
        .include_y(0.4)
        .include_y(lanes as f64 + 0.6)
        .show(ui, |plot| {
            for c in charts {
                plot.bar_chart(c);
            }
            plot.vline(
                egui_plot::VLine::new("wall time", wall)
                    .color(ui_text)
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
        });
    trace
}

/// The x axis' title: the longest of "ms since the run started", "ms since start" and "ms"
/// that is no wider (as `width` measures it) than the plot's `room`, in points.
fn axis_title(unit: &str, room: f32, width: impl Fn(&str) -> f32) -> String {
    let titles = [format!("{unit} since the run started"), format!("{unit} since start")];
    titles.into_iter().find(|t| width(t) <= room).unwrap_or_else(|| unit.to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_axis_title_is_cut_short_to_fit_the_plot() {
        // About 7 points a character, as the body font.
        let width = |t: &str| 7.0 * t.chars().count() as f32;
        assert_eq!(super::axis_title("ms", 400.0, width), "ms since the run started");
        assert_eq!(super::axis_title("ms", 140.0, width), "ms since start");
        assert_eq!(super::axis_title("s", 60.0, width), "s");
    }

    use super::*;
    use crate::engine::Span;

    #[test]
    fn overlapping_steps_share_the_wall_and_no_bar_passes_it() {
        // 894.7 ms of wall; the steps add up to 1030 ms because the host copied beside the GPU.
        let spans = vec![
            Span::cpu(Track::HostCopy { thread: Some(1) }, 0, 300_000_000),
            Span::cpu(Track::HostCopy { thread: Some(0) }, 10_000_000, 290_000_000),
            Span::cpu(Track::Kernel, 250_000_000, 700_000_000),
            Span::cpu(Track::Display, 700_000_000, 894_000_000),
        ];
        let sum_ms: f64 = spans.iter().map(|s| s.ns() as f64 / 1e6).sum();
        assert!(sum_ms > 894.7, "the steps overlap: {sum_ms} ms");
        let t = timeline_in(&RunRecord::of_spans(1, spans, 894_700_000), 1e6);
        assert_eq!(
            t.lanes,
            [
                Track::HostCopy { thread: Some(0) },
                Track::HostCopy { thread: Some(1) },
                Track::Kernel,
                Track::Display
            ]
        );
        let last_end = t.bars.iter().map(|b| b.end_ms).fold(0.0, f64::max);
        assert!(last_end <= t.wall_ms, "the last bar ends at {last_end} ms, past the wall {} ms", t.wall_ms);
        assert!((last_end - 894.0).abs() < 1e-9);
        let kernel = t.bars.iter().find(|b| b.lane == 2).expect("a kernel bar");
        assert!((kernel.start_ms - 250.0).abs() < 1e-9 && (kernel.end_ms - 700.0).abs() < 1e-9);
    }
}
