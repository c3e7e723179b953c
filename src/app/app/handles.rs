//! What tests and scripts may ask of the running app or do to it, beside what a user does with
//! the mouse: the state on screen (images, runs, messages, tiles) and shortcuts to start work.

use std::path::PathBuf;

use super::GraylabApp;
use crate::app::state::{ExportRecord, RunRecord, Settings};

impl GraylabApp {
    /// The warnings on screen (they stay until dismissed).
    #[must_use]
    pub fn warnings(&self) -> Vec<&str> {
        self.session.toasts.warnings()
    }

    /// What the job running now reports doing, once it has started.
    #[must_use]
    pub fn job_progress(&self) -> Option<String> {
        self.session.current_job().and_then(|(_, p)| p).map(|p| p.what)
    }

    /// Makes the next job wait at its first point `at` (its first pixels, or its first step)
    /// until [`Self::release_job`], so that a test's Stop or new setting lands inside it.
    pub fn hold_next_job(&mut self, at: crate::system::progress::HoldAt) {
        self.session.hold_next_job(at);
    }

    /// Whether the running job waits at the hold a test set.
    #[must_use]
    pub fn job_held(&self) -> bool {
        self.session.job_held()
    }

    /// Lets a held job go on.
    pub fn release_job(&self) {
        self.session.release_job();
    }

    /// GPU runs stopped between their submissions by Stop, Esc or a newer setting, so far.
    #[must_use]
    pub fn runs_cut_short(&self) -> usize {
        self.session.runs_cut_short()
    }

    /// The image on screen, if any.
    #[must_use]
    pub fn input_image(&self) -> Option<&image::DynamicImage> {
        self.session.input().map(|i| i.image.as_ref())
    }

    /// The output's host pixels, if the current output has them.
    #[must_use]
    pub fn output_pixels(&self) -> Option<&image::DynamicImage> {
        self.session.output().and_then(|o| o.pixels.as_deref())
    }

    /// Every measured conversion so far (exports are listed apart).
    #[must_use]
    pub fn runs(&self) -> &[RunRecord] {
        self.session.runs()
    }

    /// Every export so far.
    #[must_use]
    pub fn exports(&self) -> &[ExportRecord] {
        self.session.exports()
    }

    /// The file of the image on screen, if any.
    #[must_use]
    pub fn input_path(&self) -> Option<&std::path::Path> {
        self.session.input().map(|i| i.path.as_path())
    }

    /// Which windows are open: export, size sweep, parity.
    #[must_use]
    pub fn windows_open(&self) -> [bool; 3] {
        [self.export.open, self.sweep.open, self.parity.open]
    }

    /// The settings in force.
    pub fn settings_mut(&mut self) -> &mut Settings {
        self.session.settings_mut()
    }

    /// Answers the open dialog as a system without a dialog service does: at once, nothing.
    pub fn open_dialog_found_no_service(&mut self) {
        use crate::app::windows::dialogs::DialogAnswer;
        self.dialog_answered(false, DialogAnswer::Nothing { probably_unavailable: true });
    }

    /// The newest message (error or note), if any.
    #[must_use]
    pub fn message(&self) -> Option<(&str, bool)> {
        self.session.toasts.latest()
    }

    /// Whether the worker has work in flight (loads, conversions, exports, sweeps).
    #[must_use]
    pub fn is_busy(&self) -> bool {
        self.session.is_busy()
    }

    /// Whether Continuous is on.
    #[must_use]
    pub fn continuous(&self) -> bool {
        self.session.continuous
    }

    /// Whether Fit is in effect in the viewer.
    #[must_use]
    pub fn fitting(&self) -> bool {
        self.viewer.fitting()
    }

    /// Flip mode: whether the output is shown (else the input).
    #[must_use]
    pub fn showing_output(&self) -> bool {
        self.viewer.showing_output()
    }

    /// The run numbers the runs chart shows now.
    #[must_use]
    pub fn charted_runs(&self) -> Vec<usize> {
        self.charts.charted_runs(&self.session)
    }

    /// Full-resolution tiles on the GPU now for the input and the output (none at Fit).
    #[must_use]
    pub fn detail_tiles(&self) -> (usize, usize) {
        let input = self.session.input().map_or(0, |i| i.display.detail_tiles());
        let output = self.session.output().map_or(0, |o| o.display.detail_tiles());
        (input, output)
    }

