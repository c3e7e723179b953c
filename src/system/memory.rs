//! How much memory this process may use now: the smallest of the memory available on the
//! machine, the cgroup v2 limit and the process's resource limits. Only reads; the budget that
//! hands out reservations against it is [`crate::system::memory_budget`].

use std::fmt;
use std::path::{Path, PathBuf};

use crate::system::arenas;

/// The environment variable that sets the memory budget outright, e.g. `512MiB`, `2G`, `1500000000`.
pub const BUDGET_ENV: &str = "GRAYLAB_MEMORY_BUDGET";

/// Where the budget's figure comes from: the limit that was the smallest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetSource {
    /// Linux's `MemAvailable` (`/proc/meminfo`).
    MemAvailable,
    /// The cgroup limit (v2 `memory.max` or `memory.high`, v1 `memory.limit_in_bytes`) less
    /// what the cgroup uses.
    Cgroup,
    /// `RLIMIT_AS` less the address space already mapped.
    AddressSpaceLimit,
    /// `RLIMIT_DATA` less the data already mapped.
    DataLimit,
    /// Set by [`BUDGET_ENV`].
    Environment,
    /// Set by the caller for one decode.
    Caller,
    /// Nothing could be read; a fixed figure.
    Fallback,
}

impl fmt::Display for BudgetSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MemAvailable => "3/4 of the memory available now",
            Self::Cgroup => "3/4 of the cgroup's free memory",
            Self::AddressSpaceLimit => "3/4 of the address-space limit's headroom (RLIMIT_AS)",
            Self::DataLimit => "3/4 of the data-size limit's headroom (RLIMIT_DATA)",
            Self::Environment => BUDGET_ENV,
            Self::Caller => "the limit set for this decode",
            Self::Fallback => "3/4 of a fixed 8 GiB (the available memory could not be read)",
        })
    }
}

/// The memory this process may still take, and which limit decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headroom {
    /// Bytes that may still be allocated (before the budget's safety share is taken).
    pub bytes: u64,
    /// The limit that gave the smallest figure.
    pub source: BudgetSource,
}

/// Headroom when nothing can be read.
const FALLBACK_BYTES: u64 = 8 << 30;

/// Memory available to new allocations, in bytes: Linux's `MemAvailable`, or `None` where it
/// cannot be read.
#[must_use]
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, "MemAvailable:")
}

/// The most resident memory this process has used so far (`VmHWM`), where it can be read.
#[must_use]
pub fn peak_resident_bytes() -> Option<u64> {
    kib_field(&std::fs::read_to_string("/proc/self/status").ok()?, "VmHWM:")
}

/// The smallest headroom of every limit that applies to this process now (the environment
/// override, [`BUDGET_ENV`], aside).
#[must_use]
pub fn headroom() -> Headroom {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let candidates = [
        available_memory_bytes().map(|b| (b, BudgetSource::MemAvailable)),
        cgroup_headroom_bytes().map(|b| (b, BudgetSource::Cgroup)),
        rlimit_bytes(Limit::AddressSpace)
            .map(|limit| {
                let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
                let mapped = kib_field(&status, "VmSize:").unwrap_or(0);
                address_space_headroom(
                    limit,
                    mapped,
                    arenas::expected_threads(cores),
                    cores,
                    arenas::one_malloc_arena(),
                )
            })
            .map(|b| (b, BudgetSource::AddressSpaceLimit)),
        rlimit_bytes(Limit::Data)
            .map(|limit| limit.saturating_sub(kib_field(&status, "VmData:").unwrap_or(0)))
            .map(|b| (b, BudgetSource::DataLimit)),
    ];
    candidates
        .into_iter()
        .flatten()
        .min_by_key(|(b, _)| *b)
        .map_or(Headroom { bytes: FALLBACK_BYTES, source: BudgetSource::Fallback }, |(bytes, source)| {
            Headroom { bytes, source }
        })
}

