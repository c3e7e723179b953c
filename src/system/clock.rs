//! Which clock timed a figure: the one answer every report, ceiling, step and chart gives beside
//! a time, so that no figure is shown without it.

use std::fmt;

/// Which clock a figure came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Clock {
    /// The host's monotonic clock (around a CPU step, a host copy, or a submit-and-wait of a GPU
    /// step alone, dispatch and wait included).
    #[default]
    #[serde(rename = "cpu-clock")]
    CpuClock,
    /// GPU timestamp queries written around the step: the time the GPU itself spent.
    #[serde(rename = "gpu-timestamp")]
    GpuTimestamp,
    /// The sum of a part timed on the CPU clock and a part from GPU timestamps: a host-side copy
    /// and a GPU-side copy (upload, download), or the copies into the display store and the
    /// preview drawn from it, waited for (display).
    #[serde(rename = "cpu-clock+gpu-timestamp")]
    Mixed,
}

impl Clock {
    /// GPU timestamps when `on_gpu`, else the CPU clock.
    #[must_use]
    pub fn gpu_if(on_gpu: bool) -> Self {
        if on_gpu { Self::GpuTimestamp } else { Self::CpuClock }
    }

    /// Whether GPU timestamps timed it (alone).
    #[must_use]
    pub fn is_gpu(self) -> bool {
        self == Self::GpuTimestamp
    }

    /// The label printed next to every figure (as it is written in JSON).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::GpuTimestamp => "gpu-timestamp",
            Self::CpuClock => "cpu-clock",
            Self::Mixed => "cpu-clock+gpu-timestamp",
        }
    }

    /// A compact label for tight chart axes.
    #[must_use]
    pub fn short_label(self) -> &'static str {
        match self {
            Self::GpuTimestamp => "gpu-ts",
            Self::CpuClock => "cpu",
            Self::Mixed => "cpu+gpu-ts",
        }
    }

    /// The clock of a sum of figures timed by `self` and `other`.
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        if self == other { self } else { Self::Mixed }
    }
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;

    #[test]
    fn a_clock_is_written_as_it_is_labelled_and_read_back() {
        for clock in [Clock::CpuClock, Clock::GpuTimestamp, Clock::Mixed] {
            let json = serde_json::to_string(&clock).expect("serializes");
            assert_eq!(json, format!("\"{}\"", clock.label()));
            assert_eq!(serde_json::from_str::<Clock>(&json).expect("reads back"), clock);
        }
        assert_eq!(Clock::gpu_if(true), Clock::GpuTimestamp);
        assert_eq!(Clock::gpu_if(false), Clock::CpuClock);
        assert_eq!(Clock::CpuClock.and(Clock::GpuTimestamp), Clock::Mixed);
        assert_eq!(Clock::GpuTimestamp.and(Clock::GpuTimestamp), Clock::GpuTimestamp);
    }
}
