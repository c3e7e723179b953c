//! The one process-wide memory budget: every decode (and every synthetic benchmark image)
//! reserves its bytes here before allocating, so images decoded in parallel never add up to more
//! than the machine can give.
//!
//! The budget's capacity is three quarters of the smallest [`crate::system::memory::headroom`], read
//! afresh whenever nothing is reserved, or exactly [`crate::system::memory::BUDGET_ENV`] when that is
//! set. A reservation is released when its [`Reservation`] is dropped.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::ThreadId;

use crate::system::memory::{BudgetSource, budget_override_bytes, headroom};

/// The budget is refused: the bytes asked for do not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "needs {needed} but only {budget} may be used (limited by {source}){held}",
    needed = crate::system::human_byte_pair(*needed_bytes, *budget_bytes).0,
    budget = crate::system::human_byte_pair(*needed_bytes, *budget_bytes).1,
    source = limited_by,
    held = held_words(*held_bytes)
)]
pub struct OverBudget {
    /// Bytes asked for.
    pub needed_bytes: u64,
    /// Bytes that may be used now: the whole budget where the bytes could never fit, else what
    /// the reservations held now leave free.
    pub budget_bytes: u64,
    /// Bytes reservations held now (work under way: an open image, other files) take from the
    /// budget, where the bytes would fit without them; else 0.
    pub held_bytes: u64,
    /// Which limit decided the budget.
    pub limited_by: BudgetSource,
}

/// ", as work under way holds N" where reservations held now made the refusal.
fn held_words(held_bytes: u64) -> String {
    if held_bytes == 0 {
        String::new()
    } else {
        format!(", as work under way holds {}", crate::system::human_bytes(held_bytes))
    }
}

/// Bytes `copies` working copies of a conversion hold: each the whole input of `in_bytes` and
/// its output of `out_bytes`, or, where one band of at most `band_in_bytes` of input is held at a
/// time (a GPU run's buffers), that band's input and its output in proportion, rounded up.
#[must_use]
pub fn working_copies_bytes(in_bytes: u64, out_bytes: u64, copies: u32, band_in_bytes: Option<u64>) -> u64 {
    let per_copy = match band_in_bytes {
        Some(band) if band < in_bytes => {
            let out = (u128::from(out_bytes) * u128::from(band)).div_ceil(u128::from(in_bytes));
            band.saturating_add(u64::try_from(out).unwrap_or(u64::MAX))
        }
        _ => in_bytes.saturating_add(out_bytes),
    };
    per_copy.saturating_mul(u64::from(copies))
}

/// Gray planes an operation after the grayscale ([`crate::pixel::Op`]) holds besides the image
/// and its gray result: whole ones (its output), and copies of one band of at most
/// `band_bytes` of the plane (a GPU stage's buffers and staging).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCopies {
    /// Whole gray planes.
    pub whole: u32,
    /// Copies of one band of the plane.
    pub banded: u32,
    /// The most bytes of the plane one band holds; `None`: the whole plane.
    pub band_bytes: Option<u64>,
}

impl OpCopies {
    /// None: no op.
    pub const NONE: Self = Self { whole: 0, banded: 0, band_bytes: None };

    /// Bytes these copies hold for a gray plane of `plane_bytes`.
    #[must_use]
    pub fn bytes(self, plane_bytes: u64) -> u64 {
        let band = self.band_bytes.map_or(plane_bytes, |b| b.min(plane_bytes));
        plane_bytes
            .saturating_mul(u64::from(self.whole))
            .saturating_add(band.saturating_mul(u64::from(self.banded)))
    }
}

#[derive(Default)]
struct State {
    capacity_bytes: u64,
    source: Option<BudgetSource>,
    reserved_bytes: u64,
    /// Reservations held, per thread that made them: a thread that holds one never waits.
    held: HashMap<ThreadId, usize>,
    /// Threads waiting for bytes to be released.
    waiting: Vec<ThreadId>,
}

/// The process-wide memory budget; see [`budget`].
pub struct MemoryBudget {
    state: Mutex<State>,
    released: Condvar,
}

/// Bytes held against the [`MemoryBudget`] until dropped.
#[derive(Debug)]
#[must_use = "the bytes are released as soon as the reservation is dropped"]
pub struct Reservation {
    bytes: u64,
    owner: ThreadId,
}

