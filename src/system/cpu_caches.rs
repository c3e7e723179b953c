//! This CPU's data caches, as the operating system reports them.

/// This CPU's cache sizes by level (1 = L1 data), from Linux's sysfs; empty elsewhere.
#[must_use]
pub fn cpu_cache_bytes() -> Vec<(u8, u64)> {
    let mut caches = Vec::new();
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read =
            |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).ok().map(|s| s.trim().to_owned());
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else {
            break;
        };
        if kind == "Instruction" {
            continue;
        }
        // sysfs writes sizes as `32K`, in binary units.
        if let (Ok(level), Some(bytes)) = (level.parse::<u8>(), super::memory::parse_bytes(&size)) {
            caches.push((level, bytes));
        }
    }
    caches
}
