//! How long a size sweep will take. After a sweep of this machine: its medians per backend over
//! the sizes (interpolated on log-log axes to the sizes asked for), each run of every series
//! counted, times how much longer the whole sweep took than its medians account for (cold runs,
//! making the images, the memory-stream baseline, allocation). Before one: this session's runs
//! per megapixel, then a rough guess. The pace is kept between launches, per adapter and thread
//! count.

use std::sync::Arc;
use std::time::Instant;

use crate::app::session::{JobKind, Session};
use crate::engine::{Series, SweepPoint, SweepResult};

/// Where the pace of the last sweep is kept between launches (egui's persisted memory).
const PACE_ID: &str = "graylab sweep pace";

/// Sweeps end to end take about this much longer than the medians they report, before one has
/// been timed here.
const GUESSED_OVERHEAD: f64 = 1.5;

/// A backend's cost per size: (megapixels, milliseconds per run of all its series together),
/// sorted by size.
type Curve = Vec<[f64; 2]>;

/// What a finished sweep showed of this machine's pace.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepPace {
    /// The adapter and CPU threads the sweep ran on (a pace is only used on the same).
    pub machine: String,
    /// The CPU's series (1 and all threads) per size.
    cpu: Curve,
    /// The GPU's series (end to end, and data resident) per size; empty when it had no GPU.
    gpu: Curve,
    /// The sweep's wall time over the time its runs' medians add up to.
    overhead: f64,
}

impl SweepPace {
    /// What a sweep on `machine` of `points` with `runs` warm runs each shows, when it took
    /// `wall_s` seconds from its first size to its verdict; `None` when it measured nothing.
    #[must_use]
    pub fn learn(points: &[SweepPoint], runs: usize, machine: &str, wall_s: f64) -> Option<Self> {
        let curve = |series: &[Series]| -> Curve {
            points
                .iter()
                .filter_map(|p| {
                    let ms: Option<Vec<f64>> =
                        series.iter().map(|s| p.median_ns(*s).map(|ns| ns as f64 / 1e6)).collect();
                    Some([p.megapixels, ms?.iter().sum()])
                })
                .collect()
        };
        let cpu = curve(&[Series::Cpu1, Series::CpuAll]);
        let gpu = curve(&[Series::GpuTotal, Series::GpuResident]);
        let runs = runs.max(1) as f64 + 1.0;
        let medians_s: f64 = cpu.iter().chain(&gpu).map(|[_, ms]| ms * runs / 1e3).sum();
        if cpu.is_empty() || medians_s <= 0.0 || !wall_s.is_finite() {
            return None;
        }
        let overhead = (wall_s / medians_s).clamp(1.0, 20.0);
        Some(Self { machine: machine.to_owned(), cpu, gpu, overhead })
    }
}

/// The pace of the last sweep timed on this machine, and the clock of the one running (kept by
/// the sweep window).
#[derive(Default)]
pub struct SweepClock {
    /// The last sweep's pace (read from egui's memory on the first frame).
    pub pace: Option<SweepPace>,
    read: bool,
    /// When the running sweep started measuring its first size.
    measuring_since: Option<Instant>,
    /// The sweep result last seen, to time the next one that arrives.
    seen: Option<Arc<SweepResult>>,
}

impl SweepClock {
    /// Times each sweep from its first size to its result (whether or not the window is open)
    /// and learns its pace, kept in egui's memory between launches.
    pub fn track(&mut self, ctx: &egui::Context, session: &Session) {
        let id = egui::Id::unique(PACE_ID);
        if !self.read {
            self.read = true;
            self.pace = ctx.data_mut(|d| d.get_persisted::<SweepPace>(id));
        }
        if let Some(r) = session.sweep()
            && !self.seen.as_ref().is_some_and(|seen| Arc::ptr_eq(seen, r))
        {
            self.seen = Some(Arc::clone(r));
            let learnt = self.measuring_since.take().and_then(|since| {
                SweepPace::learn(&r.points, r.runs, &machine(session), since.elapsed().as_secs_f64())
            });
            if let Some(pace) = learnt {
                ctx.data_mut(|d| d.insert_persisted(id, pace.clone()));
                self.pace = Some(pace);
            }
        }
        let sweep = session.current_job().filter(|(kind, _)| *kind == JobKind::Sweep);
        // The clock starts at the first size: the ceilings a first sweep may measure are apart.
        let measuring = sweep
            .as_ref()
            .and_then(|(_, p)| p.as_ref())
            .is_some_and(|p| p.what.starts_with("Sweep: ") && p.what.ends_with(" MP"));
        match (sweep, measuring) {
            (Some(_), true) => {
                self.measuring_since.get_or_insert_with(Instant::now);
            }
            (Some(_), false) => {}
            (None, _) => self.measuring_since = None,
        }
    }
}

