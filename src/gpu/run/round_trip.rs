//! One measured round trip with `n` operations in it ("keep the data on the GPU for several
//! operations"): the input is uploaded once, `n` full passes of the kernel run over the kept
//! input (each reads all of it and writes the whole output, with the job's work per pixel), and
//! the output is downloaded once. Uploads and downloads go chunk by chunk through the
//! converter's ring of staging slots into and out of its kept input, as a conversion's do. The
//! CPU clock times all of it, from the first host copy into staging until the result is in the
//! caller's memory: what a caller waits. Where the device reads its timestamps in place, the
//! passes are also timed on the GPU, from the start of the first to the end of the last. The
//! round trips of one count are prepared once (every buffer allocated before any clock starts,
//! then one cold round trip apart) and then timed one warm round trip at a time, on demand, so
//! that a caller can take them in turns with the CPU's; what only they need is freed, and the
//! device waited for, when the caller is done.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{MapResult, map, mapped, nanos, wait_for};
use crate::gpu::memory::buffers::Buffers;
use crate::gpu::memory::resident_input::{InputLayout, ResidentInput};
use crate::gpu::memory::ring::{Ring, StagingSlot};
use crate::gpu::pipelines::params_buffer;
use crate::gpu::plan::bands::band_sizes;
use crate::gpu::plan::grid::{Dispatch, PARAMS_STRIDE, dispatch};
use crate::gpu::plan::run_plan::{Chunk, Limits, RunPlan};
use crate::gpu::run::pipelined::{MAX_IN_FLIGHT, RING_SLOTS};
use crate::gpu::run::resident::KernelOn;
use crate::gpu::timing::timestamps::{Span, Stamp, Timestamps};
use crate::gpu::{GpuContext, GpuError, GpuJob};
use crate::pixel::Kernel;

/// One warm round trip, measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundTripTime {
    /// CPU clock, first host copy of the upload until the result is in host memory.
    pub wall_ns: u64,
    /// GPU timestamps from the start of the first pass to the end of the last; `None` where the
    /// device has no pass timestamps or reads them late, or when the reading could not be right
    /// (longer than the CPU clock saw, or no time at all).
    pub kernel_ns: Option<u64>,
}

/// What to measure.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoundTrip {
    /// How the image is cut into bands and submissions.
    pub limits: Limits,
    /// Passes between the upload and the download (at least 1).
    pub passes: u32,
    /// Time the passes with GPU timestamps too.
    pub stamps: bool,
}

