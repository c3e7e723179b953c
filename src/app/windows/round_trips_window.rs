//! The round-trips window: the tutorial's "keep data on the GPU for multiple operations",
//! measured on the open photo at the settings panel's formula, workgroup shape and work per
//! pixel, with its verdict and its chart (`charts/round_trips.rs`).

use std::sync::Arc;

use egui::{RichText, Ui};

use crate::app::charts::round_trips_chart_ui;
use crate::app::look;
use crate::app::session::{JobKind, Session};
use crate::app::work::error::WorkError;
use crate::app::work::jobs::{Answer, Job, Loaded};
use crate::engine::estimate::{Lane, Part, Task, round_trip_parts};
use crate::engine::round_trip::{DEFAULT_PASSES, MAX_PASSES, RoundTripResult, round_trip_budget};
use crate::engine::sampling::MIN_SAMPLES;
use crate::engine::{Backend, ConvertSettings};

/// The round-trips window's state.
pub struct RoundTripsWindow {
    /// Whether the window is open.
    pub open: bool,
    /// The counts of operations per round trip, as typed.
    passes: String,
    /// The fewest warm rounds per count.
    runs: u32,
    /// The job in flight, until its answer arrives.
    pending: Option<u64>,
    /// The latest result, or why the latest run has none.
    shown: Option<Result<Arc<RoundTripResult>, WorkError>>,
    /// The image of the run in flight, then of `shown`.
    shown_of: super::ImageOf,
}

impl Default for RoundTripsWindow {
    fn default() -> Self {
        Self {
            open: false,
            passes: DEFAULT_PASSES.map(|n| n.to_string()).join(", "),
            runs: MIN_SAMPLES as u32,
            pending: None,
            shown: None,
            shown_of: None,
        }
    }
}

impl RoundTripsWindow {
    /// Sets the counts (comma separated) and the fewest warm rounds per count, as if typed.
    pub fn set_passes(&mut self, passes: &str, runs: u32) {
        passes.clone_into(&mut self.passes);
        self.runs = runs;
    }

    /// The latest result, if one finished.
    #[must_use]
    pub fn result(&self) -> Option<&RoundTripResult> {
        self.shown.as_ref().and_then(|s| s.as_ref().ok()).map(AsRef::as_ref)
    }

    /// Why the latest run has no result (stopped, or failed), if so.
    #[must_use]
    pub fn unfinished(&self) -> Option<String> {
        self.shown.as_ref().and_then(|s| s.as_ref().err()).map(WorkError::describe)
    }

    /// Shows the window when open, and takes the worker's answer in when it arrives.
    pub fn show(&mut self, ctx: &egui::Context, room: super::Room, session: &mut Session) {
        if let Some(Answer::RoundTrips(result)) = self.pending.and_then(|id| session.take_answer(id)) {
            self.shown = Some(result.map(Arc::new));
            self.pending = None;
        }
        let title = "Round trips: operations per upload and download";
        let window = room.window(title, super::ROUND_TRIPS_ID, egui::Align2::CENTER_TOP).default_width(640.0);
        self.open = super::show(ctx, window, self.open, |ui| self.ui(ui, session, room.bottom_y()));
    }

