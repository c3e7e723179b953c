//! This machine's ceilings for every step of the GPU path, measured in a fraction of a second:
//! the host filling mapped upload staging and reading mapped readback memory (every thread, with
//! the converter's own copy code), the GPU copying staging to device memory and device memory to
//! readback, the device's own copy bandwidth (the faster of a copy command and a copy kernel),
//! a plain host `memcpy` at the same thread count for
//! reference, and the submit-and-wait latency of a tiny submission. Each figure names its clock.
//!
//! Each step runs [`REPEATS`] times after one warm-up; the fastest run is the ceiling (what the
//! machine can do), the median is kept beside it.

use std::time::Instant;

use rayon::prelude::*;

use crate::gpu::device::host_copy::{PIECE_BYTES, fill_mapped, read_mapped};
use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{map, mapped, nanos, wait_for};
use crate::gpu::plan::submission_budget::CeilingRates;
use crate::gpu::timing::compute::{GpuCompute, measure_checked};
use crate::gpu::timing::device_copy::CopyKernel;
use crate::gpu::timing::timestamps::{Span, Stamp, TimestampCheck, Timestamps};
use crate::gpu::{GpuContext, GpuError};
use crate::system::clock::Clock;

/// Bytes each transfer of the probe moves: 64 MiB, about an 8K RGB frame (99.5 MB) in and its
/// gray result out; a device copy of it reads and writes 134 MB, as the 8K kernel does.
pub const PROBE_BYTES: u64 = 64 << 20;

/// Host and device memory the probe holds at most while it runs: two host buffers, the upload
/// staging, two device buffers and the readback buffer.
pub const PROBE_HOLD_BYTES: u64 = 6 * PROBE_BYTES;

/// Timed runs of each step (after one warm-up).
pub const REPEATS: usize = 4;

/// Submissions timed for the latency.
const LATENCY_REPEATS: usize = 9;

/// One measured bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bandwidth {
    /// Bytes moved per run (for a device copy: bytes read plus bytes written).
    pub bytes: u64,
    /// The fastest run, nanoseconds: the ceiling.
    pub best_ns: u64,
    /// The median run, nanoseconds.
    pub median_ns: u64,
    /// The clock that measured it.
    pub clock: Clock,
}

impl Bandwidth {
    fn of(bytes: u64, mut runs_ns: Vec<u64>, clock: Clock) -> Self {
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
    /// Median submit-to-finish time of a 4-byte copy, CPU clock: the fixed cost of a submission.
    pub submit_latency_ns: u64,
    /// How long the whole probe took, nanoseconds.
    pub probe_ns: u64,
    /// The compute ceiling of the synthetic work ([`GpuCompute`]); `None` in caches written
    /// before it was measured.
    #[serde(default)]
    pub compute: Option<GpuCompute>,
    /// The fitted latencies (Hockney's model over 4 KiB to 4 MiB) of the upload through staging
    /// filled by every thread and of the readback read by every thread: `[up, down]`, ns; `None`
    /// in caches written before they were fitted, or where a path would not fit.
    #[serde(default)]
    pub copy_latency_ns: Option<[f64; 2]>,
}

/// Two steps one after the other on the same bytes, as one rate.
fn serial_gb_per_s(a: &Bandwidth, b: &Bandwidth) -> f64 {
    1.0 / (1.0 / a.gb_per_s().max(f64::MIN_POSITIVE) + 1.0 / b.gb_per_s().max(f64::MIN_POSITIVE))
}

impl GpuCeilings {
    /// The cache key of an adapter: its name, driver and backend.
    #[must_use]
    pub fn key_of(info: &wgpu::AdapterInfo) -> String {
        let driver = format!("{} {}", info.driver, info.driver_info);
        format!("{} | {} | {}", info.name, driver.trim(), info.backend)
    }

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
        CeilingRates::new(
            ns_per_byte(&self.staging_to_device),
            ns_per_byte(&self.device_copy),
            ns_per_byte(&self.device_to_readback),
            self.compute.map(|c| c.ops_per_s()),
        )
    }
}

/// Every ceiling of the GPU path ([`measure`]), then the compute ceiling, each
/// inside error scopes. The copies are timed with encoder timestamps only on a hardware adapter
/// that reads them in place (see `GpuConverter::measure_ceilings`).
pub(crate) fn measure_ceilings(ctx: &GpuContext, check: &TimestampCheck) -> Result<GpuCeilings, GpuError> {
    let gpu_clock = ctx.timestamps().encoders && !ctx.is_software() && check.in_place(ctx)?;
    let scopes = ErrorScopes::push(ctx.device());
    let result = measure(ctx, gpu_clock);
    let scope_result = scopes.finish();
    let mut ceilings = result?;
    scope_result?;
    let started = Instant::now();
    ceilings.compute = Some(measure_checked(ctx, check)?);
    // The copies' latencies, from the transfer paths timed up to 4 MiB (a few hundred ms on lavapipe).
    ceilings.copy_latency_ns =
        crate::gpu::timing::paths::copy_latency_ns(&crate::gpu::timing::paths::measure(ctx, 4 << 20)?);
    ceilings.probe_ns += nanos(started.elapsed());
    Ok(ceilings)
}

