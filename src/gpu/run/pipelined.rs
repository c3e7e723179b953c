//! The pipelined driver (devices with encoder timestamps): each chunk through a ring of
//! [`RING_SLOTS`] staging slots, in one submission per slice of its kernel (the first with the
//! upload copy, the last with the download copy), each step between named timestamps written
//! right before and after it. While the GPU works on chunk i, the host reads chunk i-2 back and
//! fills chunk i+1; at most [`MAX_IN_FLIGHT`] submissions wait on the queue, so a render thread
//! sharing it is never far behind.
//!
//! wgpu has one queue per device: GPU copies and compute do not overlap each other, only host
//! copies overlap GPU work. A copy's stamps are written in the same command buffer right around
//! it, so the wait of a submission behind the kernel before it is never in a copy's span.

use std::collections::VecDeque;
use std::time::Instant;

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{MapResult, map, mapped, nanos};
use crate::gpu::memory::ring::StagingSlot;
use crate::gpu::plan::run_plan::Chunk;
use crate::gpu::plan::submission_budget::Sample;
use crate::gpu::run::conversion::Run;
use crate::gpu::timing::timestamps::{Span, Stamp, Ticks};
use crate::gpu::{GpuError, GpuSpan, GpuStep};
use crate::system::clock::Clock;

/// Staging slots of the pipelined driver.
pub(crate) const RING_SLOTS: usize = 3;

/// Submissions of one run allowed on the queue at once.
pub(crate) const MAX_IN_FLIGHT: usize = 2;

/// A chunk submitted and not yet read back.
struct InFlight {
    chunk: usize,
    slot: usize,
    /// Its last submission, and that submission's number in the run.
    submission: (wgpu::SubmissionIndex, u64),
    /// When its first submission was made.
    submitted: Instant,
    /// When the host saw its last submission finished.
    done: Option<Instant>,
    download: Option<MapResult>,
    timestamps: Option<MapResult>,
}

/// Submissions of the run not yet seen finished, oldest first, each with its number and the
/// pixels its slice converts.
#[derive(Default)]
struct Queue {
    waiting: VecDeque<(wgpu::SubmissionIndex, u64, u64)>,
    next: u64,
}

impl Queue {
    /// Forgets the submissions up to `number`, seen finished, and counts their pixels done.
    fn finished_up_to(&mut self, run: &Run<'_>, number: u64) {
        while let Some(&(_, n, pixels)) = self.waiting.front()
            && n <= number
        {
            if let Some(p) = run.progress {
                p.add(pixels);
            }
            self.waiting.pop_front();
        }
    }
}

/// Runs every chunk of `run` through the ring.
pub(crate) fn drive(
    run: &mut Run<'_>,
    slots: &mut [StagingSlot],
    scopes: &mut ErrorScopes<'_>,
) -> Result<(), GpuError> {
    let ring = slots.len().max(1);
    let mut pending: VecDeque<InFlight> = VecDeque::new();
    let mut queue = Queue::default();
    let plan = run.plan;
    for chunk in &plan.chunks {
        if run.cancelled() {
            drain(run, &mut queue, &mut pending)?;
            return Err(GpuError::Cancelled);
        }
        let slot_index = chunk.index % ring;
        if pending.len() >= ring
            && let Some(oldest) = pending.pop_front()
        {
            finish(run, slots, oldest, &mut queue)?;
        }
        let Some(slot) = slots.get_mut(slot_index) else {
            return Err(GpuError::Bug("no staging slot"));
        };
        if run.cmds.upload {
            run.stage(slot, chunk)?;
        }
        let in_flight = submit(run, slot, (slot_index, chunk), &mut queue, &mut pending)?;
        pending.push_back(in_flight);
        scopes.check()?;
    }
    while let Some(oldest) = pending.pop_front() {
        finish(run, slots, oldest, &mut queue)?;
    }
    Ok(())
}

