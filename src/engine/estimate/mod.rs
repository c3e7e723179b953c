//! How long a job will take, before it starts: the one estimator behind every long job (a single
//! conversion, a sweep, a work grid, round trips, the claims). A [`Pace`] is learned per machine
//! (adapter and CPU threads) from runs seen there: each lane (CPU one thread, CPU all threads,
//! GPU end to end) costs a fixed time, a time per megapixel and a time per megapixel-round, and
//! each kind of job takes its wall time over what its runs predict (its overhead). Before a lane
//! was seen, its cost comes from this machine's ceilings (bytes over bandwidth, operations over
//! the compute ceiling) or a stated rough guess, and every [`Estimate`] says which.
//!
//! Knows nothing of the front ends: both keep the pace in the cache folder ([`load_pace`],
//! [`keep_lessons`]) and feed it; every long job's JSON says what it was estimated at and what it
//! took ([`Timed`]).

mod eta;
mod kept;
mod ops;
mod parts;
mod roofs;
mod said;
mod task;

pub use eta::{SEEN_PACE_ALONE_AT, Standing};
pub use kept::{Lesson, keep_lessons, load_pace, machine_name};
pub use parts::{convert_parts, round_trip_parts, transfer_paths_parts};
pub(crate) use roofs::{PLAIN_BYTES, steps_ns_per_pixel};
pub use said::{Basis, Estimate, Timed};
pub use task::Task;

use crate::engine::{Backend, ConvertSettings, available_threads};
use crate::pixel::{Op, OpRates};

/// Bytes a conversion reads and writes per pixel (RGB8 in, gray out, with the copies).
const BYTES_PER_PIXEL: f64 = 5.0;

/// Operations one round of synthetic work costs per pixel.
const OPS_PER_PIXEL_ROUND: f64 = 3.0;

/// The most observations kept (the newest replace the oldest).
const KEPT: usize = 64;

/// The overheads kept per kind of job, their mean the next one's (a grid's overhead varies by
/// 1.5x between identical grids; the newest alone missed by 1.46x).
const OVERHEADS_KEPT: usize = 3;

/// Where one run runs, as the estimator tells costs apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Lane {
    /// The CPU kernel on one thread.
    CpuOneThread,
    /// The CPU kernel on all threads.
    CpuAllThreads,
    /// The GPU end to end (upload, kernel, download).
    Gpu,
    /// One transfer along a transfer path, never a conversion: a part of `n` bytes is
    /// `n / BYTES_PER_PIXEL` pixels, so that its roof's `bytes_per_s` is the bandwidth.
    Transfer,
}

impl Lane {
    /// The lane of a conversion with `settings`.
    #[must_use]
    pub fn of(settings: &ConvertSettings) -> Self {
        match settings.backend {
            Backend::Gpu => Self::Gpu,
            Backend::Cpu if settings.threads == 1 && available_threads() > 1 => Self::CpuOneThread,
            Backend::Cpu => Self::CpuAllThreads,
        }
    }

    /// A rough cost (fixed seconds, seconds per megapixel, seconds per megapixel-round) for a
    /// machine never seen: a 2-core machine with a software GPU.
    fn rough(self) -> Cost {
        match self {
            // A round is 3 operations a pixel: at 10 Gop/s on one thread, 30 on all of them or
            // a GPU (a software one; a real GPU is faster). One round costs a few percent of a
            // plain conversion, as measured: not half of one (the guess before, 70-150x slow).
            Self::CpuOneThread => Cost { fixed_s: 0.001, per_mp_s: 0.008, per_mp_round_s: 3e-4 },
            Self::CpuAllThreads => Cost { fixed_s: 0.001, per_mp_s: 0.004, per_mp_round_s: 1e-4 },
            Self::Gpu => Cost { fixed_s: 0.02, per_mp_s: 0.02, per_mp_round_s: 1e-4 },
            // 1 GB/s and 50 µs a transfer: a software adapter's copies.
            Self::Transfer => Cost { fixed_s: 5e-5, per_mp_s: 0.005, per_mp_round_s: 1e-4 },
        }
    }
}

