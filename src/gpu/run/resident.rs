//! Timing a kernel on data already on the GPU: the input is uploaded once, the output is left
//! there, and each timed run submits the compute passes (in chunks within the submission
//! budget, at most two on the queue) and waits, on the CPU clock, so the fixed cost of a
//! dispatch is included. This is the GPU's best case, as when the image is on the GPU to be
//! shown anyway. Every buffer is freed, and the device waited for, before returning.

use std::time::Instant;

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{nanos, wait_for};
use crate::gpu::memory::resident_input::{InputLayout, ResidentInput};
use crate::gpu::pipelines::{Pipelines, params_buffer};
use crate::gpu::plan::bands::band_sizes;
use crate::gpu::plan::grid::{PARAMS_STRIDE, dispatch};
use crate::gpu::plan::run_plan::{Limits, RunPlan};
use crate::gpu::run::pipelined::MAX_IN_FLIGHT;
use crate::gpu::{GpuContext, GpuError, GpuJob};

/// One timed pass over data kept on the GPU, both ways a program might time it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResidentPass {
    /// The CPU clock around the `queue.submit` calls alone: what a program that forgets to wait
    /// for the GPU measures.
    pub submit_ns: u64,
    /// The CPU clock from the first submit until the GPU has finished the last one.
    pub wall_ns: u64,
}

/// The compiled kernel a resident pass runs, with the device and pipelines it belongs to.
pub(crate) struct KernelOn<'a> {
    /// The device.
    pub ctx: &'a GpuContext,
    /// Its pipelines (for the bind-group layout).
    pub pipelines: &'a Pipelines,
    /// The job's pipeline.
    pub pipeline: &'a wgpu::ComputePipeline,
}

/// Uploads `job`'s image once (every band resident at once), runs one cold pass over it, then
/// times `runs` further passes.
pub(crate) fn time_resident(
    on: &KernelOn<'_>,
    job: &GpuJob<'_>,
    limits: Limits,
    runs: usize,
    scopes: &mut ErrorScopes<'_>,
) -> Result<Vec<ResidentPass>, GpuError> {
    let KernelOn { ctx, pipelines, pipeline } = *on;
    let &GpuJob { kernel, workgroup, src, width, height, .. } = job;
    if src.len() as u64 != u64::from(width) * u64::from(height) * kernel.in_bytes_per_pixel() as u64 {
        return Err(GpuError::LengthMismatch { width, height, kernel: kernel.name() });
    }
    let plan = RunPlan::new(kernel, (width, height), workgroup, limits)?;
    let in_row = width as usize * kernel.in_bytes_per_pixel();
    let dispatches = plan
        .chunks
        .iter()
        .map(|c| dispatch(kernel, width, workgroup, &c.rows, limits.max_groups))
        .collect::<Result<Vec<_>, _>>()?;
    let params =
        params_buffer(ctx, &dispatches.iter().map(|d| d.params.with_work(job.work)).collect::<Vec<_>>());
    let inputs =
        ResidentInput::new(ctx, InputLayout::new(0, kernel, (width, height), &plan.bands), &plan.bands);
    let mut groups = Vec::new();
    for ((input, &in_bytes), band) in inputs.buffers.iter().zip(&inputs.bytes).zip(0u32..) {
        let first_row = (band * plan.bands.rows_per_band) as usize;
        let rows = (plan.bands.rows_per_band as usize).min(height as usize - first_row);
        let out_bytes = band_sizes(kernel, (rows * width as usize) as u64).2.max(4);
        let band_src = src.get(first_row * in_row..(first_row + rows) * in_row).unwrap_or_default();
        let mut contents = band_src.to_vec();
        contents.resize(in_bytes as usize, 0);
        ctx.queue().write_buffer(input, 0, &contents);
        let output = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("resident output"),
            size: out_bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        groups.push(pipelines.bind_group(ctx, kernel, (input, in_bytes), (&output, out_bytes), &params));
    }
    scopes.check()?;
    let pass = || -> Result<ResidentPass, GpuError> {
        let mut submitted: Vec<wgpu::SubmissionIndex> = Vec::new();
        let mut submit_ns = 0;
        let started = Instant::now();
        for (chunk, d) in plan.chunks.iter().zip(&dispatches) {
            let band = (chunk.band_row0 / plan.bands.rows_per_band.max(1)) as usize;
            let Some(group) = groups.get(band) else { continue };
            let mut enc = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("resident") });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("resident"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, group, &[(chunk.index as u64 * PARAMS_STRIDE) as u32]);
                pass.dispatch_workgroups(d.groups.0, d.groups.1, 1);
            }
            if submitted.len() >= MAX_IN_FLIGHT {
                let oldest = submitted.len() - MAX_IN_FLIGHT;
                wait_for(ctx.device(), submitted.get(oldest))?;
            }
            let commands = enc.finish();
            let submit = Instant::now();
            submitted.push(ctx.queue().submit([commands]));
            submit_ns += nanos(submit.elapsed());
        }
        wait_for(ctx.device(), submitted.last())?;
        Ok(ResidentPass { submit_ns, wall_ns: nanos(started.elapsed()) })
    };
    // The first, cold pass wakes the GPU and its caches; it is not reported.
    wait_for(ctx.device(), None)?;
    pass()?;
    let times = (0..runs.max(1)).map(|_| pass()).collect::<Result<Vec<_>, _>>();
    drop(groups);
    drop(inputs);
    drop(params);
    wait_for(ctx.device(), None)?;
    times
}
