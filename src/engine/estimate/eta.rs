//! Seconds left of a running job: what remains of its estimate, corrected by the pace its work
//! has shown so far. The first guess restated is no ETA: estimated 36.5 s at 1.1 s, a quick
//! claims run took 6.9 s; a Run x10 at 4096 rounds, "16.2 s left" at 8.5 s, took 65 s.
//!
//! The job's whole time is the estimate and the seen pace (time per share of work done, one-time
//! work left out: opening the GPU is no pace) mixed geometrically (estimates are off by factors,
//! not by seconds), the seen pace counting the more the more is done, alone from
//! [`SEEN_PACE_ALONE_AT`] of the work on. What is left is that time's share not done yet.

/// Share of a job's work from which its seen pace alone says what is left.
pub const SEEN_PACE_ALONE_AT: f64 = 0.15;

/// Where a running job stands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standing {
    /// What the job was estimated to take before it started, seconds.
    pub estimate_s: Option<f64>,
    /// Seconds since it started.
    pub elapsed_s: f64,
    /// Seconds of one-time work (the GPU opened, pipelines compiled, ceilings measured) done
    /// since it started: part of its time, not of its pace.
    pub one_time_s: f64,
    /// Share of its work done (0 to 1), in a unit proportional to time; `None` when unknown.
    pub done: Option<f64>,
    /// Seconds since `done` last moved (0 for work counted as it runs): the pace is as of then,
    /// and the time since is spent of what was left then. Else a step that reports only when it
    /// ends made the ETA grow while it ran (the sweep's last size: "45 s left" at 47 s, "1 min
    /// 20 s left" at 83 s, done at 89 s).
    pub since_done_s: f64,
}

impl Standing {
    /// Seconds left; `None` when nothing says (no estimate and no work done, or an estimate
    /// already overrun with no work done to correct it).
    #[must_use]
    pub fn seconds_left(&self) -> Option<f64> {
        self.left().map(|(seconds, _)| seconds)
    }

