//! The run history as the panels read it: conversions (the runs) and exports, kept apart, so
//! that an export never takes the place of the last run.

use std::collections::HashSet;

use super::Session;
use crate::app::state::{ComparedRuns, ExportRecord, RunRecord};

/// Every run and export, numbered.
#[derive(Default)]
pub(super) struct RunHistory {
    /// Every measured conversion, oldest first.
    pub runs: Vec<RunRecord>,
    /// Every export, apart from the runs.
    pub exports: Vec<ExportRecord>,
    /// Runs numbered so far (numbers go on after Clear).
    pub runs_counted: usize,
    /// Exports numbered so far, apart from the runs.
    pub exports_counted: usize,
    /// Settings already run once on an image (the first run of each is cold).
    pub seen: HashSet<String>,
    /// A saved bench set beside the runs on the chart, when one was loaded.
    pub compared: Option<ComparedRuns>,
}

impl Session {
    /// Every measured conversion (exports are not runs).
    pub fn runs(&self) -> &[RunRecord] {
        &self.history.runs
    }

    /// The latest conversion of the open image, if it has one.
    pub fn last_run(&self) -> Option<&RunRecord> {
        let image = self.input.as_ref().map(|i| i.id);
        self.history.runs.iter().rev().find(|r| Some(r.image_id) == image)
    }

    /// Every export, oldest first.
    pub fn exports(&self) -> &[ExportRecord] {
        &self.history.exports
    }

    /// Forgets every measured run and export (the numbers go on: a number names one run).
    pub fn clear_runs(&mut self) {
        self.history.runs.clear();
        self.history.exports.clear();
    }

    /// The saved bench set beside the runs, if one was loaded.
    pub fn compared_runs(&self) -> Option<&ComparedRuns> {
        self.history.compared.as_ref()
    }

    /// Loads the saved `graylab bench --json` at `path` to set beside the runs (replacing one
    /// loaded before), and says so; a file that is not one is named with why, and changes nothing.
    pub fn compare_runs_with(&mut self, path: &std::path::Path) {
        let read = crate::engine::SavedBench::read(path);
        match read {
            Ok(saved) if saved.results.is_empty() => {
                self.toasts
                    .error(format!("Nothing to compare: {} holds no measured setting", path.display()));
            }
            Ok(saved) => {
                let compared = ComparedRuns::of(&super::file_name(path), &saved);
                let count = compared.runs.len();
                self.toasts.success(format!(
                    "Comparing with {} of {} (warm medians), right of this image's runs",
                    crate::system::units::count(count, "setting"),
                    compared.label
                ));
                self.history.compared = Some(compared);
            }
            Err(why) => self.toasts.error(format!("Could not compare: {why}")),
        }
    }

    /// Takes the saved bench off the runs chart.
    pub fn clear_compared_runs(&mut self) {
        self.history.compared = None;
    }

    /// How the last job the user stopped ended, until another job starts.
    pub fn stopped(&self) -> Option<&str> {
        self.book.stopped.as_deref()
    }

    /// Where a trace of the open image's runs goes unless the user says otherwise: the image's
    /// folder, `NAME.trace.json`.
    #[must_use]
    pub fn trace_file_suggestion(&self) -> (Option<std::path::PathBuf>, String) {
        let path = self.input.as_ref().map(|i| i.path.as_path());
        let dir = path.and_then(std::path::Path::parent).map(std::path::Path::to_path_buf);
        let stem = path.and_then(std::path::Path::file_stem).map(|s| s.to_string_lossy().into_owned());
        (dir, format!("{}.trace.json", stem.as_deref().unwrap_or("graylab")))
    }

    /// Saves every run of the open image as a Chrome trace at `path` (a process per run, a track
    /// per lane; the dialog asked before replacing a file), and says so.
    pub fn save_trace(&mut self, path: &std::path::Path) {
        let image = self.input.as_ref().map(|i| i.id);
        let runs: Vec<(String, &crate::engine::RunReport)> = self
            .history
            .runs
            .iter()
            .filter(|r| Some(r.image_id) == image)
            .map(|r| {
                let cold = if r.cold { " · cold" } else { "" };
                (format!("{} · run {}{cold}", r.settings.parallelism(), r.seq), &r.report)
            })
            .collect();
        if runs.is_empty() {
            self.toasts.note("No run of this image to trace yet: Run it first.".into());
            return;
        }
        let count = runs.len();
        let title = format!(
            "graylab: {}",
            self.input.as_ref().map(|i| super::file_name(&i.path)).unwrap_or_default()
        );
        let written = crate::engine::trace::write_trace(path, true, &title, &runs)
            .map_err(|e| crate::app::advice::describe(&e));
        match written {
            Ok(()) => self.toasts.success(format!(
                "Saved the trace of {}: {} (open it in ui.perfetto.dev)",
                crate::system::units::count(count, "run"),
                path.display()
            )),
            Err(e) => self.toasts.error(format!("The trace could not be saved, nothing was written: {e}")),
        }
    }
}
