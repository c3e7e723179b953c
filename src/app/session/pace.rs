//! The app's side of the one estimator ([`crate::engine::estimate`]): the pace of this machine,
//! kept in graylab's cache folder in the file the CLI keeps too, so a job in one front end
//! teaches the other; taught by every run, sweep and job that finishes, and asked before every
//! long job; a saved heavy setting is held on open until the user says Run.

use crate::app::work::jobs::{Job, Ticket};
use crate::engine::estimate::{Estimate, Lane, Lesson, Pace, Part, Task, keep_lessons, load_pace};
use crate::engine::sweep::SweepResult;
use crate::engine::{ConvertSettings, Phase, RunReport};

use super::Session;

/// A conversion on open estimated longer than this, seconds, waits for the user's Run.
pub const HEAVY_ON_OPEN_S: f64 = 10.0;

/// The pace and what it still has to learn from the jobs in flight.
#[derive(Default)]
pub(super) struct KeptPace {
    pace: Pace,
    /// Whether the kept pace was read (on the first frame).
    read: bool,
    /// Whether the pace is read from and kept in the cache folder (not with fresh settings).
    in_cache: bool,
    /// Whether it learned something not yet kept.
    changed: bool,
    /// What it learned since it was last kept, taught again to the kept pace when it is kept.
    lessons: Vec<Lesson>,
    /// The jobs sent with an estimate, to learn their overhead.
    sent: Vec<Sent>,
    /// A conversion on open held for its estimate.
    held: Option<Estimate>,
    /// The seconds the runs of each conversion job in flight took, as reported: the job's
    /// fixed time is its wall time beyond them.
    ran_s: Vec<(u64, f64)>,
}

/// A job sent with an estimate.
struct Sent {
    id: u64,
    task: Task,
    /// Its parts, step after step.
    parts: Vec<Part>,
    /// How many of the parts each step has (one step: empty).
    steps: Vec<usize>,
}

impl KeptPace {
    /// What each step of a sent job is estimated to take (none for a job of one step).
    fn step_weights(&self, sent: &Sent) -> Vec<f64> {
        let mut rest = sent.parts.as_slice();
        let mut weights = Vec::with_capacity(sent.steps.len());
        for &n in &sent.steps {
            let (step, after) = rest.split_at(n.min(rest.len()));
            weights.push(self.pace.parts(step).seconds);
            rest = after;
        }
        weights
    }

    /// Nothing seen yet; kept in the cache folder when `in_cache`.
    pub(super) fn new(in_cache: bool) -> Self {
        Self { in_cache, ..Self::default() }
    }

    /// Learns `lesson` now, and keeps it to be taught again to the kept pace.
    fn learn(&mut self, lesson: impl Fn(&mut Pace) + Send + 'static) {
        lesson(&mut self.pace);
        if self.in_cache {
            self.lessons.push(Box::new(lesson));
        }
        self.changed = true;
    }
}

pub use crate::engine::estimate::convert_parts;

impl Session {
    /// The adapter and CPU threads a pace belongs to.
    #[must_use]
    pub fn machine(&self) -> String {
        let adapter = self.gpu().filter(|_| self.gpu_usable()).map(|g| g.report().ceilings_key());
        crate::engine::estimate::machine_name(adapter.as_deref())
    }

    /// What this machine was seen to take.
    #[must_use]
    pub fn pace(&self) -> &Pace {
        &self.pace.pace
    }

    /// Replaces the pace (tests, to make an estimate known in advance).
    pub fn set_pace(&mut self, pace: Pace) {
        self.pace.read = true;
        self.pace.learn(move |p| *p = pace.clone());
    }

    /// Gives the pace this CPU's compute ceiling (`None`: the one known, if any): the prior of
    /// worked runs on the CPU until one is seen.
    pub(super) fn pace_cpu_compute(&mut self, known: Option<&crate::engine::CpuCompute>) {
        if let Some(&c) = known.or_else(|| self.cpu_compute()) {
            self.pace.pace.know_ceilings(Some(&c), None);
            self.reestimate_sent();
        }
    }

    /// Gives the pace the GPU's ceilings, when known: the prior of the GPU's runs (and the CPU's
    /// streaming rate) until one is seen (a software adapter computes at a fifth of the rough
    /// guess's rate: a worked run estimated at 6.8 s took 32.5 s without it).
    pub(super) fn pace_gpu_compute(&mut self) {
        if let Some(k) = self.ceilings() {
            let ceilings = k.ceilings.clone();
            self.pace.pace.know_ceilings(None, Some(&ceilings));
            self.reestimate_sent();
        }
    }

