//! The session's job bookkeeping: the jobs sent and not done, the latest of each kind (so that
//! answers to superseded jobs are dropped), and how a stopped job ended.

use std::collections::HashSet;

use super::{JobKind, conversions::Requested};
use crate::app::work::jobs::Ticket;
use crate::system::progress::HoldAt;

/// Jobs sent and how they ended.
#[derive(Default)]
pub(super) struct JobBook {
    /// Jobs sent and not done, oldest first (the first one runs).
    pub sent: Vec<(JobKind, Ticket)>,
    /// The last job id given out.
    pub next_id: u64,
    /// The latest load asked for: answers to older ones are dropped.
    pub latest_load: u64,
    /// The latest conversion job asked for.
    pub latest_convert: u64,
    /// Runs the latest conversion job asked for.
    pub latest_convert_runs: u64,
    /// The latest conversion job was a comparison (every workgroup size): when it ends, the
    /// output is made again with the panel's settings, so caption and panel agree.
    pub comparing: bool,
    /// The settings of the latest conversion asked for.
    pub requested: Option<Requested>,
    /// How the last stopped job ended ("Stopped after 5 of 10"), shown until the next job.
    pub stopped: Option<String>,
    /// Jobs the user stopped (Stop or Esc), told apart from those a newer request superseded.
    pub stopped_by_user: HashSet<u64>,
    /// GPU runs stopped between their submissions by a cancel (Stop, Esc, a newer setting).
    pub runs_cut_short: usize,
    /// Where the next job sent waits for a test to let it go (tests only; see `hold_next_job`).
    pub hold_next: Option<HoldAt>,
}
