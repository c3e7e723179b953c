//! The tutorial-claims window: every claim of the GPU tutorial tested on this machine, one card
//! each (the quoted claim, the verdict, why, the experiment, a chart of its times), saved as JSON
//! next to the photo and loaded again to compare two machines side by side.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::{Color32, RichText, Ui};

use super::json_file::RowAsked;
use crate::app::charts::claim_chart_ui;
use crate::app::look;
use crate::app::session::{JobKind, Session};
use crate::app::work::jobs::{Answer, ClaimsEnd, Job};
use crate::engine::claims::{ClaimResult, ClaimsReport, Verdict};
use crate::engine::claims::{claims_parts, claims_steps};
use crate::engine::estimate::{Estimate, Task};
use crate::io::ResultKind;

/// The claims window's state.
#[derive(Default)]
pub struct ClaimsWindow {
    /// Whether the window is open.
    pub open: bool,
    /// The JSON file to save to or load from; follows the open photo until typed.
    path: String,
    /// Where the path came from; `None` until the window is first drawn.
    path_source: Option<PathSource>,
    /// The JSON file exists: ask before replacing it.
    confirm_replace: bool,
    /// A saved report loaded to compare, with its label ("file · adapter").
    compare: Option<(String, ClaimsReport)>,
    /// Whether the run asked last is the quick one.
    quick: bool,
    /// The latest report, why the latest run has none, and the run in flight.
    shown: ClaimsShown,
}

/// The tutorial's claims as the window knows them: the latest report that finished, why the
/// latest run has none, and what it was estimated at, taken from the run's answer when it ends.
#[derive(Default)]
pub struct ClaimsShown {
    /// The latest report that finished.
    pub report: Option<Arc<ClaimsReport>>,
    /// Why the latest run has no report ("stopped after 2 of 7 claims", or its error); `None`
    /// once one finished.
    pub unfinished: Option<String>,
    /// What the run of `report` was estimated to take before it started (its JSON says so).
    pub estimate: Option<Estimate>,
    /// The run in flight: its job's id and what it was estimated to take.
    sent: Option<(u64, Estimate)>,
}

impl ClaimsShown {
    /// A run was sent as job `id`, estimated at `estimate`.
    fn sent(&mut self, id: u64, estimate: Estimate) {
        self.sent = Some((id, estimate));
    }

    /// Takes the answer of the run in flight once it has arrived (every frame, the window open
    /// or not): a report keeps its estimate; an error is said in a toast too.
    fn take(&mut self, session: &mut Session) {
        let Some((id, estimate)) = self.sent else { return };
        let Some(Answer::Claims(end)) = session.take_answer(id) else { return };
        self.sent = None;
        match end {
            ClaimsEnd::Finished(report) => {
                // A stopped run keeps the claims it finished; the rest say "not run".
                self.unfinished = report.stopped.then(|| {
                    let done = report.claims.iter().filter(|c| c.verdict != Verdict::NotRun).count();
                    format!(
                        "Stopped after {done} of {} claims: those are kept, the rest were not run.",
                        report.claims.len()
                    )
                });
                self.report = Some(Arc::new(*report));
                self.estimate = Some(estimate);
            }
            ClaimsEnd::Stopped { done, total } => {
                let when = if total == 0 {
                    "before the first claim".to_owned()
                } else {
                    format!("after {done} of {total} claims")
                };
                self.unfinished = Some(format!("Stopped {when}: nothing of this run is kept."));
            }
            ClaimsEnd::Failed(e) => {
                let e = e.describe();
                session.toasts.error(format!("The claims could not be tested: {e}"));
                self.unfinished = Some(format!("The claims could not be tested: {e}"));
            }
        }
    }
}

/// Where the JSON path came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PathSource {
    /// Made for this image (`None`: no photo open); it follows the photo.
    Default(Option<u64>),
    /// Typed or set: it stays.
    Typed,
}

impl ClaimsWindow {
    /// Sets the JSON file, as if typed.
    pub fn set_path(&mut self, path: &Path) {
        self.path = path.display().to_string();
        self.path_source = Some(PathSource::Typed);
        self.confirm_replace = false;
    }

    /// The latest report that finished, and why the latest run has none.
    #[must_use]
    pub fn shown(&self) -> &ClaimsShown {
        &self.shown
    }