    /// Estimates the jobs in flight again from the pace as it is now: ceilings measured at the
    /// start of a job, which its first estimate did not know (see [`Self::pace_gpu_compute`]; a
    /// size sweep's bar said "1 min 47 s left", its window "about 20 s", once they were in). A
    /// grid keeps its own: its calibration, taken after them, knows better.
    fn reestimate_sent(&self) {
        let again = |task: &Task| !matches!(task, Task::Grid | Task::OpGrid);
        for sent in self.pace.sent.iter().filter(|s| again(&s.task)) {
            if let Some((_, ticket)) = self.book.sent.iter().find(|(_, t)| t.id == sent.id) {
                ticket.set_estimate(self.pace.pace.job(sent.task, &sent.parts).seconds);
                ticket.set_step_weights(self.pace.step_weights(sent));
            }
        }
    }

    /// Reads the kept pace on the first frame (when it is this machine's) and keeps what it
    /// learned since, in the cache folder (nothing is read or kept with fresh settings).
    pub fn keep_pace(&mut self) {
        let machine = self.machine();
        if !self.pace.read {
            self.pace.read = true;
            let kept = self.pace.in_cache.then(|| load_pace(&machine));
            self.pace.pace = kept.unwrap_or_else(|| Pace::new(machine.clone()));
            self.pace_cpu_compute(None);
            self.pace_gpu_compute();
        }
        if self.pace.changed {
            self.pace.changed = false;
            self.pace.pace.machine.clone_from(&machine);
            if self.pace.in_cache {
                // The file, which a CLI run may have taught since it was read, taught what this
                // app learned since, is the pace from now on: neither erases the other's.
                let lessons = std::mem::take(&mut self.pace.lessons);
                self.pace.pace = keep_lessons(&machine, &lessons);
                // The ceilings' op rates are not kept in the file; the jobs in flight keep
                // their estimates (this is no news about the machine).
                let (cpu, gpu) = (self.cpu_compute().copied(), self.ceilings().map(|k| k.ceilings.clone()));
                self.pace.pace.know_ceilings(cpu.as_ref(), gpu.as_ref());
            }
        }
    }

    /// Sends `job` with its estimate (shown with its progress), and remembers its parts to learn
    /// its overhead when it finishes; the job's id.
    pub fn send_estimated(&mut self, job: Job, task: Task, parts: Vec<Part>) -> u64 {
        self.send_in_steps(job, task, vec![parts]).0
    }

    /// [`Self::send_estimated`] for a job of steps (the claims), its progress weighed by what
    /// each step is estimated to take ([`Ticket::set_step_weights`]); the job's id and estimate.
    pub fn send_in_steps(&mut self, job: Job, task: Task, steps: Vec<Vec<Part>>) -> (u64, Estimate) {
        let lens = if steps.len() > 1 { steps.iter().map(Vec::len).collect() } else { Vec::new() };
        // Its id is the ticket's, given as it is sent.
        let mut sent = Sent { id: 0, task, parts: steps.into_iter().flatten().collect(), steps: lens };
        let estimate = self.pace.pace.job(task, &sent.parts);
        let weights = self.pace.step_weights(&sent);
        self.pace.sent.retain(|s| self.book.sent.iter().any(|(_, t)| t.id == s.id));
        let ticket = self.send_with(job, |ticket| {
            ticket.set_estimate(estimate.seconds);
            ticket.set_step_weights(weights);
        });
        sent.id = ticket.id;
        self.pace.sent.push(sent);
        (ticket.id, estimate)
    }

    /// What `runs` conversions of the open image with the panel's settings are estimated to
    /// take (none without an image).
    #[must_use]
    pub fn conversions_estimate(&self, runs: u32) -> Option<Estimate> {
        let input = self.input()?;
        let size = (input.image.width(), input.image.height());
        let parts = convert_parts(&[self.settings().convert], runs, size);
        Some(self.pace.pace.job(Task::Convert, &parts))
    }

    /// The conversion held on open, with its estimate.
    #[must_use]
    pub fn held_run(&self) -> Option<Estimate> {
        self.pace.held
    }

    /// Runs the conversion held on open (Run), or lets it be (Not now).
    pub fn release_held(&mut self, run: bool) {
        if self.pace.held.take().is_some() && run {
            self.run_conversion(1);
        }
    }

