//! How long the tutorial's claims take on this machine. Each finished run (quick or all) is timed
//! from its start to its report and kept between launches (egui's persisted memory), per adapter
//! and thread count, so that the next estimate is that run's time rather than the bound the
//! claims are sized for (a 2-core machine with a software GPU, busy with builds: 28 s and 35 s
//! measured there, against bounds of 45 s and 90 s).

use std::sync::Arc;
use std::time::Instant;

use crate::app::session::Session;
use crate::engine::claims::ClaimsReport;

/// Where the times are kept between launches.
const TOOK_ID: &str = "graylab claims took";

/// The longest a quick run should take on the machines the claims are sized for, in seconds.
pub const QUICK_BOUND_S: u32 = 45;
/// The same for the full set.
pub const ALL_BOUND_S: u32 = 90;

/// The last finished runs' wall times on one machine.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct ClaimsTook {
    /// The adapter and CPU threads they ran on.
    machine: String,
    /// Run (quick), in seconds.
    quick_s: Option<f64>,
    /// Run all, in seconds.
    all_s: Option<f64>,
}

/// A run in flight: when it started, whether quick, and the report shown before it.
type Running = (Instant, bool, Option<Arc<ClaimsReport>>);

/// Times the claims' runs (kept by the claims window, fed every frame).
#[derive(Default)]
pub struct ClaimsClock {
    took: Option<ClaimsTook>,
    read: bool,
    running: Option<Running>,
}

impl ClaimsClock {
    /// A run was just asked for.
    pub fn started(&mut self, quick: bool, session: &Session) {
        self.running = Some((Instant::now(), quick, session.claims().report.clone()));
    }

    /// Reads the kept times on the first frame; when the run in flight has brought its report,
    /// keeps its time. A run stopped or failed teaches nothing.
    pub fn track(&mut self, ctx: &egui::Context, session: &Session) {
        let id = egui::Id::unique(TOOK_ID);
        if !self.read {
            self.read = true;
            self.took = ctx.data_mut(|d| d.get_persisted::<ClaimsTook>(id));
        }
        let Some((since, quick, before)) = &self.running else { return };
        let now = &session.claims().report;
        let arrived = match (now, before) {
            (Some(now), Some(before)) => !Arc::ptr_eq(now, before),
            (Some(_), None) => true,
            (None, _) => false,
        };
        if arrived && now.as_ref().is_some_and(|r| r.quick == *quick) {
            let machine = super::sweep_estimate::machine(session);
            let mut took = self.took.take().filter(|t| t.machine == machine).unwrap_or_default();
            took.machine = machine;
            let secs = Some(since.elapsed().as_secs_f64());
            if *quick {
                took.quick_s = secs;
            } else {
                took.all_s = secs;
            }
            ctx.data_mut(|d| d.insert_persisted(id, took.clone()));
            self.took = Some(took);
            self.running = None;
        } else if arrived || !session.is_busy() {
            self.running = None;
        }
    }

    /// Seconds the last finished run of this kind took on this machine, if one did.
    #[must_use]
    pub fn last_secs(&self, quick: bool, session: &Session) -> Option<f64> {
        let took = self.took.as_ref().filter(|t| t.machine == super::sweep_estimate::machine(session))?;
        if quick { took.quick_s } else { took.all_s }
    }
}

/// `2.3 s`, `19 s`.
#[must_use]
pub fn secs_text(secs: f64) -> String {
    if secs < 10.0 { format!("{secs:.1} s") } else { format!("{secs:.0} s") }
}
