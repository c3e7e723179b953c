//! The sampling engine on injected samples of known noise: no clock, no timing.

use super::*;

/// A deterministic source of noise: xorshift64*, and a normal deviate from twelve uniforms.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
    }

    /// `median` times a log-normal factor of spread `sigma` (0.1 = about ±10%).
    fn time(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }
}

/// Samples a two-sided comparison whose true ratio is `ratio`, each side with `sigma` noise, with
/// `budget`, against `threshold`, each look at the budget's level: the decision and the rounds
/// taken.
fn compare(ratio: f64, sigma: f64, seed: u64, budget: &Budget, threshold: f64) -> (Decision, usize) {
    compare_at(ratio, sigma, seed, (budget, budget.look_confidence()), threshold)
}

/// [`compare`] with each look at `confidence`.
fn compare_at(
    ratio: f64,
    sigma: f64,
    seed: u64,
    (budget, confidence): (&Budget, f64),
    threshold: f64,
) -> (Decision, usize) {
    let mut noise = Noise(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let budget = Budget { max_time: Duration::from_hours(1), ..*budget };
    let decision = |rounds: &[(f64, f64)]| {
        let (a, b): (Vec<f64>, Vec<f64>) = rounds.iter().copied().unzip();
        decide(Interval::of_ratios(&a, &b, confidence).as_ref(), threshold)
    };
    let sampled = sample(
        &budget,
        None,
        |_| Ok::<_, ()>((noise.time(ratio * 10.0, sigma), noise.time(10.0, sigma))),
        |rounds| decision(rounds) != Decision::Within,
        || (),
    )
    .expect("never cancelled");
    (decision(&sampled.rounds), sampled.rounds.len())
}

#[test]
fn the_interval_of_the_median_uses_the_binomial_order_statistics() {
    // Known tables: n = 6 and 8 use the extremes, 10 the 2nd, 20 the 6th, 100 the 40th.
    for (n, k) in [(6, 1), (8, 1), (10, 2), (20, 6), (100, 40)] {
        assert_eq!(order_statistic(n, CONFIDENCE), k, "n = {n}");
    }
    let values: Vec<f64> = (1..=10).map(f64::from).collect();
    let i = Interval::of(&values).expect("ten samples");
    assert_eq!((i.median, i.ci_low, i.ci_high, i.samples), (5.5, 2.0, 9.0, 10));
    assert!((i.spread_percent() - 63.6).abs() < 0.1, "{}", i.spread_percent());
    // Five samples have no 95% interval, so no single warm run (or five) decides anything.
    assert_eq!(Interval::of(&[1.0, 2.0, 3.0, 4.0, 5.0]), None);
    assert_eq!(decide(None, 1.0), Decision::Within);
    // Non-finite samples are left out; a zero denominator drops its round.
    assert_eq!(ratios(&[2.0, 4.0, 6.0], &[1.0, 0.0, 3.0]), vec![2.0, 2.0]);
    assert_eq!(Interval::of(&[f64::NAN, 1.0, 1.0, 1.0, 1.0, 1.0]), None);
}

#[test]
fn the_interval_holds_its_median_at_any_number_of_samples() {
    // The exact binomial tables (big integers): from 1075 samples on, 2^-n is 0 in f64, and the
    // interval once came out inverted (the 1080th order statistic below the 1st).
    for (n, k) in [(1, 1), (2, 1), (5, 1), (6, 1), (1074, 505), (1075, 505), (1080, 508), (100_000, 49_690)] {
        assert_eq!(order_statistic(n, CONFIDENCE), k, "n = {n}");
    }
    for n in [6, 7, 1074, 1075, 1080, 100_000] {
        let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % n) as f64).collect();
        let i = Interval::of(&values).expect("six samples or more");
        assert!(i.ci_low <= i.median && i.median <= i.ci_high, "n = {n}: {i:?}");
        let k = order_statistic(n, CONFIDENCE) as f64;
        assert_eq!((i.ci_low, i.ci_high, i.samples), (k - 1.0, n as f64 - k, n), "n = {n}");
    }
    // Below six samples there is no interval at all, never an inverted one.
    for n in [1, 2, 5] {
        assert_eq!(Interval::of(&vec![1.0; n]), None, "n = {n}");
    }
}

#[test]
fn an_interval_decides_only_when_it_clears_the_threshold() {
    let i = Interval { median: 1.5, ci_low: 1.2, ci_high: 1.8, samples: 9 };
    assert_eq!(i.against(1.0), Decision::Above);
    assert_eq!(i.against(2.0), Decision::Below);
    assert_eq!(i.against(1.3), Decision::Within);
}

#[test]
fn checkpoints_grow_by_half_and_rounds_rotate() {
    let at: Vec<usize> = (1..=45).filter(|&n| is_checkpoint(n, MIN_SAMPLES)).collect();
    assert_eq!(at, [6, 9, 14, 21, 32]);
    assert_eq!(rotation(0, 3), [0, 1, 2]);
    assert_eq!(rotation(1, 3), [1, 2, 0]);
    assert_eq!(rotation(5, 2), [1, 0]);
}

#[test]
fn a_clear_difference_is_decided_at_the_first_checkpoint() {
    for seed in 0..20 {
        for (ratio, decision) in [(2.0, Decision::Above), (0.5, Decision::Below)] {
            assert_eq!(
                compare(ratio, 0.1, seed, &Budget::QUICK, 1.0),
                (decision, MIN_SAMPLES),
                "seed {seed}"
            );
        }
    }
}

