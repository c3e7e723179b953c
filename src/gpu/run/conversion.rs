//! The state of one conversion in progress, shared by both drivers: the commands, the plan, the
//! host's side of each chunk (staging its input, reading its output back, both with every
//! thread) and the timings being recorded.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::gpu::device::host_copy::ThreadCopy;
use crate::gpu::device::wait::{MapResult, mapped, nanos, wait_for};
use crate::gpu::memory::ring::StagingSlot;
use crate::gpu::plan::run_plan::{Chunk, RunPlan};
use crate::gpu::plan::submission_budget::{LearntRates, Sample};
use crate::gpu::run::record::RunCommands;
use crate::gpu::{GpuError, GpuJob, GpuSpan, GpuStep, GpuTimings};
use crate::system::clock::Clock;

/// One conversion in progress.
pub(crate) struct Run<'a> {
    /// The commands of every chunk.
    pub cmds: RunCommands<'a>,
    /// The chunks.
    pub plan: &'a RunPlan,
    /// The job: its input pixels, cancel flag, count of pixels done and work per pixel (whose
    /// kernel cost the budget learns apart).
    pub job: &'a GpuJob<'a>,
    /// Where the output goes, when downloading.
    pub dst: Option<&'a mut [u8]>,
    /// The device's learnt speed, updated from this run's measurements.
    pub budget: &'a LearntRates,
    /// What was measured so far.
    pub t: GpuTimings,
    /// When the run started: its spans are ns since then.
    pub origin: Instant,
    /// Where the GPU's last placed span ended (one queue: its next one starts no earlier).
    pub gpu_free_ns: u64,
}

impl Run<'_> {
    /// Whether the job was cancelled.
    pub(crate) fn cancelled(&self) -> bool {
        self.job.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Counts the rows of `slice` done (its submission was seen finished).
    pub(crate) fn slice_done(&self, slice: &crate::gpu::plan::run_plan::Slice) {
        if let Some(p) = self.job.progress {
            p.add(u64::from(slice.rows.end - slice.rows.start) * u64::from(self.plan.size.0));
        }
    }

    /// Copies the chunk's input into the slot's upload staging (zero-padded to whole words) and
    /// unmaps it, ready to be submitted.
    pub(crate) fn stage(&mut self, slot: &mut StagingSlot, chunk: &Chunk) -> Result<(), GpuError> {
        let waited = Instant::now();
        slot.upload_ready(self.cmds.ctx)?;
        self.t.wait_ns += nanos(waited.elapsed());
        let (_, in_bytes) = chunk.in_bytes(self.cmds.kernel);
        let src = self.job.src.get(chunk.src.clone()).ok_or_else(|| self.job.length_mismatch())?;
        let copies = slot.fill_upload(self.cmds.ctx, src, in_bytes)?;
        self.host_copies(&copies, chunk.band, true);
        slot.unmap_upload();
        Ok(())
    }

    /// Waits for the slot's download mapping, copies the chunk's output into `dst` and unmaps.
    pub(crate) fn read_back(
        &mut self,
        slot: &StagingSlot,
        chunk: &Chunk,
        mapping: &MapResult,
    ) -> Result<(), GpuError> {
        let waited = Instant::now();
        mapped(self.cmds.ctx.device(), mapping)?;
        self.t.wait_ns += nanos(waited.elapsed());
        let (_, out_bytes) = chunk.out_bytes();
        let mismatch = self.job.length_mismatch();
        let dst = self.dst.as_deref_mut().and_then(|d| d.get_mut(chunk.dst.clone())).ok_or(mismatch)?;
        let copies = slot.read_download(out_bytes, dst)?;
        self.host_copies(&copies, chunk.band, false);
        Ok(())
    }

    /// Ns since the run started, at `at`.
    pub(crate) fn since_origin(&self, at: Instant) -> u64 {
        nanos(at.saturating_duration_since(self.origin))
    }

    /// Records that `step` (of a chunk of `band`) ran from `start` to `end` (CPU clock), timed
    /// by `clock`.
    pub(crate) fn span(
        &mut self,
        (step, band): (GpuStep, Option<u32>),
        (start, end): (Instant, Instant),
        clock: Clock,
    ) {
        let (start_ns, end_ns) = (self.since_origin(start), self.since_origin(end));
        if !matches!(step, GpuStep::HostCopy { .. } | GpuStep::Setup | GpuStep::Preview) {
            self.gpu_free_ns = self.gpu_free_ns.max(end_ns);
        }
        self.t.spans.push(GpuSpan { step, start_ns, end_ns, clock, band });
    }

    /// Records one host copy of a chunk of `band` (into staging memory `into_gpu`, else out of
    /// readback memory), a span per thread that took part.
    fn host_copies(&mut self, copies: &[ThreadCopy], band: u32, into_gpu: bool) {
        for c in copies {
            let step = (GpuStep::HostCopy { thread: c.thread, into_gpu }, Some(band));
            self.span(step, (c.started, c.ended), Clock::CpuClock);
        }
    }

    /// Blocks until `submission` has finished on the GPU; returns when that was seen.
    pub(crate) fn wait(&mut self, submission: &wgpu::SubmissionIndex) -> Result<Instant, GpuError> {
        let waited = Instant::now();
        wait_for(self.cmds.ctx.device(), Some(submission))?;
        let done = Instant::now();
        self.t.wait_ns += nanos(done - waited);
        Ok(done)
    }

    /// Learns the device's speed from one chunk, unless it was too small to say much (a chunk
    /// well under the planned size is mostly fixed cost).
    pub(crate) fn learn(&self, chunk: &Chunk, mut sample: Sample) {
        let planned_rows = self.plan.rows_per_chunk.max(1);
        if chunk.rows.len() as u64 * 2 < u64::from(planned_rows) {
            return;
        }
        sample.in_bytes = chunk.in_bytes(self.cmds.kernel).1;
        sample.out_bytes = chunk.out_bytes().1;
        // Only the steps this run has.
        sample.upload_ns = sample.upload_ns.filter(|_| self.cmds.upload);
        sample.display_ns = sample.display_ns.filter(|_| self.cmds.display.is_some());
        sample.download_ns = sample.download_ns.filter(|_| self.cmds.download);
        self.budget.learn(self.job.work, &sample);
    }
}

/// The input buffers chunks go into and their bind groups: one per band of a kept input, or
/// the ring's one input buffer for every band.
pub(crate) fn bindings(
    (ctx, pipelines): (&crate::gpu::GpuContext, &crate::gpu::pipelines::Pipelines),
    kernel: crate::pixel::Kernel,
    kept: Option<&crate::gpu::memory::resident_input::ResidentInput>,
    ring_input: (&wgpu::Buffer, u64),
    output: (&wgpu::Buffer, u64),
    params: &wgpu::Buffer,
) -> (Vec<wgpu::Buffer>, Vec<wgpu::BindGroup>) {
    let inputs: Vec<(wgpu::Buffer, u64)> = match kept {
        Some(k) => k.buffers.iter().cloned().zip(k.bytes.iter().copied()).collect(),
        None => vec![(ring_input.0.clone(), ring_input.1)],
    };
    let groups = inputs
        .iter()
        .map(|(b, bytes)| pipelines.bind_group(ctx, kernel, (b, *bytes), output, params))
        .collect();
    (inputs.into_iter().map(|(b, _)| b).collect(), groups)
}
