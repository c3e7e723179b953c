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

/// The median of `values`, sorted in place; `None` when empty.
#[must_use]
pub fn median_u64(values: &mut [u64]) -> Option<u64> {
    values.sort_unstable();
    median_of_sorted(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_two_middles() {
        assert_eq!(median_u64(&mut []), None);
        assert_eq!(median_u64(&mut [7]), Some(7));
        assert_eq!(median_u64(&mut [9, 1, 5]), Some(5));
        // Even: (3 + 4) / 2, rounded down; the upper middle alone would say 4.
        assert_eq!(median_u64(&mut [4, 1, 3, 10]), Some(3));
        assert_eq!(median_u64(&mut [u64::MAX, u64::MAX]), Some(u64::MAX));
    }
}