/// What `RLIMIT_AS` (`limit_bytes`) leaves this process: the limit less the address space
/// already mapped and what glibc's per-thread arenas may still reserve for `threads` threads on
/// `cores` cores (nothing once every thread shares the main arena, `one_arena`). Monotonic in the
/// limit: the arenas are counted whether or not they exist yet, so a larger limit never leaves
/// less because more of them fitted when it was read.
#[must_use]
pub fn address_space_headroom(
    limit_bytes: u64,
    mapped_bytes: u64,
    threads: usize,
    cores: usize,
    one_arena: bool,
) -> u64 {
    limit_bytes
        .saturating_sub(mapped_bytes)
        .saturating_sub(arenas::arena_reserve_bytes(threads, cores, one_arena))
}

/// A [`BUDGET_ENV`] value that is not a size.
#[derive(Debug, thiserror::Error)]
#[error("{BUDGET_ENV}={0:?} is not a size (e.g. 512MiB, 2G or 1500000000)")]
pub struct BadBudget(pub String);

/// The budget set by [`BUDGET_ENV`], if it is set; an unreadable value is an error naming it.
pub fn budget_override_bytes() -> Result<Option<u64>, BadBudget> {
    match std::env::var(BUDGET_ENV) {
        Ok(text) => parse_bytes(&text).map(Some).ok_or(BadBudget(text)),
        Err(_) => Ok(None),
    }
}

/// Parses `1500000000`, `512M`, `512MiB`, `2G`, `2GB`, `64k` (binary units; case-insensitive).
#[must_use]
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let value: u64 = t[..digits_end].parse().ok()?;
    let shift = match t[digits_end..].trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    value.checked_mul(1 << shift)
}

pub(super) fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The tightest cgroup headroom of this process's cgroup and its ancestors: cgroup v2
/// (`min(memory.max, memory.high)`) and the v1 memory controller (`memory.limit_in_bytes`), less
/// what the cgroup uses, counting inactive page cache as free (the kernel reclaims it first).
fn cgroup_headroom_bytes() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<u64> = None;
    for line in membership.lines() {
        // v2: `0::/path`; v1: `N:memory:/path` (or `N:…,memory,…:/path`).
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(relative)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (root, one): (&Path, fn(&Path) -> Option<u64>) = if controllers.is_empty() {
            (Path::new("/sys/fs/cgroup"), one_cgroup_headroom)
        } else if controllers.split(',').any(|c| c == "memory") {
            (Path::new("/sys/fs/cgroup/memory"), one_v1_cgroup_headroom)
        } else {
            continue;
        };
        let mut dir: PathBuf = root.join(relative.trim_start_matches('/'));
        loop {
            if let Some(h) = one(&dir) {
                best = Some(best.map_or(h, |b| b.min(h)));
            }
            if dir == root || !dir.pop() || !dir.starts_with(root) {
                break;
            }
        }
    }
    best
}

/// A cgroup v1 memory controller's headroom; "no limit" is a number near 2^63 there.
fn one_v1_cgroup_headroom(dir: &Path) -> Option<u64> {
    let limit = read_number(dir, "memory.limit_in_bytes").filter(|l| *l < 1 << 62)?;
    cgroup_left(dir, limit, "memory.usage_in_bytes", "total_inactive_file ")
}

/// A cgroup v2 group's headroom.
fn one_cgroup_headroom(dir: &Path) -> Option<u64> {
    let limit = |name: &str| read_number(dir, name); // "max" -> None
    let cap = match (limit("memory.max"), limit("memory.high")) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    cgroup_left(dir, cap, "memory.current", "inactive_file ")
}

/// The number in `dir`'s file `name`.
fn read_number(dir: &Path, name: &str) -> Option<u64> {
    std::fs::read_to_string(dir.join(name)).ok()?.trim().parse().ok()
}

/// `cap` less the memory in use (file `usage`) that is not reclaimable page cache (the
/// `inactive` line of `memory.stat`).
fn cgroup_left(dir: &Path, cap: u64, usage: &str, inactive: &str) -> Option<u64> {
    let used = read_number(dir, usage)?;
    let reclaimable = std::fs::read_to_string(dir.join("memory.stat"))
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix(inactive)?.trim().parse().ok()))
        .unwrap_or(0u64);
    Some(cap.saturating_sub(used.saturating_sub(reclaimable)))
}

#[derive(Clone, Copy)]
enum Limit {
    AddressSpace,
    Data,
}

