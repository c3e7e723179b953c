//! One op stage on the GPU: buffers for the largest band, then band after band its rows
//! uploaded, the op's passes (one submission; the dither by steps one a chunk of steps), the
//! result copied back. The dither's error rows stay in a ring on the GPU from band to band.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::kernels::{OpKernels, OpParams};
use super::plan::{OpBand, blur_stride, op_bands};
use super::{DitherWavefront, OpTimings};
use crate::gpu::device::context::sized;
use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{nanos, read_buffer};
use crate::gpu::pipelines::param_slots;
use crate::gpu::plan::grid::{PARAMS_STRIDE, folded};
use crate::gpu::timing::timestamps::{Stamp, StampSpan, Timestamps};
use crate::gpu::{GpuContext, GpuError, StepTime, WorkgroupSize};
use crate::pixel::{Op, blur_weights};
use crate::system::clock::Clock;

/// Dispatches of the dither in one submission (one uniform slot each).
const STEP_SLOTS: u32 = 1024;

/// The blur's row segment per workgroup, and the columns and rows of its vertical pass's
/// workgroup, as `shaders/blur.wgsl` declares them.
const ROW_TILE: u32 = 256;
const COL_COLUMNS: u32 = 16;
const COL_ROWS: u32 = 64;

/// The dither by steps' workgroup and the persistent one, as `shaders/dither.wgsl` declares
/// them.
const STEP_GROUP: u32 = 64;
const PERSISTENT_WORKGROUP: u32 = 256;

/// Where the gray plane an op runs on is.
#[derive(Clone, Copy)]
pub(crate) enum Plane<'a> {
    /// On the host: uploaded band by band.
    Host(&'a [u8]),
    /// Already on the GPU, whole, row after row in a buffer (the conversion's output band): the
    /// op binds it as its input and uploads nothing. Only for an op of one band.
    Device(&'a wgpu::Buffer),
}

/// One op on one gray plane.
pub(crate) struct OpJob<'a> {
    /// The op (not [`Op::None`]).
    pub op: Op,
    /// The `width * height` gray plane.
    pub plane: Plane<'a>,
    /// The plane's width and height.
    pub size: (u32, u32),
    /// The largest binding a band may take.
    pub band_limit_bytes: u64,
    /// How the dither's wavefront runs.
    pub wavefront: DitherWavefront,
    /// Checked between submissions.
    pub cancel: Option<&'a AtomicBool>,
}

/// The stage's buffers, sized for its largest band, and their bind group.
struct StageBuffers {
    /// The input band (a word when the plane is on the GPU already).
    src: wgpu::Buffer,
    scratch: wgpu::Buffer,
    dst: wgpu::Buffer,
    readback: wgpu::Buffer,
    params: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
}