/// Submits every slice of `chunk`, at most [`MAX_IN_FLIGHT`] submissions on the queue.
fn submit(
    run: &mut Run<'_>,
    slot: &mut StagingSlot,
    (slot_index, chunk): (usize, &Chunk),
    queue: &mut Queue,
    pending: &mut VecDeque<InFlight>,
) -> Result<InFlight, GpuError> {
    let slices = run.plan.slices_of(chunk);
    let mut first: Option<Instant> = None;
    let mut last = None;
    for nth in 0..slices.len().max(1) {
        if nth > 0 && run.cancelled() {
            drain(run, queue, pending)?;
            return Err(GpuError::Cancelled);
        }
        while queue.waiting.len() >= MAX_IN_FLIGHT {
            wait_oldest(run, queue, pending)?;
        }
        let commands = run.cmds.chunk_submission(slot, chunk, slices, nth);
        let submitted = Instant::now();
        let submission = run.cmds.ctx.queue().submit([commands]);
        if nth == 0 {
            first = Some(submitted);
            slot.remap_upload();
        }
        let number = queue.next;
        queue.next += 1;
        let rows = slices.get(nth).map_or(0, |s| s.rows.end - s.rows.start);
        let pixels = u64::from(rows) * u64::from(run.plan.size.0);
        queue.waiting.push_back((submission.clone(), number, pixels));
        last = Some((submission, number));
    }
    let (Some(submitted), Some(submission)) = (first, last) else {
        return Err(GpuError::Bug("a chunk without a submission"));
    };
    let download =
        run.cmds.download.then(|| map(&slot.download, 0..chunk.out_bytes().1, wgpu::MapMode::Read));
    Ok(InFlight {
        chunk: chunk.index,
        slot: slot_index,
        submission,
        submitted,
        done: None,
        download,
        timestamps: slot.timestamps.as_ref().map(crate::gpu::timing::timestamps::Timestamps::map),
    })
}

/// Waits for the oldest submission not yet seen finished, and marks the chunks it finished.
fn wait_oldest(
    run: &mut Run<'_>,
    queue: &mut Queue,
    pending: &mut VecDeque<InFlight>,
) -> Result<(), GpuError> {
    let Some((submission, number, _)) = queue.waiting.front().cloned() else { return Ok(()) };
    let done = run.wait(&submission)?;
    queue.finished_up_to(run, number);
    for f in pending.iter_mut().filter(|f| f.submission.1 <= number) {
        f.done.get_or_insert(done);
    }
    Ok(())
}

/// Reads one finished chunk back and adds its timestamps.
fn finish(
    run: &mut Run<'_>,
    slots: &[StagingSlot],
    mut f: InFlight,
    queue: &mut Queue,
) -> Result<(), GpuError> {
    let done = if let Some(done) = f.done {
        done
    } else {
        let done = run.wait(&f.submission.0)?;
        // One queue: every submission up to this one has finished too.
        queue.finished_up_to(run, f.submission.1);
        done
    };
    f.done = Some(done);
    let plan = run.plan;
    let (Some(slot), Some(chunk)) = (slots.get(f.slot), plan.chunks.get(f.chunk)) else {
        return Err(GpuError::Bug("a finished chunk lost its slot"));
    };
    if let Some(download) = &f.download {
        run.read_back(slot, chunk, download)?;
    }
    if let (Some(rx), Some(ts)) = (&f.timestamps, &slot.timestamps) {
        mapped(run.cmds.ctx.device(), rx)?;
        let ticks = ts.read()?;
        if add_timestamps(run, chunk, &ticks, nanos(done - f.submitted)) {
            place_spans(run, &ticks, chunk, (f.submitted, done));
        }
    }
    Ok(())
}

