//! The one median of durations every layer uses: the middle of sorted values, the mean of the
//! two middle ones for an even count (rounded down), as `engine::sampling::median` takes it for
//! ratios. The upper middle alone, which some probes took, reads high on an even count.

/// The median of `sorted` (ascending); `None` when empty.
#[must_use]
pub fn median_of_sorted(sorted: &[u64]) -> Option<u64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => sorted.get(n / 2).copied(),
        _ => Some(u64::midpoint(*sorted.get(n / 2 - 1)?, *sorted.get(n / 2)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_two_middles() {
        assert_eq!(median_of_sorted(&[]), None);
        assert_eq!(median_of_sorted(&[7]), Some(7));
        assert_eq!(median_of_sorted(&[1, 5, 9]), Some(5));
        // Even: (3 + 4) / 2, rounded down; the upper middle alone would say 4.
        assert_eq!(median_of_sorted(&[1, 3, 4, 10]), Some(3));
        assert_eq!(median_of_sorted(&[u64::MAX, u64::MAX]), Some(u64::MAX));
    }
}