#[test]
fn a_tie_is_inconclusive_after_the_whole_budget() {
    // Ties decided of 10 000, each look at the budget's level and at 95%.
    let decided = |budget: &Budget, confidence: f64| {
        let mut decided = 0;
        for seed in 0..10_000 {
            let (decision, rounds) = compare_at(1.0, 0.1, seed, (budget, confidence), 1.0);
            if decision == Decision::Within {
                assert_eq!(rounds, budget.max_rounds, "seed {seed}");
            } else {
                decided += 1;
            }
        }
        decided
    };
    // Every look of the budget, the last one included, wrong at most 5% of the time together
    // (`looks.rs`: 4.7% at most), here within the noise of 10 000 ties (±0.2%); each at a 95%
    // level, they were 7% and 11%.
    for (budget, at_95) in [(Budget::QUICK, 600..800), (Budget::FULL, 900..1200)] {
        let wrong = decided(&budget, budget.look_confidence());
        assert!(wrong <= 520, "{wrong} of 10 000 ties were decided with {budget:?}");
        let wrong = decided(&budget, CONFIDENCE);
        assert!(at_95.contains(&wrong), "{wrong} of 10 000 ties were decided at 95% a look with {budget:?}");
    }
}

#[test]
fn each_look_is_taken_at_the_level_that_keeps_all_of_them_within_5_percent() {
    // Each look at 95%: the chance that some look decides a tie, its worst over where the last
    // look falls (the sampling stops at the most rounds, or between checkpoints on time).
    let at_95 = |b: &Budget| b.chance_of_a_wrong_decision(0.05);
    assert!((at_95(&Budget::QUICK) - 0.0708).abs() < 1e-4, "{}", at_95(&Budget::QUICK));
    assert!((at_95(&Budget::FULL) - 0.1066).abs() < 1e-4, "{}", at_95(&Budget::FULL));
    // At each budget's own level: within 5%, and as close to it as the steps of the binomial allow.
    for (budget, level, chance) in [(Budget::QUICK, 0.9614, 0.0466), (Budget::FULL, 0.9871, 0.0473)] {
        let confidence = budget.look_confidence();
        assert!((confidence - level).abs() < 1e-4, "{budget:?}: {confidence}");
        let wrong = budget.chance_of_a_wrong_decision(1.0 - confidence);
        assert!(wrong <= 0.05 && (wrong - chance).abs() < 1e-4, "{budget:?}: {wrong}");
    }
    // The full set's looks: the widest interval at 6 and 9 rounds, the 2nd at 14, the 5th at 21,
    // the 9th at 32, the 13th at its last, 42 (at 95% they were the 1st, 2nd, 3rd, 6th, 10th, 15th).
    let full = Budget::FULL.look_confidence();
    let ks: Vec<usize> = [6, 9, 14, 21, 32, 42].iter().map(|&n| order_statistic(n, full)).collect();
    assert_eq!(ks, [1, 1, 2, 5, 9, 13]);
    // One look (the fewest rounds are the most): a plain 95% interval.
    let once = Budget { min_rounds: 42, ..Budget::FULL };
    assert!((once.look_confidence() - CONFIDENCE).abs() < f64::EPSILON);
}

#[test]
fn the_quick_set_never_contradicts_the_full_one() {
    let mut decided = (0, 0);
    for ratio in [0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25] {
        for sigma in [0.05, 0.2] {
            for seed in 0..40 {
                let quick = compare(ratio, sigma, seed, &Budget::QUICK, 1.0).0;
                let full = compare(ratio, sigma, seed + 1000, &Budget::FULL, 1.0).0;
                let contradict = matches!(
                    (quick, full),
                    (Decision::Above, Decision::Below) | (Decision::Below, Decision::Above)
                );
                assert!(
                    !contradict,
                    "ratio {ratio} sigma {sigma} seed {seed}: quick {quick:?}, full {full:?}"
                );
                decided.0 += usize::from(quick != Decision::Within);
                decided.1 += usize::from(full != Decision::Within);
            }
        }
    }
    // The full set decides more often than the quick one: it has the larger budget.
    assert!(decided.1 > decided.0, "{decided:?}");
}

#[test]
fn cancelling_stops_before_the_next_round() {
    let cancel = AtomicBool::new(true);
    let r = sample(&Budget::QUICK, Some(&cancel), |_| Ok::<_, &str>(1.0), |_| false, || "stopped");
    assert_eq!(r, Err("stopped"));
}

#[test]
fn a_ratio_that_drifts_during_the_run_widens_its_interval_to_both_halves() {
    // No drift: the halves' medians lie inside the order statistics' interval.
    let steady: Vec<f64> = (0..12).map(|i| 1.05 + f64::from(i % 3 - 1) * 0.001).collect();
    let plain = Interval::of(&steady).expect("interval");
    assert_eq!(Interval::of_drifting(&steady, CONFIDENCE), Some(plain), "no drift, no widening");
    // 42 rounds whose ratio creeps from 1.00 to 1.06 as the load changes: the order
    // statistics (the 15th and 28th of 42) say 1.021..1.040, clear of 1.02; the run's halves
    // say 1.015 and 1.045.
    let drifting: Vec<f64> = (0..42).map(|i| 1.0 + 0.06 * f64::from(i) / 41.0).collect();
    let plain = Interval::of(&drifting).expect("interval");
    let widened = Interval::of_drifting(&drifting, CONFIDENCE).expect("interval");
    assert!((widened.median - plain.median).abs() < 1e-12, "the same median");
    assert_eq!((widened.ci_low, widened.ci_high), (drifting[10], drifting[31]), "{widened:?}");
    assert!(plain.ci_low > drifting[10] && plain.ci_high < drifting[31], "{plain:?}");
    assert_eq!(plain.against(1.02), Decision::Above);
    assert_eq!(widened.against(1.02), Decision::Within, "the drift is within the noise, not an effect");
    // Too few rounds for any interval: none.
    assert_eq!(Interval::of_drifting(&drifting[..5], CONFIDENCE), None);
}