/// Runs of one lane at one size, work level and op: a part of a job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Part {
    /// Where they run.
    pub lane: Lane,
    /// The image's size, megapixels.
    pub megapixels: f64,
    /// The work level, rounds per pixel.
    pub rounds: u32,
    /// The op after the grayscale ([`Op::None`] for none), priced by [`Pace::op_run`].
    pub op: Op,
    /// How many runs (cold ones included).
    pub runs: f64,
    /// The image's height over its width ([`THREE_TWO`] for the synthetic images): the GPU
    /// dither's wavefront takes `w + 2h - 2` steps, 8x more on a 200x20000 image than on a 3:2
    /// one of as many pixels.
    pub height_per_width: f64,
}

/// The height over the width of the synthetic images (3:2) the sweeps and the claims time.
pub const THREE_TWO: f64 = 2.0 / 3.0;

/// A lane's cost of one run: `fixed_s + megapixels * (per_mp_s + rounds * per_mp_round_s)`.
#[expect(clippy::struct_field_names, reason = "each field is seconds, and says so")]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cost {
    fixed_s: f64,
    per_mp_s: f64,
    per_mp_round_s: f64,
}

impl Cost {
    fn base_s(&self, megapixels: f64) -> f64 {
        self.fixed_s + megapixels * self.per_mp_s
    }

    fn run_s(&self, megapixels: f64, rounds: u32) -> f64 {
        self.base_s(megapixels) + megapixels * f64::from(rounds) * self.per_mp_round_s
    }

    fn scaled(self, by: f64) -> Self {
        Self {
            fixed_s: self.fixed_s * by,
            per_mp_s: self.per_mp_s * by,
            per_mp_round_s: self.per_mp_round_s * by,
        }
    }
}

/// One run seen: its lane, size, work level and wall time.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Seen {
    lane: Lane,
    megapixels: f64,
    rounds: u32,
    seconds: f64,
}

/// A ceiling of one lane, for costs before a run was seen.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Roof {
    /// Bytes per second the lane streams.
    pub bytes_per_s: f64,
    /// Operations per second it computes.
    pub ops_per_s: f64,
    /// Seconds every run costs whatever its size (the dispatch's and the copies' latencies);
    /// `None`: the rough guess's.
    #[serde(default)]
    pub fixed_s: Option<f64>,
}

/// What this machine was seen to take: the learned pace of every lane and job kind.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pace {
    /// The adapter and CPU threads it was seen on (a pace is only used on the same).
    pub machine: String,
    /// How it priced what it learned (`kept::PACE_FORMAT`; 0 in files from before formats).
    #[serde(default)]
    format: u32,
    seen: Vec<Seen>,
    /// Per kind of job, the last [`OVERHEADS_KEPT`] seen: its wall time over its runs (a
    /// share), or, for a kind with a fixed overhead, the seconds beyond its runs.
    overheads: Vec<(Task, f64)>,
    /// Per kind of job that is the same job every time (the claims), the last
    /// [`OVERHEADS_KEPT`] wall times seen: its estimate, whatever other jobs teach its runs.
    #[serde(default)]
    walls: Vec<(Task, f64)>,
    #[serde(default)]
    roofs: Vec<(Lane, Roof)>,
    /// What the ops cost per lane, from the ceilings' measurement (not kept: the ceilings are).
    #[serde(skip)]
    op_rates: Vec<(Lane, OpRates)>,
}

impl Pace {
    /// A pace of `machine` with nothing seen yet.
    #[must_use]
    pub fn new(machine: impl Into<String>) -> Self {
        Self { machine: machine.into(), format: kept::PACE_FORMAT, ..Self::default() }
    }

    /// Sets the CPU lanes' compute ceiling (`ops_per_s` on all `threads`): the prior of their
    /// rounds until worked runs are seen.
    pub fn set_cpu_compute(&mut self, ops_per_s: f64, threads: usize) {
        self.set_compute(Lane::CpuAllThreads, ops_per_s);
        self.set_compute(Lane::CpuOneThread, ops_per_s / threads.max(1) as f64);
    }

