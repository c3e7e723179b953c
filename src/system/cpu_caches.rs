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
        let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit()).unwrap_or(size.len()));
        let scale = match unit {
            "K" => 1 << 10,
            "M" => 1 << 20,
            "G" => 1 << 30,
            _ => 1,
        };
        if let (Ok(level), Ok(n)) = (level.parse::<u8>(), digits.parse::<u64>()) {
            caches.push((level, n * scale));
        }
    }
    caches
}
