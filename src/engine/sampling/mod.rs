//! The sampling engine behind every verdict: the sides of a comparison are measured in turns (the
//! order rotated each round, so that drift and warm caches fall on both), warm samples are taken
//! until the 95% confidence interval of the statistic lies clear of the verdict's threshold or
//! the budget is spent, and the answer is "above", "below" or "within the noise".
//!
//! The interval of a median is distribution-free: the order statistics `x(k)` and `x(n-k+1)`
//! whose binomial coverage is at least 95% (no random numbers: the same samples always give the
//! same interval); below six samples no such pair exists. A ratio between two sides is the median
//! of the per-round ratios, which cancels what both sides of one round share; its interval also
//! covers the medians of the run's two halves ([`Interval::of_drifting`]), so that a ratio the
//! load moved during the run is not decided on the part sampled.
//!
//! Decisions are only taken at a few checkpoints (6, 9, 14, 21, … samples) and once more where
//! the sampling stops, and each of these looks takes its interval at the level the budget gives
//! ([`Budget::look_confidence`], `looks.rs`): about 96.1% a look in the quick set, 98.7% in the
//! full one, so that all of a comparison's looks together decide wrongly at most 5% of the time
//! (a 95% interval at each look would, 7% and 11%). The quick set asks the same question with a
//! smaller budget.

use crate::system::median::median_of_sorted;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The confidence of every interval graylab prints: of one look, or of all the looks of a
/// sampled comparison together ([`Budget::look_confidence`]).
pub const CONFIDENCE: f64 = 0.95;

/// The fewest samples with a 95% interval of the median (with five, the widest interval, from
/// the smallest to the largest sample, covers the median only 93.75% of the time).
pub const MIN_SAMPLES: usize = 6;

/// A median with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    /// The median of the samples.
    pub median: f64,
    /// The interval's lower end.
    pub ci_low: f64,
    /// The interval's upper end.
    pub ci_high: f64,
    /// How many samples.
    pub samples: usize,
}

impl Interval {
    /// The median of `values` and its 95% interval; `None` with fewer than [`MIN_SAMPLES`]
    /// finite values.
    #[must_use]
    pub fn of(values: &[f64]) -> Option<Self> {
        Self::at(values, CONFIDENCE)
    }

    /// [`Self::of`] with the interval at `confidence` (with six samples, at least the widest).
    #[must_use]
    pub fn at(values: &[f64], confidence: f64) -> Option<Self> {
        let v = sorted_finite(values);
        let n = v.len();
        if n < MIN_SAMPLES {
            return None;
        }
        let median = median_of_sorted(&v)?;
        let k = order_statistic(n, confidence);
        Some(Self { median, ci_low: v[k - 1], ci_high: v[n - k], samples: n })
    }

    /// The median of the per-round ratios `a[i] / b[i]` and its interval at `confidence`,
    /// widened for drift ([`Self::of_drifting`]).
    #[must_use]
    pub fn of_ratios(a: &[f64], b: &[f64], confidence: f64) -> Option<Self> {
        Self::of_drifting(&ratios(a, b), confidence)
    }

    /// [`Self::at`] of `values` taken in this order, the interval widened to cover the medians
    /// of the first and of the second half (three values each at least): what the load's drift
    /// over the run moved the statistic by.
    #[must_use]
    pub fn of_drifting(values: &[f64], confidence: f64) -> Option<Self> {
        let mut interval = Self::at(values, confidence)?;
        let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let (first, second) = finite.split_at(finite.len() / 2);
        if first.len() >= 3 {
            for half in [first, second] {
                if let Some(m) = median(half) {
                    interval.ci_low = interval.ci_low.min(m);
                    interval.ci_high = interval.ci_high.max(m);
                }
            }
        }
        Some(interval)
    }

    /// Half the interval's width as a percentage of the median: the "±x%" of a figure.
    #[must_use]
    pub fn spread_percent(&self) -> f64 {
        if self.median.abs() < f64::MIN_POSITIVE {
            return 0.0;
        }
        (self.ci_high - self.ci_low) / 2.0 / self.median.abs() * 100.0
    }

    /// Where the interval lies against `threshold`.
    #[must_use]
    pub fn against(&self, threshold: f64) -> Decision {
        if self.ci_low > threshold {
            Decision::Above
        } else if self.ci_high < threshold {
            Decision::Below
        } else {
            Decision::Within
        }
    }
}

/// Where a statistic's interval lies against a verdict's threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The whole interval lies above the threshold.
    Above,
    /// The whole interval lies below it.
    Below,
    /// The threshold lies inside the interval (or too few samples): within the noise.
    Within,
}

/// What an interval, if there is one, says against `threshold`: [`Decision::Within`] without one.
#[must_use]
pub fn decide(interval: Option<&Interval>, threshold: f64) -> Decision {
    interval.map_or(Decision::Within, |i| i.against(threshold))
}