/// The process-wide memory budget.
pub fn budget() -> &'static MemoryBudget {
    static BUDGET: OnceLock<MemoryBudget> = OnceLock::new();
    BUDGET.get_or_init(|| MemoryBudget { state: Mutex::new(State::default()), released: Condvar::new() })
}

impl MemoryBudget {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The capacity (all reservations together) and what limits it; read afresh when idle.
    #[must_use]
    pub fn capacity(&self) -> (u64, BudgetSource) {
        let mut state = self.lock();
        refresh(&mut state);
        (state.capacity_bytes, state.source.unwrap_or(BudgetSource::Fallback))
    }

    /// Reserves `bytes` if they fit now; never waits.
    pub fn try_reserve(&self, bytes: u64) -> Result<Reservation, OverBudget> {
        self.reserve_within(bytes, None, false)
    }

    /// Reserves `bytes` within the budget and `cap_bytes` (a cap for this one reservation). With
    /// `wait`, waits while other threads' reservations leave too little; refuses at once what
    /// could never fit, and what does not fit now when this thread already holds a reservation
    /// (waiting for itself would never end).
    pub fn reserve_within(
        &self,
        bytes: u64,
        cap_bytes: Option<u64>,
        wait: bool,
    ) -> Result<Reservation, OverBudget> {
        let owner = std::thread::current().id();
        let mut state = self.lock();
        loop {
            refresh(&mut state);
            let source = state.source.unwrap_or(BudgetSource::Fallback);
            let (capacity, limited_by) = match cap_bytes {
                Some(cap) if cap < state.capacity_bytes => (cap, BudgetSource::Caller),
                _ => (state.capacity_bytes, source),
            };
            let free = capacity.saturating_sub(state.reserved_bytes);
            if bytes <= free {
                state.reserved_bytes += bytes;
                *state.held.entry(owner).or_default() += 1;
                return Ok(Reservation { bytes, owner });
            }
            let holds_one = state.held.get(&owner).is_some_and(|n| *n > 0);
            // Waiting helps only if others hold bytes and this would fit once they are gone
            // (the capacity is read afresh then: it may have grown).
            let others_hold = state.reserved_bytes > 0 && !holds_one;
            if !wait || !others_hold {
                let never_fits = bytes > capacity;
                return Err(OverBudget {
                    needed_bytes: bytes,
                    budget_bytes: if never_fits { capacity } else { free },
                    held_bytes: if never_fits { 0 } else { state.reserved_bytes },
                    limited_by,
                });
            }
            log::debug!(
                "waiting for {} of memory budget ({} reserved by other images)",
                crate::system::human_bytes(bytes),
                crate::system::human_bytes(state.reserved_bytes)
            );
            state.waiting.push(owner);
            state = self.released.wait(state).unwrap_or_else(PoisonError::into_inner);
            if let Some(i) = state.waiting.iter().position(|t| *t == owner) {
                state.waiting.swap_remove(i);
            }
        }
    }

    /// Whether `thread` waits now for bytes to be released.
    #[cfg(test)]
    fn waits(&self, thread: ThreadId) -> bool {
        self.lock().waiting.contains(&thread)
    }

    /// Bytes reserved now, all threads together.
    #[must_use]
    pub fn reserved_bytes(&self) -> u64 {
        self.lock().reserved_bytes
    }
}

/// Reads the limits again when nothing is reserved (what is free may have changed).
fn refresh(state: &mut State) {
    if state.reserved_bytes > 0 && state.source.is_some() {
        return;
    }
    let (bytes, source) = match budget_override_bytes() {
        Ok(Some(bytes)) => (bytes, BudgetSource::Environment),
        unset_or_bad => {
            if let Err(message) = unset_or_bad {
                // The limits are read again and again; the bad setting is told once per process.
                static TOLD: std::sync::Once = std::sync::Once::new();
                TOLD.call_once(|| log::warn!("{message}; using the limits of the machine instead"));
            }
            let h = headroom();
            (h.bytes / 4 * 3, h.source)
        }
    };
    state.capacity_bytes = bytes;
    state.source = Some(source);
}

