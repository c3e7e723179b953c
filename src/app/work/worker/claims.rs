//! The tutorial's claims on the worker: the memory reserved first, each claim's progress for the
//! status bar and the claims window, and Stop checked between claims.

use super::WorkerState;
use crate::app::work::jobs::{ClaimsEnd, Ticket};
use crate::engine::EngineError;
use crate::engine::claims::{ClaimsOptions, claims_bytes, run_claims};

impl WorkerState {
    /// Runs every claim's experiment (the quick set when `quick`), reporting "Claims, 3 of 7:
    /// workgroup shapes…" before each; the session weighs each claim by its estimate
    /// ([`Ticket::set_step_weights`]), so the ETA counts time, not claims.
    pub(super) fn claims(&self, ticket: &Ticket, quick: bool) -> ClaimsEnd {
        let gpu = match self.engine.gpu_host_memory() {
            Ok(gpu) => gpu,
            Err(e) => return ClaimsEnd::Failed(e.into()),
        };
        let memory = match crate::system::memory_budget::budget().try_reserve(claims_bytes(gpu)) {
            Ok(memory) => memory,
            Err(e) => return ClaimsEnd::Failed(e.into()),
        };
        ticket.set_doing("Claims: starting");
        let (mut done, mut total) = (0, 0);
        let mut progress = |claims_done: usize, claims: usize, what: &str| {
            (done, total) = (claims_done as u64, claims as u64);
            if claims_done < claims {
                let text = format!("Claims, {} of {claims}: {what}…", claims_done + 1);
                ticket.set_progress(text, done, 0, (done as f64, total as f64));
            }
        };
        let options = ClaimsOptions { quick, cancel: Some(ticket.flag()), keep_runs: false };
        let result = run_claims(&self.engine, &options, &mut progress);
        drop(memory);
        match result {
            Ok(report) => ClaimsEnd::Finished(Box::new(report)),
            Err(EngineError::Cancelled) => ClaimsEnd::Stopped { done, total },
            Err(_) if self.stopped(ticket) => ClaimsEnd::Stopped { done, total },
            Err(e) => ClaimsEnd::Failed(e.into()),
        }
    }
}
