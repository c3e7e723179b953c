//! The one measuring routine of the transfer paths: their buffers, and each path timed at every
//! size after one warm-up, end to end on the CPU clock, with its host copy and its GPU commands
//! timed apart in the same runs. The transfer paths (`paths.rs`) are its curves; the probe's
//! ceilings (`probe.rs`) are its steps at the probe's size.

use std::time::Instant;

use rayon::prelude::*;

use crate::gpu::device::host_copy::{PIECE_BYTES, copying_ns, fill_mapped, read_mapped};
use crate::gpu::device::wait::{map, mapped, nanos, read_buffer, wait_for};
use crate::gpu::timing::device_copy::{BoundCopy, CopyKernel};
use crate::gpu::timing::paths::{Bandwidth, Hockney, PathKind, PathPoint, TransferPath, repeats, sizes};
use crate::gpu::timing::timestamps::{Stamp, StampSpan, Timestamps, within_cpu_clock};
use crate::gpu::{GpuContext, GpuError};
use crate::system::clock::Clock;

/// Every path of [`PathKind::ALL`] this device has.
pub(crate) fn measurable(ctx: &GpuContext) -> Vec<PathKind> {
    let (features, device_type) = (ctx.device().features(), ctx.adapter_info().device_type);
    PathKind::ALL.into_iter().filter(|k| k.measured_on(features, device_type)).collect()
}

/// One run's times, nanoseconds.
#[derive(Clone, Copy, Debug, Default)]
struct RunNs {
    /// From the first call until the bytes are usable, CPU clock.
    total: u64,
    /// The host's copies alone, CPU clock.
    host: Option<u64>,
    /// The GPU's commands from submit to finish, CPU clock.
    gpu: Option<u64>,
    /// The GPU's commands between encoder timestamps.
    stamped: Option<u64>,
}

/// The buffers every path moves its bytes through, at the largest size.
pub(crate) struct Rig<'a> {
    ctx: &'a GpuContext,
    largest: u64,
    src: Vec<u8>,
    staging: wgpu::Buffer,
    device_a: wgpu::Buffer,
    device_b: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Storage buffers the host maps to write and to read (unified memory only).
    mapped_storage: Option<(wgpu::Buffer, wgpu::Buffer)>,
    kernel: CopyKernel,
    /// Encoder timestamps around the GPU commands, where they are to be read.
    timestamps: Option<Timestamps>,
}

impl<'a> Rig<'a> {
    /// Buffers of `largest` bytes (within the device's largest buffer) for `kinds`, with encoder
    /// timestamps around the GPU commands where `gpu_clock`.
    pub(crate) fn new(
        ctx: &'a GpuContext,
        largest: u64,
        kinds: &[PathKind],
        gpu_clock: bool,
    ) -> Result<Self, GpuError> {
        use wgpu::BufferUsages as U;
        let largest = largest.min(ctx.limits().max_buffer_size).max(super::paths::SMALLEST_BYTES);
        let buffer = |label, usage| ctx.buffer(label, largest, usage);
        let unified =
            kinds.iter().any(|k| matches!(k, PathKind::MappedStorageUp | PathKind::MappedStorageDown));
        let len =
            usize::try_from(largest).map_err(|_| GpuError::Bug("a probe size beyond the address space"))?;
        Ok(Self {
            ctx,
            largest,
            src: (0..len).map(|i| (i % 251) as u8).collect(),
            staging: buffer("paths upload staging", U::MAP_WRITE | U::COPY_SRC),
            device_a: buffer("paths device a", U::STORAGE | U::COPY_DST | U::COPY_SRC),
            device_b: buffer("paths device b", U::STORAGE | U::COPY_DST | U::COPY_SRC),
            readback: buffer("paths readback", U::MAP_READ | U::COPY_DST),
            mapped_storage: unified.then(|| {
                (
                    buffer("paths mapped storage up", U::STORAGE | U::MAP_WRITE),
                    buffer("paths mapped storage down", U::STORAGE | U::MAP_READ),
                )
            }),
            kernel: CopyKernel::new(ctx),
            timestamps: gpu_clock.then(|| Timestamps::new(ctx, 1)),
        })
    }