/// Runs `job` on `ctx` into `out` (the `width * height` new plane): what each step took.
/// `timestamps`: time the passes with GPU timestamps (else the CPU clock around each
/// submit-and-wait).
pub(crate) fn run_op(
    ctx: &GpuContext,
    kernels: &OpKernels,
    job: &OpJob<'_>,
    timestamps: Option<&Timestamps>,
    out: &mut [u8],
) -> Result<OpTimings, GpuError> {
    let (width, height) = job.size;
    let pixels = width as usize * height as usize;
    if out.len() != pixels || matches!(job.plane, Plane::Host(plane) if plane.len() != pixels) {
        return Err(GpuError::LengthMismatch { width, height, kernel: "gray-plane op" });
    }
    let kernel_clock = Clock::gpu_if(timestamps.is_some());
    let mut t = OpTimings {
        upload: StepTime::on(Clock::CpuClock),
        kernel: StepTime::on(kernel_clock),
        download: StepTime::on(Clock::CpuClock),
        wavefront: (job.op == Op::Dither).then_some(job.wavefront),
        ..OpTimings::default()
    };
    if let (true, Plane::Host(plane)) = (pixels == 0 || job.op.is_none(), job.plane) {
        out.copy_from_slice(plane);
        return Ok(t);
    }
    let bands = op_bands(job.op, job.size, job.band_limit_bytes)?;
    if matches!(job.plane, Plane::Device(_)) && bands.len() != 1 {
        return Err(GpuError::Bug("a plane on the GPU for an op of more than one band"));
    }
    check_grid(ctx, job.op, width)?;
    let started = Instant::now();
    let scopes = ErrorScopes::push(ctx.device());
    let buffers = StageBuffers::new(ctx, kernels, job, &bands);
    t.setup_ns = nanos(started.elapsed());
    t.bands = u32::try_from(bands.len()).unwrap_or(u32::MAX);
    for (i, band) in bands.iter().enumerate() {
        if job.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(GpuError::Cancelled);
        }
        if let Plane::Host(plane) = job.plane {
            let started = Instant::now();
            let w = width as usize;
            let rows = plane.get(band.input.start as usize * w..band.input.end as usize * w);
            let rows = rows.ok_or(GpuError::Bug("a band outside the plane"))?;
            write_padded(ctx.queue(), &buffers.src, rows);
            t.upload.ns += nanos(started.elapsed());
        }
        let params = OpParams {
            width,
            height,
            radius: if let Op::Blur { radius } = job.op { radius } else { 0 },
            rows_in: band.input.end - band.input.start,
            rows_out: band.output.end - band.output.start,
            in_y0: band.input.start,
            band_y0: band.output.start,
            step: 0,
            step_last: 0,
        };
        let run = BandRun { ctx, kernels, buffers: &buffers, timestamps, first: i == 0 };
        match job.op {
            Op::Blur { .. } => run.blur(params, &mut t)?,
            Op::Dither => run.dither(params, job.wavefront, job.cancel, &mut t)?,
            Op::None => {}
        }
        let started = Instant::now();
        let stride = if matches!(job.op, Op::Blur { .. }) { blur_stride(width) } else { width };
        read_back(ctx, &buffers.readback, band, (width, stride), out)?;
        t.download.ns += nanos(started.elapsed());
    }
    scopes.finish()?;
    Ok(t)
}

/// Refuses an image too wide for the blur's grids even folded along z (the widest is the
/// vertical pass's, 16 columns a workgroup: over 4 * 10^12 pixels). The dither's grid runs
/// along its rows, whatever the width.
fn check_grid(ctx: &GpuContext, op: Op, width: u32) -> Result<(), GpuError> {
    let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
    let groups = u64::from(blur_stride(width).div_ceil(COL_COLUMNS));
    if matches!(op, Op::Blur { .. }) && groups > u64::from(max_groups).pow(2) {
        let workgroup = WorkgroupSize { x: COL_COLUMNS / 4, y: COL_ROWS };
        return Err(GpuError::GridTooLarge { width, workgroup, groups, max_groups });
    }
    Ok(())
}

/// `groups` workgroups along x, folded along z where they pass `max_groups` ([`folded`]).
fn folded_xz(groups: u32, max_groups: u32) -> (u32, u32) {
    let (x, z) = folded(u64::from(groups), u64::from(max_groups));
    (x as u32, z as u32)
}

/// `bytes` rounded up to whole words, at least one.
fn words(bytes: u64) -> u64 {
    bytes.div_ceil(4).max(1) * 4
}