/// The adapter and CPU threads a sweep's pace belongs to.
pub fn machine(session: &Session) -> String {
    let adapter = match session.gpu() {
        Some(g) if session.gpu_usable() => g.adapter_info().name.clone(),
        _ => "CPU only".to_owned(),
    };
    format!("{adapter} · {} threads", crate::engine::available_threads())
}

/// What an estimate is based on, from the best to the worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Basis {
    /// A sweep timed on this machine.
    LastSweep,
    /// This session's runs of both backends.
    Runs,
    /// A fixed guess for a backend that has not run.
    Guess,
}

/// What is known of each backend's pace, for [`estimate_secs`].
pub struct Pace<'a> {
    /// The last sweep on this machine, if any.
    pub sweep: Option<&'a SweepPace>,
    /// Seconds per megapixel of one CPU kernel run at all threads, from this session's runs.
    pub cpu_s_per_mp: Option<f64>,
    /// Seconds per megapixel of one GPU run end to end, from this session's runs.
    pub gpu_s_per_mp: Option<f64>,
    /// CPU threads.
    pub threads: usize,
    /// Whether the sweep will measure the GPU.
    pub gpu: bool,
}

/// Seconds a sweep of `sizes_mp` with `runs` warm runs a size will take, and the weakest basis
/// of its parts.
#[must_use]
pub fn estimate_secs(pace: &Pace<'_>, sizes_mp: &[f64], runs: u32) -> (f64, Basis) {
    let per_size = f64::from(runs) + 1.0;
    let sweep = pace.sweep;
    let threads = pace.threads.max(1) as f64;
    // One run of the CPU series at `mp`: one thread is about `threads` times all of them.
    let cpu = |mp: f64| match (sweep.and_then(|s| at(&s.cpu, mp)), pace.cpu_s_per_mp) {
        (Some(ms), _) => (ms / 1e3, Basis::LastSweep),
        (None, Some(s)) => (s * mp * (threads + 1.0), Basis::Runs),
        (None, None) => (0.004 * mp * (threads + 1.0), Basis::Guess),
    };
    // One run of the GPU series: end to end, and the kernel on resident data (about as long).
    let gpu = |mp: f64| match (sweep.and_then(|s| at(&s.gpu, mp)), pace.gpu_s_per_mp) {
        _ if !pace.gpu => (0.0, Basis::LastSweep),
        (Some(ms), _) => (ms / 1e3, Basis::LastSweep),
        (None, Some(s)) => (2.0 * s * mp, Basis::Runs),
        (None, None) => (0.04 * mp, Basis::Guess),
    };
    let overhead = sweep.map_or(GUESSED_OVERHEAD, |s| s.overhead);
    let mut basis = Basis::LastSweep;
    let mut secs = 0.0;
    for &mp in sizes_mp {
        let ((c, cb), (g, gb)) = (cpu(mp), gpu(mp));
        basis = basis.max(cb).max(gb);
        secs += per_size * (c + g) * overhead;
    }
    (secs, basis)
}

/// `curve` at `mp`: interpolated on log-log axes between the sizes measured; past the largest,
/// in proportion to the size; below the smallest, as its square root (fixed costs dominate small
/// images). `None` for an empty curve.
fn at(curve: &[[f64; 2]], mp: f64) -> Option<f64> {
    let (first, last) = (curve.first()?, curve.last()?);
    if mp <= first[0] {
        return Some(first[1] * (mp / first[0]).sqrt());
    }
    if mp >= last[0] {
        return Some(last[1] * mp / last[0]);
    }
    let i = curve.iter().position(|p| p[0] >= mp)?;
    let (a, b) = (curve.get(i.checked_sub(1)?)?, curve.get(i)?);
    let t = (mp.ln() - a[0].ln()) / (b[0].ln() - a[0].ln());
    let log_ms = a[1].max(1e-6).ln() * (1.0 - t) + b[1].max(1e-6).ln() * t;
    Some(log_ms.exp())
}

