//! Time spent on one-time work: opening the GPU, compiling its pipelines, measuring this
//! machine's ceilings. Counted process-wide so that a job's estimate learns the pace of the work
//! itself, not the first job's share of what the process does once (the second job after a fresh
//! start was estimated up to 1.7x long from it).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Nanoseconds of one-time work done in this process so far.
static SPENT_NS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// How deep in one-time work this thread is (work nested in other one-time work counts once).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Leaves one level of one-time work, also when the work panicked, adding the outermost
/// level's time to its counter.
struct Level<'c>(Option<(Instant, &'c AtomicU64)>);

impl Drop for Level<'_> {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        if let Some((started, spent_ns)) = self.0 {
            spent_ns.fetch_add(super::clock::nanos_since(started), Ordering::Relaxed);
        }
    }
}

/// Runs `work`, adding its time to `spent_ns` unless this thread is in one-time work already.
fn timed_into<T>(spent_ns: &AtomicU64, work: impl FnOnce() -> T) -> T {
    let outermost = DEPTH.with(|d| {
        d.set(d.get() + 1);
        d.get() == 1
    });
    let _level = Level(outermost.then(|| (Instant::now(), spent_ns)));
    work()
}

/// Runs `work`, counting its time as one-time work (once, however deeply nested).
pub fn timed<T>(work: impl FnOnce() -> T) -> T {
    timed_into(&SPENT_NS, work)
}

/// A point in the process's one-time work: what was done since is [`OneTimeMark::since_s`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneTimeMark(u64);

impl OneTimeMark {
    /// Now.
    #[must_use]
    pub fn now() -> Self {
        Self(SPENT_NS.load(Ordering::Relaxed))
    }

    /// Seconds of one-time work done since this mark, on any thread.
    #[must_use]
    pub fn since_s(self) -> f64 {
        SPENT_NS.load(Ordering::Relaxed).saturating_sub(self.0) as f64 / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_time_work_counts_once_however_nested_and_after_a_panic() {
        let spent_ns = AtomicU64::new(0);
        let sleep = |ms| std::thread::sleep(std::time::Duration::from_millis(ms));
        let started = std::time::Instant::now();
        timed_into(&spent_ns, || {
            sleep(5);
            timed_into(&spent_ns, || sleep(100));
        });
        let wall_ns = crate::system::clock::nanos_since(started);
        // 105 ms slept at least, counted once: never more than the wall time around it (the inner
        // 100 ms counted again would exceed it by 100 ms), however slow this machine is.
        let spent = spent_ns.load(Ordering::Relaxed);
        assert!(spent >= 105_000_000 && spent <= wall_ns, "{spent} ns spent, {wall_ns} ns of wall time");
        // A panic in one-time work still leaves its level: the next work is outermost again.
        let _ = std::panic::catch_unwind(|| timed_into(&spent_ns, || panic!("probe failed")));
        let before = spent_ns.load(Ordering::Relaxed);
        timed_into(&spent_ns, || sleep(30));
        assert!(spent_ns.load(Ordering::Relaxed) - before >= 29_000_000);
        // The process's counter only grows, and a mark reads what was added since.
        let mark = OneTimeMark::now();
        timed(|| sleep(30));
        assert!(mark.since_s() >= 0.029, "{}", mark.since_s());
    }
}
