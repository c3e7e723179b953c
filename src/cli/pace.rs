//! The CLI's side of the one estimator ([`crate::engine::estimate`]): this machine's pace read
//! from the cache folder before a long job (sweep, work grid, claims, `bench --passes`, a batch
//! of files), the job's estimate from it, and, once the job has finished, what it taught kept
//! for the next.

use super::out::errln;
use crate::engine::estimate::{
    Estimate, Lesson, Pace, Part, Task, convert_parts, keep_lessons, load_pace, machine_name,
};
use crate::engine::{ConvertSettings, Engine};
use crate::system::one_time::OneTimeMark;
use std::path::Path;
use std::time::Instant;

/// A long job's estimate from the kept pace, and the pace to teach when it ends.
pub(super) struct JobPace {
    pace: Pace,
    /// What the job taught the pace, taught again to the pace kept when the job ends (another
    /// process may have kept one since this was read).
    lessons: Vec<Lesson>,
    task: Task,
    parts: Vec<Part>,
    /// When the job started (when its pace was read).
    started: Instant,
    /// The process's one-time work before the job (what it does since is not its pace).
    one_time_at: OneTimeMark,
    /// Whether the job runs on the GPU too (its ceilings are then the GPU lanes' prior).
    gpu: bool,
}

/// Measures the ceilings this machine has none of yet (a first run here), saying so unless
/// `quiet`: a long job then starts from an estimate of the model, its runs at this machine's
/// ceilings, not from the rough guess (the first full claims run on lavapipe was guessed at
/// 49 s and took 16–31 s; the H200's default sweep at 480 s, and it took 14 s). A job that needs
/// them measures them anyway (claim 5, the sweep's model): this is that work, done first.
pub(super) fn measure_unknown_ceilings(engine: &Engine, gpu: bool, quiet: bool) {
    let cpu = engine.known_cpu_compute().is_none();
    let gpu = gpu && engine.cached_gpu_ceilings().is_none();
    if (cpu || gpu) && !quiet {
        errln!("measuring this machine's ceilings first, to estimate the job (graylab info --probe)…");
    }
    if cpu && let Err(e) = engine.cpu_compute(false) {
        log::warn!("the CPU's compute ceiling could not be measured: {e}");
    }
    if gpu && let Err(e) = engine.gpu_ceilings(false, None) {
        log::warn!("the GPU's ceilings could not be measured: {e}");
    }
}

/// Gives `pace` the ceilings `engine` knows now (cached or measured in this process, measuring
/// nothing): the costs of lanes not seen yet.
fn know_ceilings(pace: &mut Pace, engine: &Engine, gpu: bool) {
    let cpu = engine.known_cpu_compute();
    let gpu = gpu.then(|| engine.cached_gpu_ceilings()).flatten();
    pace.know_ceilings(cpu.as_ref(), gpu.as_ref().map(|k| &k.ceilings));
}

impl JobPace {
    /// Reads the pace of this machine (the engine's GPU where `gpu`, else the CPU alone) for a
    /// job of kind `task` made of the `parts` it says, and starts the job's clock.
    pub(super) fn read(
        engine: &Engine,
        gpu: bool,
        task: Task,
        parts: impl FnOnce(&Pace) -> Vec<Part>,
    ) -> Self {
        // Both taken first: opening the GPU is one-time work within the job's wall time.
        let (started, one_time_at) = (Instant::now(), OneTimeMark::now());
        let adapter = gpu.then(|| engine.gpu().ok()).flatten().map(|g| g.report().ceilings_key());
        let mut pace = load_pace(&machine_name(adapter.as_deref()));
        // The ceilings measured here before (`info --probe`, cached), measuring nothing: the
        // costs of lanes not seen yet.
        know_ceilings(&mut pace, engine, adapter.is_some());
        let parts = parts(&pace);
        Self { pace, lessons: Vec::new(), task, parts, started, one_time_at, gpu: adapter.is_some() }
    }

