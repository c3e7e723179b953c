//! The GPU's compute ceiling for the synthetic work: `shaders/compute.wgsl` runs rounds of the
//! work's hash in registers only, one chain per invocation as the kernel runs one per gray
//! value, timed with GPU timestamps around the compute pass where the adapter reads them in
//! place, else on the CPU clock around a submit-and-wait.
//!
//! The dispatch is fixed per adapter kind (about a million invocations on a GPU, an H200's 132
//! SMs filled about four times over; 16 Ki on a software adapter, whose "GPU" is a few CPU
//! cores), and the rounds grow from a short first run until one run lasts about
//! [`TARGET_NS`], so a fast GPU and lavapipe both take a fraction of a second. The one invocation
//! that reaches a known hash writes its index, which is checked, so the figure is of rounds that
//! really ran.

use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{nanos, read_buffer, wait_for};
use crate::gpu::timing::timestamps::{Stamp, StampSpan, TimestampCheck, Timestamps, within_cpu_clock};
use crate::gpu::{GpuContext, GpuError};
use crate::pixel::{OPS_PER_ROUND, scalar_rounds};
use crate::system::clock::Clock;

/// What one timed run should last, nanoseconds.
pub const TARGET_NS: u64 = 20_000_000;

/// Timed runs after the sizing runs; the fastest counts.
pub const COMPUTE_REPEATS: usize = 4;

/// Invocations per workgroup (`WG` in the shader).
const WORKGROUP: u32 = 64;

/// The most rounds one run may ask for (a run stays well under a second even on a slow GPU,
/// and an invocation's loops under llvmpipe's loop limiter: `shaders/work.wgsl`).
const MAX_ROUNDS: u32 = 1 << 20;

/// Sizing runs at most, before the timed ones.
const SIZING_RUNS: usize = 8;

/// The GPU's compute ceiling, as measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GpuCompute {
    /// Rounds per invocation of the timed runs.
    pub rounds: u32,
    /// Invocations per run, one hash chain each.
    pub invocations: u64,
    /// Integer operations per run: invocations × rounds × 3.
    pub ops: u64,
    /// The fastest run, nanoseconds: the ceiling.
    pub best_ns: u64,
    /// The median run, nanoseconds.
    pub median_ns: u64,
    /// The clock that timed the runs.
    pub clock: Clock,
}

impl GpuCompute {
    /// The ceiling: integer operations per second at the fastest run.
    #[must_use]
    pub fn ops_per_s(&self) -> f64 {
        self.ops as f64 / self.best_ns.max(1) as f64 * 1e9
    }
}

/// The probe's pipeline and buffers.
struct Probe {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    params: wgpu::Buffer,
    found: wgpu::Buffer,
    readback: wgpu::Buffer,
    groups: u32,
}

impl Probe {
    fn new(ctx: &GpuContext) -> Self {
        use wgpu::BufferUsages as U;
        let pipeline =
            ctx.auto_layout_pipeline("compute ceiling", crate::shaders::COMPUTE_WGSL, "rounds_only");
        let buffer = |label, usage| ctx.buffer(label, 16, usage);
        let params = buffer("compute ceiling params", U::UNIFORM | U::COPY_DST);
        let found = buffer("compute ceiling found", U::STORAGE | U::COPY_SRC | U::COPY_DST);
        let readback = buffer("compute ceiling readback", U::MAP_READ | U::COPY_DST);
        let bindings = [found.as_entire_binding(), params.as_entire_binding()];
        let bind_group = ctx.bind_group("compute ceiling", &pipeline.get_bind_group_layout(0), bindings);
        let max = ctx.limits().max_compute_workgroups_per_dimension.max(1);
        let groups = if ctx.is_software() { 256 } else { 16_384 }.min(max);
        Self { pipeline, bind_group, params, found, readback, groups }
    }

    fn invocations(&self) -> u64 {
        u64::from(self.groups) * u64::from(WORKGROUP)
    }

    /// The invocation whose hash is looked for, and that hash after `rounds` rounds.
    fn target(&self, rounds: u32) -> (u32, u32) {
        let invocation = (self.invocations() / 2 + 1) as u32;
        (invocation, scalar_rounds(invocation, rounds))
    }

    /// One run of `rounds`: (GPU-timestamp span where `ts` is given, CPU-clock submit-and-wait).
    fn run(&self, ctx: &GpuContext, ts: Option<&Timestamps>, rounds: u32) -> Result<(u64, u64), GpuError> {
        let (_, target) = self.target(rounds);
        let mut params = [0u8; 16];
        params[..4].copy_from_slice(&rounds.to_le_bytes());
        params[4..8].copy_from_slice(&target.to_le_bytes());
        ctx.queue().write_buffer(&self.params, 0, &params);
        let mut enc = ctx.encoder("compute ceiling");
        enc.clear_buffer(&self.found, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rounds only"),
                timestamp_writes: ts
                    .map(|t| t.pass_writes(Some(Stamp::KernelStart(0)), Some(Stamp::KernelEnd(0)))),
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.dispatch_workgroups(self.groups, 1, 1);
        }
        if let Some(ts) = ts {
            ts.resolve(&mut enc, (Stamp::KernelStart(0), Stamp::KernelEnd(0)));
        }
        enc.copy_buffer_to_buffer(&self.found, 0, &self.readback, 0, 16);
        let cpu_ns = nanos(ctx.submit_and_wait(enc)?.elapsed()).max(1);
        let gpu_ns = match ts {
            Some(ts) => ts.span_ns(ctx, StampSpan::Kernels(1))?,
            None => 0,
        };
        Ok((gpu_ns, cpu_ns))
    }

