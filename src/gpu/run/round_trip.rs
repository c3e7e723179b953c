//! One measured round trip with `n` operations in it ("keep the data on the GPU for several
//! operations"): the input uploaded once, `n` full passes of the kernel over the kept input (with
//! the job's work per pixel), the output downloaded once. The copies go chunk by chunk through the
//! converter's staging slots, as a conversion's do; the passes are planned on their own
//! (`kept_passes`). The CPU clock times all of it, from the first host copy into staging until
//! the result is in the caller's memory: what a caller waits. Where the device reads its
//! timestamps in place, the passes are also timed on the GPU. The round trips of one count are
//! prepared once (every buffer allocated, then cold round trips that plan the passes) and then
//! timed one at a time on demand, so that a caller can take them in turns with the CPU's.

use std::collections::VecDeque;
use std::time::Instant;

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{MapResult, map, mapped, nanos, wait_for};
use crate::gpu::memory::buffers::Buffers;
use crate::gpu::memory::resident_input::{InputLayout, ResidentInput};
use crate::gpu::memory::ring::{Ring, StagingSlot};
use crate::gpu::plan::bands::band_sizes;
use crate::gpu::plan::run_plan::{Chunk, Limits, RunPlan};
use crate::gpu::run::kept_passes::{KeptPasses, KernelOn, PLANNING_PASSES, PassPlan, PassShape, kept_bands};
use crate::gpu::run::pipelined::RING_SLOTS;
use crate::gpu::timing::timestamps::{Stamp, StampSpan, Timestamps};
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

/// Every band's output: the ring's output buffer for the first band, one of its own for each
/// other, with the bytes used.
fn outputs(ctx: &GpuContext, kernel: Kernel, plan: &RunPlan, ring: &Ring) -> Vec<(wgpu::Buffer, u64)> {
    let (width, height) = plan.size;
    (0..plan.bands.bands)
        .map(|band| {
            if band == 0 {
                return (ring.band.output.clone(), ring.band_out_bytes());
            }
            let first_row = band * plan.bands.rows_per_band;
            let rows = plan.bands.rows_per_band.min(height - first_row);
            let bytes = (band_sizes(kernel, u64::from(rows) * u64::from(width)).2).max(4);
            let buffer = ctx.buffer(
                "round trip output band",
                bytes,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            );
            (buffer, bytes)
        })
        .collect()
}

/// What every round trip of one count shares: the plan of its copies, its passes, the kept
/// input, each band's output, the ring's staging slots and the timestamps.
struct Trip<'a> {
    on: &'a KernelOn<'a>,
    job: &'a GpuJob<'a>,
    plan: &'a RunPlan,
    /// The passes over the kept input, planned apart from the copies' chunks.
    kernel: KeptPasses,
    /// Each band's output buffer and bytes.
    outputs: &'a [(wgpu::Buffer, u64)],
    inputs: &'a ResidentInput,
    /// The converter's staging slots, taken in turn by the chunks.
    slots: &'a mut [StagingSlot],
    /// The first pass's start and the last pass's end, where the device reads them in place.
    stamps: Option<&'a Timestamps>,
    /// Passes between the upload and the download.
    passes: usize,
}

