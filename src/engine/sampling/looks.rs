//! How many times a comparison looks at its rounds, and the level each look decides at: every
//! checkpoint a [`Budget`] reaches, then one last look where the sampling stops (at the most
//! rounds, or between checkpoints once the time is spent). Each look's interval is taken at one
//! confidence ([`Budget::look_confidence`], Pocock's constant level) chosen so that all the
//! looks together decide a comparison without an effect at most 5% of the time, wherever the
//! last one falls.
//!
//! The chance is exact, not simulated: without an effect each round's value lies below the
//! true median with probability 1/2, so the count below after `n` rounds is a binomial walk,
//! and the interval `[x(k), x(n-k+1)]` misses the median exactly when the walk is below `k` or
//! above `n-k`. The walk is followed round by round, the paths a checkpoint decided taken out.
//! The drift's widening ([`super::Interval::of_drifting`]) only widens, so it decides less.

use super::{Budget, CONFIDENCE, MIN_SAMPLES, is_checkpoint, order_statistic};

impl Budget {
    /// The confidence each look's interval is taken at, so that every look this budget allows,
    /// the last one included, decides wrongly at most `1 - CONFIDENCE` (5%) of the time
    /// together: about 96.1% a look in the quick set (6 to 13 rounds), 98.7% in the full one
    /// (6 to 42); [`CONFIDENCE`] where the budget looks once.
    #[must_use]
    pub fn look_confidence(&self) -> f64 {
        let error = 1.0 - CONFIDENCE;
        if self.max_rounds <= self.min_rounds || self.chance_of_a_wrong_decision(error) <= error {
            return CONFIDENCE;
        }
        // The chance grows with each look's error: the largest that keeps it within 5%.
        let (mut fits, mut over) = (0.0, error);
        for _ in 0..40 {
            let mid = f64::midpoint(fits, over);
            if self.chance_of_a_wrong_decision(mid) <= error {
                fits = mid;
            } else {
                over = mid;
            }
        }
        1.0 - fits
    }

    /// The chance that a comparison without an effect is decided at some look when each look's
    /// interval errs `look_error` of the time: the worst over where the last look falls.
    #[must_use]
    pub(super) fn chance_of_a_wrong_decision(&self, look_error: f64) -> f64 {
        let last = self.max_rounds.max(self.min_rounds);
        // `walk[b]`: the chance that `b` of the rounds so far lie below the median and no
        // checkpoint has decided.
        let mut walk = vec![1.0];
        let (mut decided, mut worst) = (0.0_f64, 0.0_f64);
        for n in 1..=last {
            let mut next = vec![0.0; n + 1];
            for (b, p) in walk.iter().enumerate() {
                next[b] += p / 2.0;
                next[b + 1] += p / 2.0;
            }
            walk = next;
            if n < self.min_rounds || n < MIN_SAMPLES {
                continue;
            }
            let k = order_statistic(n, 1.0 - look_error);
            let misses = |b: usize| b < k || b > n - k;
            let here: f64 = walk.iter().enumerate().filter(|&(b, _)| misses(b)).map(|(_, p)| p).sum();
            // A last look here: the checkpoints before it, and it.
            worst = worst.max(decided + here);
            if is_checkpoint(n, self.min_rounds) {
                decided += here;
                for (b, p) in walk.iter_mut().enumerate() {
                    if misses(b) {
                        *p = 0.0;
                    }
                }
            }
        }
        worst
    }
}