/// `1 min 05 s`-style durations.
#[must_use]
pub fn duration(secs: f64) -> String {
    let secs = secs.round();
    if secs < 60.0 {
        format!("{secs:.0} s")
    } else {
        format!("{:.0} min {:02.0} s", (secs / 60.0).floor(), secs % 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Stats, SweepPoint};

    fn point(mp: f64, ms: [f64; 5]) -> SweepPoint {
        let stats = |ms: f64| Stats { min_ns: 0, median_ns: (ms * 1e6) as u64, max_ns: 0, runs: 3 };
        SweepPoint {
            megapixels: mp,
            width: 0,
            height: 0,
            series: Series::ALL.iter().zip(ms).map(|(s, ms)| (*s, stats(ms))).collect(),
            upload_gb_per_s: None,
            download_gb_per_s: None,
            cpu_stream: None,
            rates: Vec::new(),
            modelled: None,
            work_rounds: 0,
            end_to_end: None,
            busy: None,
        }
    }

    #[test]
    fn after_a_sweep_the_same_sweep_is_estimated_at_what_it_took() {
        // Series in `Series::ALL` order: cpu 1 thread, all threads, GPU total, kernel, resident.
        let points =
            [point(1.0, [0.4, 0.4, 22.0, 18.0, 9.0]), point(16.0, [15.0, 17.0, 234.0, 185.0, 214.0])];
        // 4 runs a size of 31.8 and 480 ms: 2.0472 s of medians; the sweep took 3.0708 s.
        let pace = SweepPace::learn(&points, 3, "lavapipe · 2 threads", 3.0708).expect("learnt");
        assert!((pace.overhead - 1.5).abs() < 0.01, "{pace:?}");
        let with = |sweep| Pace { sweep, cpu_s_per_mp: None, gpu_s_per_mp: None, threads: 2, gpu: true };
        let (secs, basis) = estimate_secs(&with(Some(&pace)), &[1.0, 16.0], 3);
        assert!((secs - 3.0708).abs() < 0.001 && basis == Basis::LastSweep, "{secs} {basis:?}");
        // More runs, and a size beyond the largest: in proportion.
        let (more, _) = estimate_secs(&with(Some(&pace)), &[1.0, 16.0], 7);
        assert!((more - 3.0708 * 2.0).abs() < 0.002, "{more}");
        let (big, _) = estimate_secs(&with(Some(&pace)), &[32.0], 3);
        assert!((big - 4.0 * 1.5 * (64.0 + 896.0) / 1e3).abs() < 1e-6, "{big}");
        // Between two sizes, on the straight line between them on log-log axes.
        let (four, _) = estimate_secs(&with(Some(&pace)), &[4.0], 3);
        let (cpu, gpu) = ((0.8f64 * 32.0).sqrt(), (31.0f64 * 448.0).sqrt());
        assert!((four - 4.0 * 1.5 * (cpu + gpu) / 1e3).abs() < 1e-6, "{four}");
        // Before any sweep or run: a guess, said so.
        assert_eq!(estimate_secs(&with(None), &[1.0], 3).1, Basis::Guess);
        let runs = Pace { cpu_s_per_mp: Some(0.001), gpu_s_per_mp: Some(0.015), ..with(None) };
        assert_eq!(estimate_secs(&runs, &[1.0], 3).1, Basis::Runs);
        let cpu_only = Pace { gpu: false, ..with(None) };
        assert_eq!(estimate_secs(&Pace { cpu_s_per_mp: Some(0.001), ..cpu_only }, &[1.0], 3).1, Basis::Runs);
    }

    #[test]
    fn durations_read_as_minutes_and_seconds() {
        assert_eq!(duration(5.4), "5 s");
        assert_eq!(duration(59.6), "1 min 00 s");
        assert_eq!(duration(496.0), "8 min 16 s");
    }
}
