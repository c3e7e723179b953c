//! One measured round trip with `n` operations in it ("keep the data on the GPU for several
//! operations"): the input is uploaded once, `n` full passes of the kernel run over the kept
//! input (each reads all of it and writes the whole output, with the job's work per pixel), and
//! the output is downloaded once. The CPU clock times all of it, from the first host copy into
//! staging until the result is in the caller's memory: what a caller waits. Where the device
//! reads its timestamps in place, the passes are also timed on the GPU, from the start of the
//! first to the end of the last. The round trips of one count are prepared once (every buffer
//! allocated before any clock starts, then one cold round trip apart) and then timed one warm
//! round trip at a time, on demand, so that a caller can take them in turns with the CPU's;
//! everything is freed, and the device waited for, when the caller is done.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::gpu::device::host_copy::{fill_mapped, read_mapped};
use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{map, mapped, nanos, wait_for};
use crate::gpu::memory::resident_input::{InputLayout, ResidentInput};
use crate::gpu::pipelines::params_buffer;
use crate::gpu::plan::bands::band_sizes;
use crate::gpu::plan::grid::{Dispatch, PARAMS_STRIDE, dispatch};
use crate::gpu::plan::run_plan::{Limits, RunPlan};
use crate::gpu::run::pipelined::MAX_IN_FLIGHT;
use crate::gpu::run::resident::KernelOn;
use crate::gpu::timing::timestamps::{Span, Stamp, Timestamps};
use crate::gpu::{GpuContext, GpuError, GpuJob};

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

/// One band's buffers beside its kept input: staging both ways, the output, and its bindings.
struct Band {
    staging: wgpu::Buffer,
    output: wgpu::Buffer,
    readback: wgpu::Buffer,
    group: wgpu::BindGroup,
    /// The band's bytes in the job's input and in the caller's output.
    src: std::ops::Range<usize>,
    dst: std::ops::Range<usize>,
    in_bytes: u64,
    out_bytes: u64,
}

/// Allocates every band's buffers around its kept input (the upload staging mapped, ready to
/// be filled).
fn bands(
    on: &KernelOn<'_>,
    job: &GpuJob<'_>,
    plan: &RunPlan,
    inputs: &ResidentInput,
    params: &wgpu::Buffer,
) -> Vec<Band> {
    use wgpu::BufferUsages as U;
    let KernelOn { ctx, pipelines, .. } = *on;
    let &GpuJob { kernel, width, height, .. } = job;
    let buffer = |label: &str, size: u64, usage: U, mapped_at_creation: bool| {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation,
        })
    };
    let (in_row, out_row) =
        (width as usize * kernel.in_bytes_per_pixel(), width as usize * kernel.out_bytes_per_pixel());
    inputs
        .buffers
        .iter()
        .zip(&inputs.bytes)
        .zip(0u32..)
        .map(|((input, &in_bytes), band)| {
            let first_row = band * plan.bands.rows_per_band;
            let rows = plan.bands.rows_per_band.min(height - first_row);
            let out_bytes = (band_sizes(kernel, u64::from(rows) * u64::from(width)).2).max(4);
            let output = buffer("round trip output", out_bytes, U::STORAGE | U::COPY_SRC, false);
            let group = pipelines.bind_group(ctx, kernel, (input, in_bytes), (&output, out_bytes), params);
            let (r0, r1) = (first_row as usize, (first_row + rows) as usize);
            Band {
                staging: buffer("round trip upload staging", in_bytes, U::MAP_WRITE | U::COPY_SRC, true),
                output,
                readback: buffer("round trip readback", out_bytes, U::MAP_READ | U::COPY_DST, false),
                group,
                src: r0 * in_row..r1 * in_row,
                dst: r0 * out_row..r1 * out_row,
                in_bytes,
                out_bytes,
            }
        })
        .collect()
}

/// What every round trip of one count shares: the plan, its dispatches, the band buffers and the
/// timestamps.
struct Trip<'a> {
    ctx: &'a GpuContext,
    pipeline: &'a wgpu::ComputePipeline,
    job: &'a GpuJob<'a>,
    plan: &'a RunPlan,
    dispatches: &'a [Dispatch],
    bands: &'a [Band],
    inputs: &'a ResidentInput,
    /// The first pass's start and the last pass's end, where the device reads them in place.
    stamps: Option<&'a Timestamps>,
    /// Dispatches in all: the passes times the chunks of one pass.
    steps: usize,
}