    /// Sets `lane`'s compute ceiling, keeping its streaming rate and fixed cost.
    fn set_compute(&mut self, lane: Lane, ops_per_s: f64) {
        self.set_roof(lane, Roof { ops_per_s, ..self.roof(lane) });
    }

    /// `lane`'s ceilings as set, else the rough guess's rates.
    fn roof(&self, lane: Lane) -> Roof {
        if let Some((_, roof)) = self.roofs.iter().find(|(l, _)| *l == lane) {
            return *roof;
        }
        let rough = lane.rough();
        Roof {
            bytes_per_s: 1e6 * BYTES_PER_PIXEL / rough.per_mp_s,
            ops_per_s: 1e6 * OPS_PER_PIXEL_ROUND / rough.per_mp_round_s,
            fixed_s: None,
        }
    }

    /// Sets a lane's ceilings, used for its costs until a run of it is seen.
    pub fn set_roof(&mut self, lane: Lane, roof: Roof) {
        let fixed_ok = roof.fixed_s.is_none_or(|s| s.is_finite() && s >= 0.0);
        if roof.bytes_per_s > 0.0 && roof.ops_per_s > 0.0 && roof.bytes_per_s.is_finite() && fixed_ok {
            self.roofs.retain(|(l, _)| *l != lane);
            self.roofs.push((lane, roof));
        }
    }

    /// Learns from one run of `lane` at `megapixels` and `rounds` that took `seconds`. A run of
    /// the same lane, size and level seen before is averaged in geometrically (costs that jumped
    /// with each job's medians made the next estimate 1.9x what it took), unless it is over 2x
    /// away: then the machine or the build changed and the new run replaces it (a kept 66-ms
    /// run, where the kernel takes 2.3, priced a CLI sweep at 3.9x what it took).
    pub fn observe(&mut self, lane: Lane, megapixels: f64, rounds: u32, seconds: f64) {
        if !(seconds.is_finite() && seconds > 0.0 && megapixels.is_finite() && megapixels > 0.0) {
            return;
        }
        let same =
            |s: &Seen| s.lane == lane && s.rounds == rounds && (s.megapixels / megapixels - 1.0).abs() < 0.1;
        let seconds = match self.seen.iter().find(|s| same(s)) {
            Some(before) if within_2x(seconds, before.seconds) => (before.seconds * seconds).sqrt(),
            _ => seconds,
        };
        self.seen.retain(|s| !same(s));
        if self.seen.len() >= KEPT {
            self.seen.remove(0);
        }
        self.seen.push(Seen { lane, megapixels, rounds, seconds });
    }

    /// The cost of a lane before any run: from its ceilings, or the rough guess.
    fn prior(&self, lane: Lane) -> (Cost, Basis) {
        let rough = lane.rough();
        let Some((_, roof)) = self.roofs.iter().find(|(l, _)| *l == lane) else {
            return (rough, Basis::Guess);
        };
        let cost = Cost {
            fixed_s: roof.fixed_s.unwrap_or(rough.fixed_s),
            per_mp_s: 1e6 * BYTES_PER_PIXEL / roof.bytes_per_s,
            per_mp_round_s: 1e6 * OPS_PER_PIXEL_ROUND / roof.ops_per_s,
        };
        (cost, Basis::Ceilings)
    }

