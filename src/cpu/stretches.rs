//! When each thread of a parallel kernel worked: the chunks one thread ran back to back, joined
//! into stretches, so a trace shows each thread's share and its idle gaps without an event per
//! chunk. Two clock reads and an uncontended lock per chunk of [`super::CHUNK_PIXELS`] pixels.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A chunk that starts this soon after its thread's last one ended continues that stretch.
pub const STRETCH_GAP: Duration = Duration::from_micros(10);

/// One thread's chunks, run back to back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// The rayon thread index within its pool, `None` for a thread outside it.
    pub thread: Option<usize>,
    /// When its first chunk started.
    pub started: Instant,
    /// When its last chunk ended.
    pub ended: Instant,
    /// How many chunks it ran.
    pub chunks: u32,
}

/// The stretches of one parallel run, a slot per thread (and one for a thread outside the
/// pool), filled as chunks end.
#[derive(Debug)]
pub struct ThreadStretches {
    slots: Vec<Mutex<Vec<Stretch>>>,
}

impl ThreadStretches {
    /// Stretches for a run on `threads` threads.
    #[must_use]
    pub fn new(threads: usize) -> Self {
        Self { slots: (0..=threads).map(|_| Mutex::default()).collect() }
    }

    /// Records that the calling thread ran a chunk from `started` to `ended`.
    pub fn record(&self, started: Instant, ended: Instant) {
        let thread = rayon::current_thread_index().filter(|&t| t + 1 < self.slots.len());
        let Some(slot) = self.slots.get(thread.unwrap_or(self.slots.len() - 1)) else { return };
        let mut stretches = slot.lock().unwrap_or_else(PoisonError::into_inner);
        match stretches.last_mut() {
            Some(last) if started.saturating_duration_since(last.ended) <= STRETCH_GAP => {
                last.ended = ended;
                last.chunks += 1;
            }
            _ => stretches.push(Stretch { thread, started, ended, chunks: 1 }),
        }
    }

    /// Every thread's stretches, thread by thread, each thread's in order.
    #[must_use]
    pub fn into_stretches(self) -> Vec<Stretch> {
        self.slots
            .into_iter()
            .flat_map(|slot| slot.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_back_to_back_join_and_a_gap_starts_a_new_stretch() {
        let stretches = ThreadStretches::new(2);
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        // Outside a pool: the last slot, thread `None`.
        stretches.record(at(0), at(100));
        stretches.record(at(105), at(200));
        stretches.record(at(500), at(600));
        let got = stretches.into_stretches();
        assert_eq!(
            got,
            vec![
                Stretch { thread: None, started: at(0), ended: at(200), chunks: 2 },
                Stretch { thread: None, started: at(500), ended: at(600), chunks: 1 },
            ]
        );
    }
}