    /// The invocation index + 1 the last run found (0: none).
    fn found(&self, ctx: &GpuContext) -> Result<u32, GpuError> {
        read_buffer(ctx.device(), &self.readback, 0..16, |view| {
            Ok(view.first_chunk().map_or(0, |w| u32::from_le_bytes(*w)))
        })
    }
}

/// The rounds after a sizing run of `rounds` that took `ns`: scaled towards [`TARGET_NS`],
/// at least doubled, at most ×64, never past [`MAX_ROUNDS`], in whole blocks of the hash
/// (`shaders/work.wgsl` runs 32 rounds a block; the rest by its bits).
fn grow(rounds: u32, ns: u64) -> u32 {
    let factor = (TARGET_NS as f64 / ns.max(1) as f64).clamp(2.0, 64.0);
    ((f64::from(rounds) * factor) as u32).clamp(1, MAX_ROUNDS).next_multiple_of(32).min(MAX_ROUNDS)
}

/// Measures the compute ceiling on `ctx` (see the module doc). `kernel_clock`: time the pass
/// with GPU timestamps (the device has them in passes and reads them in place).
pub(crate) fn measure(ctx: &GpuContext, kernel_clock: bool) -> Result<GpuCompute, GpuError> {
    let probe = Probe::new(ctx);
    let timestamps = kernel_clock.then(|| Timestamps::new(ctx, 1));
    let mut rounds = if ctx.is_software() { 32 } else { 256 };
    // The first dispatch may also compile the shader (llvmpipe does): a warm-up, not a size.
    probe.run(ctx, None, rounds)?;
    for _ in 0..SIZING_RUNS {
        // The faster of two: one slow run (a first dispatch's compile on llvmpipe, a busy
        // moment) would stop the growth at a size whose fixed costs hide the rounds.
        let cpu_ns = probe.run(ctx, None, rounds)?.1.min(probe.run(ctx, None, rounds)?.1);
        if cpu_ns >= TARGET_NS / 2 || rounds >= MAX_ROUNDS {
            break;
        }
        rounds = grow(rounds, cpu_ns);
    }
    let (mut gpu_runs, mut cpu_runs) = (Vec::new(), Vec::new());
    let mut gpu_clock = timestamps.is_some();
    for _ in 0..COMPUTE_REPEATS {
        let (gpu_ns, cpu_ns) = probe.run(ctx, timestamps.as_ref(), rounds)?;
        // A span longer than the CPU clock saw, of no time, or under half the wait for a run
        // this long (a clock read late) cannot be right.
        gpu_clock &= gpu_ns > 0 && within_cpu_clock(gpu_ns, cpu_ns) && gpu_ns * 2 >= cpu_ns;
        gpu_runs.push(gpu_ns);
        cpu_runs.push(cpu_ns);
    }
    let (invocation, _) = probe.target(rounds);
    let found = probe.found(ctx)?;
    if found != invocation + 1 {
        log::warn!(
            "the compute probe found {found}, not {}: its rounds did not run as written",
            invocation + 1
        );
        return Err(GpuError::Bug("the compute probe's hash was not found"));
    }
    let (mut runs, clock) =
        if gpu_clock { (gpu_runs, Clock::GpuTimestamp) } else { (cpu_runs, Clock::CpuClock) };
    runs.sort_unstable();
    drop(timestamps);
    wait_for(ctx.device(), None)?;
    Ok(GpuCompute {
        rounds,
        invocations: probe.invocations(),
        ops: probe.invocations() * u64::from(rounds) * u64::from(OPS_PER_ROUND),
        best_ns: runs.first().copied().unwrap_or(1).max(1),
        median_ns: crate::system::median::median_of_sorted(&runs).unwrap_or(1).max(1),
        clock,
    })
}

/// The compute ceiling alone, inside error scopes, on GPU timestamps where the device has them
/// in compute passes and reads them in place.
pub(crate) fn measure_checked(ctx: &GpuContext, check: &TimestampCheck) -> Result<GpuCompute, GpuError> {
    let kernel_clock = ctx.timestamps().passes && check.in_place(ctx)?;
    let scopes = ErrorScopes::push(ctx.device());
    let result = measure(ctx, kernel_clock);
    // A command the device rejected explains a failed wait after it: its error comes first.
    scopes.finish()?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_grows_towards_the_target_within_bounds() {
        assert_eq!(grow(100, TARGET_NS / 10), 1024, "in blocks of 32");
        assert_eq!(grow(96, TARGET_NS), 192, "at least doubled");
        assert_eq!(grow(100, 1), 6400, "at most x64");
        assert_eq!(grow(MAX_ROUNDS, 1), MAX_ROUNDS);
    }
}
