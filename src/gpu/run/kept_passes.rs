//! Passes of the kernel over an input kept on the GPU, as round trips and the resident timing run
//! them. A pass has no copy, so the staging chunks that size a conversion's copies do not cut it:
//! each band is dispatched whole, cut only where the grid or the submission budget needs it, and
//! as many dispatches go into one submission (one compute pass) as the budget allows.
//!
//! The plan comes from the kernel's cost per input byte: first the budget's, then what a cold
//! pass over this very data measured ([`PassPlan::measured`]). On the H200 the budget's first,
//! conservative plan took 16 x 43 submissions for 16 passes over a kept 8K image (1.3 ms a pass
//! against the kernel's 0.06 ms); one cold reading plans them as a few submissions.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::gpu::device::wait::wait_for;
use crate::gpu::memory::resident_input::ResidentInput;
use crate::gpu::pipelines::{Pipelines, params_buffer};
use crate::gpu::plan::bands::BandPlan;
use crate::gpu::plan::grid::{Dispatch, PARAMS_STRIDE, dispatch, max_rows_per_dispatch};
use crate::gpu::plan::run_plan::cut;
use crate::gpu::plan::submission_budget::{GpuRates, SUBMISSION_BUDGET_NS};
use crate::gpu::run::pipelined::MAX_IN_FLIGHT;
use crate::gpu::timing::timestamps::{Stamp, Timestamps};
use crate::gpu::{GpuContext, GpuError, GpuJob, WorkgroupSize};
use crate::pixel::Kernel;

/// Dispatches one submission carries at most, however cheap each is.
const MAX_DISPATCHES_PER_SUBMISSION: usize = 256;

/// Cold passes (or round trips) taken at most to plan the passes, each of which may replan them.
pub(crate) const PLANNING_PASSES: usize = 3;

/// A reading replans the passes when it differs from the plan's cost by more than this factor.
const REPLAN_FACTOR: f64 = 2.0;

/// The compiled kernel passes over kept data run, with the device and pipelines it belongs to.
pub(crate) struct KernelOn<'a> {
    /// The device.
    pub ctx: &'a GpuContext,
    /// Its pipelines (for the bind-group layout).
    pub pipelines: &'a Pipelines,
    /// The job's pipeline.
    pub pipeline: &'a wgpu::ComputePipeline,
    /// The job's kernel cost per input byte as the submission budget predicts it (learnt, from
    /// the ceilings, or conservative): where planning its passes starts.
    pub kernel_ns_per_byte: f64,
}

/// How one pass over kept bands is dispatched and submitted.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PassPlan {
    /// Each dispatch of one pass, in order: its band and band-relative rows.
    pub pieces: Vec<(u32, Range<u32>)>,
    /// Dispatches per submission (at least 1).
    pub per_submission: usize,
    /// The kernel's cost per input byte the plan was made for.
    pub ns_per_byte: f64,
    /// Input bytes of one pass.
    pub pass_bytes: u64,
}

/// What a pass plan is made for: the image, its bands and the device's grid limit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PassShape {
    /// The kernel.
    pub kernel: Kernel,
    /// Image width and height.
    pub size: (u32, u32),
    /// The workgroup shape.
    pub workgroup: WorkgroupSize,
    /// The image's bands.
    pub bands: BandPlan,
    /// `max_compute_workgroups_per_dimension`.
    pub max_groups: u32,
}

impl PassPlan {
    /// Plans passes whose kernel costs `ns_per_byte` GPU nanoseconds per input byte (not finite
    /// or not positive: the conservative rate): pieces within the submission budget, as many per
    /// submission as it allows.
    pub(crate) fn new(shape: &PassShape, ns_per_byte: f64) -> Self {
        let PassShape { kernel, size: (width, height), workgroup, bands, max_groups } = *shape;
        let usable = ns_per_byte.is_finite() && ns_per_byte > 0.0;
        let ns_per_byte = if usable { ns_per_byte } else { GpuRates::CONSERVATIVE.kernel_ns_per_byte };
        let row_bytes = (u64::from(width) * kernel.in_bytes_per_pixel() as u64).max(1);
        let budget_rows = (SUBMISSION_BUDGET_NS as f64 / (ns_per_byte * row_bytes as f64)).max(1.0);
        let per =
            (budget_rows.min(f64::from(u32::MAX)) as u32).min(max_rows_per_dispatch(workgroup, max_groups));
        let mut pieces = Vec::new();
        for band in 0..bands.bands {
            let rows = bands.rows_per_band.min(height - band * bands.rows_per_band);
            pieces.extend(cut(kernel, width, 0..rows, per).into_iter().map(|r| (band, r)));
        }
        let largest = pieces.iter().map(|(_, r)| u64::from(r.end - r.start)).max().unwrap_or(1) * row_bytes;
        let per_submission = (SUBMISSION_BUDGET_NS as f64 / (ns_per_byte * largest as f64))
            .clamp(1.0, MAX_DISPATCHES_PER_SUBMISSION as f64) as usize;
        Self { pieces, per_submission, ns_per_byte, pass_bytes: u64::from(height) * row_bytes }
    }