/// The probe's buffers.
struct Buffers {
    staging: wgpu::Buffer,
    device_a: wgpu::Buffer,
    device_b: wgpu::Buffer,
    readback: wgpu::Buffer,
}

/// Measures every ceiling on `ctx`. `gpu_clock`: time the GPU copies with encoder timestamps
/// (the device has them and reads them in place).
pub(crate) fn measure(ctx: &GpuContext, gpu_clock: bool) -> Result<GpuCeilings, GpuError> {
    let started = Instant::now();
    let bytes = PROBE_BYTES.min(ctx.limits().max_buffer_size) / 256 * 256;
    let len = bytes as usize;
    let src: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let mut dst = vec![1u8; len];
    let buffers = allocate(ctx, bytes);
    let timestamps = gpu_clock.then(|| Timestamps::new(ctx, 1));
    let host_to_staging = fill_staging(ctx, &buffers.staging, &src)?;
    let copy = |from: &wgpu::Buffer, to: &wgpu::Buffer| gpu_copy(ctx, timestamps.as_ref(), from, to, bytes);
    let staging_to_device = copy(&buffers.staging, &buffers.device_a)?;
    let mut device_copy = copy(&buffers.device_a, &buffers.device_b)?;
    device_copy.bytes = 2 * bytes;
    let copier = CopyKernel::new(ctx, (&buffers.device_a, &buffers.device_b), bytes);
    let mut kernel_copy = timed_on_gpu(ctx, timestamps.as_ref(), copier.bytes, |enc| copier.record(enc))?;
    kernel_copy.bytes = 2 * copier.bytes;
    log::debug!(
        "device copy: {:.1} GB/s by a copy command, {:.1} GB/s by a copy kernel",
        device_copy.gb_per_s(),
        kernel_copy.gb_per_s()
    );
    let device_copy_by_kernel = kernel_copy.gb_per_s() > device_copy.gb_per_s();
    if device_copy_by_kernel {
        device_copy = kernel_copy;
    }
    let device_to_readback = copy(&buffers.device_a, &buffers.readback)?;
    let readback_to_host = read_readback(ctx, &buffers.readback, &mut dst)?;
    let host_memcpy = memcpy(&src, &mut dst);
    let submit_latency_ns = latency(ctx, &buffers)?;
    drop(buffers);
    drop(timestamps);
    wait_for(ctx.device(), None)?;
    let info = ctx.adapter_info();
    Ok(GpuCeilings {
        adapter_key: GpuCeilings::key_of(info),
        adapter: info.name.clone(),
        software_adapter: ctx.is_software(),
        host_threads: rayon::current_num_threads(),
        host_to_staging,
        staging_to_device,
        device_copy,
        device_copy_by_kernel,
        device_to_readback,
        readback_to_host,
        host_memcpy,
        submit_latency_ns,
        probe_ns: nanos(started.elapsed()),
        compute: None,
        copy_latency_ns: None,
    })
}

fn allocate(ctx: &GpuContext, bytes: u64) -> Buffers {
    use wgpu::BufferUsages as U;
    let buffer = |label, usage, mapped_at_creation| {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage,
            mapped_at_creation,
        })
    };
    Buffers {
        staging: buffer("probe upload staging", U::MAP_WRITE | U::COPY_SRC, true),
        device_a: buffer("probe device a", U::STORAGE | U::COPY_DST | U::COPY_SRC, false),
        device_b: buffer("probe device b", U::STORAGE | U::COPY_DST | U::COPY_SRC, false),
        readback: buffer("probe readback", U::MAP_READ | U::COPY_DST, false),
    }
}

/// Host to mapped upload staging, as the converter stages a chunk. Leaves it unmapped, filled.
fn fill_staging(ctx: &GpuContext, staging: &wgpu::Buffer, src: &[u8]) -> Result<Bandwidth, GpuError> {
    let mut runs = Vec::new();
    for run in 0..=REPEATS {
        if run > 0 {
            mapped(ctx.device(), &map(staging, 0..staging.size(), wgpu::MapMode::Write))?;
        }
        let started = Instant::now();
        {
            let mut view = staging.get_mapped_range_mut(..).map_err(|e| GpuError::Map(e.into()))?;
            fill_mapped(&mut view, src)?;
        }
        let ns = nanos(started.elapsed());
        staging.unmap();
        if run > 0 {
            runs.push(ns);
        }
    }
    Ok(Bandwidth::of(src.len() as u64, runs, Clock::CpuClock))
}

/// One GPU copy of `bytes`, between encoder timestamps where given (the CPU clock around its
/// submit-and-wait otherwise, or when a reading cannot be right).
fn gpu_copy(
    ctx: &GpuContext,
    ts: Option<&Timestamps>,
    from: &wgpu::Buffer,
    to: &wgpu::Buffer,
    bytes: u64,
) -> Result<Bandwidth, GpuError> {
    timed_on_gpu(ctx, ts, bytes, |enc| enc.copy_buffer_to_buffer(from, 0, to, 0, bytes))
}

