//! The jobs sampled in turns on the worker: CPU vs GPU, and "Try every size" (every workgroup
//! shape the adapter allows raced), on the open image by the engine's sampling, with the rounds
//! taken in the status bar and Stop checked between rounds.

use super::WorkerState;
use crate::app::work::error::WorkError;
use crate::app::work::jobs::{Answer, Job, Reply, Ticket};
use crate::engine::EngineError;
use crate::engine::sampling::Budget;

impl WorkerState {
    /// Runs a [`Job::Compare`] and answers it.
    pub(super) fn compare(&self, ticket: &Ticket, job: Job) {
        let Job::Compare { input, settings } = job else { return };
        let [cpu, gpu] = settings;
        let sides = crate::engine::sweep::Sides { cpu, gpu, cpu_series: None };
        let rounds = |n| format!("{n} rounds");
        let result = self.in_turns(ticket, "CPU vs GPU", rounds, |budget, progress| {
            let cancel = Some(ticket.flag());
            crate::engine::sweep::compare(&self.engine, &input.image, &sides, budget, cancel, progress)
        });
        self.reply(Reply::Answered(ticket.id, Answer::Compared(result)));
    }

    /// Runs a [`Job::Workgroups`] and answers it.
    pub(super) fn workgroups(&self, ticket: &Ticket, job: Job) {
        let Job::Workgroups { input, settings } = job else { return };
        let round = |n| format!("round {n}");
        let result = self.in_turns(ticket, "Every workgroup size", round, |budget, progress| {
            let cancel = Some(ticket.flag());
            crate::engine::sweep::workgroups(&self.engine, &input.image, &settings, budget, cancel, progress)
        });
        self.reply(Reply::Answered(ticket.id, Answer::Raced(result)));
    }

    /// Runs `run` on the full budget, with "`what`, in turns" and the `rounds` taken in the status
    /// bar; without a verdict, says why: stopped, or the engine's error.
    fn in_turns<T>(
        &self,
        ticket: &Ticket,
        what: &str,
        rounds: impl Fn(usize) -> String,
        run: impl FnOnce(&Budget, &mut dyn FnMut(usize)) -> Result<T, EngineError>,
    ) -> Result<T, WorkError> {
        let budget = Budget::FULL;
        let total = budget.warmup_rounds + budget.max_rounds;
        ticket.set_doing(format!("{what}, in turns"));
        let mut progress = |n: usize| {
            // The count is at most: sampling stops as soon as the interval decides.
            let text = format!("{what}, in turns: {} (until decided, at most {total})", rounds(n));
            ticket.set_doing(text);
        };
        run(&budget, &mut progress).map_err(|e| {
            if matches!(e, EngineError::Cancelled) || self.stopped(ticket) {
                WorkError::StoppedBeforeVerdict
            } else {
                e.into()
            }
        })
    }
}