    /// Submissions `passes` passes take.
    #[must_use]
    pub(crate) fn submissions(&self, passes: usize) -> usize {
        (passes.max(1) * self.pieces.len()).div_ceil(self.per_submission)
    }

    /// The cost per input byte that `kernel_ns` for `passes` passes shows, if it calls for another
    /// plan: a GPU reading (`upper_bound` false) that differs from the plan's cost by more than
    /// [`REPLAN_FACTOR`], or a CPU-clock reading (an upper bound of the GPU's time) that shows
    /// the kernel that much cheaper (it then still bounds the true cost, so pieces planned from
    /// it stay within the budget).
    #[must_use]
    pub(crate) fn measured(&self, kernel_ns: u64, passes: usize, upper_bound: bool) -> Option<f64> {
        let bytes = self.pass_bytes as f64 * passes.max(1) as f64;
        let observed = kernel_ns as f64 / bytes;
        if !observed.is_finite() || observed <= 0.0 {
            return None;
        }
        let cheaper = observed * REPLAN_FACTOR < self.ns_per_byte;
        let dearer = observed > self.ns_per_byte * REPLAN_FACTOR && !upper_bound;
        (cheaper || dearer).then_some(observed)
    }
}

/// The dispatches of `job` over each of `rows` (band-relative), and a buffer of their parameters
/// (with the job's work), one slot each.
pub(crate) fn dispatches_of<'r>(
    ctx: &GpuContext,
    job: &GpuJob<'_>,
    rows: impl Iterator<Item = &'r Range<u32>>,
    max_groups: u32,
) -> Result<(Vec<Dispatch>, wgpu::Buffer), GpuError> {
    let dispatches = rows
        .map(|rows| dispatch(job.kernel, job.width, job.workgroup, rows, max_groups))
        .collect::<Result<Vec<_>, _>>()?;
    let params: Vec<_> = dispatches.iter().map(|d| d.params.with_work(job.work)).collect();
    Ok((dispatches, params_buffer(ctx, &params)))
}

/// Passes over kept bands, ready to submit: the plan, its dispatches, and each band's bindings
/// with the dispatches' parameters.
pub(crate) struct KeptPasses {
    /// The plan.
    pub plan: PassPlan,
    dispatches: Vec<Dispatch>,
    /// Each band's bind group.
    groups: Vec<wgpu::BindGroup>,
}

/// One kept band: its input buffer and bytes, its output buffer and bytes.
pub(crate) type KeptBand<'a> = ((&'a wgpu::Buffer, u64), (&'a wgpu::Buffer, u64));

/// Each band of a kept input with its output (buffer and bytes), in band order.
pub(crate) fn kept_bands<'a>(
    inputs: &'a ResidentInput,
    outputs: &'a [(wgpu::Buffer, u64)],
) -> Vec<KeptBand<'a>> {
    inputs
        .buffers
        .iter()
        .zip(&inputs.bytes)
        .zip(outputs)
        .map(|((i, &ib), (o, ob))| ((i, ib), (o, *ob)))
        .collect()
}