impl StageBuffers {
    fn new(ctx: &GpuContext, kernels: &OpKernels, job: &OpJob<'_>, bands: &[OpBand]) -> Self {
        use wgpu::BufferUsages as U;
        let width = u64::from(job.size.0);
        let rows_in = bands.iter().map(|b| u64::from(b.input.end - b.input.start)).max().unwrap_or(1);
        let rows_out = bands.iter().map(|b| u64::from(b.output.end - b.output.start)).max().unwrap_or(1);
        // The blur's sums and output rows are whole words long; the dither's scratch is its
        // error ring, its weights a placeholder.
        let (stride, scratch_bytes, weights) = match job.op {
            Op::Blur { radius } => {
                let stride = u64::from(blur_stride(job.size.0));
                (stride, 4 * stride * rows_in, blur_weights(radius))
            }
            Op::None | Op::Dither => (width, 16 * width, vec![0; 4]),
        };
        let src_bytes = if matches!(job.plane, Plane::Host(_)) { words(width * rows_in) } else { 4 };
        let src = ctx.buffer("op input band", src_bytes, U::STORAGE | U::COPY_DST);
        let scratch = ctx.buffer("op scratch", words(scratch_bytes), U::STORAGE | U::COPY_DST);
        let dst =
            ctx.buffer("op output band", words(stride * rows_out), U::STORAGE | U::COPY_SRC | U::COPY_DST);
        let readback = ctx.buffer("op readback", words(stride * rows_out), U::MAP_READ | U::COPY_DST);
        let slots = if job.op == Op::Dither { STEP_SLOTS } else { 1 };
        let params = ctx.buffer("op params", u64::from(slots) * PARAMS_STRIDE, U::UNIFORM | U::COPY_DST);
        let weights = ctx.buffer_with("blur weights", bytemuck::cast_slice(&weights), U::STORAGE);
        let bind_group = ctx.bind_group(
            "gray-plane op",
            &kernels.layout,
            [
                sized(&params, std::mem::size_of::<OpParams>() as u64),
                if let Plane::Device(plane) = job.plane { plane } else { &src }.as_entire_binding(),
                scratch.as_entire_binding(),
                dst.as_entire_binding(),
                weights.as_entire_binding(),
            ],
        );
        Self { src, scratch, dst, readback, params, bind_group }
    }
}

/// Hands `bytes` to the queue from the start of `buffer`, the last partial word padded.
fn write_padded(queue: &wgpu::Queue, buffer: &wgpu::Buffer, bytes: &[u8]) {
    let whole = bytes.len() / 4 * 4;
    if let Some(head) = bytes.get(..whole).filter(|h| !h.is_empty()) {
        queue.write_buffer(buffer, 0, head);
    }
    let tail = bytes.get(whole..).unwrap_or_default();
    if !tail.is_empty() {
        let mut word = [0_u8; 4];
        word[..tail.len()].copy_from_slice(tail);
        queue.write_buffer(buffer, whole as u64, &word);
    }
}

/// Maps the readback buffer and copies the band's output rows (`stride` pixels apart there,
/// `width` used) into `out`.
fn read_back(
    ctx: &GpuContext,
    readback: &wgpu::Buffer,
    band: &OpBand,
    (width, stride): (u32, u32),
    out: &mut [u8],
) -> Result<(), GpuError> {
    let (w, stride) = (width as usize, stride as usize);
    let rows = (band.output.end - band.output.start) as usize;
    let target = out
        .get_mut(band.output.start as usize * w..band.output.end as usize * w)
        .ok_or(GpuError::Bug("a band outside the plane"))?;
    read_buffer(ctx.device(), readback, 0..words((rows * stride) as u64), |view| {
        let view = view.get(..rows * stride).ok_or(GpuError::Bug("a short readback"))?;
        if stride == w {
            target.copy_from_slice(view);
        } else {
            for (row, padded) in target.chunks_exact_mut(w).zip(view.chunks_exact(stride)) {
                row.copy_from_slice(&padded[..w]);
            }
        }
        Ok(())
    })
}

/// One band's commands.
struct BandRun<'a> {
    ctx: &'a GpuContext,
    kernels: &'a OpKernels,
    buffers: &'a StageBuffers,
    timestamps: Option<&'a Timestamps>,
    /// The first band: the dither's error ring starts cleared.
    first: bool,
}

