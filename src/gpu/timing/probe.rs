//! This machine's ceilings for every step of the GPU path ([`GpuCeilings`]), read from the
//! transfer paths (`transfer.rs`) timed from 4 KiB up to [`PROBE_BYTES`]: each step is its path's
//! runs at that size after one warm-up, the fastest the ceiling (what the machine can do), the
//! median kept beside it. Each figure names its clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::nanos;
use crate::gpu::plan::submission_budget::CeilingRates;
use crate::gpu::timing::compute::{GpuCompute, measure_checked};
use crate::gpu::timing::paths::{Bandwidth, PathKind, TransferPath, copy_latency_ns};
use crate::gpu::timing::timestamps::TimestampCheck;
use crate::gpu::timing::transfer::Rig;
use crate::gpu::{GpuContext, GpuError};

/// Bytes each transfer of the probe moves at its largest size: 64 MiB, about an 8K RGB frame
/// (99.5 MB) in and its gray result out; a device copy of it reads and writes 134 MB, as the 8K
/// kernel does.
pub const PROBE_BYTES: u64 = 64 << 20;

/// Host and device memory the probe holds at most while it runs: two host buffers, the upload
/// staging, two device buffers and the readback buffer.
pub const PROBE_HOLD_BYTES: u64 = 6 * PROBE_BYTES;

/// The paths the probe reads its ceilings from.
const PROBE_PATHS: [PathKind; 4] = [
    PathKind::StagedAllThreads,
    PathKind::DeviceCopy,
    PathKind::DeviceCopyKernel,
    PathKind::ReadbackAllThreads,
];

/// What this machine's GPU path can do at best, step by step (see the module doc).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuCeilings {
    /// Adapter name, driver and backend: the cache key.
    pub adapter_key: String,
    /// Adapter name.
    pub adapter: String,
    /// Whether the adapter is a software rasteriser.
    pub software_adapter: bool,
    /// Rayon threads the host copies used.
    pub host_threads: usize,
    /// Host copy into mapped `MAP_WRITE` staging (all threads, 1 MiB pieces).
    pub host_to_staging: Bandwidth,
    /// GPU copy from upload staging to a device buffer.
    pub staging_to_device: Bandwidth,
    /// GPU copy from one device buffer to another (read + write counted): the faster of a copy
    /// command and a copy kernel (see `device_copy.rs`).
    pub device_copy: Bandwidth,
    /// Whether the copy kernel was the faster (else the copy command); `false` in caches written
    /// before the kernel was timed.
    #[serde(default)]
    pub device_copy_by_kernel: bool,
    /// GPU copy from a device buffer to `MAP_READ` readback memory.
    pub device_to_readback: Bandwidth,
    /// Host copy out of mapped readback memory (all threads, 1 MiB pieces).
    pub readback_to_host: Bandwidth,
    /// A plain parallel `memcpy` between host buffers, same threads and pieces (reference).
    pub host_memcpy: Bandwidth,
    /// Median submit-to-finish time of the smallest device copy timed (4 KiB; 4 bytes in caches
    /// written before the ceilings were read from the paths), CPU clock: the fixed cost of a
    /// submission.
    pub submit_latency_ns: u64,
    /// How long the whole probe took, nanoseconds.
    pub probe_ns: u64,
    /// The compute ceiling of the synthetic work ([`GpuCompute`]); `None` in caches written
    /// before it was measured.
    #[serde(default)]
    pub compute: Option<GpuCompute>,
    /// The fitted latencies (Hockney's model over the probe's sizes) of the upload through staging
    /// filled by every thread and of the readback read by every thread: `[up, down]`, ns; `None`
    /// in caches written before they were fitted, or where a path would not fit.
    #[serde(default)]
    pub copy_latency_ns: Option<[f64; 2]>,
    /// What the ops after the grayscale cost here, each stage whole with its copies of the
    /// plane (`None` in caches written before they were measured, or where they failed).
    #[serde(default)]
    pub op_rates: Option<crate::pixel::OpRates>,
    /// graylab's own plain grayscale kernel on data kept on the GPU, its bytes read and written
    /// counted: what a real kernel streams here, the price of a kernel before one was seen
    /// (lavapipe's streams at a tenth of its copy command, the H200's near its memory's peak).
    /// `None` where it failed; measured by the converter, which holds the kernel.
    #[serde(default)]
    pub plain_kernel: Option<Bandwidth>,
}