/// Every band's output (the ring's output buffer for the first band, one of its own for each
/// other) bound with that band's kept input.
fn bands(
    (on, kernel): (&KernelOn<'_>, Kernel),
    plan: &RunPlan,
    inputs: &ResidentInput,
    ring: &Ring,
    params: &wgpu::Buffer,
) -> Vec<(wgpu::Buffer, wgpu::BindGroup)> {
    let KernelOn { ctx, pipelines, .. } = *on;
    let (width, height) = plan.size;
    inputs
        .buffers
        .iter()
        .zip(&inputs.bytes)
        .zip(0u32..)
        .map(|((input, &in_bytes), band)| {
            let output = if band == 0 {
                (ring.band.output.clone(), ring.band_out_bytes())
            } else {
                let first_row = band * plan.bands.rows_per_band;
                let rows = plan.bands.rows_per_band.min(height - first_row);
                let bytes = (band_sizes(kernel, u64::from(rows) * u64::from(width)).2).max(4);
                let buffer = ctx.device().create_buffer(&wgpu::BufferDescriptor {
                    label: Some("round trip output band"),
                    size: bytes,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                (buffer, bytes)
            };
            let group = pipelines.bind_group(ctx, kernel, (input, in_bytes), (&output.0, output.1), params);
            (output.0, group)
        })
        .collect()
}

/// What every round trip of one count shares: the plan, its dispatches, the kept input, the
/// ring's staging slots and the timestamps.
struct Trip<'a> {
    ctx: &'a GpuContext,
    pipeline: &'a wgpu::ComputePipeline,
    job: &'a GpuJob<'a>,
    plan: &'a RunPlan,
    dispatches: &'a [Dispatch],
    /// Each band's output buffer, and its binding with the band's kept input.
    bands: &'a [(wgpu::Buffer, wgpu::BindGroup)],
    inputs: &'a ResidentInput,
    /// The converter's staging slots, taken in turn by the chunks.
    slots: &'a mut [StagingSlot],
    /// The first pass's start and the last pass's end, where the device reads them in place.
    stamps: Option<&'a Timestamps>,
    /// Dispatches in all: the passes times the chunks of one pass.
    steps: usize,
}

impl Trip<'_> {
    /// One round trip into `dst`: wall time (CPU clock) and the passes' GPU time, if stamped.
    fn once(&mut self, dst: &mut [u8]) -> Result<RoundTripTime, GpuError> {
        let started = Instant::now();
        let uploaded = self.upload()?;
        self.passes(uploaded)?;
        self.download(dst)?;
        let wall_ns = nanos(started.elapsed());
        let kernel_ns = self.stamps.map(|s| self.passes_ns(s)).transpose()?;
        // The upload staging is mapped again for the next round trip, off the clock.
        for slot in self.slots.iter_mut() {
            slot.upload_ready(self.ctx)?;
        }
        Ok(RoundTripTime { wall_ns, kernel_ns: kernel_ns.filter(|&k| k > 0 && k <= wall_ns) })
    }

    /// The passes' time on the GPU, first start to last end (after the last submission finished).
    fn passes_ns(&self, stamps: &Timestamps) -> Result<u64, GpuError> {
        mapped(self.ctx.device(), &stamps.map())?;
        Ok(self.ctx.ticks_to_ns(stamps.read()?.span(Span::Slice(0))))
    }

    fn encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    /// The slot chunk `index` takes.
    fn slot(slots: &mut [StagingSlot], index: usize) -> Result<&mut StagingSlot, GpuError> {
        let ring = slots.len().max(1);
        slots.get_mut(index % ring).ok_or(GpuError::Bug("no staging slot"))
    }

    /// Each chunk through a staging slot (host copy by every thread, then one submission of
    /// its copy into the kept input), as a conversion uploads; the last submission.
    fn upload(&mut self) -> Result<Option<wgpu::SubmissionIndex>, GpuError> {
        let (kernel, plan) = (self.job.kernel, self.plan);
        let mut last = None;
        for chunk in &plan.chunks {
            let (offset, bytes) = chunk.in_bytes(kernel);
            let src = self.job.src.get(chunk.src.clone()).unwrap_or_default();
            let input = self
                .inputs
                .buffers
                .get(chunk.band as usize)
                .ok_or(GpuError::Bug("a chunk without its band"))?;
            let mut enc = self.encoder("round trip upload");
            let slot = Self::slot(self.slots, chunk.index)?;
            slot.fill_upload(self.ctx, src, bytes)?;
            slot.unmap_upload();
            enc.copy_buffer_to_buffer(&slot.upload, 0, input, offset, bytes);
            last = Some(self.ctx.queue().submit([enc.finish()]));
            slot.remap_upload();
        }
        Ok(last)
    }

    /// Every pass, chunk by chunk (one submission each, at most two on the queue), the first
    /// stamped at its start and the last at its end.
    fn passes(&self, uploaded: Option<wgpu::SubmissionIndex>) -> Result<(), GpuError> {
        let (ctx, cancel) = (self.ctx, self.job.cancel);
        let mut submitted: Vec<_> = uploaded.into_iter().collect();
        let steps = self.plan.chunks.iter().zip(self.dispatches).cycle().take(self.steps);
        for (step, (chunk, d)) in steps.enumerate() {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                wait_for(ctx.device(), None)?;
                return Err(GpuError::Cancelled);
            }
            let Some((_, group)) = self.bands.get(chunk.band as usize) else { continue };
            let mut enc = self.encoder("round trip pass");
            {
                let first = (step == 0).then_some(Stamp::KernelStart(0));
                let last = (step + 1 == self.steps).then_some(Stamp::KernelEnd(0));
                let timestamp_writes = self
                    .stamps
                    .filter(|_| first.is_some() || last.is_some())
                    .map(|s| s.pass_writes(first, last));
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("round trip pass"),
                    timestamp_writes,
                });
                pass.set_pipeline(self.pipeline);
                pass.set_bind_group(0, group, &[(chunk.index as u64 * PARAMS_STRIDE) as u32]);
                pass.dispatch_workgroups(d.groups.0, d.groups.1, 1);
            }
            if submitted.len() >= MAX_IN_FLIGHT {
                wait_for(ctx.device(), submitted.get(submitted.len() - MAX_IN_FLIGHT))?;
            }
            submitted.push(ctx.queue().submit([enc.finish()]));
        }
        Ok(())
    }

    /// Each chunk back through a staging slot (one submission of its copy out of the band's
    /// output, the first with the timestamps' resolve), its host copy into `dst` by every thread
    /// once the slot is needed again or the last chunk is submitted, as a conversion downloads.
    fn download(&mut self, dst: &mut [u8]) -> Result<(), GpuError> {
        let (ring, plan) = (self.slots.len().max(1), self.plan);
        let mut pending: VecDeque<(&Chunk, MapResult)> = VecDeque::new();
        for chunk in &plan.chunks {
            if pending.len() >= ring
                && let Some((done, mapping)) = pending.pop_front()
            {
                self.read_back(done, &mapping, dst)?;
            }
            let (offset, bytes) = chunk.out_bytes();
            let (output, _) =
                self.bands.get(chunk.band as usize).ok_or(GpuError::Bug("a chunk without its band"))?;
            let mut enc = self.encoder("round trip download");
            if chunk.index == 0
                && let Some(s) = self.stamps
            {
                s.resolve(&mut enc, (Stamp::KernelStart(0), Stamp::KernelEnd(0)));
            }
            let slot = Self::slot(self.slots, chunk.index)?;
            enc.copy_buffer_to_buffer(output, offset, &slot.download, 0, bytes);
            self.ctx.queue().submit([enc.finish()]);
            pending.push_back((chunk, map(&slot.download, 0..bytes, wgpu::MapMode::Read)));
        }
        while let Some((done, mapping)) = pending.pop_front() {
            self.read_back(done, &mapping, dst)?;
        }
        Ok(())
    }

    /// Waits for a chunk's mapping and copies it into its place in `dst`.
    fn read_back(&mut self, chunk: &Chunk, mapping: &MapResult, dst: &mut [u8]) -> Result<(), GpuError> {
        mapped(self.ctx.device(), mapping)?;
        let to = dst.get_mut(chunk.dst.clone()).ok_or(GpuError::Bug("a chunk outside the output"))?;
        Self::slot(self.slots, chunk.index)?.read_download(chunk.out_bytes().1, to)?;
        Ok(())
    }
}

