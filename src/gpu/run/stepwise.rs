//! The step-by-step driver ([`crate::gpu::TimingMode::CpuClock`], or a device without encoder
//! timestamps): each chunk's copies and each slice of its kernel are a submit-and-wait of their
//! own on the CPU clock (the kernel on pass timestamps where the device has them and the mode
//! allows), each submitted once the step before it has finished: nothing overlaps, and no copy's
//! time holds a wait behind a kernel.

use std::time::Instant;

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{map, nanos};
use crate::gpu::memory::ring::StagingSlot;
use crate::gpu::plan::run_plan::Slice;
use crate::gpu::plan::submission_budget::Sample;
use crate::gpu::run::conversion::Run;
use crate::gpu::timing::timestamps::{Stamp, StampSpan, within_cpu_clock};
use crate::gpu::{GpuError, GpuStep};
use crate::system::clock::Clock;

/// Runs every chunk of `run` through the one staging slot.
pub(crate) fn drive(
    run: &mut Run<'_>,
    slot: &mut StagingSlot,
    scopes: &mut ErrorScopes<'_>,
) -> Result<(), GpuError> {
    let plan = run.plan;
    for chunk in &plan.chunks {
        if run.cancelled() {
            return Err(GpuError::Cancelled);
        }
        let mut upload_ns = None;
        if run.cmds.upload {
            run.stage(slot, chunk)?;
            upload_ns = Some(timed(run, (GpuStep::Upload, chunk.band), |cmds, enc| {
                cmds.upload(enc, slot, chunk, None);
            })?);
            slot.remap_upload();
        }
        // Each step's submit-and-wait on the CPU clock also counts any wait behind other work.
        let mut kernel_ns = 0;
        let mut every_slice_timed = true;
        for (nth, slice) in plan.slices_of(chunk).iter().enumerate() {
            if nth > 0 && run.cancelled() {
                return Err(GpuError::Cancelled);
            }
            match kernel(run, slot, (slice, nth as u32))? {
                Some(ns) => kernel_ns += ns,
                None => every_slice_timed = false,
            }
            // Its submit-and-wait returned: the slice's pixels are done on the GPU.
            run.slice_done(slice);
        }
        if !every_slice_timed {
            // The chunk's GPU kernel figure is left out, as the pipelined driver does.
            run.t.suspect_timestamps += 1;
            kernel_ns = 0;
        }
        let mut sample = Sample { upload_ns, kernel_ns, upper_bounds: true, ..Sample::default() };
        if run.cmds.display.is_some() {
            let ns = timed(run, (GpuStep::Display, chunk.band), |cmds, enc| cmds.display(enc, chunk, None))?;
            sample.display_ns = Some(ns);
        }
        if run.cmds.download {
            let ns = timed(run, (GpuStep::Download, chunk.band), |cmds, enc| {
                cmds.download(enc, slot, chunk, None);
            })?;
            sample.download_ns = Some(ns);
            let mapping = map(&slot.download, 0..chunk.out_bytes().1, wgpu::MapMode::Read);
            run.read_back(slot, chunk, &mapping)?;
        }
        if every_slice_timed && sample.kernel_ns > 0 {
            run.learn(chunk, sample);
        }
        scopes.check()?;
    }
    Ok(())
}

/// Records one step, submits it and waits: its time on the CPU clock, and its span.
fn timed(
    run: &mut Run<'_>,
    (step, band): (GpuStep, u32),
    record: impl FnOnce(&crate::gpu::run::record::RunCommands<'_>, &mut wgpu::CommandEncoder),
) -> Result<u64, GpuError> {
    let (started, done) = submit_and_wait(run, record)?;
    run.span((step, Some(band)), (started, done), Clock::CpuClock);
    Ok(nanos(done - started))
}

/// Records one step, submits it and waits: when it was submitted and when it was seen finished.
fn submit_and_wait(
    run: &mut Run<'_>,
    record: impl FnOnce(&crate::gpu::run::record::RunCommands<'_>, &mut wgpu::CommandEncoder),
) -> Result<(Instant, Instant), GpuError> {
    let mut enc = run.cmds.ctx.encoder("step");
    record(&run.cmds, &mut enc);
    let commands = enc.finish();
    let started = Instant::now();
    let submission = run.cmds.ctx.queue().submit([commands]);
    let wait_before = run.t.wait_ns;
    let done = run.wait(&submission)?;
    // The step's whole submit-and-wait is its time, not a wait beside other work.
    run.t.wait_ns = wait_before;
    Ok((started, done))
}

/// The kernel step of one slice (the chunk's `nth`): pass timestamps where the slot has them
/// (the CPU clock is kept as the upper bound the reading must stay under), else the CPU clock.
/// `None` for a reading that cannot be right.
fn kernel(
    run: &mut Run<'_>,
    slot: &StagingSlot,
    (slice, nth): (&Slice, u32),
) -> Result<Option<u64>, GpuError> {
    let ts = slot.timestamps.as_ref();
    let (started, done) = submit_and_wait(run, |cmds, enc| {
        cmds.kernel(enc, (slice, nth), ts);
        if let Some(ts) = ts {
            ts.resolve(enc, (Stamp::KernelStart(nth), Stamp::KernelEnd(nth)));
        }
    })?;
    let cpu_ns = nanos(done - started);
    let Some(ts) = ts else {
        run.span((GpuStep::Kernel, Some(slice.band)), (started, done), Clock::CpuClock);
        return Ok(Some(cpu_ns));
    };
    let gpu_ns = ts.span_ns(run.cmds.ctx, StampSpan::Slice(nth))?;
    if gpu_ns == 0 || !within_cpu_clock(gpu_ns, cpu_ns) {
        return Ok(None);
    }
    // The pass's own length, placed at its submit (and never past when it was seen finished).
    let end = (started + std::time::Duration::from_nanos(gpu_ns)).min(done);
    run.span((GpuStep::Kernel, Some(slice.band)), (started, end), Clock::GpuTimestamp);
    Ok(Some(gpu_ns))
}