/// Places the chunk's GPU steps on the CPU clock: each keeps its length and its distance from the
/// chunk's first stamp as the GPU timestamps read them, and the chunk starts at its submit, or
/// once the GPU's previous step ended if that was later (one queue runs one thing at a time), and
/// no later than lets it end when the host saw it finished.
fn place_spans(run: &mut Run<'_>, ticks: &Ticks, chunk: &Chunk, (submitted, done): (Instant, Instant)) {
    let ctx = run.cmds.ctx;
    let first = ticks.at(Stamp::UploadStart);
    let offset_ns = |stamp| ctx.ticks_to_ns(ticks.at(stamp).saturating_sub(first));
    let chunk_ns = offset_ns(Stamp::DownloadEnd);
    let (submitted_ns, done_ns) = (run.since_origin(submitted), run.since_origin(done));
    let mut start_ns = submitted_ns.max(run.gpu_free_ns);
    if start_ns + chunk_ns > done_ns {
        start_ns = done_ns.saturating_sub(chunk_ns).max(run.gpu_free_ns);
    }
    let slices = run.plan.slices_of(chunk).len() as u32;
    let mut steps = Vec::new();
    if run.cmds.upload {
        steps.push((GpuStep::Upload, Stamp::UploadStart, Stamp::UploadEnd));
    }
    steps.extend((0..slices).map(|i| (GpuStep::Kernel, Stamp::KernelStart(i), Stamp::KernelEnd(i))));
    if run.cmds.display.is_some() {
        steps.push((GpuStep::Display, Stamp::DisplayStart, Stamp::DisplayEnd));
    }
    if run.cmds.download {
        steps.push((GpuStep::Download, Stamp::DownloadStart, Stamp::DownloadEnd));
    }
    for (step, from, to) in steps {
        let end_ns = (start_ns + offset_ns(to)).min(done_ns);
        let begin_ns = (start_ns + offset_ns(from)).min(end_ns);
        run.gpu_free_ns = run.gpu_free_ns.max(end_ns);
        let band = Some(chunk.band);
        run.t.spans.push(GpuSpan { step, start_ns: begin_ns, end_ns, clock: Clock::GpuTimestamp, band });
    }
}

/// Adds the chunk's GPU times to the run's; `false` when they cannot be right (left out).
fn add_timestamps(run: &mut Run<'_>, chunk: &Chunk, ticks: &Ticks, cpu_span_ns: u64) -> bool {
    let ctx = run.cmds.ctx;
    let ns = |span| ctx.ticks_to_ns(ticks.span(span));
    let kernel = Span::Kernels(run.plan.slices_of(chunk).len() as u32);
    let submission_ns = ns(Span::Submission);
    // The CPU clock saw every submission of the chunk, queueing included: the GPU cannot have
    // taken longer. A kernel that took no time at all did not run either.
    if submission_ns > cpu_span_ns + cpu_span_ns / 10 + 200_000 || ticks.span(kernel) == 0 {
        run.t.suspect_timestamps += 1;
        return false;
    }
    let sample = Sample {
        upload_ns: Some(ns(Span::Upload)),
        kernel_ns: ns(kernel),
        display_ns: Some(ns(Span::Display)),
        download_ns: Some(ns(Span::Download)),
        ..Sample::default()
    };
    if run.cmds.upload {
        run.t.upload_copy.ns += ns(Span::Upload);
    }
    run.t.kernel.ns += sample.kernel_ns;
    // Without a display target (or a download) the span is just two adjacent stamps.
    if run.cmds.display.is_some() {
        run.t.display.ns += ns(Span::Display);
    }
    if run.cmds.download {
        run.t.download_copy.ns += ns(Span::Download);
    }
    run.learn(chunk, sample);
    true
}

/// Waits for everything submitted (after a cancel), reading nothing back.
fn drain(run: &mut Run<'_>, queue: &mut Queue, pending: &mut VecDeque<InFlight>) -> Result<(), GpuError> {
    if let Some((last, ..)) = queue.waiting.back() {
        let submission = last.clone();
        run.wait(&submission)?;
    }
    queue.waiting.clear();
    pending.clear();
    Ok(())
}
