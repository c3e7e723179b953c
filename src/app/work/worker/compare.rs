//! CPU vs GPU on the worker: the open image run on both in turns by the engine's sampling, with
//! the rounds taken in the status bar and Stop checked between rounds.

use super::WorkerState;
use crate::app::work::error::WorkError;
use crate::app::work::jobs::{Answer, Job, Reply};
use crate::engine::EngineError;
use crate::engine::sampling::Budget;

impl WorkerState {
    /// Runs a [`Job::Compare`] and answers it.
    pub(super) fn compare(&self, job: Job) {
        let Job::Compare { ticket, input, settings } = job else { return };
        let budget = Budget::FULL;
        let total = (budget.warmup_rounds + budget.max_rounds) as u64;
        ticket.set_progress("CPU vs GPU, in turns", 0, 0, (0.0, 0.0));
        let mut progress = |rounds: usize| {
            // The count is at most: sampling stops as soon as the interval decides.
            let text = format!("CPU vs GPU, in turns: {rounds} rounds (until decided, at most {total})");
            ticket.set_progress(text, 0, 0, (0.0, 0.0));
        };
        let [cpu, gpu] = settings;
        let sides = crate::engine::sweep::Sides { cpu, gpu, cpu_series: None };
        let result = crate::engine::sweep::compare(
            &self.engine,
            &input.image,
            &sides,
            &budget,
            Some(ticket.flag()),
            &mut progress,
        );
        let result = result.map_err(|e| self.no_verdict(&ticket, e));
        self.reply(Reply::Answered(ticket.id, Answer::Compared(result)));
    }

    /// What a sampled job (CPU vs GPU, the workgroup race) says when it ends without a verdict:
    /// stopped, or the engine's error.
    pub(super) fn no_verdict(&self, ticket: &crate::app::work::jobs::Ticket, e: EngineError) -> WorkError {
        if matches!(e, EngineError::Cancelled) || self.stopped(ticket) {
            WorkError::StoppedBeforeVerdict
        } else {
            e.into()
        }
    }
}