/// Two steps one after the other on the same bytes, as one rate.
fn serial_gb_per_s(a: &Bandwidth, b: &Bandwidth) -> f64 {
    1.0 / (1.0 / a.gb_per_s().max(f64::MIN_POSITIVE) + 1.0 / b.gb_per_s().max(f64::MIN_POSITIVE))
}

impl GpuCeilings {
    /// Host to device memory as the upload does it: the host copy into staging, then the GPU
    /// copy, one after the other.
    #[must_use]
    pub fn host_to_device_gb_per_s(&self) -> f64 {
        serial_gb_per_s(&self.host_to_staging, &self.staging_to_device)
    }

    /// Device memory to host as the download does it: the GPU copy to readback, then the host
    /// copy out of it.
    #[must_use]
    pub fn device_to_host_gb_per_s(&self) -> f64 {
        serial_gb_per_s(&self.device_to_readback, &self.readback_to_host)
    }

    /// Each GPU step of a conversion at these ceilings, per byte: where the submission budget
    /// starts (see [`CeilingRates::new`]).
    #[must_use]
    pub fn rates_at_ceilings(&self) -> CeilingRates {
        let ns_per_byte = |b: &Bandwidth| b.best_ns as f64 / b.bytes.max(1) as f64;
        // The plain kernel's bytes are RGB8's 3 read and 1 written a pixel: 3 of 4 are input.
        let kernel_ns_per_in_byte = self.plain_kernel.map(|k| ns_per_byte(&k) * 4.0 / 3.0);
        CeilingRates::new(
            ns_per_byte(&self.staging_to_device),
            ns_per_byte(&self.device_copy),
            ns_per_byte(&self.device_to_readback),
            self.compute.map(|c| c.ops_per_s()),
        )
        .with_measured_kernel(kernel_ns_per_in_byte)
    }
}

/// Every ceiling of the GPU path, read from its transfer paths ([`PROBE_PATHS`]), then the
/// compute ceiling, each inside error scopes, and each path of `kinds` (timed up to
/// `largest_bytes`) from the same reading. The GPU steps are timed with encoder timestamps only
/// on a hardware adapter that reads them in place (see `GpuConverter::measure_ceilings`).
pub(crate) fn measure_with_paths(
    ctx: &GpuContext,
    check: &TimestampCheck,
    (largest_bytes, kinds): (u64, &[PathKind]),
    cancel: Option<&AtomicBool>,
) -> Result<(GpuCeilings, Vec<TransferPath>), GpuError> {
    let gpu_clock = ctx.timestamps().encoders && !ctx.is_software() && check.in_place(ctx)?;
    let started = Instant::now();
    let probe_bytes = PROBE_BYTES.min(ctx.limits().max_buffer_size) / 256 * 256;
    let timed: Vec<PathKind> =
        PathKind::ALL.into_iter().filter(|k| kinds.contains(k) || PROBE_PATHS.contains(k)).collect();
    let (mut paths, host_memcpy) = ErrorScopes::around(ctx.device(), |_| {
        let rig = Rig::new(ctx, largest_bytes.max(probe_bytes), &timed, gpu_clock)?;
        Ok((rig.measure(&timed, cancel)?, rig.memcpy(probe_bytes)))
    })?;
    stop_if(cancel)?;
    let steps = ProbeSteps::at(&paths, probe_bytes).ok_or(GpuError::Bug("a probe path without its steps"))?;
    log::debug!(
        "device copy: {:.1} GB/s by a copy command, {:.1} GB/s by a copy kernel",
        steps.by_command.gb_per_s(),
        steps.by_kernel.gb_per_s()
    );
    let device_copy_by_kernel = steps.by_kernel.gb_per_s() > steps.by_command.gb_per_s();
    let info = ctx.adapter_info();
    let copy_latency_ns = copy_latency_ns(&paths);
    paths.retain(|p| kinds.contains(&p.path));
    let ceilings = GpuCeilings {
        adapter_key: ctx.report().ceilings_key(),
        adapter: info.name.clone(),
        software_adapter: ctx.is_software(),
        host_threads: rayon::current_num_threads(),
        host_to_staging: steps.host_to_staging,
        staging_to_device: steps.staging_to_device,
        device_copy: if device_copy_by_kernel { steps.by_kernel } else { steps.by_command },
        device_copy_by_kernel,
        device_to_readback: steps.device_to_readback,
        readback_to_host: steps.readback_to_host,
        host_memcpy,
        submit_latency_ns: steps.submit_latency_ns,
        compute: Some(measure_checked(ctx, check)?),
        copy_latency_ns,
        probe_ns: nanos(started.elapsed()),
        // Measured by the converter, which holds the op stage and the kernel.
        op_rates: None,
        plain_kernel: None,
    };
    Ok((ceilings, paths))
}

