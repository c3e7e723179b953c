//! Operations per round trip on the worker: the memory reserved first, progress per count for
//! the status bar and the window (the ETA from the passes done), and Stop checked between runs
//! and between GPU submissions.

use super::WorkerState;

use crate::app::work::error::WorkError;
use crate::app::work::jobs::{Answer, Job, Loaded, Reply, Ticket};
use crate::engine::round_trip::{RoundTripOptions, RoundTripResult, round_trip_bytes};
use crate::engine::{ConvertSettings, EngineError};

impl WorkerState {
    /// Runs a [`Job::RoundTrips`] and answers it.
    pub(super) fn round_trips(&self, ticket: &Ticket, job: Job) {
        if let Job::RoundTrips { input, settings, passes } = job {
            let result = self.measure_round_trips(ticket, &input, &settings, passes);
            self.reply(Reply::Answered(ticket.id, Answer::RoundTrips(result)));
        }
    }

    /// Measures the round trips of `passes` (the counts, and the fewest warm rounds of each) on
    /// `input` with `settings`; the error says where Stop ended it, if it did.
    fn measure_round_trips(
        &self,
        ticket: &Ticket,
        input: &Loaded,
        settings: &ConvertSettings,
        (passes, runs): (Vec<u32>, u32),
    ) -> Result<RoundTripResult, WorkError> {
        let image = &input.image;
        let (in_bytes, out_bytes) =
            (image.as_bytes().len() as u64, u64::from(image.width()) * u64::from(image.height()) * 4);
        let gpu = self.engine.gpu_host_memory()?;
        let memory = crate::system::memory_budget::budget()
            .try_reserve(round_trip_bytes(in_bytes, out_bytes, false, gpu))?;
        let total = passes.len() as u64;
        let mut done = 0;
        let mut progress = |n: u32, work_done: f64, work_total: f64| {
            if work_done < work_total {
                // Short: the status bar adds the counts done, in a bar of fixed width.
                let what = format!("Round trips (n = {n} now)");
                ticket.set_progress(what, done, total, (work_done, work_total));
                done += 1;
            }
        };
        let budget = crate::engine::round_trip::round_trip_budget(false, runs as usize);
        let options = RoundTripOptions { passes, budget, cancel: Some(ticket.flag()) };
        let result =
            crate::engine::round_trip::round_trips(&self.engine, image, settings, &options, &mut progress);
        drop(memory);
        let stopped = || WorkError::StoppedRoundTrips { finished: done.saturating_sub(1), total };
        result.map_err(|e| {
            if matches!(e, EngineError::Cancelled) || self.stopped(ticket) { stopped() } else { e.into() }
        })
    }
}