impl BandRun<'_> {
    fn pass<'e>(&self, enc: &'e mut wgpu::CommandEncoder) -> wgpu::ComputePass<'e> {
        enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("gray-plane op"),
            timestamp_writes: self
                .timestamps
                .map(|t| t.pass_writes(Some(Stamp::KernelStart(0)), Some(Stamp::KernelEnd(0)))),
        })
    }

    /// Clears the output band (and, on the first band, the error ring).
    fn clear(&self, enc: &mut wgpu::CommandEncoder) {
        enc.clear_buffer(&self.buffers.dst, 0, None);
        if self.first {
            enc.clear_buffer(&self.buffers.scratch, 0, None);
        }
    }

    /// Submits `enc` (its pass resolved, the output band copied out when `last`), waits, and adds
    /// the pass's time to `t.kernel`.
    fn submit(&self, mut enc: wgpu::CommandEncoder, last: bool, t: &mut OpTimings) -> Result<(), GpuError> {
        if let Some(ts) = self.timestamps {
            ts.resolve(&mut enc, (Stamp::KernelStart(0), Stamp::KernelEnd(0)));
        }
        if last {
            enc.copy_buffer_to_buffer(
                &self.buffers.dst,
                0,
                &self.buffers.readback,
                0,
                self.buffers.dst.size(),
            );
        }
        let started = self.ctx.submit_and_wait(enc)?;
        let cpu_ns = nanos(started.elapsed());
        t.submissions += 1;
        t.submitted.push((started, Instant::now()));
        t.kernel.ns += match self.timestamps {
            Some(ts) => ts.span_ns(self.ctx, StampSpan::Kernels(1))?,
            None => cpu_ns,
        };
        Ok(())
    }

    fn blur(&self, params: OpParams, t: &mut OpTimings) -> Result<(), GpuError> {
        self.ctx.queue().write_buffer(&self.buffers.params, 0, bytemuck::bytes_of(&params));
        // Every output word is written whole: nothing to clear.
        let mut enc = self.ctx.encoder("gray-plane op");
        {
            let mut pass = self.pass(&mut enc);
            pass.set_bind_group(0, &self.buffers.bind_group, &[0]);
            let max_groups = self.ctx.limits().max_compute_workgroups_per_dimension;
            pass.set_pipeline(&self.kernels.blur_rows);
            let (x, z) = folded_xz(params.width.div_ceil(ROW_TILE), max_groups);
            pass.dispatch_workgroups(x, params.rows_in, z);
            pass.set_pipeline(&self.kernels.blur_cols);
            let (x, z) = folded_xz(blur_stride(params.width).div_ceil(COL_COLUMNS), max_groups);
            pass.dispatch_workgroups(x, params.rows_out.div_ceil(COL_ROWS), z);
        }
        self.submit(enc, true, t)
    }

    /// The dither's wavefront: dispatches over its steps, a parameter slot each, in
    /// submissions of up to [`STEP_SLOTS`] dispatches (the cancel flag checked between them).
    /// By steps, a dispatch a step over its rows; persistent, one workgroup a dispatch over a
    /// chunk of steps ([`persistent_chunks`]).
    fn dither(
        &self,
        params: OpParams,
        wavefront: DitherWavefront,
        cancel: Option<&AtomicBool>,
        t: &mut OpTimings,
    ) -> Result<(), GpuError> {
        let dispatches: Vec<(u32, u32, u32)> = match wavefront {
            DitherWavefront::Steps => (0..=last_step(&params))
                .map(|step| (step, step, active_rows(&params, step).div_ceil(STEP_GROUP)))
                .collect(),
            DitherWavefront::Persistent => {
                persistent_chunks(&params).into_iter().map(|(first, last)| (first, last, 1)).collect()
            }
        };
        let pipeline = match wavefront {
            DitherWavefront::Steps => &self.kernels.dither_step,
            DitherWavefront::Persistent => &self.kernels.dither_persistent,
        };
        let submissions = dispatches.chunks(STEP_SLOTS as usize);
        let count = submissions.len();
        for (i, batch) in submissions.enumerate() {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(GpuError::Cancelled);
            }
            let slots: Vec<_> =
                batch.iter().map(|&(step, step_last, _)| OpParams { step, step_last, ..params }).collect();
            self.ctx.queue().write_buffer(&self.buffers.params, 0, &param_slots(&slots));
            let mut enc = self.ctx.encoder("gray-plane op");
            if i == 0 {
                self.clear(&mut enc);
            }
            {
                let mut pass = self.pass(&mut enc);
                pass.set_pipeline(pipeline);
                for (slot, &(_, _, groups)) in batch.iter().enumerate() {
                    if groups == 0 {
                        continue;
                    }
                    let offset = u32::try_from(slot as u64 * PARAMS_STRIDE).unwrap_or(0);
                    pass.set_bind_group(0, &self.buffers.bind_group, &[offset]);
                    pass.dispatch_workgroups(groups, 1, 1);
                }
            }
            self.submit(enc, i + 1 == count, t)?;
        }
        Ok(())
    }
}

