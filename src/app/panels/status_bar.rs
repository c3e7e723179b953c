//! The status bar at the bottom of the window: what the worker is doing, with a progress bar,
//! the run count, an ETA and Stop (Esc); the frame meter on the right.

use egui::{RichText, Ui};

use crate::app::panels::frame_meter::FrameMeter;
use crate::app::session::{JobKind, Session};
use crate::app::work::jobs::Progress;

/// Draws the status bar; returns whether Stop was pressed.
pub fn status_ui(ui: &mut Ui, session: &Session, meter: &FrameMeter, waiting_for_dialog: bool) -> bool {
    let mut stop = false;
    ui.horizontal(|ui| {
        // Stop first, so that it never moves while the text beside it changes.
        let stoppable = session.stoppable();
        stop = ui
            .add_enabled(stoppable, egui::Button::new("Stop"))
            .on_disabled_hover_text(match session.current_job() {
                Some((kind, _)) => cannot_stop(kind),
                None => "Nothing to stop.".to_owned(),
            })
            .on_hover_text(
                "Esc (with nothing to stop, it closes the window on top). Stops Continuous, \
                 Run ×N, every-size runs, the sweep, parity and the claims: a GPU run in progress \
                 stops at its next submission, a CPU run finishes first, a claim at its end.",
            )
            .clicked();
        match session.current_job() {
            // Stopped: said at once, while the step in progress ends (a sweep's point, a claim).
            Some((_, progress)) if session.stopping() => {
                crate::app::look::spinner(ui);
                ui.label("Stopping… (the step in progress ends first)");
                if let Some(p) = &progress {
                    ui.label(RichText::new(secs(p.elapsed_secs())).weak());
                }
            }
            Some((kind, progress)) => {
                crate::app::look::spinner(ui);
                let what =
                    progress.as_ref().map_or_else(|| default_text(kind).to_owned(), |p| p.what.clone());
                ui.label(what);
                if let Some((fraction, text, width)) = progress.as_ref().and_then(bar) {
                    ui.add(egui::ProgressBar::new(fraction).desired_width(width).text(text));
                }
                if let Some(p) = &progress {
                    // With what it rests on, as every estimate says it.
                    let eta = p.left_text().map_or_else(String::new, |t| format!(" · {t}"));
                    ui.label(RichText::new(format!("{}{eta}", secs(p.elapsed_secs()))).weak());
                }
                let queued = session.queued_jobs();
                // An image asked for waits for the job in progress: said, not left silent.
                let opening =
                    session.opening().filter(|_| kind != JobKind::Load).map_or_else(String::new, |p| {
                        format!(": {} opens after this", crate::app::session::file_name(p))
                    });
                if queued > 0 {
                    ui.label(RichText::new(format!("+{queued} queued{opening}")).weak());
                }
            }
            None if waiting_for_dialog => {
                ui.label("Waiting for the file dialog…");
            }
            None => {
                let text: egui::WidgetText =
                    session.stopped().map_or_else(|| RichText::new("Ready").weak().into(), Into::into);
                ui.label(text);
            }
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| meter.ui(ui));
    });
    stop
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

/// A conversion estimated (or seen) to take longer than this, seconds, shows the share of its
/// pixels done; a shorter one shows no bar (it would only flash).
pub const PIXEL_BAR_AFTER_S: f64 = 2.0;

/// The bar beside what is done: its fraction, its text and its width. The count where there are
/// several runs ("7 of 12": short, so never cut); the share of the pixels of one long conversion
/// ("42% of the pixels"); else "100%" (an export). A short single run shows no bar.
#[must_use]
pub fn bar(p: &Progress) -> Option<(f32, String, f32)> {
    let fraction = p.fraction()?;
    if p.total > 1 {
        return Some((fraction, format!("{} of {}", p.done, p.total), 140.0));
    }
    if p.of_pixels {
        let long = p.estimate_s.unwrap_or(0.0).max(f64::from(p.elapsed_secs())) > PIXEL_BAR_AFTER_S;
        return long.then(|| (fraction, format!("{:.0}% of the pixels", fraction * 100.0), 140.0));
    }
    (p.total != 1).then(|| (fraction, format!("{:.0}%", fraction * 100.0), 90.0))
}

/// Why Stop and Esc leave a job of `kind` running (one that is not stoppable), in a sentence.
pub(crate) fn cannot_stop(kind: JobKind) -> String {
    format!("{} cannot be stopped midway: it ends by itself.", default_text(kind))
}

/// What a job of `kind` is doing, in words, before it reports its own progress.
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
        JobKind::TransferPaths => "Timing every transfer path",
    }
}