impl Trip<'_> {
    /// One round trip into `dst`: wall time (CPU clock) and the passes' GPU time, if stamped.
    fn once(&mut self, dst: &mut [u8]) -> Result<RoundTripTime, GpuError> {
        let started = Instant::now();
        let uploaded = self.upload()?;
        self.kernel.submit(self.on, self.passes, uploaded, self.stamps, self.job.cancel)?;
        self.download(dst)?;
        let wall_ns = nanos(started.elapsed());
        // The passes' time on the GPU, first start to last end.
        let kernel_ns = self.stamps.map(|s| s.span_ns(self.on.ctx, StampSpan::Slice(0))).transpose()?;
        // The upload staging is mapped again for the next round trip, off the clock.
        for slot in self.slots.iter_mut() {
            slot.upload_ready(self.on.ctx)?;
        }
        Ok(RoundTripTime { wall_ns, kernel_ns: kernel_ns.filter(|&k| k > 0 && k <= wall_ns) })
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
            let mut enc = self.on.ctx.encoder("round trip upload");
            let slot = Self::slot(self.slots, chunk.index)?;
            slot.fill_upload(self.on.ctx, src, bytes)?;
            slot.unmap_upload();
            enc.copy_buffer_to_buffer(&slot.upload, 0, input, offset, bytes);
            last = Some(self.on.ctx.queue().submit([enc.finish()]));
            slot.remap_upload();
        }
        Ok(last)
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
                self.outputs.get(chunk.band as usize).ok_or(GpuError::Bug("a chunk without its band"))?;
            let mut enc = self.on.ctx.encoder("round trip download");
            if chunk.index == 0
                && let Some(s) = self.stamps
            {
                s.resolve(&mut enc, (Stamp::KernelStart(0), Stamp::KernelEnd(0)));
            }
            let slot = Self::slot(self.slots, chunk.index)?;
            enc.copy_buffer_to_buffer(output, offset, &slot.download, 0, bytes);
            self.on.ctx.queue().submit([enc.finish()]);
            pending.push_back((chunk, map(&slot.download, 0..bytes, wgpu::MapMode::Read)));
        }
        while let Some((done, mapping)) = pending.pop_front() {
            self.read_back(done, &mapping, dst)?;
        }
        Ok(())
    }

    /// Waits for a chunk's mapping and copies it into its place in `dst`.
    fn read_back(&mut self, chunk: &Chunk, mapping: &MapResult, dst: &mut [u8]) -> Result<(), GpuError> {
        mapped(self.on.ctx.device(), mapping)?;
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
/// `buffers` (its staging slots, and its kept input made this image's), takes the cold ones,
/// hands `drive` the warm ones, then frees all but the ring, as a conversion leaves it. `dst`
/// holds the last result.
pub(crate) fn warm<T>(
    on: &KernelOn<'_>,
    job: &GpuJob<'_>,
    how: RoundTrip,
    (buffers, dst): (&mut Buffers, &mut [u8]),
    scopes: &mut ErrorScopes<'_>,
    drive: impl FnOnce(&mut WarmRoundTrip<'_>) -> T,
) -> Result<T, GpuError> {
    let ctx = on.ctx;
    let &GpuJob { kernel, workgroup, width, height, .. } = job;
    job.check_lengths(Some(dst))?;
    let plan = RunPlan::new(kernel, (width, height), workgroup, how.limits)?;
    // The converter's kept input, made this image's for the round trips and freed after them
    // (never handed to a later run: a round trip that failed may have left it half written).
    let layout = InputLayout::new(job.keep_input.unwrap_or(0), kernel, (width, height), &plan.bands);
    buffers.prepare(ctx, plan.ring_needs(kernel, RING_SLOTS, how.stamps), Some(layout), &plan.bands)?;
    let Buffers { ring: Some(ring), input: Some(inputs) } = buffers else {
        return Err(GpuError::Bug("no buffer ring"));
    };
    let outputs = outputs(ctx, kernel, &plan, ring);
    let kept = kept_bands(inputs, &outputs);
    let max_groups = how.limits.max_groups;
    let shape = PassShape { kernel, size: (width, height), workgroup, bands: plan.bands, max_groups };
    let prepare =
        |ns_per_byte| KeptPasses::new(on, job, &kept, PassPlan::new(&shape, ns_per_byte), max_groups);
    let passes = how.passes.max(1) as usize;
    let stamps = how.stamps.then(|| Timestamps::new(ctx, 1));
    let kernel_passes = prepare(on.kernel_ns_per_byte)?;
    scopes.check()?;
    let mut trip = Trip {
        on,
        job,
        plan: &plan,
        kernel: kernel_passes,
        outputs: &outputs,
        inputs,
        slots: &mut ring.slots,
        stamps: stamps.as_ref(),
        passes,
    };
    // Cold round trips wake the GPU and touch every buffer, and plan the passes from what they
    // measured (the GPU's clock where stamped, else the CPU's, an upper bound); not reported.
    wait_for(ctx.device(), None)?;
    for _ in 0..PLANNING_PASSES {
        let cold = trip.once(dst)?;
        let reading = cold.kernel_ns.map_or((cold.wall_ns, true), |ns| (ns, false));
        let Some(ns_per_byte) = trip.kernel.plan.measured(reading.0, passes, reading.1) else { break };
        trip.kernel = prepare(ns_per_byte)?;
    }
    let p = &trip.kernel.plan;
    log::debug!(
        "{passes} passes over the kept input: {} dispatches a pass, {} submissions, planned at {:.3e} ns a byte",
        p.pieces.len(),
        p.submissions(passes),
        p.ns_per_byte
    );
    let mut warm = WarmRoundTrip { trip, dst };
    let driven = drive(&mut warm);
    scopes.check()?;
    drop(kept);
    drop(outputs);
    buffers.input = None;
    wait_for(ctx.device(), None)?;
    Ok(driven)
}
