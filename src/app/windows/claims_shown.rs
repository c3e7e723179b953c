//! The claims window's own result: the latest report that finished, why the latest run has none,
//! and what it was estimated at, taken from the run's answer when it ends.

use std::sync::Arc;

use crate::app::session::Session;
use crate::app::work::jobs::{Answer, ClaimsEnd};
use crate::engine::claims::{ClaimsReport, Verdict};
use crate::engine::estimate::Estimate;

/// The tutorial's claims as the window knows them.
#[derive(Default)]
pub struct ClaimsShown {
    /// The latest report that finished.
    pub report: Option<Arc<ClaimsReport>>,
    /// Why the latest run has no report ("stopped after 2 of 7 claims", or its error); `None`
    /// once one finished.
    pub unfinished: Option<String>,
    /// What the run of `report` was estimated to take before it started (its JSON says so).
    pub estimate: Option<Estimate>,
    /// The run in flight: its job's id and what it was estimated to take.
    sent: Option<(u64, Estimate)>,
}

impl ClaimsShown {
    /// A run was sent as job `id`, estimated at `estimate`.
    pub(super) fn sent(&mut self, id: u64, estimate: Estimate) {
        self.sent = Some((id, estimate));
    }

    /// Takes the answer of the run in flight once it has arrived (every frame, the window open
    /// or not): a report keeps its estimate; an error is said in a toast too.
    pub(super) fn take(&mut self, session: &mut Session) {
        let Some((id, estimate)) = self.sent else { return };
        let Some(Answer::Claims(end)) = session.take_answer(id) else { return };
        self.sent = None;
        match end {
            ClaimsEnd::Finished(report) => {
                // A stopped run keeps the claims it finished; the rest say "not run".
                self.unfinished = report.stopped.then(|| {
                    let done = report.claims.iter().filter(|c| c.verdict != Verdict::NotRun).count();
                    format!(
                        "Stopped after {done} of {} claims: those are kept, the rest were not run.",
                        report.claims.len()
                    )
                });
                self.report = Some(Arc::new(*report));
                self.estimate = Some(estimate);
            }
            ClaimsEnd::Stopped { done, total } => {
                let when = if total == 0 {
                    "before the first claim".to_owned()
                } else {
                    format!("after {done} of {total} claims")
                };
                self.unfinished = Some(format!("Stopped {when}: nothing of this run is kept."));
            }
            ClaimsEnd::Failed(e) => {
                let e = e.describe();
                session.toasts.error(format!("The claims could not be tested: {e}"));
                self.unfinished = Some(format!("The claims could not be tested: {e}"));
            }
        }
    }
}