/// What `record` encodes, moving `bytes`, run [`REPEATS`] times after a warm-up, each between
/// encoder timestamps where given (the CPU clock around its submit-and-wait otherwise, or when
/// a reading cannot be right).
fn timed_on_gpu(
    ctx: &GpuContext,
    ts: Option<&Timestamps>,
    bytes: u64,
    record: impl Fn(&mut wgpu::CommandEncoder),
) -> Result<Bandwidth, GpuError> {
    let (mut gpu_runs, mut cpu_runs) = (Vec::new(), Vec::new());
    let mut gpu_clock = ts.is_some();
    for run in 0..=REPEATS {
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("probe copy") });
        if let Some(ts) = ts {
            ts.write(&mut enc, Stamp::UploadStart);
        }
        record(&mut enc);
        if let Some(ts) = ts {
            ts.write(&mut enc, Stamp::UploadEnd);
            ts.resolve(&mut enc, (Stamp::UploadStart, Stamp::UploadEnd));
        }
        let commands = enc.finish();
        let started = Instant::now();
        let submission = ctx.queue().submit([commands]);
        wait_for(ctx.device(), Some(&submission))?;
        let cpu_ns = nanos(started.elapsed());
        if let Some(ts) = ts {
            mapped(ctx.device(), &ts.map())?;
            let gpu_ns = ctx.ticks_to_ns(ts.read()?.span(Span::Upload));
            // A span longer than the CPU clock saw, or of no time, cannot be right.
            gpu_clock &= gpu_ns > 0 && gpu_ns <= cpu_ns + cpu_ns / 10 + 200_000;
            if run > 0 {
                gpu_runs.push(gpu_ns);
            }
        }
        if run > 0 {
            cpu_runs.push(cpu_ns);
        }
    }
    Ok(if gpu_clock {
        Bandwidth::of(bytes, gpu_runs, Clock::GpuTimestamp)
    } else {
        Bandwidth::of(bytes, cpu_runs, Clock::CpuClock)
    })
}

/// Mapped readback memory to the host, as the converter reads a chunk back.
fn read_readback(ctx: &GpuContext, readback: &wgpu::Buffer, dst: &mut [u8]) -> Result<Bandwidth, GpuError> {
    let mut runs = Vec::new();
    for run in 0..=REPEATS {
        mapped(ctx.device(), &map(readback, 0..readback.size(), wgpu::MapMode::Read))?;
        let started = Instant::now();
        {
            let view = readback.get_mapped_range(..).map_err(|e| GpuError::Map(e.into()))?;
            read_mapped(&view, dst)?;
        }
        let ns = nanos(started.elapsed());
        readback.unmap();
        if run > 0 {
            runs.push(ns);
        }
    }
    Ok(Bandwidth::of(dst.len() as u64, runs, Clock::CpuClock))
}

/// A plain parallel `memcpy` with the same threads and pieces as the host copies.
fn memcpy(src: &[u8], dst: &mut [u8]) -> Bandwidth {
    let runs = (0..=REPEATS)
        .map(|_| {
            let started = Instant::now();
            dst.par_chunks_mut(PIECE_BYTES)
                .zip(src.par_chunks(PIECE_BYTES))
                .for_each(|(to, from)| to.copy_from_slice(from));
            nanos(started.elapsed())
        })
        .skip(1)
        .collect();
    Bandwidth::of(src.len() as u64, runs, Clock::CpuClock)
}

/// The median submit-and-wait time of a 4-byte device copy.
fn latency(ctx: &GpuContext, buffers: &Buffers) -> Result<u64, GpuError> {
    let mut runs = Vec::new();
    for _ in 0..LATENCY_REPEATS {
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("probe latency") });
        enc.copy_buffer_to_buffer(&buffers.device_a, 0, &buffers.device_b, 0, 4);
        let commands = enc.finish();
        let started = Instant::now();
        let submission = ctx.queue().submit([commands]);
        wait_for(ctx.device(), Some(&submission))?;
        runs.push(nanos(started.elapsed()));
    }
    Ok(crate::system::median::median_u64(&mut runs).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(bytes: u64, ns: u64) -> Bandwidth {
        Bandwidth { bytes, best_ns: ns, median_ns: ns, clock: Clock::CpuClock }
    }

    #[test]
    fn rates_come_from_the_fastest_run_and_steps_in_series_add_their_times() {
        let b = Bandwidth::of(1000, vec![40, 10, 20], Clock::GpuTimestamp);
        assert_eq!((b.best_ns, b.median_ns), (10, 20));
        assert!((b.gb_per_s() - 100.0).abs() < 1e-9 && (b.median_gb_per_s() - 50.0).abs() < 1e-9);
        // 1 GB at 10 GB/s (0.1 s) then at 40 GB/s (0.025 s): 8 GB/s for the two together.
        assert!((serial_gb_per_s(&bw(1000, 100), &bw(1000, 25)) - 8.0).abs() < 1e-9);
    }
}