impl Reservation {
    /// Bytes held.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let budget = budget();
        let mut state = budget.lock();
        state.reserved_bytes = state.reserved_bytes.saturating_sub(self.bytes);
        if let Some(n) = state.held.get_mut(&self.owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                state.held.remove(&self.owner);
            }
        }
        drop(state);
        budget.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use crate::system::memory_budget::*;

    #[test]
    fn working_copies_hold_a_band_and_its_output_in_proportion() {
        // Whole: 300 in, 100 out, twice.
        assert_eq!(working_copies_bytes(300, 100, 2, None), 800);
        assert_eq!(working_copies_bytes(300, 100, 2, Some(300)), 800);
        // A band of 120 of 300 bytes: 120 in and 40 out, each copy.
        assert_eq!(working_copies_bytes(300, 100, 2, Some(120)), 320);
        // The output's share rounded up; nothing overflows.
        assert_eq!(working_copies_bytes(300, 100, 1, Some(100)), 100 + 34);
        assert_eq!(working_copies_bytes(u64::MAX, u64::MAX, 3, None), u64::MAX);
        assert_eq!(working_copies_bytes(300, 100, 0, Some(1)), 0);
    }

    #[test]
    fn an_ops_copies_are_its_whole_planes_and_its_bands() {
        let gpu = OpCopies { whole: 1, banded: 4, band_bytes: Some(25) };
        // A plane of 100 bytes in bands of 25: the output whole, four bands.
        assert_eq!(gpu.bytes(100), 100 + 4 * 25);
        // A plane smaller than a band: every copy whole.
        assert_eq!(gpu.bytes(10), 50);
        assert_eq!(OpCopies { whole: 1, ..OpCopies::default() }.bytes(100), 100);
        assert_eq!(OpCopies::default().bytes(100), 0);
        assert_eq!(gpu.bytes(u64::MAX), u64::MAX);
    }

    #[test]
    fn a_refusal_shows_two_figures_that_differ() {
        let refused = OverBudget {
            needed_bytes: 100_000_000,
            budget_bytes: 99_990_000,
            held_bytes: 0,
            limited_by: crate::system::memory::BudgetSource::Environment,
        };
        let message = refused.to_string();
        assert_eq!(
            message,
            "needs 95.37 MiB but only 95.36 MiB may be used (limited by GRAYLAB_MEMORY_BUDGET)"
        );
        // Refused for what work under way holds: said so, with its figure.
        let held = OverBudget { budget_bytes: 50 << 20, held_bytes: 450 << 20, ..refused };
        assert_eq!(
            held.to_string(),
            "needs 95.4 MiB but only 50.0 MiB may be used (limited by GRAYLAB_MEMORY_BUDGET), as work under way \
             holds 450.0 MiB"
        );
    }

    #[test]
    fn reservations_add_up_and_are_released_on_drop() {
        let b = budget();
        let (capacity, _) = b.capacity();
        assert!(capacity > 0);
        let before = b.reserved_bytes();
        let r = b.try_reserve(1000).expect("1000 bytes fit");
        assert_eq!(r.bytes(), 1000);
        assert!(b.reserved_bytes() >= before + 1000);
        // This thread holds a reservation: what does not fit is refused, not waited for.
        let err = b.reserve_within(u64::MAX, None, true).expect_err("never fits");
        assert_eq!(err.needed_bytes, u64::MAX);
        // What could never fit is told the whole cap; what fits it but not beside the
        // reservations held is told what they leave, and what they hold.
        let err = b.reserve_within(10_000, Some(5_000), true).expect_err("over the cap");
        assert_eq!((err.limited_by, err.budget_bytes, err.held_bytes), (BudgetSource::Caller, 5_000, 0));
        let err = b.reserve_within(4_500, Some(5_000), true).expect_err("not beside the 1000 held");
        assert!(err.budget_bytes <= 4_000 && err.held_bytes >= 1_000, "{err:?}");
        drop(r);
    }

    #[test]
    fn a_waiting_reservation_gets_in_when_another_is_released() {
        let b = budget();
        let (capacity, _) = b.capacity();
        // Waits for what other tests hold, if any: more than half never fits beside another.
        let big = b
            .reserve_within(capacity / 2 + 1, None, true)
            .expect("half the budget fits once others are released");
        let waiter = std::thread::Builder::new()
            .name("graylab-test-waiter".into())
            .spawn(move || {
                let r = budget().reserve_within(capacity / 2 + 1, None, true).map(|r| r.bytes());
                r.expect("fits once the first is released")
            })
            .expect("start a thread");
        // No sleep: the waiter is seen waiting before the first reservation is released.
        while !b.waits(waiter.thread().id()) {
            assert!(!waiter.is_finished(), "the second half did not wait for the first");
            std::thread::yield_now();
        }
        drop(big);
        assert_eq!(waiter.join().expect("no panic"), capacity / 2 + 1);
    }
}