    /// The content, reaching down to `bottom_y` at the most.
    fn ui(&mut self, ui: &mut Ui, session: &mut Session, bottom_y: f32) {
        ui.label(
            "For each count n: one upload, n full passes of the kernel over the data kept on the GPU, one \
             download, timed whole and divided by n; against n passes of the CPU kernel on every thread, the \
             two in turns until the GPU's speed-up is decided. On the open photo, at the formula, workgroup \
             and work per pixel of the settings panel.",
        );
        let running = session.current_job().is_some_and(|(k, _)| k == JobKind::RoundTrips);
        ui.horizontal(|ui| {
            let label = ui.label("Operations per round trip");
            ui.add(egui::TextEdit::singleline(&mut self.passes).desired_width(160.0)).labelled_by(label.id);
            ui.add(
                egui::DragValue::new(&mut self.runs)
                    .range(MIN_SAMPLES..=100)
                    .prefix("at least ")
                    .suffix(" rounds"),
            );
            let can = !running && session.input().is_some() && session.gpu_usable();
            if ui.add_enabled(can, egui::Button::new("Run round trips")).clicked() {
                self.start(session);
            }
        });
        let c = session.settings().convert;
        let variant = if c.work.divergent { " (divergent)" } else { "" };
        ui.label(
            RichText::new(format!(
                "{}, workgroup {}, {} rounds per pixel{variant} (synthetic work), {} CPU threads.",
                c.formula, c.workgroup, c.work.rounds, c.threads
            ))
            .weak(),
        );
        // What the job will take, said before it starts (at least the rounds asked, each side).
        if let (Some(input), Some(passes)) = (session.input(), self.counts())
            && !running
        {
            let estimate = session.pace().job(Task::RoundTrips, &self.parts(&passes, input, c));
            let text = format!("Takes {}.", estimate.sentence());
            crate::app::look::estimate_line(ui, text);
        }
        if session.input().is_none() {
            ui.label("Open a photo first.");
        } else if !session.gpu_usable() {
            ui.colored_label(
                look::warning(ui.visuals()),
                "The GPU cannot be used here, so there is nothing to compare.",
            );
        }
        ui.separator();
        match &self.shown {
            Some(Ok(r)) => {
                let r = Arc::clone(r);
                super::opened_before_ui(ui, session, &self.shown_of, "run them on");
                super::verdict_ui(ui, &r.verdict, r.software_adapter);
                super::debug_build_ui(ui, &r.build);
                ui.label(
                    RichText::new(format!(
                        "{}x{}, {} to {} warm rounds per count after a cold round trip; {}.",
                        r.width,
                        r.height,
                        r.min_rounds,
                        r.max_rounds,
                        if r.points.iter().all(|p| p.matches_cpu) {
                            "every GPU result equals the CPU's byte for byte"
                        } else {
                            "the GPU's result differed from the CPU's"
                        }
                    ))
                    .small(),
                );
                round_trips_chart_ui(ui, &r, 320.0, bottom_y);
            }
            Some(Err(why)) => {
                ui.label(why.describe());
            }
            None if running => {
                ui.label("Measuring…");
            }
            None if self.pending.is_some() => {
                ui.label(if session.is_busy() {
                    "Waiting for the work before it…"
                } else {
                    "Stopped before it started: nothing was measured."
                });
            }
            None => {
                ui.label("No round trips yet.");
            }
        }
    }

    /// The counts of operations per round trip as typed, if they are valid.
    fn counts(&self) -> Option<Vec<u32>> {
        let passes: Result<Vec<u32>, _> = self.passes.split(',').map(|s| s.trim().parse::<u32>()).collect();
        passes.ok().filter(|p| !p.is_empty() && p.iter().all(|n| (1..=MAX_PASSES).contains(n)))
    }

    /// What round trips of `passes` on `input` with `settings` run, for their estimate.
    fn parts(&self, passes: &[u32], input: &Loaded, settings: ConvertSettings) -> Vec<Part> {
        let megapixels = crate::system::units::megapixels(input.image.width(), input.image.height());
        let cpu = Lane::of(&ConvertSettings { backend: Backend::Cpu, ..settings });
        let budget = round_trip_budget(false, self.runs as usize);
        let rounds = budget.warmup_rounds + budget.min_rounds;
        round_trip_parts(passes, rounds, cpu, megapixels, settings.work.rounds)
    }

    fn start(&mut self, session: &mut Session) {
        let Some(passes) = self.counts() else {
            session.toasts.error(format!(
                "Operations per round trip must be counts from 1 to {MAX_PASSES} separated by commas, \
                 not {:?}.",
                self.passes
            ));
            return;
        };
        let Some(input) = session.input().cloned() else { return };
        let settings = session.settings().convert;
        self.shown = None;
        self.shown_of = super::image_of(session);
        let parts = self.parts(&passes, &input, settings);
        let job = Job::RoundTrips { input, settings, passes: (passes, self.runs) };
        self.pending = Some(session.send_estimated(job, Task::RoundTrips, parts));
    }
}