    /// Each of `kinds` timed over [`sizes`] up to the largest, and fitted; once `cancel` is set,
    /// [`GpuError::Cancelled`] at the next size.
    pub(crate) fn measure(
        &self,
        kinds: &[PathKind],
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Vec<TransferPath>, GpuError> {
        let mut dst = vec![0u8; self.src.len()];
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(|_| GpuError::Bug("a one-thread pool could not be started"))?;
        let binding = self.ctx.limits().max_storage_buffer_binding_size;
        let mut paths = Vec::new();
        for &path in kinds {
            // The host copies of these two run on one thread: `fill_mapped` and `read_mapped`
            // split their work over the pool they run in.
            let single = matches!(path, PathKind::StagedOneThread | PathKind::ReadbackOneThread);
            let largest =
                if path == PathKind::DeviceCopyKernel { self.largest.min(binding) } else { self.largest };
            let mut points = Vec::new();
            for bytes in sizes(largest) {
                if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                    wait_for(self.ctx.device(), None)?;
                    return Err(GpuError::Cancelled);
                }
                let copy = (path == PathKind::DeviceCopyKernel)
                    .then(|| self.kernel.bind(self.ctx, (&self.device_a, &self.device_b), bytes));
                let n = usize::try_from(copy.as_ref().map_or(bytes, |c| c.bytes))
                    .map_err(|_| GpuError::Bug("a probe size beyond the address space"))?;
                let mut runs = Vec::new();
                for run in 0..=repeats(bytes) {
                    let mut time = || self.once(path, copy.as_ref(), &mut dst[..n]);
                    let ns = if single { one_thread.install(time)? } else { time()? };
                    if run > 0 {
                        runs.push(ns);
                    }
                }
                let moved = if path == PathKind::Both { 2 * n as u64 } else { n as u64 };
                points.push(point_of(moved, &runs));
            }
            let fit = Hockney::fit(&points);
            paths.push(TransferPath { path, points, fit });
        }
        wait_for(self.ctx.device(), None)?;
        Ok(paths)
    }

    /// One transfer of `dst.len()` bytes along `path`, end to end, its steps apart.
    fn once(&self, path: PathKind, copy: Option<&BoundCopy>, dst: &mut [u8]) -> Result<RunNs, GpuError> {
        let (ctx, bytes) = (self.ctx, dst.len() as u64);
        let src = self.src.get(..dst.len()).ok_or(GpuError::Bug("a size beyond the probe's buffers"))?;
        let mut run = RunNs::default();
        let started = Instant::now();
        if let (PathKind::MappedStorageUp | PathKind::MappedStorageDown, Some((up, down))) =
            (path, &self.mapped_storage)
        {
            // The bytes are where the kernel binds them once mapped, copied and unmapped.
            run.host = Some(if path == PathKind::MappedStorageUp {
                fill(ctx, up, src)?
            } else {
                read(ctx, down, dst)?
            });
            run.total = nanos(started.elapsed());
            return Ok(run);
        }
        let mut enc = ctx.encoder("paths");
        if matches!(path, PathKind::StagedOneThread | PathKind::StagedAllThreads | PathKind::Both) {
            run.host = Some(fill(ctx, &self.staging, src)?);
        }
        let stamps = self.timestamps.as_ref().filter(|_| path.stamped_in_encoder());
        if let Some(ts) = stamps {
            ts.write(&mut enc, Stamp::UploadStart);
        }
        let (a, b) = (&self.device_a, &self.device_b);
        match path {
            PathKind::WriteBuffer => ctx.queue().write_buffer(a, 0, src),
            PathKind::StagedOneThread | PathKind::StagedAllThreads => {
                enc.copy_buffer_to_buffer(&self.staging, 0, a, 0, bytes);
            }
            PathKind::DeviceCopy => enc.copy_buffer_to_buffer(a, 0, b, 0, bytes),
            PathKind::DeviceCopyKernel => {
                let copy = copy.ok_or(GpuError::Bug("a copy kernel path without its kernel"))?;
                self.kernel.record(&mut enc, copy);
            }
            PathKind::ReadbackOneThread | PathKind::ReadbackAllThreads => {
                enc.copy_buffer_to_buffer(a, 0, &self.readback, 0, bytes);
            }
            PathKind::Both => {
                enc.copy_buffer_to_buffer(&self.staging, 0, a, 0, bytes);
                enc.copy_buffer_to_buffer(b, 0, &self.readback, 0, bytes);
            }
            PathKind::MappedStorageUp | PathKind::MappedStorageDown => {}
        }
        if let Some(ts) = stamps {
            ts.write(&mut enc, Stamp::UploadEnd);
            ts.resolve(&mut enc, (Stamp::UploadStart, Stamp::UploadEnd));
        }
        let submitted = ctx.submit_and_wait(enc)?;
        run.gpu = Some(nanos(submitted.elapsed()));
        if matches!(path, PathKind::ReadbackOneThread | PathKind::ReadbackAllThreads | PathKind::Both) {
            run.host = Some(run.host.unwrap_or(0) + read(ctx, &self.readback, dst)?);
        }
        run.total = nanos(started.elapsed());
        if let Some(ts) = stamps {
            run.stamped = Some(ts.span_ns(ctx, StampSpan::Upload)?);
        }
        Ok(run)
    }

