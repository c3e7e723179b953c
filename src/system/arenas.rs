//! glibc's malloc arenas under an address-space limit. Each thread that allocates gets an arena of
//! its own (up to 8 per core), and each arena reserves 64 MiB of address space when it is made.
//! Under `RLIMIT_AS` those reservations eat the limit: how many exist when the budget is read
//! depends on which threads have allocated by then, and whether their arenas still fitted, so the
//! budget was not monotonic in the limit (150M allowed 76.8 MiB, 200M 18.3 MiB, 250M 55.8 MiB).
//!
//! So when `RLIMIT_AS` is set, the binary keeps every thread in glibc's main arena from start-up
//! ([`keep_one_malloc_arena_under_address_limit`], as `MALLOC_ARENA_MAX=1` would; the variable
//! itself is read by glibc before `main`). Where that was not done (the library in another
//! program, another libc), the budget counts the address space the arenas may still reserve
//! ([`arena_reserve_bytes`]).

use std::sync::atomic::{AtomicBool, Ordering};

/// Address space one glibc arena reserves on a 64-bit machine (`HEAP_MAX_SIZE`).
pub const ARENA_BYTES: u64 = 64 << 20;

/// Whether this process keeps every thread in the main arena.
static ONE_ARENA: AtomicBool = AtomicBool::new(false);

/// When `RLIMIT_AS` limits this process, makes glibc keep every thread in its main arena, so
/// threads reserve no 64 MiB arenas of their own; returns whether it did. Call first thing in
/// `main`, before any thread exists (arenas made before stay). Elsewhere (no limit, not glibc)
/// it does nothing: the arenas then spread allocations over threads, as glibc chooses.
pub fn keep_one_malloc_arena_under_address_limit() -> bool {
    if address_limit_bytes().is_none() {
        return false;
    }
    let done = one_arena();
    ONE_ARENA.store(done, Ordering::Relaxed);
    done
}

/// Whether every thread allocates from the main arena (see
/// [`keep_one_malloc_arena_under_address_limit`]).
#[must_use]
pub fn one_malloc_arena() -> bool {
    ONE_ARENA.load(Ordering::Relaxed)
}

/// The address space glibc's per-thread arenas may still reserve for `threads` threads on
/// `cores` cores: 64 MiB for each thread beyond the first (which uses the main arena), at most
/// 8 arenas per core (glibc's default cap); nothing when every thread shares the main arena or
/// the C library is not glibc. Arenas already made are counted again: an overestimate, never
/// more than the same figure for every limit, so the budget stays monotonic in the limit.
#[must_use]
pub fn arena_reserve_bytes(threads: usize, cores: usize, one_arena: bool) -> u64 {
    if one_arena || !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return 0;
    }
    let arenas = threads.saturating_sub(1).min(8 * cores.max(1));
    arenas as u64 * ARENA_BYTES
}

/// The threads a graylab process may run, for [`arena_reserve_bytes`]: a rayon pool and a GPU
/// driver's pool of one per core, the batch's jobs (at most one per core), the signal thread and
/// the main thread.
#[must_use]
pub fn expected_threads(cores: usize) -> usize {
    3 * cores.max(1) + 2
}

#[cfg(unix)]
fn address_limit_bytes() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

#[cfg(not(unix))]
fn address_limit_bytes() -> Option<u64> {
    None
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_arena() -> bool {
    /// `M_ARENA_MAX` of glibc's `<malloc.h>`.
    const M_ARENA_MAX: std::ffi::c_int = -8;
    unsafe extern "C" {
        // glibc's, linked into every program on this target; rustix does not wrap it.
        fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    // SAFETY: `mallopt` takes two integers and changes an allocator setting under glibc's own
    // lock; `M_ARENA_MAX` only bounds the arenas made from now on.
    unsafe { mallopt(M_ARENA_MAX, 1) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_arena() -> bool {
    false
}