    /// Seconds since the job started.
    pub(super) fn took_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// What the job is estimated to take: its runs at this machine's pace, times the overhead
    /// of such jobs seen here.
    pub(super) fn estimate(&self) -> Estimate {
        self.pace.job(self.task, &self.parts)
    }

    /// The most the job can take, for a job sampled until decided ([`Pace::at_most_s`]).
    pub(super) fn at_most_s(&self) -> Option<f64> {
        self.pace.at_most_s(self.task, &self.parts)
    }

    /// Whether a job of this kind ran to its end here before (its estimate is then the pace's).
    pub(super) fn seen_before(&self) -> bool {
        self.pace.has_seen(self.task)
    }

    /// The pace read, as taught so far.
    pub(super) fn pace(&self) -> &Pace {
        &self.pace
    }

    /// Teaches the pace `lesson` (the job's runs, before [`Self::finished`]).
    pub(super) fn learn(&mut self, lesson: impl Fn(&mut Pace) + Send + 'static) {
        lesson(&mut self.pace);
        self.lessons.push(Box::new(lesson));
    }

    /// Teaches the pace a finished sweep's runs (before [`Self::finished`]).
    pub(super) fn learn_sweep(&mut self, result: &crate::engine::sweep::SweepResult) {
        let result = result.clone();
        self.learn(move |p| crate::engine::sweep::teach_pace(p, &result));
    }

    /// The job ran to its end: learns its overhead from the time it took, less the one-time
    /// work done meanwhile (the GPU opened, pipelines compiled, ceilings measured) unless its
    /// kind does that work every time ([`Task::repeats_one_time_work`]), and keeps the pace.
    ///
    /// The ceilings the job measured (a first run on this machine) are given to the pace first:
    /// its overhead is a share of its runs' cost at the pace the next job is estimated at (a
    /// full claims run learned 0.56 against a guess of its runs, and the next one, estimated
    /// from the ceilings measured meanwhile, was then put at 6.1 s where it took 20.4 s).
    pub(super) fn finished(mut self, engine: &Engine) {
        let took_s = self.took_s();
        let one_time_s =
            if self.task.repeats_one_time_work() { 0.0 } else { self.one_time_at.since_s().min(took_s) };
        log::info!("{:?}: took {took_s:.2} s, {one_time_s:.2} s of it one-time work", self.task);
        let cpu = engine.known_cpu_compute();
        let gpu = self.gpu.then(|| engine.cached_gpu_ceilings()).flatten().map(|k| k.ceilings);
        let (task, parts) = (self.task, std::mem::take(&mut self.parts));
        self.learn(move |p| {
            p.know_ceilings(cpu.as_ref(), gpu.as_ref());
            p.finished(task, &parts, took_s - one_time_s, None);
        });
        let _kept = keep_lessons(&self.pace.machine, &self.lessons);
    }
}

/// The most files whose headers a batch's estimate reads (a JPEG's is up to 1 MiB): past it, as
/// many spread over the batch stand for the rest.
const BATCH_HEADERS: usize = 64;

/// A batch's parts: each file of `inputs` a conversion with `settings` at the size its header
/// claims (one that cannot be read costs nothing: it fails before it is converted), those read
/// standing for the rest past [`BATCH_HEADERS`] files; and their megapixels, with whether they
/// were read from every file.
pub(super) fn batch_parts(inputs: &[&Path], settings: &ConvertSettings) -> (Vec<Part>, f64, bool) {
    let step = inputs.len().div_ceil(BATCH_HEADERS).max(1);
    let read: Vec<&Path> = inputs.iter().copied().step_by(step).collect();
    let stands_for = inputs.len() as f64 / read.len().max(1) as f64;
    let mut parts = Vec::new();
    for size in read.iter().filter_map(|path| crate::io::header_dimensions(path)) {
        parts.extend(
            convert_parts(std::slice::from_ref(settings), 1, size)
                .into_iter()
                .map(|p| Part { runs: p.runs * stands_for, ..p }),
        );
    }
    let megapixels = parts.iter().map(|p| p.megapixels * p.runs).sum();
    (parts, megapixels, step == 1)
}
