//! What graylab asks of the operating system, as a leaf every layer may use: how much memory this
//! process may take and the one budget that hands it out, zeroed buffers on huge pages, and its
//! own temporary files (removed on a signal), how far a conversion is ([`progress`]), the time
//! spent on one-time work ([`one_time`]), and which clock timed a figure
//! ([`clock::Clock`]). Uses nothing else in the crate.

pub(crate) mod arenas;
pub mod clock;
pub(crate) mod huge_pages;
pub mod load;
pub(crate) mod memory;
pub(crate) mod memory_budget;
pub mod one_time;
pub mod progress;
pub(crate) mod temps;

pub use arenas::keep_one_malloc_arena_under_address_limit;

/// `1.5 GiB`-style sizes for messages.
#[must_use]
pub fn human_bytes(bytes: u64) -> String {
    human_bytes_to(bytes, 1)
}

/// `bytes` in the largest unit that keeps the figure at 1 or more, with `decimals` decimals.
fn human_bytes_to(bytes: u64, decimals: usize) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    match UNITS.get(unit) {
        Some(name) if unit > 0 => format!("{v:.decimals$} {name}"),
        _ => format!("{bytes} B"),
    }
}

/// Two sizes that a message compares ("needs A but only B may be used"), each as
/// [`human_bytes`] writes it but with as many decimals (up to 3) as tell them apart, and in
/// exact bytes where even 3 do not. Equal sizes are written alike.
#[must_use]
pub fn human_byte_pair(a_bytes: u64, b_bytes: u64) -> (String, String) {
    if a_bytes == b_bytes {
        return (human_bytes(a_bytes), human_bytes(b_bytes));
    }
    for decimals in 1..=3 {
        let (a, b) = (human_bytes_to(a_bytes, decimals), human_bytes_to(b_bytes, decimals));
        if a != b {
            return (a, b);
        }
    }
    (format!("{a_bytes} bytes"), format!("{b_bytes} bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_of_sizes_is_written_so_that_the_two_differ() {
        let mib = 1 << 20;
        // Far apart: one decimal, as human_bytes writes them.
        assert_eq!(human_byte_pair(37 << 30, 1 << 30), ("37.0 GiB".into(), "1.0 GiB".into()));
        assert_eq!(human_byte_pair(100, 99), ("100 B".into(), "99 B".into()));
        // The case: 95.4 MiB against 95.4 MiB, told apart by the second decimal.
        let (needed, budget) = (100_000_000, 99_990_000);
        assert_eq!(human_bytes(needed), human_bytes(budget));
        assert_eq!(human_byte_pair(needed, budget), ("95.37 MiB".into(), "95.36 MiB".into()));
        // The third decimal, then exact bytes.
        assert_eq!(
            human_byte_pair(100 * mib + 1024, 100 * mib),
            ("100.001 MiB".into(), "100.000 MiB".into())
        );
        assert_eq!(
            human_byte_pair(100 * mib + 1, 100 * mib),
            ("104857601 bytes".into(), "104857600 bytes".into())
        );
        // Equal sizes, and units apart.
        assert_eq!(human_byte_pair(mib, mib), ("1.0 MiB".into(), "1.0 MiB".into()));
        assert_eq!(human_byte_pair(mib, 1000), ("1.0 MiB".into(), "1000 B".into()));
    }
}