impl KeptPasses {
    /// Prepares `plan`'s dispatches of `job`'s kernel over `bands`.
    pub(crate) fn new(
        on: &KernelOn<'_>,
        job: &GpuJob<'_>,
        bands: &[KeptBand<'_>],
        plan: PassPlan,
        max_groups: u32,
    ) -> Result<Self, GpuError> {
        let (dispatches, params) =
            dispatches_of(on.ctx, job, plan.pieces.iter().map(|(_, r)| r), max_groups)?;
        let groups = bands
            .iter()
            .map(|&(input, output)| on.pipelines.bind_group(on.ctx, job.kernel, input, output, &params))
            .collect();
        Ok(Self { plan, dispatches, groups })
    }

    /// Submits `passes` passes (at most [`MAX_IN_FLIGHT`] submissions on the queue), after
    /// `after` where given; where `stamps` are given, the first is stamped at its start and the
    /// last at its end. The last submission.
    pub(crate) fn submit(
        &self,
        on: &KernelOn<'_>,
        passes: usize,
        after: Option<wgpu::SubmissionIndex>,
        stamps: Option<&Timestamps>,
        cancel: Option<&AtomicBool>,
    ) -> Result<Option<wgpu::SubmissionIndex>, GpuError> {
        let ctx = on.ctx;
        let per_pass = self.plan.pieces.len();
        let steps = passes.max(1) * per_pass;
        let mut submitted: Vec<_> = after.into_iter().collect();
        let mut step = 0;
        while step < steps {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                wait_for(ctx.device(), None)?;
                return Err(GpuError::Cancelled);
            }
            let end = (step + self.plan.per_submission).min(steps);
            let mut enc = ctx.encoder("kept passes");
            {
                let first = (step == 0).then_some(Stamp::KernelStart(0));
                let last = (end == steps).then_some(Stamp::KernelEnd(0));
                let timestamp_writes =
                    stamps.filter(|_| first.is_some() || last.is_some()).map(|s| s.pass_writes(first, last));
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("kept passes"),
                    timestamp_writes,
                });
                pass.set_pipeline(on.pipeline);
                for i in (step..end).map(|s| s % per_pass) {
                    let (Some((band, _)), Some(d)) = (self.plan.pieces.get(i), self.dispatches.get(i)) else {
                        return Err(GpuError::Bug("a dispatch without its piece"));
                    };
                    let group =
                        self.groups.get(*band as usize).ok_or(GpuError::Bug("a piece without its band"))?;
                    pass.set_bind_group(0, group, &[(i as u64 * PARAMS_STRIDE) as u32]);
                    pass.dispatch_workgroups(d.groups.0, d.groups.1, d.groups.2);
                }
            }
            if submitted.len() >= MAX_IN_FLIGHT {
                wait_for(ctx.device(), submitted.get(submitted.len() - MAX_IN_FLIGHT))?;
            }
            submitted.push(ctx.queue().submit([enc.finish()]));
            step = end;
        }
        Ok(submitted.pop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An 8K RGB image in one band, 64x1 workgroups, a 65,535 grid.
    fn eight_k() -> PassShape {
        let kernel = Kernel::Rgb8ToL8;
        let bands = BandPlan::new(kernel, 7680, 4320, 2 << 30).expect("bands");
        PassShape { kernel, size: (7680, 4320), workgroup: WorkgroupSize::DEFAULT, bands, max_groups: 65535 }
    }

    #[test]
    fn passes_are_not_cut_by_copies_once_the_kernel_is_known() {
        let shape = eight_k();
        // The budget's first, conservative plan: 3 ns per byte, 8 ms a submission.
        let first = PassPlan::new(&shape, GpuRates::CONSERVATIVE.kernel_ns_per_byte);
        assert!(first.pieces.len() > 30, "{}", first.pieces.len());
        assert_eq!(first.per_submission, 1);
        assert_eq!(first.submissions(16), 16 * first.pieces.len());
        // What the H200 measured of 16 such passes on its clock: 20.8 ms.
        let observed = first.measured(20_800_000, 16, false).expect("a reading 200 times cheaper");
        let second = PassPlan::new(&shape, observed);
        assert_eq!(second.pieces, vec![(0, 0..4320)], "one dispatch a pass");
        assert_eq!(second.submissions(16), 3, "{second:?}");
        // The kernel as the H200 runs it: 0.059 ms a pass. Every pass in one submission.
        let third = PassPlan::new(&shape, second.measured(16 * 59_000, 16, false).expect("cheaper still"));
        assert_eq!(third.submissions(16), 1);
        assert_eq!(third.measured(16 * 70_000, 16, false), None, "within the factor: kept");
    }

    #[test]
    fn a_plan_stays_within_the_budget() {
        let shape = eight_k();
        // lavapipe on two cores, about 0.6 ns per byte: 8 ms is 13 MB, 578 rows.
        let plan = PassPlan::new(&shape, 0.6);
        for (band, rows) in &plan.pieces {
            assert_eq!(*band, 0);
            let ns = 0.6 * f64::from(rows.end - rows.start) * 7680.0 * 3.0;
            assert!(ns <= SUBMISSION_BUDGET_NS as f64 * 1.01, "{rows:?}: {ns} ns");
        }
        assert_eq!(plan.pieces.iter().map(|(_, r)| r.end - r.start).sum::<u32>(), 4320);
        assert_eq!(plan.per_submission, 1);
        // A slower GPU reading replans smaller pieces; a slower CPU-clock one (an upper bound,
        // which may have waited behind other work) does not.
        let slow = (plan.pass_bytes as f64 * 0.6 * 3.0) as u64;
        assert!(plan.measured(slow, 1, false).is_some());
        assert_eq!(plan.measured(slow, 1, true), None);
        // A cheaper CPU-clock reading still bounds the cost: it replans.
        assert!(plan.measured(slow / 10, 1, true).is_some());
    }

    #[test]
    fn bands_and_the_grid_cut_a_pass() {
        let kernel = Kernel::Rgb8ToL8;
        let bands = BandPlan::new(kernel, 1000, 1000, 1000 * 3 * 300).expect("bands");
        let shape = PassShape {
            kernel,
            size: (1000, 1000),
            workgroup: WorkgroupSize { x: 8, y: 8 },
            bands,
            max_groups: 10,
        };
        let plan = PassPlan::new(&shape, 1e-6);
        // Bands of 300, 300, 300 and 100 rows, 2-D dispatches of at most 80 rows.
        assert_eq!(plan.pieces.len(), 4 + 4 + 4 + 2, "{plan:?}");
        assert!(plan.pieces.iter().all(|(_, r)| r.end - r.start <= 80));
        assert_eq!(plan.per_submission, MAX_DISPATCHES_PER_SUBMISSION);
    }
}