    /// A plain parallel `memcpy` of `bytes` (at most the largest size), with the same threads
    /// and pieces as the host copies, run as often as a path at that size: the host's own
    /// reference.
    pub(crate) fn memcpy(&self, bytes: u64) -> Bandwidth {
        let src = self.src.get(..usize::try_from(bytes).unwrap_or(usize::MAX)).unwrap_or(&self.src);
        let mut dst = vec![1u8; src.len()];
        let runs = (0..=repeats(src.len() as u64))
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
}

/// Maps `buffer` for writing (the wait not timed), fills it from `src`, unmaps it: the fill's
/// nanoseconds, timed as the converter's spans time a chunk's staging.
fn fill(ctx: &GpuContext, buffer: &wgpu::Buffer, src: &[u8]) -> Result<u64, GpuError> {
    let bytes = src.len() as u64;
    mapped(ctx.device(), &map(buffer, 0..bytes, wgpu::MapMode::Write))?;
    let copies = {
        let mut view = buffer.get_mapped_range_mut(0..bytes).map_err(|e| GpuError::Map(e.into()))?;
        fill_mapped(&mut view, src)?
    };
    buffer.unmap();
    Ok(copying_ns(&copies))
}

/// Maps `buffer` for reading (the wait not timed), reads it into `dst`, unmaps it: the read's
/// nanoseconds, timed as the converter's spans time a chunk's read-back.
fn read(ctx: &GpuContext, buffer: &wgpu::Buffer, dst: &mut [u8]) -> Result<u64, GpuError> {
    let copies = read_buffer(ctx.device(), buffer, 0..dst.len() as u64, |view| read_mapped(view, dst))?;
    Ok(copying_ns(&copies))
}

/// One size's point from its runs of `moved` bytes: end to end, and each step where every run
/// had it. The GPU step is on the timestamps only where every reading can be right (of some
/// time, no longer than the CPU clock saw), else on the CPU clock.
fn point_of(moved: u64, runs: &[RunNs]) -> PathPoint {
    let all = |f: fn(&RunNs) -> Option<u64>| runs.iter().map(f).collect::<Option<Vec<u64>>>();
    let whole = Bandwidth::of(moved, runs.iter().map(|r| r.total).collect(), Clock::CpuClock);
    let stamps_right =
        runs.iter().all(|r| r.stamped.is_some_and(|ns| ns > 0 && within_cpu_clock(ns, r.gpu.unwrap_or(0))));
    let gpu_copy = match (stamps_right, all(|r| r.stamped)) {
        (true, Some(stamped)) => Some(Bandwidth::of(moved, stamped, Clock::GpuTimestamp)),
        _ => all(|r| r.gpu).map(|ns| Bandwidth::of(moved, ns, Clock::CpuClock)),
    };
    PathPoint {
        bytes: moved,
        best_ns: whole.best_ns,
        median_ns: whole.median_ns,
        clock: whole.clock,
        host_copy: all(|r| r.host).map(|ns| Bandwidth::of(moved, ns, Clock::CpuClock)),
        gpu_copy,
    }
}

#[cfg(test)]
mod tests {
    use super::{Clock, PathKind, Rig, RunNs, point_of};
    use crate::gpu::GpuContext;

