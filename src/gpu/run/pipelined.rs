//! The pipelined driver (devices with encoder timestamps): one submission per chunk, each step
//! between named timestamps, through a ring of [`RING_SLOTS`] staging slots. While the GPU works
//! on chunk i, the host reads chunk i-2 back and fills chunk i+1; at most [`MAX_IN_FLIGHT`]
//! submissions wait on the queue, so a render thread sharing it is never far behind.
//!
//! wgpu has one queue per device: GPU copies and compute do not overlap each other, only host
//! copies overlap GPU work.

use std::collections::VecDeque;
use std::time::Instant;

use crate::gpu::GpuError;
use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{MapResult, map, mapped, nanos};
use crate::gpu::memory::ring::StagingSlot;
use crate::gpu::plan::run_plan::Chunk;
use crate::gpu::plan::submission_budget::Sample;
use crate::gpu::run::conversion::Run;
use crate::gpu::timing::timestamps::{Span, Ticks};

/// Staging slots of the pipelined driver.
pub(crate) const RING_SLOTS: usize = 3;

/// Submissions of one run allowed on the queue at once.
pub(crate) const MAX_IN_FLIGHT: usize = 2;

/// A chunk submitted and not yet read back.
struct InFlight {
    chunk: usize,
    slot: usize,
    submission: wgpu::SubmissionIndex,
    submitted: Instant,
    /// When the host saw the submission finished.
    done: Option<Instant>,
    download: Option<MapResult>,
    timestamps: Option<MapResult>,
}

/// Runs every chunk of `run` through the ring.
pub(crate) fn drive(
    run: &mut Run<'_>,
    slots: &mut [StagingSlot],
    scopes: &mut ErrorScopes<'_>,
) -> Result<(), GpuError> {
    let ring = slots.len().max(1);
    let mut pending: VecDeque<InFlight> = VecDeque::new();
    let plan = run.plan;
    for chunk in &plan.chunks {
        if run.cancelled() {
            drain(run, &mut pending)?;
            return Err(GpuError::Cancelled);
        }
        let slot_index = chunk.index % ring;
        if pending.len() >= ring
            && let Some(oldest) = pending.pop_front()
        {
            finish(run, slots, oldest)?;
        }
        let Some(slot) = slots.get_mut(slot_index) else {
            return Err(GpuError::Bug("no staging slot"));
        };
        if run.cmds.upload {
            run.stage(slot, chunk)?;
        }
        while pending.iter().filter(|f| f.done.is_none()).count() >= MAX_IN_FLIGHT {
            wait_oldest(run, &mut pending)?;
        }
        pending.push_back(submit(run, slot, slot_index, chunk));
        scopes.check()?;
    }
    while let Some(oldest) = pending.pop_front() {
        finish(run, slots, oldest)?;
    }
    Ok(())
}

fn submit(run: &Run<'_>, slot: &mut StagingSlot, slot_index: usize, chunk: &Chunk) -> InFlight {
    let commands = run.cmds.whole_chunk(slot, chunk);
    let submitted = Instant::now();
    let submission = run.cmds.ctx.queue().submit([commands]);
    slot.remap_upload();
    let download =
        run.cmds.download.then(|| map(&slot.download, 0..chunk.out_bytes().1, wgpu::MapMode::Read));
    InFlight {
        chunk: chunk.index,
        slot: slot_index,
        submission,
        submitted,
        done: None,
        download,
        timestamps: slot.timestamps.as_ref().map(crate::gpu::timing::timestamps::Timestamps::map),
    }
}

/// Waits for the oldest submission not yet seen finished (and marks those before it).
fn wait_oldest(run: &mut Run<'_>, pending: &mut VecDeque<InFlight>) -> Result<(), GpuError> {
    let Some(index) = pending.iter().position(|f| f.done.is_none()) else { return Ok(()) };
    let done = run.wait(&pending[index].submission)?;
    for f in pending.iter_mut().take(index + 1) {
        f.done.get_or_insert(done);
    }
    Ok(())
}

/// Reads one finished chunk back and adds its timestamps.
fn finish(run: &mut Run<'_>, slots: &[StagingSlot], mut f: InFlight) -> Result<(), GpuError> {
    let done = match f.done {
        Some(done) => done,
        None => run.wait(&f.submission)?,
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
        add_timestamps(run, chunk, &ticks, nanos(done - f.submitted));
    }
    Ok(())
}

fn add_timestamps(run: &mut Run<'_>, chunk: &Chunk, ticks: &Ticks, cpu_span_ns: u64) {
    let ctx = run.cmds.ctx;
    let ns = |span| ctx.ticks_to_ns(ticks.span(span));
    let submission_ns = ns(Span::Submission);
    // The CPU clock saw the whole submission, queueing included: the GPU cannot have taken
    // longer. A kernel that took no time at all did not run either.
    if submission_ns > cpu_span_ns + cpu_span_ns / 10 + 200_000 || ticks.span(Span::Kernel) == 0 {
        run.t.suspect_timestamps += 1;
        return;
    }
    let sample = Sample {
        upload_ns: Some(ns(Span::Upload)),
        kernel_ns: ns(Span::Kernel),
        display_ns: Some(ns(Span::Display)),
        download_ns: Some(ns(Span::Download)),
        ..Sample::default()
    };
    if run.cmds.upload {
        run.t.upload_copy_ns += ns(Span::Upload);
    }
    run.t.kernel_ns += sample.kernel_ns;
    // Without a display target (or a download) the span is just two adjacent stamps.
    if run.cmds.display.is_some() {
        run.t.display_ns += ns(Span::Display);
    }
    if run.cmds.download {
        run.t.download_copy_ns += ns(Span::Download);
    }
    run.learn(chunk, sample);
}

/// Waits for everything submitted (after a cancel), reading nothing back.
fn drain(run: &mut Run<'_>, pending: &mut VecDeque<InFlight>) -> Result<(), GpuError> {
    if let Some(last) = pending.back() {
        let submission = last.submission.clone();
        run.wait(&submission)?;
    }
    pending.clear();
    Ok(())
}