/// [`GpuError::Cancelled`] once `cancel` is set: the probe stops between its steps.
pub(crate) fn stop_if(cancel: Option<&AtomicBool>) -> Result<(), GpuError> {
    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) { Err(GpuError::Cancelled) } else { Ok(()) }
}

/// The ceilings the probe's paths give: each step at the largest size, the device copies with
/// their bytes read and written both counted.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ProbeSteps {
    host_to_staging: Bandwidth,
    staging_to_device: Bandwidth,
    by_command: Bandwidth,
    by_kernel: Bandwidth,
    device_to_readback: Bandwidth,
    readback_to_host: Bandwidth,
    submit_latency_ns: u64,
}

impl ProbeSteps {
    /// The steps of [`PROBE_PATHS`] among `paths` at `bytes` (at the largest size up to it);
    /// `None` where one is missing.
    fn at(paths: &[TransferPath], bytes: u64) -> Option<Self> {
        let largest = |kind| {
            paths.iter().find(|p| p.path == kind)?.points.iter().rev().find(|q| q.bytes <= bytes).copied()
        };
        let (staged, readback) =
            (largest(PathKind::StagedAllThreads)?, largest(PathKind::ReadbackAllThreads)?);
        let read_and_write = |b: Bandwidth| Bandwidth { bytes: 2 * b.bytes, ..b };
        let copy = |kind| largest(kind)?.gpu_copy.map(read_and_write);
        let smallest_copy = paths.iter().find(|p| p.path == PathKind::DeviceCopy)?.points.first()?;
        Some(Self {
            host_to_staging: staged.host_copy?,
            staging_to_device: staged.gpu_copy?,
            by_command: copy(PathKind::DeviceCopy)?,
            by_kernel: copy(PathKind::DeviceCopyKernel)?,
            device_to_readback: readback.gpu_copy?,
            readback_to_host: readback.host_copy?,
            submit_latency_ns: smallest_copy.median_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::timing::paths::{Hockney, PathPoint, sizes};
    use crate::system::clock::Clock;

    fn bw(bytes: u64, ns: u64) -> Bandwidth {
        Bandwidth { bytes, best_ns: ns, median_ns: ns, clock: Clock::CpuClock }
    }

    #[test]
    fn steps_in_series_add_their_times() {
        // 1 GB at 10 GB/s (0.1 s) then at 40 GB/s (0.025 s): 8 GB/s for the two together.
        assert!((serial_gb_per_s(&bw(1000, 100), &bw(1000, 25)) - 8.0).abs() < 1e-9);
    }

    /// A path of `kind` from 4 KiB to 64 MiB: `latency_ns` plus the bytes at `gb_per_s` end to
    /// end, its host copy (where `host`) at twice that rate, its GPU step at `gpu_gb_per_s` on
    /// the GPU's timestamps.
    fn path(kind: PathKind, latency_ns: f64, gb_per_s: f64, host: bool, gpu_gb_per_s: f64) -> TransferPath {
        let points: Vec<PathPoint> = sizes(PROBE_BYTES)
            .into_iter()
            .map(|n| {
                let ns = |rate: f64| (n as f64 / rate) as u64;
                let at =
                    |rate, clock| Bandwidth { bytes: n, best_ns: ns(rate), median_ns: ns(rate) + 1, clock };
                let total = latency_ns as u64 + ns(gb_per_s);
                PathPoint {
                    bytes: n,
                    best_ns: total,
                    median_ns: total,
                    clock: Clock::CpuClock,
                    host_copy: host.then(|| at(2.0 * gb_per_s, Clock::CpuClock)),
                    gpu_copy: Some(at(gpu_gb_per_s, Clock::GpuTimestamp)),
                }
            })
            .collect();
        let fit = Hockney::fit(&points);
        TransferPath { path: kind, points, fit }
    }

    #[test]
    fn the_ceilings_are_the_paths_steps_at_the_largest_size() {
        // H200-like: up 50 GB/s and 30 µs, the copy command 400 GB/s, the kernel 1,100.
        let paths = [
            path(PathKind::StagedAllThreads, 30_000.0, 20.0, true, 50.0),
            path(PathKind::DeviceCopy, 12_000.0, 300.0, false, 400.0),
            path(PathKind::DeviceCopyKernel, 14_000.0, 600.0, false, 1_100.0),
            path(PathKind::ReadbackAllThreads, 40_000.0, 15.0, true, 45.0),
        ];
        let steps = ProbeSteps::at(&paths, PROBE_BYTES).expect("every step");
        assert_eq!(steps.host_to_staging.bytes, PROBE_BYTES);
        assert!((steps.host_to_staging.gb_per_s() - 40.0).abs() < 0.01, "{steps:?}");
        assert!((steps.staging_to_device.gb_per_s() - 50.0).abs() < 0.01, "{steps:?}");
        assert_eq!(steps.staging_to_device.clock, Clock::GpuTimestamp);
        // A device copy counts what it reads and what it writes.
        assert_eq!(steps.by_kernel.bytes, 2 * PROBE_BYTES);
        assert!((steps.by_command.gb_per_s() - 800.0).abs() < 0.1, "{steps:?}");
        assert!((steps.by_kernel.gb_per_s() - 2_200.0).abs() < 0.5, "{steps:?}");
        assert!((steps.device_to_readback.gb_per_s() - 45.0).abs() < 0.01, "{steps:?}");
        assert!((steps.readback_to_host.gb_per_s() - 30.0).abs() < 0.01, "{steps:?}");
        // The submission's fixed cost: the smallest copy end to end.
        assert_eq!(steps.submit_latency_ns, 12_000 + 4096 * 10 / 3000);
        // The copies' latencies come from the same paths' fits.
        let [up, down] = copy_latency_ns(&paths).expect("fitted");
        assert!((up - 30_000.0).abs() < 50.0 && (down - 40_000.0).abs() < 50.0, "{up} {down}");
        // Without one of its paths the probe has no ceilings to give.
        assert_eq!(ProbeSteps::at(&paths[..3], PROBE_BYTES), None);
        // Paths timed beyond the probe's size give their steps at it.
        let longer = path(PathKind::StagedAllThreads, 30_000.0, 20.0, true, 50.0);
        let mut beyond = paths.clone();
        beyond[0].points.push(PathPoint { bytes: 4 * PROBE_BYTES, ..longer.points[0] });
        assert_eq!(ProbeSteps::at(&beyond, PROBE_BYTES), Some(steps));
    }

    #[test]
    fn the_budget_starts_the_kernel_at_its_own_measured_rate_where_known() {
        // lavapipe: a copy command at 19.3 GB/s, the compute ceiling 29 Gop/s; its plain kernel
        // streamed 1.03 GB/s, read and written (2026-12-06).
        let copy = bw(67_108_864, 6_000_000);
        let ceilings = GpuCeilings {
            adapter_key: String::new(),
            adapter: "llvmpipe".into(),
            software_adapter: true,
            host_threads: 2,
            host_to_staging: copy,
            staging_to_device: copy,
            device_copy: bw(134_217_728, 6_954_000),
            device_copy_by_kernel: false,
            device_to_readback: copy,
            readback_to_host: copy,
            host_memcpy: copy,
            submit_latency_ns: 50_000,
            probe_ns: 1,
            compute: Some(GpuCompute {
                rounds: 1,
                invocations: 1,
                ops: 29_000_000_000,
                best_ns: 1_000_000_000,
                median_ns: 1_000_000_000,
                clock: Clock::GpuTimestamp,
            }),
            copy_latency_ns: None,
            op_rates: None,
            plain_kernel: None,
        };
        // The model: the slower of the copy (0.10 ns an input byte, both ways) and 24 operations
        // a pixel at the compute ceiling (0.28 ns an input byte).
        let modelled = ceilings.rates_at_ceilings().rates.kernel_ns_per_byte;
        assert!((modelled - 24.0 / 29.0 / 3.0).abs() < 1e-6, "{modelled}");
        // Measured, the kernel is priced at what it did: 64 MiB read and written in 65.2 ms is
        // 48 MiB of input at 1.295 ns a byte, 4.7x the model.
        let measured = GpuCeilings { plain_kernel: Some(bw(67_108_864, 65_154_237)), ..ceilings.clone() };
        let rate = measured.rates_at_ceilings().rates.kernel_ns_per_byte;
        assert!((rate - 65_154_237.0 / 50_331_648.0).abs() < 1e-6, "{rate}");
        // The copies keep their ceilings.
        let (a, b) = (measured.rates_at_ceilings().rates, ceilings.rates_at_ceilings().rates);
        assert!((a.upload_ns_per_byte - b.upload_ns_per_byte).abs() < 1e-12, "{a:?} {b:?}");
    }
}