    /// The label of the report loaded to compare, if any.
    #[must_use]
    pub fn compared(&self) -> Option<&str> {
        self.compare.as_ref().map(|(label, _)| label.as_str())
    }

    /// Shows the window when open.
    pub fn show(&mut self, ctx: &egui::Context, room: super::Room, session: &mut Session) {
        // Every frame, open or not, so that a run is timed to its end and its answer taken.
        self.shown.take(session);
        let screen = ctx.content_rect().size();
        let window = room
            .window("Tutorial claims, tested on this machine", super::CLAIMS_ID, egui::Align2::RIGHT_BOTTOM)
            .default_width((screen.x * 0.62).clamp(480.0, 980.0))
            .default_height(screen.y * 0.85);
        self.open = super::show(ctx, window, self.open, |ui| self.ui(ui, session));
    }

    fn ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let image = session.input().map(|i| i.id);
        if self.path_source != Some(PathSource::Typed) && self.path_source != Some(PathSource::Default(image))
        {
            self.path = default_json_path(session).display().to_string();
            self.path_source = Some(PathSource::Default(image));
        }
        ui.label(
            "Each claim of the tutorial \"GPU computing: when and how to speed up code\" as a short experiment \
             on this machine: its figures (each with the clock that measured it; hover a bar for its 95% \
             interval), a verdict and why. The two sides of each comparison run in turns until the \
             difference is clear of the noise; if it never is, the verdict is \"inconclusive here\".",
        );
        self.run_ui(ui, session);
        self.file_ui(ui, session);
        let report = self.shown.report.clone();
        if let Some(note) = &self.shown.unfinished {
            ui.colored_label(look::warning(ui.visuals()), note);
        }
        let software = report.as_ref().is_some_and(|r| r.software_adapter)
            || self.compare.as_ref().is_some_and(|(_, r)| r.software_adapter);
        if software {
            ui.colored_label(
                look::warning(ui.visuals()),
                "On a software adapter (llvmpipe, lavapipe, WARP) the \"GPU\" is this CPU's own cores: its \
                 verdicts say nothing about a real GPU.",
            );
        }
        ui.separator();
        if report.is_none() && self.compare.is_none() {
            if self.shown.sent.is_some() {
                ui.label("Testing the claims (progress above): their cards appear here when the run ends.");
            } else {
                ui.label(
                    "No claims tested yet: press Run (quick) for a first look, Run all for the full set.",
                );
            }
            return;
        }
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            self.cards_ui(ui, report.as_deref());
        });
    }

    /// Run (quick), Run all, Stop; the progress and the ETA.
    fn run_ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let running = session.current_job().filter(|(k, _)| *k == JobKind::Claims);
        let queued = session.is_busy() && running.is_none();
        ui.horizontal(|ui| {
            let idle = running.is_none();
            if ui
                .add_enabled(idle, egui::Button::new("Run (quick)"))
                .on_hover_text(
                    "The same experiments with a smaller sampling budget: faster, more verdicts inconclusive",
                )
                .clicked()
            {
                self.start(session, true);
            }
            if ui
                .add_enabled(idle, egui::Button::new("Run all"))
                .on_hover_text("Every experiment with the full sampling budget: the verdicts to trust")
                .clicked()
            {
                self.start(session, false);
            }
            if ui
                .add_enabled(!idle, egui::Button::new("Stop claims"))
                .on_hover_text("Esc. Stops within the claim being tested; the claims finished are kept")
                .clicked()
            {
                session.stop();
            }
        });
        match running.map(|(_, p)| p) {
            Some(progress) => {
                let (what, fraction, left) = progress.map_or_else(
                    || ("Claims: waiting for the worker".to_owned(), 0.0, None),
                    |p| (p.what.clone(), p.fraction().unwrap_or(0.0), p.left_text()),
                );
                ui.add(egui::ProgressBar::new(fraction).desired_width(360.0).text(what)).on_hover_text(
                    "The bar fills with the estimated time of the claims done, not their count: some claims \
                     take far longer than others",
                );
                // The estimate of the run in flight until the worker says what is left.
                let eta = left.unwrap_or_else(|| {
                    let e = claims_estimate(session, self.quick).sentence();
                    format!("{e} (the estimate in all)")
                });
                ui.label(RichText::new(eta).weak());
            }
            None if queued => {
                ui.label(RichText::new("Waiting for the work in progress to finish…").weak());
            }
            None => {
                // How long each run takes, by the one estimator, each with what its figure rests
                // on (the last such run here, else this machine's ceilings or a rough guess).
                let (quick, all) =
                    (claims_estimate(session, true).brief(), claims_estimate(session, false).brief());
                let text = format!("Run (quick) takes {quick}; Run all takes {all}.");
                crate::app::look::estimate_line(ui, text);
            }
        }
    }

    fn start(&mut self, session: &mut Session, quick: bool) {
        if !session.gpu_usable() {
            session.toasts.error(format!(
                "The claims need the GPU backend: {}",
                session.gpu_error().unwrap_or("the renderer has no GPU")
            ));
            return;
        }
        self.quick = quick;
        let (id, estimate) =
            session.send_in_steps(Job::Claims { quick }, claims_task(quick), claims_steps(quick));
        self.shown.sent(id, estimate);
    }

    /// The JSON file: save this report, load one to compare.
    fn file_ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let (report, estimate) = (self.shown.report.clone(), self.shown.estimate);
        let clear = self.compare.is_some().then_some("Clear comparison");
        let field = (&mut self.path, &mut self.confirm_replace);
        let (typed, asked) = super::json_file::file_row(ui, field, report.is_some(), 380.0, clear);
        if typed {
            self.path_source = Some(PathSource::Typed);
        }
        let path = PathBuf::from(self.path.trim());
        match asked {
            Some(RowAsked::Save(overwrite)) => {
                let Some(report) = &report else { return };
                // As the CLI's `claims --json`: what the run was estimated at (it holds what it took).
                let timing = estimate.map(|e| (e, None));
                let file = (path.as_path(), overwrite);
                super::json_file::save_timed_result(session, file, ResultKind::Claims, &**report, timing);
            }
            Some(RowAsked::Load) => self.load(session, &path),
            Some(RowAsked::Clear) => self.compare = None,
            None => {}
        }
    }

    fn load(&mut self, session: &mut Session, path: &Path) {
        if let Some((file, r)) =
            super::json_file::load_result::<ClaimsReport>(session, path, ResultKind::Claims)
        {
            self.compare = Some((format!("{file} · {}", r.adapter), r));
        }
    }

    /// One card per claim; with a report loaded, two columns: this machine's and the loaded one's.
    fn cards_ui(&self, ui: &mut Ui, report: Option<&ClaimsReport>) {
        let mut ids: Vec<u8> = report.map(|r| r.claims.iter().map(|c| c.id).collect()).unwrap_or_default();
        if let Some((_, loaded)) = &self.compare {
            for c in &loaded.claims {
                if !ids.contains(&c.id) {
                    ids.push(c.id);
                }
            }
            ids.sort_unstable();
        }
        let Some((label, loaded)) = &self.compare else {
            if let Some(r) = report {
                ui.label(RichText::new(machine(r)).strong());
            }
            for id in ids {
                if let Some(c) = find(report, id) {
                    card_ui(ui, c, "here");
                }
            }
            return;
        };
        ui.columns(2, |cols| {
            let here = report.map_or_else(
                || "This machine: not tested yet".to_owned(),
                |r| format!("This machine: {}", machine(r)),
            );
            cols[0].label(RichText::new(here).strong());
            // The file's name: the machine, its adapter first, follows.
            let file = label.split(" · ").next().unwrap_or(label);
            cols[1].label(RichText::new(format!("Loaded: {file}, {}", machine(loaded))).strong());
        });
        for id in ids {
            ui.columns(2, |cols| {
                match find(report, id) {
                    Some(c) => card_ui(&mut cols[0], c, "here"),
                    None => missing_ui(&mut cols[0], id),
                }
                match find(Some(loaded), id) {
                    Some(c) => card_ui(&mut cols[1], c, "loaded"),
                    None => missing_ui(&mut cols[1], id),
                }
            });
        }
    }
}

