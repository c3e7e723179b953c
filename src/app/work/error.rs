//! `WorkError`: why a job on the worker has no result, kept typed until the UI words it (with
//! the app's advice, `WorkError::describe`). Depends on the engine's, I/O's and the memory
//! budget's errors only.

use std::error::Error;

use crate::engine::{EngineError, GpuError};
use crate::io::IoError;
use crate::system::memory_budget::OverBudget;

/// Why a job on the worker ended without its result: an error of the layers below, or a job
/// stopped before it had one.
#[derive(Debug, thiserror::Error)]
pub enum WorkError {
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The GPU failed outside a run (making the display's tiles).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Decoding or exporting failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The job's memory could not be reserved now.
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
    /// An op's own planes could not be reserved now: the open image and its gray hold the rest.
    #[error("no memory for {op} now")]
    OpMemory {
        /// The op, as the controls name it (`blur:8`).
        op: String,
        /// What the budget refused.
        #[source]
        source: OverBudget,
    },
    /// The probe's memory could not be reserved now, so the GPU's ceilings were not measured.
    #[error("no memory to measure them now")]
    NoProbeMemory(#[source] OverBudget),
    /// An export named the file of the image it was converted from.
    #[error("the export would replace the photo it was converted from: {} (choose another name)", .0.display())]
    WouldReplaceInput(std::path::PathBuf),
    /// A result or an image to show has no pixels.
    #[error("the image has no pixels")]
    NoPixels,
    /// The launch decode's thread panicked.
    #[error("the decoder thread crashed")]
    DecoderCrashed,
    /// A sampled job (CPU vs GPU, the workgroup race) was stopped before its verdict.
    #[error("Stopped before a verdict: nothing of it is kept.")]
    StoppedBeforeVerdict,
    /// The round trips were stopped after `finished` of `total` counts (none: before the first).
    #[error("{}", stopped_counts(*finished, *total))]
    StoppedRoundTrips {
        /// Counts that finished.
        finished: u64,
        /// Counts asked for.
        total: u64,
    },
}

impl WorkError {
    /// The error, its causes and the app's advice on one line, as the UI shows it.
    #[must_use]
    pub fn describe(&self) -> String {
        crate::app::advice::describe(self.inner())
    }

    /// The error the advice looks into: the wrapped one where this one only passes it on.
    fn inner(&self) -> &(dyn Error + 'static) {
        match self {
            Self::Engine(e) => e,
            Self::Gpu(e) => e,
            Self::Io(e) => e,
            Self::OverBudget(e) => e,
            other => other,
        }
    }
}

/// Where Stop ended the round trips, and that nothing of them is kept.
fn stopped_counts(finished: u64, total: u64) -> String {
    match finished {
        0 => "Stopped before the first count finished: nothing was measured.".to_owned(),
        finished => format!("Stopped after {finished} of {total} counts: nothing of this run is kept."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_worded_once_with_the_apps_advice() {
        let exists = WorkError::from(EngineError::Io(IoError::Exists { path: "/tmp/out.png".into() }));
        assert_eq!(
            exists.describe(),
            "the output file exists: /tmp/out.png. Choose Replace when asked, or another name."
        );
        let stopped = WorkError::StoppedRoundTrips { finished: 2, total: 5 };
        assert_eq!(stopped.describe(), "Stopped after 2 of 5 counts: nothing of this run is kept.");
        let source = OverBudget {
            needed_bytes: 300 << 20,
            budget_bytes: 120 << 20,
            held_bytes: 380 << 20,
            limited_by: crate::system::memory::BudgetSource::Environment,
        };
        let op = WorkError::OpMemory { op: "blur:8".into(), source };
        assert_eq!(
            op.describe(),
            "no memory for blur:8 now: needs 300.0 MiB but only 120.0 MiB may be used (limited by \
             GRAYLAB_MEMORY_BUDGET), as work under way holds 380.0 MiB"
        );
        let first = WorkError::StoppedRoundTrips { finished: 0, total: 5 };
        assert!(first.describe().starts_with("Stopped before the first count"));
    }
}
