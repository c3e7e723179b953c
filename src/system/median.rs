//! The one median every layer uses, of durations and of ratios: the middle of sorted values, the
//! mean of the two middle ones for an even count (a duration's rounded down). The upper middle
//! alone, which some probes took, reads high on an even count.

/// A value with a middle of two: durations (`u64`, rounded down) and ratios (`f64`).
pub trait Middle: Copy {
    /// The mean of `a` and `b`, without overflow.
    fn middle(a: Self, b: Self) -> Self;
}

impl Middle for u64 {
    fn middle(a: Self, b: Self) -> Self {
        Self::midpoint(a, b)
    }
}

impl Middle for f64 {
    fn middle(a: Self, b: Self) -> Self {
        Self::midpoint(a, b)
    }
}

/// The median of `sorted` (ascending); `None` when empty.
#[must_use]
pub fn median_of_sorted<T: Middle>(sorted: &[T]) -> Option<T> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => sorted.get(n / 2).copied(),
        _ => Some(T::middle(*sorted.get(n / 2 - 1)?, *sorted.get(n / 2)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_two_middles() {
        assert_eq!(median_of_sorted::<u64>(&[]), None);
        assert_eq!(median_of_sorted(&[7]), Some(7));
        assert_eq!(median_of_sorted(&[1, 5, 9]), Some(5));
        // Even: (3 + 4) / 2, rounded down; the upper middle alone would say 4.
        assert_eq!(median_of_sorted(&[1, 3, 4, 10]), Some(3));
        assert_eq!(median_of_sorted(&[u64::MAX, u64::MAX]), Some(u64::MAX));
        assert_eq!(median_of_sorted(&[1.0, 2.0]), Some(1.5));
    }
}
