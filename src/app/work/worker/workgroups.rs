//! "Try every size" on the worker: every workgroup shape the adapter allows raced on the open
//! image in turns by the engine's sampling, the rounds taken in the status bar and Stop checked
//! between rounds.

use super::WorkerState;
use crate::app::work::jobs::{Answer, Job, Reply};
use crate::engine::sampling::Budget;

impl WorkerState {
    /// Runs a [`Job::Workgroups`] and answers it.
    pub(super) fn workgroups(&self, job: Job) {
        let Job::Workgroups { ticket, input, settings } = job else { return };
        let budget = Budget::FULL;
        let total = budget.warmup_rounds + budget.max_rounds;
        ticket.set_progress("Every workgroup size, in turns", 0, 0, (0.0, 0.0));
        let mut progress = |round: usize| {
            // The count is at most: sampling stops as soon as the fastest is decided.
            let text =
                format!("Every workgroup size, in turns: round {round} (until decided, at most {total})");
            ticket.set_progress(text, 0, 0, (0.0, 0.0));
        };
        let result = crate::engine::sweep::workgroups(
            &self.engine,
            &input.image,
            &settings,
            &budget,
            Some(ticket.flag()),
            &mut progress,
        );
        let result = result.map_err(|e| self.no_verdict(&ticket, e));
        self.reply(Reply::Answered(ticket.id, Answer::Raced(result)));
    }
}
