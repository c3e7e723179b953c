//! The CLI's side of the one estimator ([`crate::engine::estimate`]): this machine's pace read
//! from the cache folder before a long job (sweep, work grid, claims, `bench --passes`), the
//! job's estimate from it, and, once the job has finished, what it taught kept for the next.

use crate::engine::estimate::{Estimate, Part, Task, load_pace, machine_name, save_pace};
use crate::engine::{Engine, Pace};

/// A long job's estimate from the kept pace, and the pace to teach when it ends.
pub(super) struct JobPace {
    pace: Pace,
    task: Task,
    parts: Vec<Part>,
}

impl JobPace {
    /// Reads the pace of this machine (the engine's GPU where `gpu`, else the CPU alone) for a
    /// job of kind `task` made of `parts`.
    pub(super) fn read(engine: &Engine, gpu: bool, task: Task, parts: Vec<Part>) -> Self {
        let adapter = gpu.then(|| engine.gpu().ok()).flatten().map(|g| g.adapter_info().name.clone());
        Self { pace: load_pace(&machine_name(adapter.as_deref())), task, parts }
    }

    /// What the job is estimated to take: its runs at this machine's pace, times the overhead
    /// of such jobs seen here.
    pub(super) fn estimate(&self) -> Estimate {
        self.pace.job(self.task, &self.parts)
    }

    /// Whether a job of this kind ran to its end here before (its estimate is then the pace's).
    pub(super) fn seen_before(&self) -> bool {
        self.pace.has_seen(self.task)
    }

    /// The pace, to teach it the job's runs before [`Self::finished`].
    pub(super) fn pace_mut(&mut self) -> &mut Pace {
        &mut self.pace
    }

    /// The job ran to its end in `took_s`: learns its overhead and keeps the pace.
    pub(super) fn finished(mut self, took_s: f64) {
        self.pace.finished(self.task, &self.parts, took_s);
        save_pace(&self.pace);
    }
}