    /// On open: converts with the settings in force, unless that is estimated to take longer
    /// than [`HEAVY_ON_OPEN_S`]; then holds it for the user's Run.
    pub(super) fn convert_on_open(&mut self) {
        let Some(input) = &self.input else { return };
        let size = (input.image.width(), input.image.height());
        let parts = convert_parts(&[self.settings.convert], 1, size);
        let estimate = self.pace.pace.job(Task::Convert, &parts);
        if estimate.seconds > HEAVY_ON_OPEN_S {
            self.pace.held = Some(estimate);
        } else {
            self.run_conversion(1);
        }
    }

    /// Forgets a held conversion (another was asked for).
    pub(super) fn unhold(&mut self) {
        self.pace.held = None;
    }

    /// Counts a run of job `id` (a conversion) toward the time its runs took.
    pub(super) fn count_run(&mut self, id: u64, report: &RunReport) {
        let seconds = report.total_ns as f64 / 1e9;
        match self.pace.ran_s.iter_mut().find(|(job, _)| *job == id) {
            Some((_, sum)) => *sum += seconds,
            None => self.pace.ran_s.push((id, seconds)),
        }
    }

    /// Learns from one finished warm run what its lane's runs take: its time without its setup,
    /// its op and its display, as a sweep's runs are timed (the op is priced apart, and the
    /// claims' runs show nothing). A cold blur:8 run of 746 ms, learnt whole as a plain GPU run
    /// (the kernel and its copies about 70 ms), made the first quick claims "about 1 min 59 s":
    /// they took 7 s.
    pub(super) fn learn_run(&mut self, settings: &ConvertSettings, report: &RunReport) {
        let megapixels = report.megapixels();
        let apart: u64 = [Phase::Setup, Phase::Op, Phase::Display]
            .into_iter()
            .filter_map(|p| report.phase(p).map(|t| t.ns))
            .sum();
        let seconds = report.total_ns.saturating_sub(apart) as f64 / 1e9;
        let (lane, rounds) = (Lane::of(settings), settings.work.rounds);
        self.pace.learn(move |p| p.observe(lane, megapixels, rounds, seconds));
    }

    /// Learns from a finished sweep's medians (every size and work level it measured).
    pub(super) fn learn_sweep(&mut self, result: &SweepResult) {
        let result = result.clone();
        self.pace.learn(move |p| crate::engine::sweep::teach_pace(p, &result));
    }

    /// Learns from finished round trips what their runs take: each CPU pass, and the GPU's
    /// round trip of one operation.
    pub(super) fn learn_round_trips(&mut self, result: &crate::engine::round_trip::RoundTripResult) {
        let result = result.clone();
        self.pace.learn(move |p| crate::engine::round_trip::teach_pace(p, &result));
    }

    /// A job ended (`ticket`): when it ran to its end, learns its overhead from its wall time.
    pub(super) fn learn_job_end(&mut self, ticket: &Ticket, stopped: bool) {
        // The runs' seconds are forgotten with every job's end, sent with an estimate or not.
        let ran_s = self.pace.ran_s.iter().find(|(id, _)| *id == ticket.id).map(|(_, s)| *s);
        self.pace.ran_s.retain(|(id, _)| *id != ticket.id);
        let Some(i) = self.pace.sent.iter().position(|s| s.id == ticket.id) else { return };
        let Sent { task, parts, .. } = self.pace.sent.swap_remove(i);
        let Some(progress) = ticket.progress() else { return };
        if stopped || ticket.cancelled() {
            return;
        }
        let took_s = f64::from(progress.elapsed_secs());
        // One-time work done meanwhile (a ceiling measured, pipelines compiled) is not this kind
        // of job's pace: the next one will not do it again.
        // The claims do theirs every time (claim 6's devices): it is their pace.
        let one_time_s = if task.repeats_one_time_work() { 0.0 } else { progress.one_time_s().min(took_s) };
        if let Some(estimate_s) = progress.estimate_s {
            // What BENCHMARKS.md's estimator accuracy is read from (RUST_LOG=graylab=info).
            log::info!(
                "job {} ({task:?}): estimated {estimate_s:.1} s, took {took_s:.1} s ({:.2}x), {one_time_s:.1} s of it one-time work",
                ticket.id,
                took_s / estimate_s.max(1e-3)
            );
        }
        self.pace.learn(move |p| p.finished(task, &parts, took_s - one_time_s, ran_s));
    }
}