/// Claim `id` of `r`, if it has it.
fn find(r: Option<&ClaimsReport>, id: u8) -> Option<&ClaimResult> {
    r.and_then(|r| r.claims.iter().find(|c| c.id == id))
}

/// "llvmpipe (LLVM 15.0.6, 256 bits), software adapter, 2 CPU threads, quick set".
fn machine(r: &ClaimsReport) -> String {
    let kind = if r.software_adapter { "software adapter" } else { "GPU" };
    let set = if r.quick { "quick set" } else { "full set" };
    format!("{} ({kind}), {} CPU threads, {set}, {} build", r.adapter, r.cpu_threads, r.build)
}

/// The verdict's colour: holds green, does not hold orange, holds from a threshold teal,
/// inconclusive (within the noise) gray; darker shades on the light theme (`dark_mode` false),
/// each at least 3:1 against the window as a heading.
fn verdict_colour(v: &Verdict, dark_mode: bool) -> Color32 {
    let (dark, light) = match v {
        Verdict::Holds => ((100, 200, 110), (30, 125, 50)),
        Verdict::DoesNotHold => ((240, 120, 60), (190, 75, 20)),
        Verdict::HoldsFrom(_) => ((70, 190, 210), (0, 115, 140)),
        Verdict::Inconclusive => ((170, 170, 170), (95, 95, 95)),
        Verdict::NotRun => ((120, 120, 120), (130, 130, 130)),
    };
    let (r, g, b) = if dark_mode { dark } else { light };
    Color32::from_rgb(r, g, b)
}

