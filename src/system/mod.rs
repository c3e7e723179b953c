//! What graylab asks of the operating system, as a leaf every layer may use: how much memory this
//! process may take and the one budget that hands it out, zeroed buffers on huge pages, and its
//! own temporary files (removed on a signal, after which a command's last words are said:
//! [`signals`]), the machine a result names ([`host`]), how far a conversion is ([`progress`]),
//! the time spent on one-time work ([`one_time`]), which clock timed a figure ([`clock::Clock`]),
//! a core per thread for the CPU's full pool ([`affinity`]), and how figures are written
//! ([`units`]).

pub mod affinity;
pub(crate) mod arenas;
pub mod clock;
pub mod cpu_caches;
pub mod host;
pub(crate) mod huge_pages;
pub mod load;
pub mod median;
pub mod memory;
pub mod memory_budget;
pub mod one_time;
pub mod progress;
pub mod signals;
pub(crate) mod temps;
pub mod units;

pub use arenas::keep_one_malloc_arena_under_address_limit;
pub use units::{human_byte_pair, human_bytes};