    /// A lane's cost from the runs seen of it (its prior's shape, at the level seen): `None`
    /// when none was.
    fn fitted(&self, lane: Lane) -> Option<Cost> {
        let (prior, _) = self.prior(lane);
        let seen: Vec<&Seen> = self.seen.iter().filter(|s| s.lane == lane).collect();
        if seen.is_empty() {
            return None;
        }
        let plain: Vec<&&Seen> = seen.iter().filter(|s| s.rounds == 0).collect();
        let plain_seen = !plain.is_empty();
        // The plain cost: a line through the plain runs when they span sizes, else the prior
        // scaled to them. With none plain, worked runs whose rounds the prior says are most of
        // their time teach the rounds alone (the plain cost stays the prior's: scaled by a
        // 33-s worked run, a 0.2-s plain one was estimated at 1.6 s); other worked runs scale it.
        let rounds_bound =
            |s: &&&Seen| prior.run_s(s.megapixels, s.rounds) > 2.0 * prior.base_s(s.megapixels);
        let base_from = if !plain.is_empty() {
            plain
        } else if seen.iter().all(|s| rounds_bound(&s)) {
            Vec::new()
        } else {
            seen.iter().collect()
        };
        let scale = geometric_mean(base_from.iter().map(|s| s.seconds / prior.run_s(s.megapixels, s.rounds)));
        let mut cost = prior.scaled(scale);
        // A measured compute ceiling prices the rounds until worked runs are seen: plain runs
        // time the copies and the fixed cost, not the compute (scaled by a plain GPU run's
        // copies, a 4096-round run at 16 MP was priced at 33 s on lavapipe, where it took 9).
        let rough_round_s = lane.rough().per_mp_round_s;
        if plain_seen && (prior.per_mp_round_s - rough_round_s).abs() > rough_round_s * 1e-9 {
            cost.per_mp_round_s = prior.per_mp_round_s;
        }
        if let Some((fixed_s, per_mp_s)) = line(&base_from) {
            cost.fixed_s = fixed_s;
            cost.per_mp_s = per_mp_s;
        }
        // The rounds' share: what the worked runs took beyond the plain cost against their
        // megapixel-rounds, fitted by least squares through the origin, so that the heavy runs,
        // whose rounds are most of their time, weigh the most: a 16-round run's time is mostly
        // the worked kernel's fixed cost, and a mean of each run's share counted it as rounds.
        let worked: Vec<(f64, f64)> = seen
            .iter()
            .filter(|s| s.rounds > 0)
            .map(|s| (s.megapixels * f64::from(s.rounds), s.seconds - cost.base_s(s.megapixels)))
            .collect();
        if !worked.is_empty() {
            let moment: f64 = worked.iter().map(|(x, beyond)| x * beyond).sum();
            let squares: f64 = worked.iter().map(|(x, _)| x * x).sum();
            let mean = moment / squares.max(f64::MIN_POSITIVE);
            if mean > 0.0 {
                cost.per_mp_round_s = mean;
            } else {
                // The worked runs cost less than the plain cost says: scale all to them.
                let worked = seen.iter().filter(|s| s.rounds > 0);
                let by = geometric_mean(worked.map(|s| s.seconds / cost.run_s(s.megapixels, s.rounds)));
                cost = cost.scaled(by);
            }
        }
        Some(cost)
    }

    /// One run of `lane` at `megapixels` and `rounds`.
    #[must_use]
    pub fn run(&self, lane: Lane, megapixels: f64, rounds: u32) -> Estimate {
        if let Some(cost) = self.fitted(lane) {
            return Estimate { seconds: cost.run_s(megapixels, rounds), basis: Basis::Seen };
        }
        // One thread is about the threads' count of all of them, and the reverse.
        let threads = available_threads().max(1) as f64;
        let other = match lane {
            Lane::CpuOneThread => self.fitted(Lane::CpuAllThreads).map(|c| c.scaled(threads)),
            Lane::CpuAllThreads => self.fitted(Lane::CpuOneThread).map(|c| c.scaled(1.0 / threads)),
            Lane::Gpu | Lane::Transfer => None,
        };
        if let Some(cost) = other {
            return Estimate { seconds: cost.run_s(megapixels, rounds), basis: Basis::Seen };
        }
        let (prior, basis) = self.prior(lane);
        Estimate { seconds: prior.run_s(megapixels, rounds), basis }
    }

