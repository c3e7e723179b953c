//! What graylab asks of the operating system, as a leaf every layer may use: how much memory this
//! process may take and the one budget that hands it out, zeroed buffers on huge pages, and its
//! own temporary files (removed on a signal). Uses nothing else in the crate.

pub(crate) mod arenas;
pub(crate) mod huge_pages;
pub(crate) mod memory;
pub(crate) mod memory_budget;
pub(crate) mod temps;

pub use arenas::keep_one_malloc_arena_under_address_limit;

/// `1.5 GiB`-style sizes for messages.
#[must_use]
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[unit]) }
}