/// Loop rounds one persistent dispatch may run in each invocation. llvmpipe stops any shader
/// loop after 65,535 rounds an invocation without a word (its loop limiter: a 5312x2988 band,
/// 90,398 rounds in one dispatch, came out wrong from step 7,366, where the count reached
/// 65,534), and a dispatch that runs long risks a desktop GPU's watchdog: a quarter of that.
const PERSISTENT_LOOP_ROUNDS: u32 = 16_384;

/// The persistent wavefront's dispatches: the band's steps in chunks (first, last step), each
/// within [`PERSISTENT_LOOP_ROUNDS`] (a step costs its outer round and the inner loop's rounds
/// and exit, as `dither_persistent` in `shaders/dither.wgsl` runs it).
fn persistent_chunks(p: &OpParams) -> Vec<(u32, u32)> {
    let mut chunks = Vec::new();
    let (mut first, mut rounds) = (0, 0);
    for step in 0..=last_step(p) {
        let cost = 2 + active_rows(p, step).div_ceil(PERSISTENT_WORKGROUP);
        if rounds + cost > PERSISTENT_LOOP_ROUNDS && step > first {
            chunks.push((first, step - 1));
            (first, rounds) = (step, 0);
        }
        rounds += cost;
    }
    chunks.push((first, last_step(p)));
    chunks
}

/// The band's last wavefront step: its last pixel's, `(width - 1) + 2 (rows - 1)`.
fn last_step(p: &OpParams) -> u32 {
    (p.width - 1) + 2 * (p.rows_out - 1)
}

/// Rows of the band with a pixel at `step` (as `first_row` in `shaders/dither.wgsl`).
fn active_rows(p: &OpParams, step: u32) -> u32 {
    let first = if step + 2 > p.width { (step + 2 - p.width) / 2 } else { 0 };
    let last = (p.rows_out - 1).min(step / 2);
    if first > last { 0 } else { last - first + 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pixel_has_one_step_and_each_step_its_rows() {
        for (width, rows) in [(1, 5), (5, 1), (7, 4), (3, 9)] {
            let p = OpParams { width, rows_out: rows, ..OpParams::default() };
            let total: u32 = (0..=last_step(&p)).map(|s| active_rows(&p, s)).sum();
            assert_eq!(total, width * rows, "{width}x{rows}: every pixel once");
        }
    }

    #[test]
    fn persistent_chunks_cover_every_step_once_within_the_loop_rounds() {
        // The 5312x2988 band that llvmpipe cut off: 90,398 rounds in one dispatch before.
        let p = OpParams { width: 5312, rows_out: 2988, ..OpParams::default() };
        let chunks = persistent_chunks(&p);
        assert_eq!(chunks.first().map(|c| c.0), Some(0));
        assert_eq!(chunks.last().map(|c| c.1), Some(last_step(&p)));
        for pair in chunks.windows(2) {
            assert_eq!(pair[1].0, pair[0].1 + 1, "{pair:?}: contiguous");
        }
        let rounds = |(a, b): (u32, u32)| -> u32 {
            (a..=b).map(|s| 2 + active_rows(&p, s).div_ceil(PERSISTENT_WORKGROUP)).sum()
        };
        assert!(chunks.iter().all(|&c| rounds(c) <= PERSISTENT_LOOP_ROUNDS));
        assert_eq!(chunks.iter().map(|&c| rounds(c)).sum::<u32>(), 90_398);
        assert_eq!(chunks.len(), 6, "{chunks:?}");
        // A small band is one dispatch.
        let small = OpParams { width: 300, rows_out: 200, ..OpParams::default() };
        assert_eq!(persistent_chunks(&small), vec![(0, last_step(&small))]);
    }
}
