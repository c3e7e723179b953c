//! Every way bytes reach the GPU and come back, each as latency plus bandwidth: each path is
//! timed end to end (CPU clock, from the first call to the bytes being usable: submitted and
//! waited for, mapped and copied) over sizes from 4 KiB up, and Hockney's model
//! `t(n) = latency + n / bandwidth` is fitted to the medians. `n½ = latency × bandwidth` is the
//! size that reaches half the bandwidth: below it a transfer is mostly its fixed cost, which is
//! why small images lose on the GPU whatever the kernel does.
//!
//! The fit weighs each size by `1 / t²` (it minimises relative error), so the microsecond
//! transfers set the latency and the large ones the bandwidth; its root-mean-square relative
//! error says how well two numbers describe the path.
//!
//! Each size also keeps its steps apart (the host copy, the GPU command): the probe's ceilings
//! are those steps at its largest size (`probe.rs`). The measuring is in `transfer.rs`.

use crate::system::clock::Clock;

/// The smallest size timed: 4 KiB.
pub const SMALLEST_BYTES: u64 = 4 << 10;

/// The largest size timed when memory allows: 256 MiB.
pub const LARGEST_BYTES: u64 = 256 << 20;

/// Buffers of the largest size the measurement holds at once: six on the device side (upload
/// staging, two device buffers, readback, and on unified memory the two mapped storage buffers)
/// and two on the host.
pub const HELD_BUFFERS: u64 = 8;

/// One measured bandwidth: a step of a path at one size, or the path end to end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bandwidth {
    /// Bytes moved per run (for a device copy ceiling: bytes read plus bytes written).
    pub bytes: u64,
    /// The fastest run, nanoseconds: the ceiling.
    pub best_ns: u64,
    /// The median run, nanoseconds.
    pub median_ns: u64,
    /// The clock that measured it.
    pub clock: Clock,
}

impl Bandwidth {
    /// `runs_ns` of `bytes` each, on `clock`: the fastest and the median (at least 1 ns).
    #[must_use]
    pub fn of(bytes: u64, mut runs_ns: Vec<u64>, clock: Clock) -> Self {
        runs_ns.sort_unstable();
        let best_ns = runs_ns.first().copied().unwrap_or(0).max(1);
        let median_ns = crate::system::median::median_of_sorted(&runs_ns).unwrap_or(0).max(1);
        Self { bytes, best_ns, median_ns, clock }
    }

    /// The ceiling in GB/s (1e9 bytes per second), from the fastest run.
    #[must_use]
    pub fn gb_per_s(&self) -> f64 {
        self.bytes as f64 / self.best_ns.max(1) as f64
    }

    /// GB/s at the median run.
    #[must_use]
    pub fn median_gb_per_s(&self) -> f64 {
        self.bytes as f64 / self.median_ns.max(1) as f64
    }
}

/// One way bytes move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// `queue.write_buffer` into a device buffer, submitted and waited for. Its GPU step is on
    /// the CPU clock (submit to finish): wgpu runs pending writes before the submitted command
    /// buffers, so no encoder timestamps can bracket the copy.
    WriteBuffer,
    /// Mapped upload staging filled by one thread, unmapped, copied to a device buffer.
    StagedOneThread,
    /// The same filled by every thread, as graylab's upload does it.
    StagedAllThreads,
    /// A device buffer copied to another on the GPU by a copy command.
    DeviceCopy,
    /// The same by a copy kernel (`device_copy.rs`), at most one storage binding.
    DeviceCopyKernel,
    /// A device buffer copied to readback memory, mapped and read by one thread.
    ReadbackOneThread,
    /// The same read by every thread, as graylab's download does it.
    ReadbackAllThreads,
    /// Up and down at once: staged up (every thread) and read back in one submission; the bytes
    /// of both directions count.
    Both,
    /// Unified memory only (`MAPPABLE_PRIMARY_BUFFERS`): a storage buffer the kernel binds,
    /// mapped and filled by every thread, unmapped; no copy at all.
    MappedStorageUp,
    /// Unified memory only: a storage buffer the kernel wrote, mapped and read by every thread.
    MappedStorageDown,
}

impl PathKind {
    /// Every path, in the order they are printed (the mapped storage ones only where the device
    /// has unified memory and maps storage buffers: [`Self::measured_on`]).
    pub const ALL: [Self; 10] = [
        Self::WriteBuffer,
        Self::StagedOneThread,
        Self::StagedAllThreads,
        Self::DeviceCopy,
        Self::DeviceCopyKernel,
        Self::ReadbackOneThread,
        Self::ReadbackAllThreads,
        Self::Both,
        Self::MappedStorageUp,
        Self::MappedStorageDown,
    ];

