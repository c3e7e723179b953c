//! How much memory this process may use for an image.

/// Memory available to new allocations, in bytes: Linux's `MemAvailable`, or `None` where it
/// cannot be read (then callers fall back to a fixed budget).
#[must_use]
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn reads_meminfo_on_linux() {
        let bytes = super::available_memory_bytes().expect("Linux has /proc/meminfo");
        assert!(bytes > 64 << 20, "implausibly little memory: {bytes}");
    }
}
