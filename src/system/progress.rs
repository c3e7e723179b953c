//! How far one conversion is, counted in pixels as its pieces finish: a counter any layer may
//! bump (the CPU's parallel chunks, the GPU's slices) and any thread may read (the app's status
//! bar, the CLI's progress line). Relaxed atomics, one bump per piece: nothing in a hot loop.

use std::sync::atomic::{AtomicU64, Ordering};

/// Pixels done of a conversion's total, shared between the run and whoever watches it.
#[derive(Debug, Default)]
pub struct PixelProgress {
    done: AtomicU64,
    total: AtomicU64,
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

    /// Counts `pixels` more as done.
    pub fn add(&self, pixels: u64) {
        self.done.fetch_add(pixels, Ordering::Relaxed);
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
    use super::PixelProgress;

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
}
