//! Timing a kernel on data already on the GPU: the input is uploaded once, the output is left
//! there, and each timed run submits one pass (planned by `kept_passes`: whole bands, as many
//! dispatches a submission as the budget allows) and waits, on the CPU clock, so the fixed cost of a
//! dispatch is included. This is the GPU's best case, as when the image is on the GPU to be
//! shown anyway. Every buffer is freed, and the device waited for, before returning.

use std::time::Instant;

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{nanos, wait_for};
use crate::gpu::memory::resident_input::{InputLayout, ResidentInput};
use crate::gpu::plan::bands::{BandPlan, band_sizes};
use crate::gpu::plan::run_plan::Limits;
use crate::gpu::run::kept_passes::{KeptPasses, KernelOn, PLANNING_PASSES, PassPlan, PassShape, kept_bands};
use crate::gpu::timing::timestamps::{Stamp, StampSpan, Timestamps};
use crate::gpu::{GpuError, GpuJob};
use crate::system::clock::thread_cpu_ns;

/// One timed pass over data kept on the GPU, both ways a program might time it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResidentPass {
    /// The CPU clock around the `queue.submit` calls alone: what a program that forgets to wait
    /// for the GPU measures.
    pub submit_ns: u64,
    /// The CPU time the calling thread ran inside those submits
    /// ([`crate::system::clock::thread_cpu_ns`]): their own cost, without the time the thread
    /// waited for a core (on a software adapter, held by the "GPU"'s threads); `None` where the
    /// platform has no thread clock.
    pub submit_cpu_ns: Option<u64>,
    /// The CPU clock from the first submit until the GPU has finished the last one.
    pub wall_ns: u64,
    /// The GPU's timestamps from the pass's first dispatch to its last, where the device has
    /// them and takes them in place (`None` elsewhere, or when longer than `wall_ns`).
    pub kernel_ns: Option<u64>,
}

/// Uploads `job`'s image once (every band resident at once), runs cold passes over it until
/// their plan holds (at most [`PLANNING_PASSES`], each replanning from the GPU's timestamps where
/// `stamps`, else from the CPU clock's reading, an upper bound of the GPU's time), then times
/// `runs` further passes, with GPU timestamps too where `stamps`.
pub(crate) fn time_resident(
    on: &KernelOn<'_>,
    job: &GpuJob<'_>,
    (limits, stamps): (Limits, bool),
    runs: usize,
    scopes: &mut ErrorScopes<'_>,
) -> Result<Vec<ResidentPass>, GpuError> {
    let ctx = on.ctx;
    let &GpuJob { kernel, src, width, height, .. } = job;
    job.check_lengths(None)?;
    let bands = BandPlan::new(kernel, width, height, limits.band_bytes)?;
    let shape = PassShape {
        kernel,
        size: (width, height),
        workgroup: job.workgroup,
        bands,
        max_groups: limits.max_groups,
    };
    let in_row = width as usize * kernel.in_bytes_per_pixel();
    let inputs = ResidentInput::new(ctx, InputLayout::new(0, kernel, (width, height), &bands), &bands);
    let mut outputs = Vec::new();
    for ((input, &in_bytes), band) in inputs.buffers.iter().zip(&inputs.bytes).zip(0u32..) {
        let first_row = (band * bands.rows_per_band) as usize;
        let rows = (bands.rows_per_band as usize).min(height as usize - first_row);
        let out_bytes = band_sizes(kernel, (rows * width as usize) as u64).2.max(4);
        let band_src = src.get(first_row * in_row..(first_row + rows) * in_row).unwrap_or_default();
        let mut contents = band_src.to_vec();
        contents.resize(in_bytes as usize, 0);
        ctx.queue().write_buffer(input, 0, &contents);
        let output = ctx.buffer("resident output", out_bytes, wgpu::BufferUsages::STORAGE);
        outputs.push((output, out_bytes));
    }
    let kept = kept_bands(&inputs, &outputs);
    let prepare =
        |ns_per_byte| KeptPasses::new(on, job, &kept, PassPlan::new(&shape, ns_per_byte), limits.max_groups);
    let mut passes = prepare(on.kernel_ns_per_byte)?;
    let stamps = stamps.then(|| Timestamps::new(ctx, 1));
    scopes.check()?;
    let pass = |passes: &KeptPasses| -> Result<ResidentPass, GpuError> {
        let cpu_before = thread_cpu_ns();
        let started = Instant::now();
        let last = passes.submit(on, 1, None, stamps.as_ref(), job.cancel)?;
        let submit_ns = nanos(started.elapsed());
        let submit_cpu_ns = cpu_before.zip(thread_cpu_ns()).map(|(a, b)| b.saturating_sub(a));
        wait_for(ctx.device(), last.as_ref())?;
        let wall_ns = nanos(started.elapsed());
        // The stamps are resolved and read off the clock.
        let kernel_ns = match &stamps {
            Some(s) => {
                let mut enc = ctx.encoder("resident stamps");
                s.resolve(&mut enc, (Stamp::KernelStart(0), Stamp::KernelEnd(0)));
                ctx.queue().submit([enc.finish()]);
                Some(s.span_ns(ctx, StampSpan::Slice(0))?)
            }
            None => None,
        };
        Ok(ResidentPass {
            submit_ns,
            submit_cpu_ns,
            wall_ns,
            kernel_ns: kernel_ns.filter(|&k| k > 0 && k <= wall_ns),
        })
    };
    // The first, cold passes wake the GPU and its caches and plan the rest (from the GPU's clock
    // where stamped, else the CPU's, an upper bound), as the round trips do; not reported.
    wait_for(ctx.device(), None)?;
    for _ in 0..PLANNING_PASSES {
        let cold = pass(&passes)?;
        let reading = cold.kernel_ns.map_or((cold.wall_ns, true), |ns| (ns, false));
        let Some(ns_per_byte) = passes.plan.measured(reading.0, 1, reading.1) else { break };
        passes = prepare(ns_per_byte)?;
    }
    let times = (0..runs.max(1)).map(|_| pass(&passes)).collect::<Result<Vec<_>, _>>();
    drop(passes);
    drop(kept);
    drop(outputs);
    drop(inputs);
    wait_for(ctx.device(), None)?;
    times
}
