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
use crate::gpu::timing::timestamps::{Stamp, StampSpan, Ticks, within_cpu_clock};
use crate::gpu::{GpuError, GpuSpan, GpuStep};
use crate::system::clock::Clock;

pub(crate) use crate::gpu::plan::run_plan::RING_SLOTS;

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

/// A chunk's GPU clock readings, with when the host submitted it and saw it finished (ns since
/// the run started): kept until the run's end, when one calibration places every chunk.
struct Stamped {
    chunk: usize,
    ticks: Ticks,
    submitted_ns: u64,
    done_ns: u64,
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
            if let Some(p) = run.job.progress {
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
    // A software adapter's "GPU" runs on the host's own cores: a host copy overlapping its work
    // only splits those cores (lavapipe on two: the upload's host copy at a third of a mapped
    // write's speed), so each chunk is finished before the next is staged.
    let depth = if run.cmds.ctx.is_software() { 1 } else { ring };
    let mut pending: VecDeque<InFlight> = VecDeque::new();
    let mut queue = Queue::default();
    let mut stamped = Vec::new();
    let plan = run.plan;
    for chunk in &plan.chunks {
        if run.cancelled() {
            drain(run, &mut queue, &mut pending)?;
            return Err(GpuError::Cancelled);
        }
        let slot_index = chunk.index % ring;
        if pending.len() >= depth
            && let Some(oldest) = pending.pop_front()
        {
            finish(run, slots, &oldest, (&mut queue, &mut stamped))?;
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
        finish(run, slots, &oldest, (&mut queue, &mut stamped))?;
    }
    place_spans(run, &stamped);
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

/// Reads one finished chunk back, adds its timestamps and keeps them for placing its spans.
fn finish(
    run: &mut Run<'_>,
    slots: &[StagingSlot],
    f: &InFlight,
    (queue, stamped): (&mut Queue, &mut Vec<Stamped>),
) -> Result<(), GpuError> {
    let done = if let Some(done) = f.done {
        done
    } else {
        let done = run.wait(&f.submission.0)?;
        // One queue: every submission up to this one has finished too.
        queue.finished_up_to(run, f.submission.1);
        done
    };
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
            let (submitted_ns, done_ns) = (run.since_origin(f.submitted), run.since_origin(done));
            stamped.push(Stamped { chunk: f.chunk, ticks, submitted_ns, done_ns });
        }
    }
    Ok(())
}

/// Places every chunk's GPU steps on the CPU clock. One queue runs the run's chunks in order on
/// one GPU clock, so one offset maps that clock onto the CPU's: each chunk started no earlier
/// than its submission and ended no later than the host saw it finished, and every offset that
/// keeps both for every chunk is right to within their spread. The earliest such offset is
/// taken (a chunk submitted to an idle queue starts at once), and the spread is kept. When no
/// offset fits (a clock that drifts or jumps), each chunk is placed at its submission instead.
fn place_spans(run: &mut Run<'_>, stamped: &[Stamped]) {
    let ctx = run.cmds.ctx;
    let base = stamped.iter().map(|s| s.ticks.at(Stamp::UploadStart)).min().unwrap_or(0);
    let gpu_ns = |ticks: &Ticks, stamp| i128::from(ctx.ticks_to_ns(ticks.at(stamp).saturating_sub(base)));
    let calibration = calibrate(stamped.iter().map(|s| {
        let (first, last) = (gpu_ns(&s.ticks, Stamp::UploadStart), gpu_ns(&s.ticks, Stamp::DownloadEnd));
        (i128::from(s.submitted_ns) - first, i128::from(s.done_ns) - last)
    }));
    run.t.gpu_clock_within_ns = calibration.map(|(_, within_ns)| within_ns);
    for s in stamped {
        let Some(chunk) = run.plan.chunks.get(s.chunk) else { continue };
        let first = gpu_ns(&s.ticks, Stamp::UploadStart);
        // Without a calibration: the chunk starts at its submit, or once the GPU's previous
        // step ended if that was later, and no later than lets it end when the host saw it
        // finished; its steps keep their distance from its first stamp.
        let start_ns = calibration.map_or_else(
            || {
                let chunk_ns = gpu_ns(&s.ticks, Stamp::DownloadEnd) - first;
                let start = i128::from(s.submitted_ns.max(run.gpu_free_ns));
                let latest = i128::from(s.done_ns) - chunk_ns;
                if start > latest { latest.max(i128::from(run.gpu_free_ns)) } else { start }
            },
            |(offset_ns, _)| first + offset_ns,
        );
        let done_ns = i128::from(s.done_ns);
        let on_cpu = |stamp| (start_ns + gpu_ns(&s.ticks, stamp) - first).clamp(0, done_ns) as u64;
        for (step, from, to) in chunk_steps(run, chunk) {
            let end_ns = on_cpu(to);
            let begin_ns = on_cpu(from).min(end_ns);
            run.gpu_free_ns = run.gpu_free_ns.max(end_ns);
            let band = Some(chunk.band);
            run.t.spans.push(GpuSpan { step, start_ns: begin_ns, end_ns, clock: Clock::GpuTimestamp, band });
        }
    }
}

/// The offset from the GPU clock to the CPU clock that every chunk's bounds allow, given each
/// chunk's lowest and highest (its submission less its first stamp, when it was seen finished
/// less its last stamp): the earliest, and how far the latest lies from it. `None` when there are
/// no chunks or no offset fits them all.
fn calibrate(bounds: impl Iterator<Item = (i128, i128)>) -> Option<(i128, u64)> {
    let (mut lowest, mut highest, mut any) = (i128::MIN, i128::MAX, false);
    for (low, high) in bounds {
        (lowest, highest, any) = (lowest.max(low), highest.min(high), true);
    }
    (any && lowest <= highest).then(|| (lowest, u64::try_from(highest - lowest).unwrap_or(u64::MAX)))
}

/// The GPU steps of one chunk, each between its two stamps.
fn chunk_steps(run: &Run<'_>, chunk: &Chunk) -> Vec<(GpuStep, Stamp, Stamp)> {
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
    steps
}

/// Learns the device's speed from the chunk's GPU times; `false` when they cannot be right (its
/// spans are then left out).
fn add_timestamps(run: &mut Run<'_>, chunk: &Chunk, ticks: &Ticks, cpu_span_ns: u64) -> bool {
    let ctx = run.cmds.ctx;
    let ns = |span| ctx.ticks_to_ns(ticks.span(span));
    let kernel = StampSpan::Kernels(run.plan.slices_of(chunk).len() as u32);
    let submission_ns = ns(StampSpan::Submission);
    // The CPU clock saw every submission of the chunk, queueing included: the GPU cannot have
    // taken longer. A kernel that took no time at all did not run either.
    if !within_cpu_clock(submission_ns, cpu_span_ns) || ticks.span(kernel) == 0 {
        run.t.suspect_timestamps += 1;
        return false;
    }
    let sample = Sample {
        upload_ns: Some(ns(StampSpan::Upload)),
        kernel_ns: ns(kernel),
        display_ns: Some(ns(StampSpan::Display)),
        download_ns: Some(ns(StampSpan::Download)),
        ..Sample::default()
    };
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

#[cfg(test)]
mod tests {
    use super::calibrate;

    #[test]
    fn one_offset_fits_every_chunk_or_none_is_claimed() {
        // Three chunks: GPU clock 1000 ns behind the CPU's at the first (submitted at 50, its
        // first stamp at -950: the offset is at least 1000), the others allowing up to 1030.
        let fits = [(1000, 1040), (990, 1030), (1000, 1100)];
        assert_eq!(calibrate(fits.into_iter()), Some((1000, 30)));
        // A chunk that must have started later than another lets it end: no offset fits.
        assert_eq!(calibrate([(1000, 1040), (1050, 1200)].into_iter()), None);
        assert_eq!(calibrate(std::iter::empty()), None);
    }
}