    fn run(total: u64, host: Option<u64>, gpu: Option<u64>, stamped: Option<u64>) -> RunNs {
        RunNs { total, host, gpu, stamped }
    }

    #[test]
    fn a_point_keeps_its_steps_and_names_their_clocks() {
        let runs = [run(300, Some(100), Some(150), Some(120)), run(200, Some(80), Some(90), Some(70))];
        let p = point_of(1000, &runs);
        assert_eq!((p.bytes, p.best_ns, p.median_ns), (1000, 200, 250));
        let host = p.host_copy.expect("a host copy");
        assert_eq!((host.best_ns, host.clock), (80, Clock::CpuClock));
        let gpu = p.gpu_copy.expect("a GPU copy");
        assert_eq!((gpu.best_ns, gpu.median_ns, gpu.clock), (70, 95, Clock::GpuTimestamp));
    }

    #[test]
    fn a_stamp_that_cannot_be_right_puts_the_gpu_step_on_the_cpu_clock() {
        // A span far longer than the CPU clock saw from submit to finish: deferred stamps.
        let runs = [run(300, None, Some(150), Some(10_000_000)), run(200, None, Some(90), Some(70))];
        let p = point_of(1000, &runs);
        assert_eq!(p.host_copy, None, "no host copy on this path");
        let gpu = p.gpu_copy.expect("a GPU copy");
        assert_eq!((gpu.best_ns, gpu.clock), (90, Clock::CpuClock));
        // A path without a submission has no GPU step.
        assert_eq!(point_of(8, &[run(5, Some(4), None, None)]).gpu_copy, None);
    }

    /// wgpu runs a `queue.write_buffer` before the submitted command buffers, so stamps in the
    /// encoder would bracket nothing: that path's GPU step is its submit-and-wait on the CPU
    /// clock, and says so, even where the encoder's timestamps are read (before, its stamps
    /// were taken, and a real GPU reported an empty interval as the copy).
    #[test]
    fn the_write_buffer_paths_gpu_step_is_on_the_cpu_clock() {
        let Some(ctx) = GpuContext::for_tests() else { return };
        let stamped = ctx.timestamps().encoders;
        let kinds = [PathKind::WriteBuffer, PathKind::StagedAllThreads];
        let rig = Rig::new(&ctx, 1 << 16, &kinds, stamped).expect("a rig");
        let mut dst = vec![0_u8; 1 << 16];
        let write = rig.once(PathKind::WriteBuffer, None, &mut dst).expect("a write");
        assert_eq!((write.stamped, write.host), (None, None), "no stamps, no host copy of ours");
        assert!(write.gpu.is_some(), "the submit-and-wait, on the CPU clock");
        // The staged path's copy is in the encoder: stamped wherever the device reads them there.
        let staged = rig.once(PathKind::StagedAllThreads, None, &mut dst).expect("a staged copy");
        assert_eq!(staged.stamped.is_some(), stamped);
        let paths = rig.measure(&kinds[..1], None).expect("the path");
        let clocks: Vec<Clock> =
            paths.iter().flat_map(|p| &p.points).filter_map(|p| p.gpu_copy).map(|b| b.clock).collect();
        assert!(!clocks.is_empty() && clocks.iter().all(|c| *c == Clock::CpuClock), "{clocks:?}");
        assert!(!PathKind::WriteBuffer.stamped_in_encoder() && PathKind::Both.stamped_in_encoder());
    }
}