    /// The runs of `parts` together, without a job's overhead.
    #[must_use]
    pub fn parts(&self, parts: &[Part]) -> Estimate {
        parts.iter().fold(Estimate { seconds: 0.0, basis: Basis::Seen }, |sum, p| {
            let one = self.part_run(p);
            Estimate { seconds: sum.seconds + one.seconds * p.runs, basis: sum.basis.max(one.basis) }
        })
    }

    /// A job of kind `task` made of `parts`: the wall time seen of a kind that is the same job
    /// every time, else their runs times the overhead of such jobs seen here, else a guessed one
    /// (the estimate then rests on what its runs rest on); a sampled job capped by its budget.
    #[must_use]
    pub fn job(&self, task: Task, parts: &[Part]) -> Estimate {
        let runs = self.parts(parts);
        let units = task.overhead_units(parts);
        let mut estimate = match (self.wall(task), self.overhead(task)) {
            (Some(seconds), _) => Estimate { seconds, basis: Basis::Seen },
            // A kind that teaches no runs (a batch) rests on the overhead seen here, most of it.
            (None, Some(extra_s)) if task.fixed_overhead() => Estimate {
                seconds: runs.seconds + extra_s * units,
                basis: if task.teaches_runs() { runs.basis } else { Basis::Seen },
            },
            (None, None) if task.guessed_fixed_s().is_some() => Estimate {
                seconds: runs.seconds + task.guessed_fixed_s().unwrap_or(0.0) * units,
                basis: Basis::Guess,
            },
            // A kind that teaches no runs (the claims): the overhead learned over its parts, at
            // this machine's pace, is the wall time seen.
            (None, Some(overhead)) if !task.teaches_runs() => {
                Estimate { seconds: runs.seconds * overhead, basis: Basis::Seen }
            }
            (None, overhead) => Estimate {
                seconds: runs.seconds * overhead.unwrap_or_else(|| task.guessed_overhead()),
                basis: runs.basis,
            },
        };
        if let Some(cap_s) = task.capped_s(runs.seconds) {
            estimate.seconds = estimate.seconds.min(cap_s);
        }
        estimate
    }

    /// The most a sampled job of kind `task` made of `parts` can take (it stops at its budget),
    /// for a first estimate to say beside its guess of when it decides; `None` for other kinds.
    #[must_use]
    pub fn at_most_s(&self, task: Task, parts: &[Part]) -> Option<f64> {
        task.capped_s(self.parts(parts).seconds)
    }

    /// The overhead of jobs of kind `task` seen here: the mean of the last ones (seconds, for a
    /// kind with a fixed overhead; else a share, their geometric mean).
    fn overhead(&self, task: Task) -> Option<f64> {
        let kept = self.overheads.iter().filter(|(t, _)| *t == task).map(|(_, o)| *o);
        if task.fixed_overhead() {
            let (sum, n) = kept.fold((0.0, 0usize), |(sum, n), o| (sum + o, n + 1));
            (n > 0).then(|| sum / n as f64)
        } else {
            let shares: Vec<f64> = kept.collect();
            (!shares.is_empty()).then(|| geometric_mean(shares.into_iter()))
        }
    }

    /// Whether a job of kind `task` ran to its end here (its overhead is learned).
    #[must_use]
    pub fn has_seen(&self, task: Task) -> bool {
        self.overheads.iter().chain(&self.walls).any(|(t, _)| *t == task)
    }