    /// [`Self::seconds_left`] with what it rests on, in a status line's words: "from the
    /// estimate" (no work done to correct it yet), "from the estimate and the pace so far" (the
    /// two mixed), "from the pace so far" (from [`SEEN_PACE_ALONE_AT`] of the work on, or with
    /// no estimate).
    #[must_use]
    pub fn left(&self) -> Option<(f64, &'static str)> {
        let usable = |s: f64| s.is_finite() && s > 0.0;
        let estimate = self.estimate_s.filter(|e| usable(*e));
        let paced_s = (self.elapsed_s - self.one_time_s.max(0.0)).max(0.0);
        let done = self.done.filter(|f| f.is_finite()).map(|f| f.clamp(0.0, 1.0));
        if done == Some(1.0) {
            return Some((0.0, "done"));
        }
        let since = self.since_done_s.clamp(0.0, paced_s);
        let seen_total = done.filter(|f| *f > 0.0).map(|f| (paced_s - since) / f).filter(|s| usable(*s));
        // What was left when `done` last moved, less the time since; nothing once overrun.
        let left_since = |left_then: f64| (left_then > since).then_some(left_then - since);
        match (estimate, seen_total, done) {
            (Some(e), Some(seen), Some(f)) => {
                let weight = (f / SEEN_PACE_ALONE_AT).min(1.0);
                let total = e.powf(1.0 - weight) * seen.powf(weight);
                let basis = if weight < 1.0 {
                    "from the estimate and the pace so far"
                } else {
                    "from the pace so far"
                };
                left_since(total * (1.0 - f)).map(|s| (s, basis))
            }
            (None, Some(seen), Some(f)) => left_since(seen * (1.0 - f)).map(|s| (s, "from the pace so far")),
            (Some(e), None, _) => (e > paced_s).then_some((e - paced_s, "from the estimate")),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left(estimate_s: Option<f64>, elapsed_s: f64, one_time_s: f64, done: Option<f64>) -> Option<f64> {
        Standing { estimate_s, elapsed_s, one_time_s, done, since_done_s: 0.0 }.seconds_left()
    }

    #[test]
    fn a_step_in_progress_counts_down_from_what_was_left_when_it_began() {
        // The default sweep on lavapipe: 9 of 10 sizes (half the work) done at 46.7 s, the last
        // one reported only when it ended, at 89 s. The old ETA grew: 45 s, 63 s, 80 s left.
        let standing = |elapsed_s: f64| Standing {
            estimate_s: None,
            elapsed_s,
            one_time_s: 0.0,
            done: Some(0.5),
            since_done_s: elapsed_s - 46.7,
        };
        let lefts: Vec<f64> = [46.7, 65.0, 83.0].iter().filter_map(|&t| standing(t).seconds_left()).collect();
        assert_eq!(lefts.len(), 3);
        assert!((lefts[0] - 46.7).abs() < 1e-9 && (lefts[2] - 10.4).abs() < 1e-9, "{lefts:?}");
        assert!(lefts.windows(2).all(|w| w[1] < w[0]), "it counts down: {lefts:?}");
        assert_eq!(standing(95.0).seconds_left(), None, "overrun: nothing honest to say");
    }

    #[test]
    fn the_seen_pace_corrects_an_estimate_four_times_long() {
        // `claims --quick` on lavapipe with a fresh cache (2026-12-04): estimated at "about 45 s,
        // a rough guess", it took 10.07 s; claim i of 9 was seen finished at these seconds.
        let ends = [0.08, 1.40, 3.33, 4.57, 4.83, 5.21, 5.53, 5.91, 8.70, 10.07];
        // The first guess restated said 43.6 s left at 1.4 s (5x the 8.7 s left). Corrected by
        // the seen pace, every ETA from the first claim on is within 2.5x of what was truly left
        // (the claims are counted alike, while the last two take half the time), the first
        // within 2x.
        for (i, &t) in ends.iter().enumerate().skip(1) {
            let (eta, truth) = (left(Some(45.0), t, 0.0, Some(i as f64 / 9.0)).expect("an ETA"), 10.07 - t);
            let off = (eta.max(1e-9) / truth.max(1e-9)).max(truth.max(1e-9) / eta.max(1e-9));
            assert!(off <= 2.5, "at {t} s (claim {i} done): {eta:.2} s left, truly {truth:.2} s (x{off:.2})");
        }
        let first = left(Some(45.0), 1.40, 0.0, Some(1.0 / 9.0)).expect("an ETA");
        assert!(first / (10.07 - 1.40) < 2.0, "{first}");
    }

    #[test]
    fn an_overrun_estimate_without_work_done_says_nothing() {
        assert_eq!(left(Some(8.0), 2.0, 0.0, Some(0.0)), Some(6.0));
        assert_eq!(left(Some(8.0), 9.0, 0.0, Some(0.0)), None);
        assert_eq!(left(Some(8.0), 9.0, 0.0, None), None);
    }

    #[test]
    fn one_time_work_is_no_pace() {
        // A folder of 10 files converted in 1.0 s, 0.4 s of it opening the GPU with the first
        // file: the bytes' pace alone says 3.2 s left after it (the CLI's old "ETA 3.2 s").
        let eta = left(None, 0.46, 0.4, Some(0.1)).expect("an ETA");
        assert!((eta - 0.54).abs() < 1e-9, "{eta}");
        assert!(left(None, 0.46, 0.0, Some(0.1)).expect("an ETA") > 4.0);
        assert_eq!(left(None, 1.0, 0.0, None), None);
        assert_eq!(left(Some(2.0), 1.0, 0.0, Some(1.0)), Some(0.0));
    }

    #[test]
    fn an_eta_says_what_it_rests_on() {
        let at = |done: Option<f64>, estimate_s: Option<f64>| {
            let s = Standing { estimate_s, elapsed_s: 2.0, one_time_s: 0.0, done, since_done_s: 0.0 };
            s.left().map(|(_, basis)| basis)
        };
        assert_eq!(at(None, Some(10.0)), Some("from the estimate"));
        assert_eq!(at(Some(0.05), Some(10.0)), Some("from the estimate and the pace so far"));
        assert_eq!(at(Some(0.5), Some(10.0)), Some("from the pace so far"));
        assert_eq!(at(Some(0.5), None), Some("from the pace so far"));
        assert_eq!(at(None, None), None);
    }
}