/// `4.2 s`, `2 min 05 s`: the one way graylab says a time a job ran or has left.
fn secs(s: f32) -> String {
    crate::system::units::elapsed_text(f64::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::work::jobs::Ticket;
    use crate::engine::{ConvertSettings, Engine, RunOptions, synthetic_rgb};

    #[test]
    fn a_long_conversion_shows_the_share_of_its_pixels_and_an_eta_from_it() {
        // A real conversion counts its pixels into the ticket the worker gives it.
        let ticket = Ticket::new(1);
        ticket.set_estimate(10.0);
        ticket.set_progress("Converting", 0, 1, (0.0, 1.0));
        let image = synthetic_rgb(300, 200, 7);
        let options = RunOptions { progress: Some(ticket.pixels()), ..RunOptions::default() };
        let settings = ConvertSettings { threads: 2, ..ConvertSettings::default() };
        Engine::new().convert(&image, &settings, options).expect("converts");
        assert_eq!((ticket.pixels().done(), ticket.pixels().total()), (60_000, 60_000));
        let done = ticket.progress().expect("started");
        assert!(done.of_pixels);
        assert_eq!(bar(&done).map(|(f, text, _)| (f, text)), Some((1.0, "100% of the pixels".to_owned())));

        // Part way: 42% of the pixels after 4 s of an estimated 10 s.
        ticket.pixels().start(1000);
        ticket.pixels().add(420);
        let mut p = ticket.progress().expect("started");
        p.started =
            std::time::Instant::now().checked_sub(std::time::Duration::from_secs(4)).expect("4 s ago");
        let (fraction, text, _) = bar(&p).expect("a bar");
        assert_eq!((fraction, text.as_str()), (0.42, "42% of the pixels"));
        // What is left: past a share done of SEEN_PACE_ALONE_AT, the pace seen alone (4 s for
        // 42%: 5.52 s left), not the estimate's 5.8 s.
        p.one_time_at = crate::system::one_time::OneTimeMark::now();
        let want = 4.0 * 0.58 / 0.42;
        let eta = f64::from(p.eta().expect("an ETA").0);
        assert!((eta - want).abs() < 0.05, "{eta} s left, want {want}");
        assert_eq!(p.eta().map(|(_, basis)| basis), Some("from the pace so far"));
        assert_eq!(p.left_text(), Some(format!("about {} left (from the pace so far)", secs(eta as f32))));
        // Overrun (the pixels stuck at 42% for 20 s): "longer than estimated", not the estimate
        // said again as if nothing were done.
        p.work_moved_at =
            std::time::Instant::now().checked_sub(std::time::Duration::from_secs(20)).expect("20 s ago");
        p.started =
            std::time::Instant::now().checked_sub(std::time::Duration::from_secs(24)).expect("24 s ago");
        assert_eq!((p.eta(), p.left_text().as_deref()), (None, Some("longer than estimated")));

        // A short one shows no bar; neither does a single run that counts no pixels.
        p.estimate_s = Some(0.5);
        p.started = std::time::Instant::now();
        assert_eq!(bar(&p), None);
        p.of_pixels = false;
        p.estimate_s = Some(10.0);
        assert_eq!(bar(&p), None);
    }

    #[test]
    fn a_job_of_steps_counts_each_step_by_its_estimated_time() {
        // The claims: nine quick ones of 1 s and a last one of 6 s, on pace after 9 s.
        let ticket = Ticket::new(2);
        ticket.set_estimate(15.0);
        ticket.set_step_weights([vec![1.0; 9], vec![6.0]].concat());
        ticket.set_progress("Claims, 10 of 10: a sequential operation…", 9, 0, (9.0, 10.0));
        let mut p = ticket.progress().expect("started");
        p.started =
            std::time::Instant::now().checked_sub(std::time::Duration::from_secs(9)).expect("9 s ago");
        p.one_time_at = crate::system::one_time::OneTimeMark::now();
        assert_eq!(p.fraction(), Some(0.6), "9 of 15 s done, not 9 of 10 claims");
        let eta = f64::from(p.eta().expect("an ETA").0);
        assert!((eta - 6.0).abs() < 0.1, "{eta} s left, want the last claim's 6 s");
        // Weights of another count of steps are not this job's: the steps count alike.
        ticket.set_step_weights(vec![1.0, 2.0]);
        assert_eq!(ticket.progress().expect("started").fraction(), Some(0.9));
    }
}
