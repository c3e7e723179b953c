//! The GPU's ceilings in the session: asked for once after the first GPU run (from the cache,
//! else measured on the worker), measured again on request, and shown by the adapter panel.

use super::{JobKind, Session};
use crate::app::work::jobs::Job;
use crate::engine::KnownCeilings;

impl Session {
    /// This GPU's ceilings (every step of the GPU path), once known.
    pub fn ceilings(&self) -> Option<&KnownCeilings> {
        self.ceilings.as_ref()
    }

    /// Why the ceilings could not be had, if they could not.
    pub fn ceilings_error(&self) -> Option<&str> {
        self.ceilings_error.as_deref()
    }

    /// Whether the ceilings are being read or measured now.
    pub fn measuring_ceilings(&self) -> bool {
        self.jobs.iter().any(|(k, _)| *k == JobKind::Ceilings)
    }

    /// Reads this GPU's ceilings from the cache, or measures them (about a second), or with
    /// `remeasure` always measures them. The charts then give every phase as a rate against
    /// its ceiling.
    pub fn measure_ceilings(&mut self, remeasure: bool) {
        if !self.gpu_usable() || self.measuring_ceilings() {
            return;
        }
        self.ceilings_asked = true;
        let ticket = self.ticket();
        self.send(JobKind::Ceilings, Job::Ceilings { ticket, remeasure });
    }

    /// Asks for the ceilings the first time an image opens.
    pub(super) fn ask_ceilings_once(&mut self) {
        if !self.ceilings_asked {
            self.measure_ceilings(false);
        }
    }
}
