//! The status bar at the bottom of the window: what the worker is doing, with a progress bar,
//! the run count, an ETA and Stop (Esc); the frame meter on the right.

use egui::{RichText, Ui};

use crate::app::panels::frame_meter::FrameMeter;
use crate::app::session::{JobKind, Session};

/// The status bar (no state of its own but the Stop it reports).
#[derive(Default)]
pub struct StatusBar {
    /// Jobs queued behind the one running, shown as "+N queued".
    queued: usize,
}

impl StatusBar {
    /// Draws the bar; returns whether Stop was pressed.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        session: &Session,
        meter: &FrameMeter,
        waiting_for_dialog: bool,
    ) -> bool {
        self.queued = session.queued_jobs();
        let mut stop = false;
        ui.horizontal(|ui| {
            // Stop first, so that it never moves while the text beside it changes.
            let stoppable = session.stoppable();
            stop = ui
                .add_enabled(stoppable, egui::Button::new("Stop"))
                .on_hover_text(
                    "Esc (it first closes the window on top, when one is open). Stops Continuous, \
                     Run ×N, every-size runs, the sweep, parity and the claims: a GPU run in progress \
                     stops at its next submission, a CPU run finishes first, a claim at its end.",
                )
                .clicked();
            match session.current_job() {
                Some((kind, progress)) => {
                    crate::app::look::spinner(ui);
                    let what =
                        progress.as_ref().map_or_else(|| default_text(kind).to_owned(), |p| p.what.clone());
                    if let Some(p) = &progress
                        && let Some(fraction) = p.fraction().filter(|_| p.total != 1)
                    {
                        // What is done beside the bar, which holds the count where there are
                        // several ("7 of 12": short, so never cut) or its "100%" (no count: an
                        // export); a single run shows no bar.
                        if p.total > 1 {
                            ui.label(what);
                            let count = format!("{} of {}", p.done, p.total);
                            ui.add(egui::ProgressBar::new(fraction).desired_width(140.0).text(count));
                        } else {
                            ui.label(what);
                            let percent = format!("{:.0}%", fraction * 100.0);
                            ui.add(egui::ProgressBar::new(fraction).desired_width(90.0).text(percent));
                        }
                    } else {
                        ui.label(what);
                    }
                    if let Some(p) = &progress {
                        let eta =
                            p.eta_secs().map_or_else(String::new, |s| format!(" · about {} left", secs(s)));
                        ui.label(RichText::new(format!("{}{eta}", secs(p.elapsed_secs()))).weak());
                    }
                    if self.queued > 0 {
                        ui.label(RichText::new(format!("+{} queued", self.queued)).weak());
                    }
                }
                None if waiting_for_dialog => {
                    ui.label("Waiting for the file dialog…");
                }
                None => match session.stopped() {
                    Some(stopped) => {
                        ui.label(stopped);
                    }
                    None => {
                        ui.label(RichText::new("Ready").weak());
                    }
                },
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| meter.ui(ui));
        });
        stop
    }
}

/// The conversion held on open (a saved setting estimated to take long): its estimate, with
/// Run and Not now, in a small window in the middle of the screen.
pub fn held_run_ui(ctx: &egui::Context, session: &mut Session) {
    let Some(estimate) = session.held_run() else { return };
    let settings = session.settings().convert;
    let backend = if settings.backend == crate::engine::Backend::Gpu { "the GPU" } else { "the CPU" };
    let mut answer = None;
    egui::Window::new("A long conversion")
        .id(egui::Id::unique("graylab held run"))
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            ui.set_max_width(360.0);
            ui.label(format!(
                "Converting this image with the saved settings ({} rounds/px on {backend}) is estimated \
                 at {}. It was not started.",
                settings.work.rounds,
                estimate.sentence()
            ));
            ui.horizontal(|ui| {
                if ui.button("Run anyway").clicked() {
                    answer = Some(true);
                }
                if ui.button("Not now").clicked() {
                    answer = Some(false);
                }
            });
        });
    if let Some(run) = answer {
        session.release_held(run);
    }
}

fn default_text(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Load => "Opening",
        JobKind::Convert => "Converting",
        JobKind::Sweep => "Sweep",
        JobKind::Parity => "Parity",
        JobKind::Export => "Exporting",
        JobKind::Ceilings => "Measuring the GPU's ceilings",
        JobKind::Claims => "Testing the tutorial's claims",
        JobKind::RoundTrips => "Round trips",
        JobKind::Compare => "CPU vs GPU",
        JobKind::Workgroups => "Every workgroup size",
    }
}

/// `4.2 s` or `2 min 05 s`.
fn secs(s: f32) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        format!("{} min {:02} s", (s / 60.0) as u32, (s % 60.0) as u32)
    }
}
