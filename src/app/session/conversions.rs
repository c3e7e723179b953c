//! Conversions and exports asked of the worker: one run, Run ×N, a list of settings (every
//! workgroup size), the re-run when a setting changes, Continuous, and an export of the output.

use std::path::PathBuf;

use super::{JobKind, Session};
use crate::app::work::jobs::{Job, RunHow};
use crate::engine::ConvertSettings;

/// What the latest conversion asked for: it runs again when any of it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Requested {
    settings: ConvertSettings,
    round_trip: bool,
    keep_input: bool,
}

impl Session {
    /// Queues `runs` conversions of the current image with the current settings.
    pub fn run_conversion(&mut self, runs: u32) {
        let settings = self.settings.convert;
        self.queue_conversion(vec![settings], runs);
    }

    /// Queues `runs` conversions for each of `list`, after cancelling conversions still queued
    /// or running (the newest request wins).
    pub fn queue_conversion(&mut self, list: Vec<ConvertSettings>, runs: u32) {
        let Some(input) = self.input.clone() else { return };
        for (kind, ticket) in &self.book.sent {
            if *kind == JobKind::Convert {
                ticket.cancel();
            }
        }
        self.book.comparing = list.iter().any(|s| *s != self.settings.convert);
        let Requested { round_trip, keep_input, .. } = self.requested();
        self.book.requested = Some(self.requested());
        // Kept, so a batch stopped before the worker takes it up says "before the first of N" too.
        self.book.latest_convert_runs = (list.len() * runs.max(1) as usize) as u64;
        self.unhold();
        let size = (input.image.width(), input.image.height());
        let parts = super::pace::convert_parts(&list, runs, size);
        let how = RunHow { round_trip, keep_input, preview_side: self.preview_side };
        let job = Job::Convert { input, settings: list, runs, how };
        self.book.latest_convert = self.send_estimated(job, crate::engine::estimate::Task::Convert, parts);
    }

    /// Queues an export of the current output to `path` (replacing a file there only when
    /// `overwrite`).
    pub fn export_to(&mut self, path: PathBuf, overwrite: bool) {
        let Some(input) = self.input.clone() else { return };
        // The result on screen, unless a conversion with other settings is on its way (a
        // setting changed just before): then the file holds what the panel says, converted
        // again, not the older result.
        let newer =
            self.converting() && self.output.as_ref().is_some_and(|o| o.settings != self.settings.convert);
        let output = self.output.as_ref().filter(|_| !newer);
        let settings = output.map_or(self.settings.convert, |o| o.settings);
        let pixels = output.and_then(|o| o.pixels.clone());
        // A dither's black and white is written as it is: a 1-bit PNG, TIFF or BMP.
        let one_bit = settings.op == crate::pixel::Op::Dither;
        let options = crate::io::ExportOptions { overwrite, one_bit, ..self.settings.export.clone() };
        self.send(Job::Export { input, pixels, settings, path, options });
    }

    /// What a conversion asked now asks for.
    fn requested(&self) -> Requested {
        let (round_trip, keep_input) = (self.settings.round_trip, self.settings.keep_input_on_gpu);
        Requested { settings: self.settings.convert, round_trip, keep_input }
    }

    /// Whether a conversion of the latest request is queued or running.
    pub fn converting(&self) -> bool {
        self.book.sent.iter().any(|(_, t)| t.id == self.book.latest_convert)
    }

    /// Re-runs the conversion when a setting that changes the output or its timing changed
    /// (superseding the runs in flight), and keeps Continuous going.
    pub fn after_frame(&mut self) {
        if self.input.is_some() && self.book.requested.is_some_and(|r| r != self.requested()) {
            self.run_conversion(1);
        }
        if self.continuous && !self.converting() && self.input.is_some() {
            self.run_conversion(1);
        }
    }
}