/// The finite values of `values`, sorted.
fn sorted_finite(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The median of the finite values of `values`, however few; `None` when there are none.
#[must_use]
pub fn median(values: &[f64]) -> Option<f64> {
    median_of_sorted(&sorted_finite(values))
}

/// The per-round ratios `a[i] / b[i]` (rounds where `b` is not positive are left out).
#[must_use]
pub fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).filter(|(_, b)| **b > 0.0).map(|(a, b)| a / b).collect()
}

/// The largest `k` (1-based) such that `[x(k), x(n-k+1)]` covers the median of `n` samples with
/// at least `confidence`: the largest `k` with `2 P(B <= k-1) <= 1 - confidence` for
/// `B ~ Bin(n, 1/2)`; 1 (the widest) where none does. The binomial's terms are taken in log
/// space: `2^-n` alone is 0 in `f64` from `n = 1075`.
fn order_statistic(n: usize, confidence: f64) -> usize {
    let alpha = (1.0 - confidence) / 2.0;
    // ln P(B = 0) = -n ln 2, then P(B = j+1) = P(B = j) (n - j) / (j + 1).
    let mut ln_p = -(n as f64) * std::f64::consts::LN_2;
    let mut below = 0.0;
    let mut k = 0;
    for j in 0..n {
        below += ln_p.exp();
        if below > alpha {
            break;
        }
        k = j + 1;
        ln_p += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    k.max(1)
}

/// How long a comparison may sample before it settles for "within the noise"; how many looks it
/// may take, and the level of each, follow from it ([`Budget::look_confidence`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Rounds measured and thrown away first (the warm-up).
    pub warmup_rounds: usize,
    /// Rounds measured before the first look (at least [`MIN_SAMPLES`]).
    pub min_rounds: usize,
    /// Rounds at most.
    pub max_rounds: usize,
    /// Time at most; once spent, the rounds taken decide (or do not).
    pub max_time: Duration,
}

impl Budget {
    /// The quick set: the same experiments, less time.
    pub const QUICK: Self = Self {
        warmup_rounds: 1,
        min_rounds: MIN_SAMPLES,
        max_rounds: 13,
        max_time: Duration::from_millis(500),
    };
    /// The full set.
    pub const FULL: Self =
        Self { warmup_rounds: 1, min_rounds: MIN_SAMPLES, max_rounds: 42, max_time: Duration::from_secs(6) };

    /// [`Self::QUICK`] or [`Self::FULL`].
    #[must_use]
    pub fn for_set(quick: bool) -> Self {
        if quick { Self::QUICK } else { Self::FULL }
    }
}

/// Why sampling stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The interval cleared the threshold.
    Decided,
    /// The time budget was spent.
    Time,
    /// The most rounds were taken.
    Rounds,
}

/// The rounds a comparison took.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled<R> {
    /// Each warm round's measurements, in order.
    pub rounds: Vec<R>,
    /// Why it stopped.
    pub stop: Stop,
    /// Wall time of all rounds, warm-up included, in nanoseconds.
    pub took_ns: u64,
}

/// Whether `n` rounds is a checkpoint: [`MIN_SAMPLES`], then each about 1.5x the one before.
#[must_use]
pub fn is_checkpoint(n: usize, min_rounds: usize) -> bool {
    let mut at = min_rounds.max(MIN_SAMPLES);
    while at < n {
        at += at.div_ceil(2);
    }
    at == n
}

/// The order in which round `round` visits `sides` sides: rotated each round, so that no side
/// always runs first (after the other's cache misses) or last.
#[must_use]
pub fn rotation(round: usize, sides: usize) -> Vec<usize> {
    (0..sides).map(|i| (round + i) % sides.max(1)).collect()
}

/// Takes rounds with `measure(round)` (which measures every side of the comparison once, in
/// the order [`rotation`] gives) until `decided(rounds)` is true at a checkpoint, the budget is
/// spent, or `cancel` is set (then `cancelled()` is returned). Warm-up rounds are measured and
/// dropped.
pub fn sample<R, E>(
    budget: &Budget,
    cancel: Option<&AtomicBool>,
    mut measure: impl FnMut(usize) -> Result<R, E>,
    decided: impl Fn(&[R]) -> bool,
    cancelled: impl Fn() -> E,
) -> Result<Sampled<R>, E> {
    let started = Instant::now();
    let is_cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    for round in 0..budget.warmup_rounds {
        if is_cancelled() {
            return Err(cancelled());
        }
        measure(round)?;
    }
    let mut rounds = Vec::new();
    let stop = loop {
        if is_cancelled() {
            return Err(cancelled());
        }
        rounds.push(measure(budget.warmup_rounds + rounds.len())?);
        let n = rounds.len();
        if n < budget.min_rounds {
            continue;
        }
        if is_checkpoint(n, budget.min_rounds) && decided(&rounds) {
            break Stop::Decided;
        }
        if n >= budget.max_rounds {
            break Stop::Rounds;
        }
        if started.elapsed() >= budget.max_time {
            // A last look at what was taken, even between checkpoints.
            break if decided(&rounds) { Stop::Decided } else { Stop::Time };
        }
    };
    let took_ns = crate::system::clock::nanos_since(started);
    Ok(Sampled { rounds, stop, took_ns })
}

mod looks;

#[cfg(test)]
mod tests;
