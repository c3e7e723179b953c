//! This machine as a result file names it: the CPU's model and threads, the memory, the
//! operating system, and the load average when the file was written. Read from Linux's `/proc`;
//! elsewhere what cannot be read is left out, never guessed.

/// This graylab's version, as every report and result file names it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The build that ran (`debug` or `release`), as every report and result file names it.
pub const BUILD: &str = if cfg!(debug_assertions) { "debug" } else { "release" };

/// The machine a result was measured on.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Host {
    /// The CPU's model as the kernel reports it (`AMD EPYC 9654 96-Core Processor`), else the
    /// architecture.
    pub cpu_model: String,
    /// The threads graylab's CPU kernel uses.
    pub threads: usize,
    /// The machine's memory (`MemTotal`), where it can be read.
    pub memory_bytes: Option<u64>,
    /// The operating system and architecture (`linux x86_64`).
    pub os: String,
    /// The load average over the last minute when the file was written, where it can be read.
    pub load_1m: Option<f64>,
}

impl Host {
    /// This machine now, with `threads` the threads the CPU kernel uses.
    #[must_use]
    pub fn now(threads: usize) -> Self {
        let memory_bytes = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| super::memory::kib_field(&text, "MemTotal:"));
        let load_1m = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|text| text.split_whitespace().next().and_then(|v| v.parse().ok()));
        Self {
            cpu_model: cpu_model(),
            threads,
            memory_bytes,
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            load_1m,
        }
    }
}

/// The CPU's model name as the kernel reports it, else the architecture.
#[must_use]
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_machine_is_named_with_its_threads_and_memory() {
        let host = super::Host::now(3);
        assert_eq!(host.threads, 3);
        assert!(!host.cpu_model.is_empty() && host.os.contains(std::env::consts::ARCH), "{host:?}");
        if cfg!(target_os = "linux") {
            assert!(host.memory_bytes.is_some_and(|b| b > 1 << 20), "{host:?}");
            assert!(host.load_1m.is_some_and(|l| l >= 0.0), "{host:?}");
        }
    }
}
