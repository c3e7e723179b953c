//! How far one conversion is, counted in pixels as its pieces finish: a counter any layer may
//! bump (the CPU's parallel chunks, the GPU's slices) and any thread may read (the app's status
//! bar, the CLI's progress line). Relaxed atomics, one bump per piece: nothing in a hot loop.
//!
//! The counter also carries a [`Hold`]: a point where a test stops the work it watches until it
//! lets it go, so that Stop, Esc or a new setting lands inside a run by construction, not by
//! racing a long one.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// Pixels done of a conversion's total, shared between the run and whoever watches it.
#[derive(Debug, Default)]
pub struct PixelProgress {
    done: AtomicU64,
    total: AtomicU64,
    hold: Hold,
}

/// Where an armed [`Hold`] stops the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HoldAt {
    /// After the first piece of pixels is counted (a GPU run between two submissions).
    Pixels = 1,
    /// At the job's next step (a sweep's next size), once its progress says which.
    Step = 2,
}

/// A one-time stop for tests: armed, the work waits at the first point of its kind until
/// [`Hold::release`]; unarmed (always, outside tests) a point costs one relaxed load.
#[derive(Debug, Default)]
pub struct Hold {
    /// 0 when unarmed, else the [`HoldAt`] armed.
    armed: AtomicU8,
    state: Mutex<HoldState>,
    changed: Condvar,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum HoldState {
    #[default]
    Open,
    Armed,
    Holding,
    Released,
}

impl Hold {
    fn lock(&self) -> std::sync::MutexGuard<'_, HoldState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Arms the hold: the work stops at the next point `at` (once).
    pub fn arm(&self, at: HoldAt) {
        *self.lock() = HoldState::Armed;
        self.armed.store(at as u8, Ordering::Release);
    }

    /// Whether the work is waiting at the hold now.
    #[must_use]
    pub fn is_holding(&self) -> bool {
        *self.lock() == HoldState::Holding
    }

    /// Lets the work go on (or disarms a hold not reached yet).
    pub fn release(&self) {
        self.armed.store(0, Ordering::Release);
        *self.lock() = HoldState::Released;
        self.changed.notify_all();
    }

    /// A point of kind `at`: waits here while an armed hold of that kind holds the work.
    pub fn point(&self, at: HoldAt) {
        if self.armed.load(Ordering::Acquire) != at as u8 {
            return;
        }
        let mut state = self.lock();
        if *state != HoldState::Armed {
            return;
        }
        *state = HoldState::Holding;
        self.changed.notify_all();
        while *state == HoldState::Holding {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl PixelProgress {
    /// A counter with nothing started.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts counting a run of `total` pixels from 0 (a later run of the same counter starts
    /// over).
    pub fn start(&self, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    /// Counts `pixels` more as done (and waits there if a test holds the work at its pixels).
    pub fn add(&self, pixels: u64) {
        self.done.fetch_add(pixels, Ordering::Relaxed);
        self.hold.point(HoldAt::Pixels);
    }

    /// The hold of the work this counter watches.
    #[must_use]
    pub fn hold(&self) -> &Hold {
        &self.hold
    }

    /// Pixels counted done so far.
    #[must_use]
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Pixels of the run in all (0 before one started).
    #[must_use]
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// The share done, 0 to 1; `None` before a run started.
    #[must_use]
    pub fn fraction(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| (self.done() as f64 / total as f64).min(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::{HoldAt, PixelProgress};

    #[test]
    fn a_run_counts_from_zero_to_its_total_and_a_new_one_starts_over() {
        let p = PixelProgress::new();
        assert_eq!(p.fraction(), None, "nothing started");
        p.start(400);
        p.add(100);
        assert_eq!((p.done(), p.total(), p.fraction()), (100, 400, Some(0.25)));
        p.add(300);
        assert_eq!(p.fraction(), Some(1.0));
        p.start(10);
        assert_eq!((p.done(), p.total()), (0, 10));
    }

    #[test]
    fn an_armed_hold_stops_the_work_at_its_first_point_until_released() {
        let p = std::sync::Arc::new(PixelProgress::new());
        p.hold().point(HoldAt::Pixels);
        p.hold().arm(HoldAt::Pixels);
        p.hold().point(HoldAt::Step);
        assert!(!p.hold().is_holding(), "a point of another kind passes");
        p.start(3);
        let work = std::sync::Arc::clone(&p);
        let worker = std::thread::Builder::new()
            .name("graylab-test-held".into())
            .spawn(move || {
                work.add(1);
                work.add(1);
                work.add(1);
            })
            .expect("start a thread");
        while !p.hold().is_holding() {
            std::thread::yield_now();
        }
        assert_eq!(p.done(), 1, "held after the first piece, before the second");
        p.hold().release();
        worker.join().expect("no panic");
        assert_eq!(p.done(), 3, "released, the work runs to its end");
        p.hold().point(HoldAt::Pixels);
        assert!(!p.hold().is_holding(), "a hold stops the work once");
    }
}
