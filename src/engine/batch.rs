//! Many files at once: whole files run in parallel on `jobs` worker threads, each file's
//! memory reserved against the budget before it is decoded, so peak memory stays bounded by the
//! files in flight. Each file's encoder still uses all cores for its stripes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use super::files::{FileReport, convert_file};
use super::{ConvertSettings, Engine, EngineError};
use crate::io::{DecodeOptions, ExportOptions, probe_file};

/// One file of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchItem {
    /// The image to read.
    pub input: PathBuf,
    /// Where its gray version goes.
    pub output: PathBuf,
}

/// How a batch runs.
#[derive(Clone, Copy, Debug)]
pub struct BatchOptions {
    /// Files converted at the same time (at least 1).
    pub jobs: usize,
    /// The conversion.
    pub settings: ConvertSettings,
    /// Decoding, including the memory budget shared by all jobs.
    pub decode: DecodeOptions,
    /// The export.
    pub export: ExportOptions,
}

/// Bytes reserved by the files in flight, against one budget.
struct MemoryGate {
    budget_bytes: u64,
    in_use_bytes: Mutex<u64>,
    released: Condvar,
}

/// A reservation; dropping it gives the bytes back.
struct Reservation<'a> {
    gate: &'a MemoryGate,
    bytes: u64,
}

impl MemoryGate {
    /// Waits until `bytes` fit the budget beside what is in flight, then reserves them. A file
    /// larger than the whole budget runs alone (its decode then refuses it with the reason).
    fn reserve(&self, bytes: u64) -> Reservation<'_> {
        let mut in_use = self.in_use_bytes.lock().unwrap_or_else(PoisonError::into_inner);
        while *in_use > 0 && in_use.saturating_add(bytes) > self.budget_bytes {
            in_use = self.released.wait(in_use).unwrap_or_else(PoisonError::into_inner);
        }
        *in_use += bytes;
        Reservation { gate: self, bytes }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut in_use = self.gate.in_use_bytes.lock().unwrap_or_else(PoisonError::into_inner);
        *in_use = in_use.saturating_sub(self.bytes);
        self.gate.released.notify_all();
    }
}

/// What a file needs in memory while it is converted: decoded image, gray result and encoded
/// output (at most about the gray size). Unknown (unreadable header) counts as nothing: the
/// decode reports the problem.
fn working_bytes(item: &BatchItem) -> u64 {
    probe_file(&item.input).map_or(0, |p| p.working_bytes + p.working_bytes / 4)
}

/// Converts every item, `options.jobs` at a time; `on_done(index, result)` is called from the
/// worker threads as each file finishes. Results come back in the items' order.
pub fn convert_batch(
    engine: &Engine,
    items: &[BatchItem],
    options: &BatchOptions,
    on_done: &(dyn Fn(usize, &Result<FileReport, EngineError>) + Sync),
) -> Vec<Result<FileReport, EngineError>> {
    // One budget for the whole batch: the gate shares it out, and each decode checks against
    // the same figure rather than the memory left while other files are in flight.
    let budget_bytes = options.decode.budget_bytes();
    let decode = DecodeOptions { memory_budget_bytes: Some(budget_bytes) };
    let gate = MemoryGate { budget_bytes, in_use_bytes: Mutex::new(0), released: Condvar::new() };
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<FileReport, EngineError>>>> =
        items.iter().map(|_| Mutex::new(None)).collect();
    let worker = || {
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else { break };
            let result = {
                let _reservation = gate.reserve(working_bytes(item));
                convert_file(engine, &item.input, &item.output, &options.settings, &decode, &options.export)
            };
            on_done(index, &result);
            *results[index].lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.clamp(1, items.len().max(1)) {
            scope.spawn(worker);
        }
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner().unwrap_or_else(PoisonError::into_inner).unwrap_or(Err(EngineError::Cancelled))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_holds_files_back_until_memory_is_free() {
        let gate = MemoryGate { budget_bytes: 100, in_use_bytes: Mutex::new(0), released: Condvar::new() };
        let first = gate.reserve(60);
        let started = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _second = gate.reserve(60);
                started.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!started.load(Ordering::SeqCst), "60 + 60 > 100 must wait");
            drop(first);
        });
        assert!(started.load(Ordering::SeqCst));
        // Larger than the budget alone: runs when nothing else is in flight.
        drop(gate.reserve(1000));
        assert_eq!(*gate.in_use_bytes.lock().expect("lock"), 0);
    }
}
