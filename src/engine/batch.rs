//! Many files at once: whole files run in parallel on `jobs` worker threads, each file's
//! memory reserved against the budget before it is decoded, so peak memory stays bounded by the
//! files in flight. Each file's encoder still uses all cores for its stripes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use super::files::{FileReport, convert_file};
use super::{ConvertSettings, Engine, EngineError};
use crate::io::{DecodeOptions, ExportOptions};

/// One file of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchItem {
    /// The image to read.
    pub input: PathBuf,
    /// Where its gray version goes.
    pub output: PathBuf,
}

/// How a batch runs.
#[derive(Clone, Debug)]
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

/// Converts every item, `options.jobs` at a time; `on_done(index, result)` is called from the
/// worker threads as each file finishes. Once a signal is ending the process no file is begun
/// (those are [`EngineError::Cancelled`]). Results come back in the items' order. A batch of one
/// file counts its pixels done in `progress`, when given.
pub fn convert_batch(
    engine: &Engine,
    items: &[BatchItem],
    options: &BatchOptions,
    on_done: &(dyn Fn(usize, &Result<FileReport, EngineError>) + Sync),
    progress: Option<&crate::engine::PixelProgress>,
) -> Vec<Result<FileReport, EngineError>> {
    let progress = progress.filter(|_| items.len() == 1);
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<FileReport, EngineError>>>> =
        items.iter().map(|_| Mutex::new(None)).collect();
    let worker = || {
        loop {
            // Those in flight are abandoned cleanly (`crate::system::signals`).
            if crate::system::signals::stopping().is_some() {
                break;
            }
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else { break };
            // The decode waits for the file's memory in the budget and holds it until it is written.
            let result = convert_file(
                engine,
                (&item.input, &item.output),
                &options.settings,
                (&options.decode, &options.export),
                progress,
            );
            on_done(index, &result);
            *results[index].lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        }
    };
    std::thread::scope(|scope| {
        for job in 0..options.jobs.clamp(1, items.len().max(1)) {
            let named =
                std::thread::Builder::new().name(format!("graylab-file-{job}")).spawn_scoped(scope, worker);
            if let Err(e) = named {
                // The threads started take the files; with none, this thread does.
                log::warn!("cannot start a file thread: {e}");
                if job == 0 {
                    worker();
                }
                break;
            }
        }
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner().unwrap_or_else(PoisonError::into_inner).unwrap_or(Err(EngineError::Cancelled))
        })
        .collect()
}