fn card_ui(ui: &mut Ui, c: &ClaimResult, salt: &str) {
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        // A claim not run has no quote and no experiment: only the line that names it.
        let title = if c.experiment.is_empty() {
            format!("{}. {}", c.id, c.claim)
        } else {
            format!("{}. \u{201c}{}\u{201d}", c.id, c.claim)
        };
        ui.label(RichText::new(title).strong());
        ui.label(
            RichText::new(c.verdict.to_string())
                .size(18.0)
                .strong()
                .color(verdict_colour(&c.verdict, ui.visuals().dark_mode)),
        );
        ui.label(format!("Why: {}.", c.why));
        if !c.experiment.is_empty() {
            ui.label(RichText::new(format!("Experiment: {}.", c.experiment)).size(look::SMALL_TEXT).weak());
        }
        claim_chart_ui(ui, c, salt);
        let others: Vec<String> = c
            .measurements
            .iter()
            .filter(|m| m.unit != "ms")
            .map(|m| format!("{} {} {}", m.name, trim(m.value), m.unit))
            .collect();
        if !others.is_empty() {
            ui.label(RichText::new(others.join(" · ")).size(look::SMALL_TEXT));
        }
    });
    ui.add_space(6.0);
}

fn missing_ui(ui: &mut Ui, id: u8) {
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.label(RichText::new(format!("Claim {id}: not in this report.")).weak());
    });
    ui.add_space(6.0);
}

/// `32`, `0.25`, `1.5`: no trailing zeros.
fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// `<photo stem>.claims.json` in the open photo's folder, else `graylab.claims.json`; the folder
/// is never graylab's own tree nor the working folder (see `default_save_folder`).
fn default_json_path(session: &Session) -> PathBuf {
    let photo = session.input().map(|i| i.path.clone());
    let folder = super::json_file::default_save_folder(&[photo.as_deref().and_then(Path::parent)]);
    // As an `OsString`, so that a name that is not UTF-8 is kept as it is.
    let mut name =
        photo.as_deref().and_then(Path::file_stem).unwrap_or_else(|| "graylab".as_ref()).to_os_string();
    name.push(".claims.json");
    folder.join(name)
}

/// The kind of claims job, for the estimator.
fn claims_task(quick: bool) -> Task {
    if quick { Task::ClaimsQuick } else { Task::ClaimsAll }
}

/// What a run of the claims should take on this machine.
fn claims_estimate(session: &Session, quick: bool) -> crate::engine::estimate::Estimate {
    session.pace().job(claims_task(quick), &claims_parts(quick))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_as_headings_on_both_themes() {
        let verdicts = [
            Verdict::Holds,
            Verdict::DoesNotHold,
            Verdict::HoldsFrom("16".into()),
            Verdict::Inconclusive,
            Verdict::NotRun,
        ];
        for visuals in [egui::Visuals::dark(), egui::Visuals::light()] {
            for v in &verdicts {
                let colour = verdict_colour(v, visuals.dark_mode);
                let ratio = look::contrast(colour, visuals.window_fill);
                assert!(ratio >= 3.0, "{v} in {colour:?}: {ratio:.2}:1 on the window");
            }
        }
        assert_eq!(
            verdict_colour(&Verdict::Holds, true),
            Color32::from_rgb(100, 200, 110),
            "dark: as before"
        );
    }
}
