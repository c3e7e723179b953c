//! Phase timings: what each run measured, with which clock, and statistics over repeated runs.

use std::fmt;

/// A step of a conversion, in the order they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Reading and decoding the file.
    Decode,
    /// GPU only: pipeline compilation and buffer allocation (large on the first, cold run).
    Setup,
    /// GPU only: host to GPU (copy into staging memory, then the copy to the GPU buffer).
    Upload,
    /// The conversion itself.
    Kernel,
    /// GPU only: GPU to host (copy to the readback buffer, then out of mapped memory).
    Download,
    /// Encoding and writing the output file.
    Encode,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Self; 6] =
        [Self::Decode, Self::Setup, Self::Upload, Self::Kernel, Self::Download, Self::Encode];

    /// Lower-case name for reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Decode => "decode",
            Self::Setup => "setup",
            Self::Upload => "upload",
            Self::Kernel => "kernel",
            Self::Download => "download",
            Self::Encode => "encode",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which clock a figure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ClockSource {
    /// GPU timestamp queries: the time the GPU itself spent.
    #[serde(rename = "gpu-timestamp")]
    GpuTimestamp,
    /// The host's monotonic clock.
    #[serde(rename = "cpu-clock")]
    CpuClock,
    /// The sum of a host-side copy (CPU clock) and a GPU-side copy (GPU timestamps).
    #[serde(rename = "cpu-clock+gpu-timestamp")]
    Mixed,
}

impl ClockSource {
    /// The label printed next to every figure.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::GpuTimestamp => "gpu-timestamp",
            Self::CpuClock => "cpu-clock",
            Self::Mixed => "cpu-clock+gpu-timestamp",
        }
    }
}

impl ClockSource {
    /// A compact label for tight chart axes.
    #[must_use]
    pub fn short_label(self) -> &'static str {
        match self {
            Self::GpuTimestamp => "gpu-ts",
            Self::CpuClock => "cpu",
            Self::Mixed => "cpu+gpu-ts",
        }
    }
}

impl fmt::Display for ClockSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One measured phase of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PhaseTiming {
    /// Which step.
    pub phase: Phase,
    /// How long it took.
    pub ns: u64,
    /// Which clock measured it.
    pub source: ClockSource,
}

/// min / median / max of one figure over the warm runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Fastest run.
    pub min_ns: u64,
    /// Median run (the mean of the middle two for an even count).
    pub median_ns: u64,
    /// Slowest run.
    pub max_ns: u64,
    /// How many runs.
    pub runs: usize,
}

impl Stats {
    /// Statistics of a non-empty set of durations; `None` when empty.
    #[must_use]
    pub fn of(values: &[u64]) -> Option<Self> {
        let mut v = values.to_vec();
        v.sort_unstable();
        let n = v.len();
        let (first, last) = (*v.first()?, *v.last()?);
        let median = if n % 2 == 1 { v[n / 2] } else { u64::midpoint(v[n / 2 - 1], v[n / 2]) };
        Some(Self { min_ns: first, median_ns: median, max_ns: last, runs: n })
    }
}

/// Milliseconds with three decimals, for tables.
#[must_use]
pub fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_take_the_middle() {
        assert_eq!(Stats::of(&[]), None);
        let s = Stats::of(&[5, 1, 9]).expect("non-empty");
        assert_eq!((s.min_ns, s.median_ns, s.max_ns, s.runs), (1, 5, 9, 3));
        assert_eq!(Stats::of(&[4, 1, 3, 10]).map(|s| s.median_ns), Some(3)); // (3 + 4) / 2 rounded down
        assert_eq!(Stats::of(&[u64::MAX, u64::MAX]).map(|s| s.median_ns), Some(u64::MAX));
    }
}
