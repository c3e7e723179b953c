//! This machine's ceilings in the session: the GPU's, asked for once after the first GPU run
//! (from the cache, else measured on the worker), and the CPU's compute ceiling (cached, else
//! measured before the first run with work per pixel); both measured again on request, and
//! shown by the adapter panel.

use super::{JobKind, Session};
use crate::app::work::error::WorkError;
use crate::app::work::jobs::Job;
use crate::engine::CpuCompute;
use crate::engine::ceilings::KnownCeilings;

/// The CPU's compute ceiling, as far as the session knows it.
#[derive(Debug, Default)]
pub(super) struct CpuComputeState {
    /// The latest figure measured or read.
    known: Option<CpuCompute>,
    /// Why the latest measurement failed, if it did (a known figure is kept).
    error: Option<String>,
}

/// This GPU's ceilings, as far as the session knows them.
#[derive(Debug, Default)]
pub(super) enum CeilingsState {
    /// Nobody asked yet (no GPU run so far).
    #[default]
    NotAsked,
    /// Asked for; no answer yet.
    Asked,
    /// Stopped (Stop or Esc) before any were known; asked again as when never asked.
    Stopped,
    /// They could not be had (the reason), and none are known.
    Failed(String),
    /// Known; `remeasure_error` says why a later measurement failed, if one did (the known
    /// ceilings are kept).
    Known {
        /// The ceilings (boxed: they are large beside the other states).
        known: Box<KnownCeilings>,
        /// Why the latest "Measure again" failed.
        remeasure_error: Option<String>,
        /// Whether the latest "Measure again" was stopped (the known ones are kept).
        stopped: bool,
    },
}

impl Session {
    /// This GPU's ceilings (every step of the GPU path), once known.
    pub fn ceilings(&self) -> Option<&KnownCeilings> {
        match &self.ceilings {
            CeilingsState::Known { known, .. } => Some(known),
            _ => None,
        }
    }

    /// Why the ceilings could not be had (or measured again), if they could not.
    pub fn ceilings_error(&self) -> Option<&str> {
        match &self.ceilings {
            CeilingsState::Failed(e) | CeilingsState::Known { remeasure_error: Some(e), .. } => Some(e),
            _ => None,
        }
    }

    /// Whether the latest measurement of the ceilings was stopped (Stop or Esc) before it ended.
    pub fn ceilings_stopped(&self) -> bool {
        matches!(self.ceilings, CeilingsState::Stopped | CeilingsState::Known { stopped: true, .. })
    }

    /// This CPU's compute ceiling, once read from the cache or measured.
    pub fn cpu_compute(&self) -> Option<&CpuCompute> {
        self.cpu_compute.known.as_ref()
    }

    /// Why the CPU's compute ceiling could not be measured, if it could not.
    pub fn cpu_compute_error(&self) -> Option<&str> {
        self.cpu_compute.error.as_deref()
    }

    /// Whether the ceilings are being read or measured now.
    pub fn measuring_ceilings(&self) -> bool {
        self.book.sent.iter().any(|(k, _)| *k == JobKind::Ceilings)
    }

    /// Reads this GPU's ceilings from the cache, or measures them (a few seconds), or with
    /// `remeasure` always measures them. The charts then give every phase as a rate against
    /// its ceiling.
    pub fn measure_ceilings(&mut self, remeasure: bool) {
        if !self.gpu_usable() || self.measuring_ceilings() {
            return;
        }
        if matches!(self.ceilings, CeilingsState::NotAsked) {
            self.ceilings = CeilingsState::Asked;
        }
        self.send(Job::Ceilings { remeasure });
    }

    /// Asks for the ceilings the first time an image opens, and again after a stop left none.
    pub(super) fn ask_ceilings_once(&mut self) {
        if matches!(self.ceilings, CeilingsState::NotAsked | CeilingsState::Stopped) {
            self.measure_ceilings(false);
        }
    }

    /// The worker's answer: new ceilings replace the old; a failure or a stop keeps ceilings
    /// known before.
    pub(super) fn ceilings_measured(&mut self, result: Result<KnownCeilings, WorkError>) {
        let stopped = matches!(result, Err(WorkError::Engine(crate::engine::EngineError::Cancelled)));
        let result = result.map_err(|e| e.describe());
        self.ceilings = match (std::mem::take(&mut self.ceilings), result) {
            (_, Ok(known)) => CeilingsState::Known { known: Box::new(known), remeasure_error: None, stopped },
            (CeilingsState::Known { known, remeasure_error, .. }, Err(_)) if stopped => {
                CeilingsState::Known { known, remeasure_error, stopped }
            }
            (CeilingsState::Known { known, .. }, Err(e)) => {
                CeilingsState::Known { known, remeasure_error: Some(e), stopped }
            }
            (_, Err(_)) if stopped => CeilingsState::Stopped,
            (_, Err(e)) => CeilingsState::Failed(e),
        };
        self.pace_gpu_compute();
    }

    /// The worker's answer about the CPU's compute ceiling: a new figure replaces the old; a
    /// failure keeps one known before.
    pub(super) fn cpu_compute_measured(&mut self, result: Result<CpuCompute, WorkError>) {
        match result {
            Ok(c) => {
                self.pace_cpu_compute(Some(&c));
                self.cpu_compute = CpuComputeState { known: Some(c), error: None };
            }
            Err(e) => self.cpu_compute.error = Some(e.describe()),
        }
    }
}
