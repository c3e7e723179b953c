//! The run history as the panels read it: conversions (the runs) and exports, kept apart, so
//! that an export never takes the place of the last run.

use std::collections::HashSet;

use super::Session;
use crate::app::state::{ExportRecord, RunRecord};

/// Every run and export, numbered.
#[derive(Default)]
pub(super) struct RunHistory {
    /// Every measured conversion, oldest first.
    pub runs: Vec<RunRecord>,
    /// Every export, apart from the runs.
    pub exports: Vec<ExportRecord>,
    /// Runs and exports numbered so far (numbers go on after Clear).
    pub counted: Counted,
    /// Settings already run once on an image (the first run of each is cold).
    pub seen: HashSet<String>,
}

/// Runs and exports numbered so far.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counted {
    /// Conversions.
    pub runs: usize,
    /// Exports.
    pub exports: usize,
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

    /// How the last job the user stopped ended, until another job starts.
    pub fn stopped(&self) -> Option<&str> {
        self.book.stopped.as_deref()
    }
}