    /// Replaces this machine's pace (so that an estimate is known in advance).
    pub fn set_pace(&mut self, pace: crate::engine::estimate::Pace) {
        self.session.set_pace(pace);
    }

    /// The conversion held on open for its estimate, if any.
    #[must_use]
    pub fn held_run(&self) -> Option<crate::engine::estimate::Estimate> {
        self.session.held_run()
    }

    /// Queues `runs` conversions of the current image with the current settings.
    pub fn run_conversion(&mut self, runs: u32) {
        self.session.run_conversion(runs);
    }

    /// Queues an export of the current output to `path` (replacing a file there only when
    /// `overwrite`).
    pub fn export_to(&mut self, path: PathBuf, overwrite: bool) {
        self.session.export_to(path, overwrite);
    }

    /// Opens the size-sweep window.
    pub fn open_sweep_window(&mut self) {
        self.sweep.open = true;
    }

    /// Opens the size-sweep window with these sizes (megapixels, comma separated) and runs.
    pub fn set_sweep_sizes(&mut self, sizes: &str, runs: u32) {
        self.sweep.open = true;
        self.sweep.set_sizes(sizes, runs);
    }

    /// Sets the sweep window's JSON file, as if typed.
    pub fn set_sweep_json_path(&mut self, path: &std::path::Path) {
        self.sweep.set_path(path);
    }

    /// Opens the round-trips window with these counts (comma separated) and warm runs per count.
    pub fn set_round_trips(&mut self, passes: &str, runs: u32) {
        self.round_trips.open = true;
        self.round_trips.set_passes(passes, runs);
    }

    /// The latest round trips that finished, and why the latest run did not finish, if so.
    #[must_use]
    pub fn round_trips_result(&self) -> (Option<&crate::engine::round_trip::RoundTripResult>, Option<&str>) {
        (self.round_trips.result(), self.round_trips.unfinished())
    }

    /// The options of the latest sweep started from the sweep window (sizes, work levels), if any.
    #[must_use]
    pub fn sweep_options_sent(&self) -> Option<&crate::engine::sweep::SweepOptions> {
        self.sweep.sent()
    }

    /// Opens the parity window.
    pub fn open_parity_window(&mut self) {
        self.parity.open = true;
    }

    /// Opens the export window (as Ctrl+S does).
    pub fn open_export_window(&mut self) {
        self.export.open_for(&mut self.session);
    }

    /// Opens the tutorial-claims window.
    pub fn open_claims_window(&mut self) {
        self.claims.open = true;
    }

    /// Sets the claims window's JSON file, as if typed.
    pub fn set_claims_json_path(&mut self, path: &std::path::Path) {
        self.claims.set_path(path);
    }

    /// The latest claims report that finished, and why the latest run did not finish, if so.
    #[must_use]
    pub fn claims_result(&self) -> (Option<&crate::engine::claims::ClaimsReport>, Option<&str>) {
        let shown = self.session.claims();
        (shown.report.as_deref(), shown.unfinished.as_deref())
    }

    /// The label of the claims report loaded to compare, if any.
    #[must_use]
    pub fn compared_claims(&self) -> Option<&str> {
        self.claims.compared()
    }

    /// The latest sweep, if one finished.
    #[must_use]
    pub fn sweep_result(&self) -> Option<&crate::engine::sweep::SweepResult> {
        self.session.sweep().map(AsRef::as_ref)
    }

    /// The latest parity report, if one finished.
    #[must_use]
    pub fn parity_result(&self) -> Option<&crate::engine::ParityReport> {
        self.session.parity().map(|(r, _)| r)
    }

    /// This CPU's compute ceiling, once read from the cache or measured.
    #[must_use]
    pub fn cpu_compute(&self) -> Option<&crate::engine::CpuCompute> {
        self.session.cpu_compute()
    }

    /// This GPU's ceilings, once read from the cache or measured.
    #[must_use]
    pub fn ceilings(&self) -> Option<&crate::engine::ceilings::KnownCeilings> {
        self.session.ceilings()
    }
}