    /// Learns a job's overhead: it took `wall_s` where its `parts` predict less (or more), or
    /// where its runs took `ran_s` as measured: a share of its runs, or for a conversion the
    /// seconds beyond them. Feed its runs with [`Pace::observe`] first, and leave one-time work
    /// out of `wall_s`.
    pub fn finished(&mut self, task: Task, parts: &[Part], wall_s: f64, ran_s: Option<f64>) {
        let runs_s = ran_s.filter(|s| *s > 0.0).unwrap_or_else(|| self.parts(parts).seconds);
        if !(wall_s.is_finite() && wall_s > 0.0 && runs_s > 0.0) {
            return;
        }
        // A sampled job whose first rounds alone outlast its budget says nothing of how many
        // rounds a decision takes.
        if task.sampled_within().is_some_and(|b| self.parts(parts).seconds >= b.max_time.as_secs_f64()) {
            return;
        }
        let units = task.overhead_units(parts);
        let overhead = if task.fixed_overhead() {
            (wall_s - runs_s).max(0.0) / units
        } else {
            (wall_s / runs_s).max(0.05)
        };
        let before = self
            .overhead(task)
            .map_or(runs_s, |o| if task.fixed_overhead() { runs_s + o * units } else { runs_s * o });
        keep(&mut self.overheads, task, overhead, within_2x(wall_s, before));
        if task.same_every_time() {
            let near = self.wall(task).is_none_or(|kept_s| within_2x(wall_s, kept_s));
            keep(&mut self.walls, task, wall_s, near);
        }
    }

    /// The wall time of jobs of kind `task` seen here, for a kind that is the same job every
    /// time: the geometric mean of the last ones.
    fn wall(&self, task: Task) -> Option<f64> {
        let seconds = |s: &f64| s.is_finite() && *s > 0.0;
        let kept: Vec<f64> =
            self.walls.iter().filter(|(t, s)| *t == task && seconds(s)).map(|(_, s)| *s).collect();
        (!kept.is_empty()).then(|| geometric_mean(kept.into_iter()))
    }
}

/// Whether `a` and `b` are within 2x of each other.
fn within_2x(a: f64, b: f64) -> bool {
    (0.5..=2.0).contains(&(a / b.max(1e-12)))
}

/// Keeps `value` as `task`'s newest in `kept`, its oldest dropped past [`OVERHEADS_KEPT`]; when
/// it is not `near` those kept, they are dropped first: the machine or the build changed (a 7-s
/// claims run was estimated at 24 s after it, from two older runs of 40 s).
fn keep(kept: &mut Vec<(Task, f64)>, task: Task, value: f64, near: bool) {
    if !near {
        kept.retain(|(t, _)| *t != task);
    }
    if let Some(oldest) = kept.iter().position(|(t, _)| *t == task)
        && kept.iter().filter(|(t, _)| *t == task).count() >= OVERHEADS_KEPT
    {
        kept.remove(oldest);
    }
    kept.push((task, value));
}

/// The geometric mean of positive finite values (1 when there are none).
fn geometric_mean(values: impl Iterator<Item = f64>) -> f64 {
    let logs: Vec<f64> = values.filter(|v| v.is_finite() && *v > 0.0).map(f64::ln).collect();
    if logs.is_empty() { 1.0 } else { (logs.iter().sum::<f64>() / logs.len() as f64).exp() }
}

/// The least-squares line `seconds = fixed + per_mp * megapixels` through runs spanning sizes
/// (at least 1.5x apart), both parts at least 0; `None` when they do not span.
fn line(seen: &[&&Seen]) -> Option<(f64, f64)> {
    let (lo, hi) =
        seen.iter().fold((f64::MAX, 0.0f64), |(lo, hi), s| (lo.min(s.megapixels), hi.max(s.megapixels)));
    if seen.len() < 2 || hi < lo * 1.5 {
        return None;
    }
    let n = seen.len() as f64;
    let mean_x = seen.iter().map(|s| s.megapixels).sum::<f64>() / n;
    let mean_y = seen.iter().map(|s| s.seconds).sum::<f64>() / n;
    let sxx: f64 = seen.iter().map(|s| (s.megapixels - mean_x).powi(2)).sum();
    let sxy: f64 = seen.iter().map(|s| (s.megapixels - mean_x) * (s.seconds - mean_y)).sum();
    let slope = (sxy / sxx).max(0.0);
    let fixed = (mean_y - slope * mean_x).max(0.0);
    // With the fixed part clamped, the slope through the mean again.
    Some((fixed, if fixed == 0.0 { mean_y / mean_x } else { slope }))
}

#[cfg(test)]
mod tests;