    /// Whether this path can be measured on a device with `features` of this `device_type`.
    #[must_use]
    pub fn measured_on(self, features: wgpu::Features, device_type: wgpu::DeviceType) -> bool {
        match self {
            Self::MappedStorageUp | Self::MappedStorageDown => {
                features.contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
                    && crate::gpu::device::adapters::unified_memory(device_type)
            }
            _ => true,
        }
    }

    /// Whether this path's GPU commands are recorded in the encoder, where timestamps written
    /// around them bracket them (all but [`Self::WriteBuffer`], whose copy wgpu runs before the
    /// encoder's commands, and the mapped storage paths, which have none).
    #[must_use]
    pub fn stamped_in_encoder(self) -> bool {
        !matches!(self, Self::WriteBuffer | Self::MappedStorageUp | Self::MappedStorageDown)
    }

    /// How the path is named in text.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::WriteBuffer => "up: queue.write_buffer",
            Self::StagedOneThread => "up: mapped staging, 1 thread",
            Self::StagedAllThreads => "up: mapped staging, all threads",
            Self::DeviceCopy => "on the GPU: device copy",
            Self::DeviceCopyKernel => "on the GPU: copy kernel",
            Self::ReadbackOneThread => "down: readback, 1 thread",
            Self::ReadbackAllThreads => "down: readback, all threads",
            Self::Both => "up and down at once",
            Self::MappedStorageUp => "up: mapped storage (unified)",
            Self::MappedStorageDown => "down: mapped storage (unified)",
        }
    }
}

/// One size of one path: end to end, and its steps apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PathPoint {
    /// Bytes moved (both directions for [`PathKind::Both`]).
    pub bytes: u64,
    /// The fastest run end to end, nanoseconds.
    pub best_ns: u64,
    /// The median run end to end, nanoseconds.
    pub median_ns: u64,
    /// The clock of `best_ns` and `median_ns`: the CPU's, end to end (results saved before it
    /// was said were timed on it too).
    #[serde(default)]
    pub clock: Clock,
    /// The host's copies alone (filling staging, reading readback or mapped storage; not the
    /// wait for the mapping), CPU clock; `None` on a path without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_copy: Option<Bandwidth>,
    /// The GPU's commands alone: between encoder timestamps where they were read, else on the
    /// CPU clock from submit to finish; `None` on a path without a submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_copy: Option<Bandwidth>,
}

impl PathPoint {
    /// The bandwidth achieved at the median run, GB/s.
    #[must_use]
    pub fn gb_per_s(&self) -> f64 {
        self.bytes as f64 / self.median_ns.max(1) as f64
    }
}

/// Hockney's model fitted to a path: `t(n) = latency_ns + n / bandwidth`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hockney {
    /// The fixed cost of one transfer, nanoseconds.
    pub latency_ns: f64,
    /// The asymptotic bandwidth, GB/s (1e9 bytes per second).
    pub gb_per_s: f64,
    /// The size that reaches half that bandwidth: latency × bandwidth, bytes.
    pub n_half_bytes: f64,
    /// Root-mean-square relative error of the fit over the sizes (0.05: 5%).
    pub rms_relative_error: f64,
}

impl Hockney {
    /// The model fitted to `points` (their medians), weighing each by `1 / t²`; `None` with
    /// fewer than two sizes or when time does not grow with size.
    #[must_use]
    pub fn fit(points: &[PathPoint]) -> Option<Self> {
        let data: Vec<(f64, f64)> =
            points.iter().filter(|p| p.median_ns > 0).map(|p| (p.bytes as f64, p.median_ns as f64)).collect();
        if data.len() < 2 {
            return None;
        }
        let (mut s, mut sn, mut snn, mut st, mut snt) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(n, t) in &data {
            let w = 1.0 / (t * t);
            s += w;
            sn += w * n;
            snn += w * n * n;
            st += w * t;
            snt += w * n * t;
        }
        let det = s * snn - sn * sn;
        let (mut latency, mut per_byte) = if det.abs() > f64::MIN_POSITIVE {
            ((st * snn - sn * snt) / det, (s * snt - sn * st) / det)
        } else {
            (0.0, 0.0)
        };
        if latency < 0.0 {
            // No fixed cost to see: the line through the origin.
            latency = 0.0;
            per_byte = snt / snn;
        }
        if per_byte <= 0.0 || !per_byte.is_finite() {
            return None;
        }
        let sq: f64 = data.iter().map(|&(n, t)| ((latency + per_byte * n - t) / t).powi(2)).sum();
        Some(Self {
            latency_ns: latency,
            gb_per_s: 1.0 / per_byte,
            n_half_bytes: latency / per_byte,
            rms_relative_error: (sq / data.len() as f64).sqrt(),
        })
    }
}