impl Trip<'_> {
    /// One round trip into `dst`: wall time (CPU clock) and the passes' GPU time, if stamped.
    fn once(&self, dst: &mut [u8]) -> Result<RoundTripTime, GpuError> {
        let started = Instant::now();
        let uploaded = self.upload()?;
        self.passes(uploaded)?;
        self.download(dst)?;
        let wall_ns = nanos(started.elapsed());
        let kernel_ns = self.stamps.map(|s| self.passes_ns(s)).transpose()?;
        // The upload staging is mapped again for the next round trip, off the clock.
        for band in self.bands {
            mapped(self.ctx.device(), &map(&band.staging, 0..band.in_bytes, wgpu::MapMode::Write))?;
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

    /// The host copies into staging (every thread), and one submission of the copies to the GPU.
    fn upload(&self) -> Result<wgpu::SubmissionIndex, GpuError> {
        let mut enc = self.encoder("round trip upload");
        for (band, input) in self.bands.iter().zip(&self.inputs.buffers) {
            {
                let mut view = band
                    .staging
                    .get_mapped_range_mut(0..band.in_bytes)
                    .map_err(|e| GpuError::Map(e.into()))?;
                fill_mapped(&mut view, self.job.src.get(band.src.clone()).unwrap_or_default())?;
            }
            band.staging.unmap();
            enc.copy_buffer_to_buffer(&band.staging, 0, input, 0, band.in_bytes);
        }
        Ok(self.ctx.queue().submit([enc.finish()]))
    }

    /// Every pass, chunk by chunk (one submission each, at most two on the queue), the first
    /// stamped at its start and the last at its end.
    fn passes(&self, uploaded: wgpu::SubmissionIndex) -> Result<(), GpuError> {
        let (ctx, cancel) = (self.ctx, self.job.cancel);
        let mut submitted = vec![uploaded];
        let steps = self.plan.chunks.iter().zip(self.dispatches).cycle().take(self.steps);
        for (step, (chunk, d)) in steps.enumerate() {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                wait_for(ctx.device(), None)?;
                return Err(GpuError::Cancelled);
            }
            let Some(band) = self.bands.get(chunk.band as usize) else { continue };
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
                pass.set_bind_group(0, &band.group, &[(chunk.index as u64 * PARAMS_STRIDE) as u32]);
                pass.dispatch_workgroups(d.groups.0, d.groups.1, 1);
            }
            if submitted.len() >= MAX_IN_FLIGHT {
                wait_for(ctx.device(), submitted.get(submitted.len() - MAX_IN_FLIGHT))?;
            }
            submitted.push(ctx.queue().submit([enc.finish()]));
        }
        Ok(())
    }

    /// One submission of the copies back (and the timestamps' resolve), then the host copies
    /// into `dst` as each band's mapping arrives.
    fn download(&self, dst: &mut [u8]) -> Result<(), GpuError> {
        let mut enc = self.encoder("round trip download");
        for band in self.bands {
            enc.copy_buffer_to_buffer(&band.output, 0, &band.readback, 0, band.out_bytes);
        }
        if let Some(s) = self.stamps {
            s.resolve(&mut enc, (Stamp::KernelStart(0), Stamp::KernelEnd(0)));
        }
        self.ctx.queue().submit([enc.finish()]);
        let mappings: Vec<_> =
            self.bands.iter().map(|b| map(&b.readback, 0..b.out_bytes, wgpu::MapMode::Read)).collect();
        for (band, mapping) in self.bands.iter().zip(&mappings) {
            mapped(self.ctx.device(), mapping)?;
            {
                let view =
                    band.readback.get_mapped_range(0..band.out_bytes).map_err(|e| GpuError::Map(e.into()))?;
                let to = dst.get_mut(band.dst.clone()).ok_or(GpuError::Bug("a band outside the output"))?;
                read_mapped(&view, to)?;
            }
            band.readback.unmap();
        }
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

/// Prepares the round trips of `how.passes` passes over `job`'s image (the plan, every band's
/// buffers and the timestamps, then one cold round trip that wakes the GPU and touches every
/// buffer, not reported), hands `drive` the warm round trips, and frees everything once it
/// returns; `dst` (`width * height * kernel.out_bytes_per_pixel()`) holds the last result.
pub(crate) fn warm<T>(
    on: &KernelOn<'_>,
    job: &GpuJob<'_>,
    how: RoundTrip,
    dst: &mut [u8],
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
    let inputs =
        ResidentInput::new(ctx, InputLayout::new(0, kernel, (width, height), &plan.bands), &plan.bands);
    let bands = bands(on, job, &plan, &inputs, &params);
    let steps = how.passes.max(1) as usize * plan.chunks.len();
    let stamps = (how.stamps && steps > 0).then(|| Timestamps::new(ctx, 1));
    scopes.check()?;
    let trip = Trip {
        ctx,
        pipeline,
        job,
        plan: &plan,
        dispatches: &dispatches,
        bands: &bands,
        inputs: &inputs,
        stamps: stamps.as_ref(),
        steps,
    };
    wait_for(ctx.device(), None)?;
    trip.once(dst)?;
    let mut warm = WarmRoundTrip { trip, dst };
    let driven = drive(&mut warm);
    scopes.check()?;
    drop(bands);
    drop(inputs);
    drop(params);
    wait_for(ctx.device(), None)?;
    Ok(driven)
}