/// A resource limit's current value; `None` when there is none (`RLIM_INFINITY`).
#[cfg(unix)]
fn rlimit_bytes(limit: Limit) -> Option<u64> {
    use rustix::process::{Resource, getrlimit};
    let resource = match limit {
        Limit::AddressSpace => Resource::As,
        Limit::Data => Resource::Data,
    };
    getrlimit(resource).current
}

#[cfg(not(unix))]
fn rlimit_bytes(_limit: Limit) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use crate::system::memory::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_meminfo_on_linux() {
        let bytes = available_memory_bytes().expect("Linux has /proc/meminfo");
        assert!(bytes > 64 << 20, "implausibly little memory: {bytes}");
        let h = headroom();
        assert!(h.bytes <= bytes, "the headroom {h:?} exceeds MemAvailable {bytes}");
    }

    #[test]
    fn a_cgroup_counts_its_limit_less_what_it_uses_but_not_its_inactive_cache() {
        let dir = tempfile::tempdir().expect("temp dir");
        let put = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("write");
        put("memory.max", "1073741824\n");
        put("memory.high", "max\n");
        put("memory.current", "536870912\n");
        put("memory.stat", "anon 400000000\ninactive_file 100000000\nactive_file 36870912\n");
        assert_eq!(one_cgroup_headroom(dir.path()), Some(1_073_741_824 - (536_870_912 - 100_000_000)));
        put("memory.high", "805306368\n");
        assert_eq!(one_cgroup_headroom(dir.path()), Some(805_306_368 - (536_870_912 - 100_000_000)));
        // No limit at all: this cgroup does not constrain.
        put("memory.max", "max\n");
        put("memory.high", "max\n");
        assert_eq!(one_cgroup_headroom(dir.path()), None);
        // cgroup v1: the same arithmetic; its "unlimited" is 2^63 rounded down to a page.
        put("memory.limit_in_bytes", "2147483648\n");
        put("memory.usage_in_bytes", "1073741824\n");
        put("memory.stat", "cache 5\ntotal_inactive_file 73741824\n");
        assert_eq!(one_v1_cgroup_headroom(dir.path()), Some(2_147_483_648 - 1_000_000_000));
        put("memory.limit_in_bytes", "9223372036854771712\n");
        assert_eq!(one_v1_cgroup_headroom(dir.path()), None);
    }

    #[test]
    fn the_address_space_budget_grows_with_the_limit() {
        const MIB: u64 = 1 << 20;
        let mapped = 26 * MIB;
        for (threads, cores, one_arena) in [(8, 2, false), (8, 2, true), (50, 16, false), (1, 1, false)] {
            let mut last = 0;
            for limit_mib in (0..4096).step_by(10) {
                let h = address_space_headroom(limit_mib * MIB, mapped, threads, cores, one_arena);
                assert!(h >= last, "{limit_mib} MiB with {threads} threads on {cores} cores: {h} < {last}");
                last = h;
            }
        }
        // One arena: the limit less what is mapped, as 150M, 200M and 250M should have given.
        let budget = |limit_mib: u64| address_space_headroom(limit_mib * MIB, mapped, 8, 2, true) / 4 * 3;
        assert_eq!([budget(150), budget(200), budget(250)], [93 * MIB, 130 * MIB + MIB / 2, 168 * MIB]);
        // Per-thread arenas: 64 MiB for each thread past the first, at most 8 per core.
        assert_eq!(address_space_headroom(1024 * MIB, mapped, 8, 2, false), (1024 - 26 - 7 * 64) * MIB);
        assert_eq!(address_space_headroom(4096 * MIB, mapped, 40, 2, false), (4096 - 26 - 16 * 64) * MIB);
        assert_eq!(address_space_headroom(150 * MIB, mapped, 8, 2, false), 0);
    }

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_bytes("1500000000"), Some(1_500_000_000));
        assert_eq!(parse_bytes("512MiB"), Some(512 << 20));
        assert_eq!(parse_bytes(" 2g "), Some(2 << 30));
        assert_eq!(parse_bytes("64 kB"), Some(64 << 10));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("-5"), None);
        assert_eq!(parse_bytes("99999999999999T"), None);
    }
}