/// One path measured, and its fit.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TransferPath {
    /// Which path.
    pub path: PathKind,
    /// Each size, smallest first.
    pub points: Vec<PathPoint>,
    /// Hockney's model fitted to them.
    pub fit: Option<Hockney>,
}

impl TransferPath {
    /// The bandwidth achieved at the largest size timed, GB/s (0 with no size).
    #[must_use]
    pub fn largest_gb_per_s(&self) -> f64 {
        self.points.last().map_or(0.0, PathPoint::gb_per_s)
    }
}

/// The fitted latencies of graylab's own copies among `paths`: the upload through staging filled
/// by every thread and the readback read by every thread, `[up, down]` ns; `None` unless both
/// were fitted.
#[must_use]
pub fn copy_latency_ns(paths: &[TransferPath]) -> Option<[f64; 2]> {
    let latency = |kind| paths.iter().find(|p| p.path == kind)?.fit.map(|f| f.latency_ns);
    Some([latency(PathKind::StagedAllThreads)?, latency(PathKind::ReadbackAllThreads)?])
}

/// Timed runs of a size after one warm-up: more where they are short.
#[must_use]
pub fn repeats(bytes: u64) -> usize {
    if bytes >= 64 << 20 { 5 } else { 9 }
}

/// The sizes timed: 4 KiB, 16 KiB, … ×4 up to `largest_bytes`.
#[must_use]
pub fn sizes(largest_bytes: u64) -> Vec<u64> {
    std::iter::successors(Some(SMALLEST_BYTES), |&n| n.checked_mul(4))
        .take_while(|&n| n <= largest_bytes)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Bandwidth, Clock, Hockney, PathPoint, sizes};

    fn point(bytes: u64, ns: f64) -> PathPoint {
        let (best_ns, median_ns, clock) = (ns as u64, ns as u64, Clock::CpuClock);
        PathPoint { bytes, best_ns, median_ns, clock, host_copy: None, gpu_copy: None }
    }

    #[test]
    fn the_fit_recovers_latency_bandwidth_and_n_half() {
        // 50 µs and 10 GB/s: n½ = 500 kB.
        let points: Vec<PathPoint> =
            sizes(256 << 20).into_iter().map(|n| point(n, 50_000.0 + n as f64 / 10.0)).collect();
        assert_eq!(points.len(), 9, "4 KiB to 256 MiB, ×4");
        let fit = Hockney::fit(&points).expect("a fit");
        assert!((fit.latency_ns - 50_000.0).abs() < 1.0, "{fit:?}");
        assert!((fit.gb_per_s - 10.0).abs() < 1e-3, "{fit:?}");
        assert!((fit.n_half_bytes - 500_000.0).abs() < 100.0, "{fit:?}");
        assert!(fit.rms_relative_error < 1e-4, "{fit:?}");
    }

    #[test]
    fn a_path_without_fixed_cost_or_growth_says_so() {
        // Time in proportion to size: no latency, 2 GB/s.
        let fit = Hockney::fit(&[point(1000, 500.0), point(4000, 2000.0)]).expect("a fit");
        assert!(fit.latency_ns.abs() < 1e-6 && (fit.gb_per_s - 2.0).abs() < 1e-9, "{fit:?}");
        // Time that does not grow with size has no bandwidth to fit; one size has no line.
        assert_eq!(Hockney::fit(&[point(1000, 900.0), point(4000, 800.0)]), None);
        assert_eq!(Hockney::fit(&[point(1000, 900.0)]), None);
    }

    #[test]
    fn a_bandwidth_is_its_fastest_run_and_its_median() {
        let b = Bandwidth::of(1000, vec![40, 10, 20], Clock::GpuTimestamp);
        assert_eq!((b.best_ns, b.median_ns), (10, 20));
        assert!((b.gb_per_s() - 100.0).abs() < 1e-9 && (b.median_gb_per_s() - 50.0).abs() < 1e-9);
        // No run at all reads as 1 ns, never a division by zero.
        assert_eq!(Bandwidth::of(8, Vec::new(), Clock::CpuClock).best_ns, 1);
    }
}