/// Round trips of one count, prepared and warm, timed one at a time on demand (so that a caller
/// can take them in turns with other work): each [`Self::once`] uploads, runs the passes and
/// downloads into the caller's output, which [`Self::output`] shows.
pub struct WarmRoundTrip<'a> {
    trip: Trip<'a>,
    dst: &'a mut [u8],
}

impl WarmRoundTrip<'_> {
    /// One warm round trip, its result left in [`Self::output`].
    pub fn once(&mut self) -> Result<RoundTripTime, GpuError> {
        self.trip.once(self.dst)
    }

    /// The last round trip's result (`width * height * kernel.out_bytes_per_pixel()` bytes).
    #[must_use]
    pub fn output(&self) -> &[u8] {
        self.dst
    }
}

/// Prepares the round trips of `how.passes` passes over `job`'s image on the converter's
/// `buffers` (its ring's staging slots, and its kept input made this image's, every band at
/// once; the plan, the other bands' outputs and the timestamps apart), then one cold round trip
/// that wakes the GPU and touches every buffer, not reported; hands `drive` the warm round
/// trips, and once it returns frees all but the ring, as a conversion leaves it. `dst` (`width * height *
/// kernel.out_bytes_per_pixel()`) holds the last result.
pub(crate) fn warm<T>(
    on: &KernelOn<'_>,
    job: &GpuJob<'_>,
    how: RoundTrip,
    (buffers, dst): (&mut Buffers, &mut [u8]),
    scopes: &mut ErrorScopes<'_>,
    drive: impl FnOnce(&mut WarmRoundTrip<'_>) -> T,
) -> Result<T, GpuError> {
    let KernelOn { ctx, pipeline, .. } = *on;
    let &GpuJob { kernel, workgroup, src, width, height, .. } = job;
    let pixels = u64::from(width) * u64::from(height);
    if src.len() as u64 != pixels * kernel.in_bytes_per_pixel() as u64
        || dst.len() as u64 != pixels * kernel.out_bytes_per_pixel() as u64
    {
        return Err(GpuError::LengthMismatch { width, height, kernel: kernel.name() });
    }
    let plan = RunPlan::new(kernel, (width, height), workgroup, how.limits)?;
    let dispatches = plan
        .chunks
        .iter()
        .map(|c| dispatch(kernel, width, workgroup, &c.rows, how.limits.max_groups))
        .collect::<Result<Vec<_>, _>>()?;
    let params =
        params_buffer(ctx, &dispatches.iter().map(|d| d.params.with_work(job.work)).collect::<Vec<_>>());
    // The converter's kept input, made this image's for the round trips and freed after them
    // (never handed to a later run: a round trip that failed may have left it half written).
    let layout = InputLayout::new(job.keep_input.unwrap_or(0), kernel, (width, height), &plan.bands);
    buffers.prepare(ctx, plan.ring_needs(kernel, RING_SLOTS, how.stamps), Some(layout), &plan.bands)?;
    let Buffers { ring: Some(ring), input: Some(inputs) } = buffers else {
        return Err(GpuError::Bug("no buffer ring"));
    };
    let bands = bands((on, kernel), &plan, inputs, ring, &params);
    let steps = how.passes.max(1) as usize * plan.chunks.len();
    let stamps = (how.stamps && steps > 0).then(|| Timestamps::new(ctx, 1));
    scopes.check()?;
    let mut trip = Trip {
        ctx,
        pipeline,
        job,
        plan: &plan,
        dispatches: &dispatches,
        bands: &bands,
        inputs,
        slots: &mut ring.slots,
        stamps: stamps.as_ref(),
        steps,
    };
    wait_for(ctx.device(), None)?;
    trip.once(dst)?;
    let mut warm = WarmRoundTrip { trip, dst };
    let driven = drive(&mut warm);
    scopes.check()?;
    drop(bands);
    drop(params);
    buffers.input = None;
    wait_for(ctx.device(), None)?;
    Ok(driven)
}
