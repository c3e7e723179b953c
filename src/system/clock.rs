//! Which clock timed a figure: the one answer every report, ceiling, step and chart gives beside
//! a time, so that no figure is shown without it.

use std::fmt;

/// Which clock a figure came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Clock {
    /// The host's monotonic clock (around a CPU step, a host copy, or a submit-and-wait of a GPU
    /// step alone, dispatch and wait included).
    #[default]
    #[serde(rename = "cpu-clock")]
    CpuClock,
    /// GPU timestamp queries written around the step: the time the GPU itself spent.
    #[serde(rename = "gpu-timestamp")]
    GpuTimestamp,
    /// The sum of a part timed on the CPU clock and a part from GPU timestamps: a host-side copy
    /// and a GPU-side copy (upload, download), or the copies into the display store and the
    /// preview drawn from it, waited for (display).
    #[serde(rename = "cpu-clock+gpu-timestamp")]
    Mixed,
}

impl Clock {
    /// GPU timestamps when `on_gpu`, else the CPU clock.
    #[must_use]
    pub fn gpu_if(on_gpu: bool) -> Self {
        if on_gpu { Self::GpuTimestamp } else { Self::CpuClock }
    }

    /// The label printed next to every figure (as it is written in JSON).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::GpuTimestamp => "gpu-timestamp",
            Self::CpuClock => "cpu-clock",
            Self::Mixed => "cpu-clock+gpu-timestamp",
        }
    }

    /// A compact label for tight chart axes.
    #[must_use]
    pub fn short_label(self) -> &'static str {
        match self {
            Self::GpuTimestamp => "gpu-ts",
            Self::CpuClock => "cpu",
            Self::Mixed => "cpu+gpu-ts",
        }
    }

    /// The clock of a sum of figures timed by `self` and `other`.
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        if self == other { self } else { Self::Mixed }
    }
}

/// Nanoseconds of a duration, saturating.
#[must_use]
pub fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Nanoseconds since `t`, saturating.
#[must_use]
pub fn nanos_since(t: std::time::Instant) -> u64 {
    nanos(t.elapsed())
}

/// The label of a figure timed by [`thread_cpu_ns`]: not a [`Clock`] of any report, only claim 4's.
pub const THREAD_CPU_LABEL: &str = "thread-cpu-time";

/// The CPU time the calling thread has run, in nanoseconds: unlike the monotonic clock, it does
/// not count the time the thread waited for a core (`None` where the platform has no such clock).
#[must_use]
pub fn thread_cpu_ns() -> Option<u64> {
    cpu_time_ns(false)
}

/// The CPU time all of this process's threads have run, in nanoseconds (`None` where the
/// platform has no such clock).
#[must_use]
pub fn process_cpu_ns() -> Option<u64> {
    cpu_time_ns(true)
}

/// The CPU time of this process (`whole`) or of the calling thread, in nanoseconds.
fn cpu_time_ns(whole: bool) -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::time::ClockId;
        let t =
            rustix::time::clock_gettime(if whole { ClockId::ProcessCPUTime } else { ClockId::ThreadCPUTime });
        let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
        u64::try_from(ns).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = whole;
        None
    }
}

/// The busy time of a step timed in pieces (`key`, start, end, clock): the pieces of one key are
/// one worker's (a lane, or threads that share one step) and count once where they overlap,
/// different keys add. On the clock of the pieces that took time (of all, if none did); `None`
/// for no pieces.
pub fn busy_time<K: Ord + Copy>(mut pieces: Vec<(K, u64, u64, Clock)>) -> Option<(u64, Clock)> {
    pieces.sort_unstable_by_key(|&(key, start, end, _)| (key, start, end));
    let mut ns = 0;
    let mut covered: Option<(K, u64)> = None;
    for &(key, start, end, _) in &pieces {
        // What of this piece no earlier piece of its key covered.
        let until = covered.filter(|&(k, _)| k == key).map(|(_, until)| until);
        ns += end.saturating_sub(until.map_or(start, |u| start.max(u)));
        covered = Some((key, until.map_or(end, |u| u.max(end))));
    }
    let timed = pieces.iter().filter(|p| p.2 > p.1).map(|p| p.3).reduce(Clock::and);
    let clock = timed.or_else(|| pieces.iter().map(|p| p.3).reduce(Clock::and))?;
    Some((ns, clock))
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Seconds since 1970 now, as the cache and result files stamp them (0 on a clock set before).
#[must_use]
pub fn unix_now_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::{Clock, busy_time};

    #[test]
    fn pieces_of_one_key_count_once_and_keys_add() {
        let (cpu, gpu) = (Clock::CpuClock, Clock::GpuTimestamp);
        assert_eq!(busy_time::<u8>(Vec::new()), None);
        // Two threads copying at once (key 0): 0..10 and 5..12 cover 12; a GPU copy (key 1)
        // at the same time adds its 4.
        let pieces = vec![(0, 0, 10, cpu), (1, 8, 12, gpu), (0, 5, 12, cpu), (0, 20, 21, cpu)];
        assert_eq!(busy_time(pieces), Some((17, Clock::Mixed)));
        // A piece that took no time lends no clock, unless none took any.
        assert_eq!(busy_time(vec![(0, 0, 3, gpu), (1, 5, 5, cpu)]), Some((3, gpu)));
        assert_eq!(busy_time(vec![(0, 5, 5, cpu)]), Some((0, cpu)));
    }

    #[test]
    fn the_thread_clock_counts_this_threads_work_not_its_sleep() {
        let Some(start) = super::thread_cpu_ns() else { return };
        std::thread::sleep(std::time::Duration::from_millis(30));
        let slept = super::thread_cpu_ns().expect("a thread clock") - start;
        let spinning = std::time::Instant::now();
        let mut x = 0u64;
        while spinning.elapsed() < std::time::Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let spun = super::thread_cpu_ns().expect("a thread clock") - start - slept;
        // Sleeping costs next to no CPU time; spinning for 30 ms of wall costs some (however few
        // of those 30 ms a loaded machine gave this thread, more than the sleep's).
        assert!(slept < 10_000_000 && spun > slept, "slept {slept} ns, spun {spun} ns");
    }

    #[test]
    fn a_clock_is_written_as_it_is_labelled_and_read_back() {
        for clock in [Clock::CpuClock, Clock::GpuTimestamp, Clock::Mixed] {
            let json = serde_json::to_string(&clock).expect("serializes");
            assert_eq!(json, format!("\"{}\"", clock.label()));
            assert_eq!(serde_json::from_str::<Clock>(&json).expect("reads back"), clock);
        }
        assert_eq!(Clock::gpu_if(true), Clock::GpuTimestamp);
        assert_eq!(Clock::gpu_if(false), Clock::CpuClock);
        assert_eq!(Clock::CpuClock.and(Clock::GpuTimestamp), Clock::Mixed);
        assert_eq!(Clock::GpuTimestamp.and(Clock::GpuTimestamp), Clock::GpuTimestamp);
    }
}
