//! The run history as the panels read it: conversions (the runs) and exports, kept apart, so
//! that an export never takes the place of the last run.

use super::Session;
use crate::app::state::{ExportRecord, RunRecord};

impl Session {
    /// Every measured conversion (exports are not runs).
    pub fn runs(&self) -> &[RunRecord] {
        &self.runs
    }

    /// The latest conversion of the open image, if it has one.
    pub fn last_run(&self) -> Option<&RunRecord> {
        let image = self.input.as_ref().map(|i| i.id);
        self.runs.iter().rev().find(|r| Some(r.image_id) == image)
    }

    /// Every export, oldest first.
    pub fn exports(&self) -> &[ExportRecord] {
        &self.exports
    }

    /// Forgets every measured run and export (the numbers go on: a number names one run).
    pub fn clear_runs(&mut self) {
        self.runs.clear();
        self.exports.clear();
    }

    /// How the last job the user stopped ended, until another job starts.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }
}
