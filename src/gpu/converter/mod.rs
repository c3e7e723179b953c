//! [`GpuConverter`]: what the engine holds to convert images on one device. It owns the
//! components that borrow the [`GpuContext`] (pipelines, the buffer ring, the display pipeline,
//! the learnt submission budget, an input kept on the GPU) and picks the driver for each run;
//! `ops.rs` runs the ops on the gray plane with it.

mod ops;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use super::display::{DisplayPipeline, GpuTiles};
use super::pipelines::Pipelines;
use super::run::{pipelined, resident, round_trip, stepwise};
use super::{GpuContext, GpuError, GpuJob, GpuTimings};
use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::device::wait::{nanos, wait_for};
use crate::gpu::memory::buffers::Buffers;
use crate::gpu::memory::resident_input::InputLayout;
use crate::gpu::memory::ring::Ring;
use crate::gpu::ops::{DitherWavefront, OpKernels};
use crate::gpu::plan::host_memory::GpuHostMemory;
use crate::gpu::plan::run_plan::{Limits, RunPlan};
use crate::gpu::plan::submission_budget::{GpuRates, LearntRates};
use crate::gpu::run::conversion::Run;
use crate::gpu::run::kept_passes::{KernelOn, dispatches_of};
use crate::gpu::run::record::RunCommands;
use crate::gpu::run::resident::ResidentPass;
use crate::gpu::run::round_trip::{RoundTrip, WarmRoundTrip};
use crate::gpu::timing::transfer::{Rig, measurable};
use crate::gpu::timing::{compute::GpuCompute, probe::GpuCeilings, timestamps::TimestampCheck};
use crate::gpu::{GpuSpan, GpuStep, PathKind, TransferPath};
use crate::system::clock::Clock;

/// How the GPU phases are timed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimingMode {
    /// GPU timestamps where the device has them (pipelined, one submission per chunk), the CPU
    /// clock otherwise.
    #[default]
    Auto,
    /// Every step its own submit-and-wait on the CPU clock, even where timestamps exist (for
    /// comparison, and to test the fallback path).
    CpuClock,
}

/// The side of the square image the plain kernel's rate is measured on (16 Mpx).
pub const PLAIN_KERNEL_SIDE: u32 = 4096;

/// Converts images on one GPU device; shared between threads, one run at a time.
pub struct GpuConverter {
    ctx: Arc<GpuContext>,
    pipelines: Pipelines,
    display: OnceLock<Arc<DisplayPipeline>>,
    buffers: Mutex<Buffers>,
    budget: LearntRates,
    timestamp_check: TimestampCheck,
    timing_mode: TimingMode,
    band_limit_bytes: u64,
    chunk_limit_bytes: Option<u64>,
    ops: OnceLock<OpKernels>,
    dither_wavefront: Option<DitherWavefront>,
    picked_wavefront: OnceLock<DitherWavefront>,
    /// Whether an op may take the gray plane where the conversion left it on the GPU (else it
    /// goes through the host; `GRAYLAB_OP_PLANE=host`, a measurement knob).
    op_plane_on_gpu: bool,
}

impl GpuConverter {
    /// A converter on `ctx` (creates the shader module and lookup tables; pipelines and
    /// buffers come on first use).
    #[must_use]
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        let pipelines = Pipelines::new(&ctx);
        let band_limit_bytes = crate::gpu::plan::bands::band_limit_bytes(ctx.limits());
        Self {
            ctx,
            pipelines,
            display: OnceLock::new(),
            buffers: Mutex::default(),
            budget: LearntRates::new(),
            timestamp_check: TimestampCheck::default(),
            timing_mode: TimingMode::Auto,
            band_limit_bytes,
            chunk_limit_bytes: None,
            ops: OnceLock::new(),
            dither_wavefront: DitherWavefront::from_env(),
            op_plane_on_gpu: std::env::var("GRAYLAB_OP_PLANE").map_or(true, |v| v != "host"),
            picked_wavefront: OnceLock::new(),
        }
    }

    /// The device.
    #[must_use]
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// How phases are timed from now on.
    pub fn set_timing_mode(&mut self, mode: TimingMode) {
        self.timing_mode = mode;
    }

    /// The largest input band in bytes (one storage binding).
    #[must_use]
    pub fn band_limit_bytes(&self) -> u64 {
        self.band_limit_bytes
    }

    /// The host memory a run on this converter allocates (its band limit, its adapter's type).
    #[must_use]
    pub fn host_memory(&self) -> GpuHostMemory {
        GpuHostMemory::new(self.ctx.adapter_info().device_type, self.band_limit_bytes)
    }

    /// Lowers the band limit below the device's (for tests and demonstrations of banding).
    /// Values are rounded down to a multiple of 16 bytes; at least 16 bytes.
    pub fn set_band_limit_bytes(&mut self, bytes: u64) {
        let device_max = crate::gpu::plan::bands::band_limit_bytes(self.ctx.limits());
        self.band_limit_bytes = (bytes / 16 * 16).clamp(16, device_max.max(16));
    }

    /// Fixes the input bytes of one chunk (one submission when pipelined) instead of the learnt
    /// budget (`None`: the budget decides). For tests and demonstrations: a fixed size may take
    /// longer than the budget. At least one image row goes into each chunk.
    pub fn set_chunk_limit_bytes(&mut self, bytes: Option<u64>) {
        self.chunk_limit_bytes = bytes;
    }

    /// What this device's steps cost per byte, as learnt so far (they size the submissions).
    #[must_use]
    pub fn rates(&self) -> GpuRates {
        self.budget.rates()
    }

    /// Sizes the submissions from this device's measured `ceilings` until runs have measured
    /// better (see [`crate::gpu::GpuCeilings::rates_at_ceilings`]): the first submissions of a
    /// process are then as large as the machine allows, not one row on a fast GPU.
    pub fn start_budget_from(&self, ceilings: &GpuCeilings) {
        self.budget.start_from(&ceilings.rates_at_ceilings());
    }

    /// Converts `job`'s image into `dst` (`width * height * kernel.out_bytes_per_pixel()`).
    ///
    /// The output is byte-identical to [`crate::cpu::par_convert`] for every kernel, formula,
    /// workgroup shape, band split and submission size.
    pub fn convert(&self, job: &GpuJob<'_>, dst: &mut [u8]) -> Result<GpuTimings, GpuError> {
        self.run(job, Some(dst), None, Instant::now())
    }

    /// Prepares the display of a `width` x `height` result on this device, with a `preview`
    /// (width, height) level and its mipmaps (see [`GpuTiles`]).
    pub fn create_display(
        &self,
        (width, height): (u32, u32),
        preview: (u32, u32),
    ) -> Result<GpuTiles, GpuError> {
        let pipeline = Arc::clone(self.display.get_or_init(|| Arc::new(DisplayPipeline::new(&self.ctx))));
        GpuTiles::new(Arc::clone(&self.ctx), pipeline, (width, height), preview, self.band_limit_bytes)
    }

    /// Converts and keeps the result on the GPU in `tiles`' store, chunk by chunk, then draws the
    /// preview from it (timed as a `GpuStep::Preview` span); downloads it into `dst` too when given (the full round
    /// trip), else leaves it there (no download phase).
    pub fn convert_for_display(
        &self,
        job: &GpuJob<'_>,
        tiles: &GpuTiles,
        dst: Option<&mut [u8]>,
    ) -> Result<GpuTimings, GpuError> {
        let started = Instant::now();
        if (tiles.width, tiles.height) != (job.width, job.height) {
            return Err(GpuError::Bug("the display tiles were made for another image size"));
        }
        let mut t = self.run(job, dst, Some(tiles), started)?;
        let drawing = Instant::now();
        tiles.draw_preview(job.cancel)?;
        let drawn = Instant::now();
        let since = |at: Instant| nanos(at.saturating_duration_since(started));
        t.spans.push(GpuSpan {
            step: GpuStep::Preview,
            start_ns: since(drawing),
            end_ns: since(drawn),
            clock: Clock::CpuClock,
            band: None,
        });
        t.wall_ns = nanos(started.elapsed());
        Ok(t)
    }

    /// Frees every buffer this converter holds (a kept input too) and waits until the device
    /// has let go of them, so the next run allocates as a fresh process would.
    pub fn release_buffers(&self) -> Result<(), GpuError> {
        self.buffers.lock().unwrap_or_else(PoisonError::into_inner).release();
        wait_for(self.ctx.device(), None)
    }

    /// Frees an input kept on the GPU, if any (the next run of that image uploads it again).
    pub fn release_kept_input(&self) -> Result<(), GpuError> {
        let kept = self.buffers.lock().unwrap_or_else(PoisonError::into_inner).input.take().is_some();
        if kept { wait_for(self.ctx.device(), None) } else { Ok(()) }
    }

    /// Measures this machine's ceilings for every step of the GPU path ([`GpuCeilings`]), then
    /// the compute ceiling: about a second, with GPU timestamps where the device reads them in
    /// place (the compute kernel's also on a software adapter, checked per run). A software
    /// adapter's copies are timed on the CPU clock: they are host copies, and its timestamps can
    /// turn late between two of them (llvmpipe, once the app's renderer has drawn a frame on the
    /// same device), which would make a copy look hundreds of times faster than memory.
    /// Set, `cancel` stops it between its steps ([`GpuError::Cancelled`]).
    pub fn measure_ceilings(&self, cancel: Option<&AtomicBool>) -> Result<GpuCeilings, GpuError> {
        Ok(self.ceilings_with_paths(0, &[], cancel)?.0)
    }

    /// [`Self::measure_ceilings`] and every transfer path this device has (up to
    /// `largest_bytes`, at least the probe's size) from one reading: the probe's paths are
    /// timed once for both.
    pub fn measure_ceilings_and_paths(
        &self,
        largest_bytes: u64,
    ) -> Result<(GpuCeilings, Vec<TransferPath>), GpuError> {
        self.ceilings_with_paths(largest_bytes, &measurable(&self.ctx), None)
    }

    /// The ceilings and the paths of `kinds` (see [`Self::measure_ceilings_and_paths`]), with the
    /// ops' rates measured now (none where they fail: the probe stands).
    fn ceilings_with_paths(
        &self,
        largest_bytes: u64,
        kinds: &[PathKind],
        cancel: Option<&AtomicBool>,
    ) -> Result<(GpuCeilings, Vec<TransferPath>), GpuError> {
        use crate::gpu::timing::probe::{measure_with_paths, stop_if};
        let (ceilings, paths) =
            measure_with_paths(&self.ctx, &self.timestamp_check, (largest_bytes, kinds), cancel)?;
        stop_if(cancel)?;
        let op_rates = self.measure_op_rates().inspect_err(|e| {
            log::warn!("the ops' rates could not be measured: {e}");
        });
        stop_if(cancel)?;
        let plain_kernel = self.measure_plain_kernel().inspect_err(|e| {
            log::warn!("the plain kernel's rate could not be measured: {e}");
        });
        Ok((GpuCeilings { op_rates: op_rates.ok(), plain_kernel: plain_kernel.ok(), ..ceilings }, paths))
    }

    /// The plain grayscale kernel's rate here ([`GpuCeilings::plain_kernel`]): an RGB8 image of
    /// 4096 x 4096 (48 MiB in, 16 out: large enough to fill a GPU, within
    /// every binding) timed resident, three passes after the cold ones, on the GPU's timestamps
    /// where every pass has them, else the CPU clock (about 0.5 s on lavapipe).
    pub fn measure_plain_kernel(&self) -> Result<crate::gpu::Bandwidth, GpuError> {
        use crate::pixel::{Formula, Kernel};
        let side = PLAIN_KERNEL_SIDE;
        let pixels = u64::from(side) * u64::from(side);
        let src: Vec<u8> = (0..pixels * 3).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        let job = GpuJob::new(
            Kernel::Rgb8ToL8,
            Formula::default(),
            super::WorkgroupSize::DEFAULT,
            &src,
            (side, side),
        );
        let passes = self.time_resident_passes(&job, 3, true)?;
        let stamped: Option<Vec<u64>> = passes.iter().map(|p| p.kernel_ns).collect();
        let (runs_ns, clock) = match stamped {
            Some(ns) => (ns, Clock::GpuTimestamp),
            None => (passes.iter().map(|p| p.wall_ns).collect(), Clock::CpuClock),
        };
        let bytes =
            pixels * (Kernel::Rgb8ToL8.in_bytes_per_pixel() + Kernel::Rgb8ToL8.out_bytes_per_pixel()) as u64;
        Ok(crate::gpu::Bandwidth::of(bytes, runs_ns, clock))
    }

    /// Times every transfer path this device has over sizes from 4 KiB to `largest_bytes`, on
    /// the CPU clock, inside error scopes, and fits each with latency plus bandwidth (see
    /// [`TransferPath`]); [`GpuError::Cancelled`] at the next size once `cancel` is set.
    pub fn measure_paths(
        &self,
        largest_bytes: u64,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Vec<TransferPath>, GpuError> {
        let (ctx, kinds) = (&*self.ctx, measurable(&self.ctx));
        ErrorScopes::around(ctx.device(), |_| {
            Rig::new(ctx, largest_bytes, &kinds, false)?.measure(&kinds, cancel)
        })
    }

    /// Measures only the GPU's compute ceiling ([`GpuCompute`]), in a fraction of a second.
    pub fn measure_compute(&self) -> Result<GpuCompute, GpuError> {
        crate::gpu::timing::compute::measure_checked(&self.ctx, &self.timestamp_check)
    }

    /// Times the kernel on data already on the GPU: the input is uploaded once, the output left
    /// there, and each of `runs` passes (after one cold pass) is submitted in chunks within the
    /// submission budget and waited for, on the CPU clock, so a dispatch's fixed cost counts.
    /// Every buffer is freed again before returning. Each pass timed both ways: the submits
    /// alone, and until the GPU has finished; where `stamped`, also by GPU timestamps where they
    /// are read in place (they cost a pass a little: on lavapipe 0.25 MP took 0.37 ms, not 0.31).
    pub fn time_resident_passes(
        &self,
        job: &GpuJob<'_>,
        runs: usize,
        stamped: bool,
    ) -> Result<Vec<ResidentPass>, GpuError> {
        let stamps = stamped && self.pass_stamps()?;
        self.on_kernel(job, |on, limits, scopes| {
            resident::time_resident(on, job, (limits, stamps), runs, scopes)
        })
    }

    /// One upload, `passes` kernel passes over the kept input, one download, through the
    /// converter's own ring and kept input: the round trips are prepared and one cold round trip
    /// taken apart, then `drive` times warm ones on demand ([`WarmRoundTrip::once`]), each result
    /// left in `dst`; what only the round trips need is freed once it returns.
    pub fn with_warm_round_trip<T>(
        &self,
        job: &GpuJob<'_>,
        passes: u32,
        dst: &mut [u8],
        drive: impl FnOnce(&mut WarmRoundTrip<'_>) -> T,
    ) -> Result<T, GpuError> {
        let stamps = self.pass_stamps()?;
        self.on_buffers(|buffers| {
            self.on_kernel(job, |on, limits, scopes| {
                let how = RoundTrip { limits, passes, stamps };
                round_trip::warm(on, job, how, (buffers, dst), scopes, drive)
            })
        })
    }

    /// Whether compute passes are timed by GPU timestamps: the mode asks for them, the device
    /// has them in passes and reads them in place.
    fn pass_stamps(&self) -> Result<bool, GpuError> {
        let wanted = self.timing_mode == TimingMode::Auto && self.ctx.timestamps().passes;
        Ok(wanted && self.timestamp_check.in_place(&self.ctx)?)
    }

    /// Runs `f` on the job's compiled kernel inside error scopes: its error first, else theirs.
    fn on_kernel<T>(
        &self,
        job: &GpuJob<'_>,
        f: impl FnOnce(&KernelOn<'_>, Limits, &mut ErrorScopes<'_>) -> Result<T, GpuError>,
    ) -> Result<T, GpuError> {
        let bytes = self.budget.chunk_in_bytes(job.kernel, job.work, false, false);
        // The round trips stage through the pipelined ring.
        let limits = self.limits((bytes, bytes), false, pipelined::RING_SLOTS);
        ErrorScopes::around(self.ctx.device(), |scopes| {
            let p = self.pipelines.get(
                &self.ctx,
                job.kernel,
                job.formula,
                job.workgroup,
                !job.work.is_identity(),
            )?;
            let kernel_ns_per_byte = self.budget.rates_for(job.work).kernel_ns_per_byte;
            let on =
                KernelOn { ctx: &self.ctx, pipelines: &self.pipelines, pipeline: &p, kernel_ns_per_byte };
            f(&on, limits, scopes)
        })
    }

    /// Chunks and slices of these input bytes, or both of the fixed chunk size where one was set,
    /// staged through `staging_slots`.
    fn limits(&self, (chunk_bytes, slice_bytes): (u64, u64), pipeline: bool, staging_slots: usize) -> Limits {
        Limits {
            band_bytes: self.band_limit_bytes,
            chunk_bytes: self.chunk_limit_bytes.unwrap_or(chunk_bytes),
            slice_bytes: self.chunk_limit_bytes.unwrap_or(slice_bytes),
            pipeline,
            max_groups: self.ctx.limits().max_compute_workgroups_per_dimension,
            staging_slots: u32::try_from(staging_slots).unwrap_or(u32::MAX),
        }
    }

    /// Runs `job`, its spans in ns since `origin` (at or before now).
    fn run(
        &self,
        job: &GpuJob<'_>,
        dst: Option<&mut [u8]>,
        tiles: Option<&GpuTiles>,
        origin: Instant,
    ) -> Result<GpuTimings, GpuError> {
        let started = Instant::now();
        job.check_lengths(dst.as_deref())?;
        self.with_buffers(|buffers, scopes| {
            self.run_scoped(job, dst, tiles, buffers, scopes, (origin, started))
        })
    }

    /// Runs `f` on the converter's buffers within error scopes: its error first, else the
    /// scopes'.
    fn with_buffers<T>(
        &self,
        f: impl FnOnce(&mut Buffers, &mut ErrorScopes<'_>) -> Result<T, GpuError>,
    ) -> Result<T, GpuError> {
        self.on_buffers(|buffers| ErrorScopes::around(self.ctx.device(), |scopes| f(buffers, scopes)))
    }

    /// Runs `f` on the converter's buffers; after an error, whatever state they are in, they are
    /// freed, to start from scratch next time.
    fn on_buffers<T>(&self, f: impl FnOnce(&mut Buffers) -> Result<T, GpuError>) -> Result<T, GpuError> {
        let mut buffers = self.buffers.lock().unwrap_or_else(PoisonError::into_inner);
        let result = f(&mut buffers);
        if result.is_err() {
            buffers.release();
            let _ = wait_for(self.ctx.device(), None);
        }
        result
    }

    fn run_scoped(
        &self,
        job: &GpuJob<'_>,
        dst: Option<&mut [u8]>,
        display: Option<&GpuTiles>,
        buffers: &mut Buffers,
        scopes: &mut ErrorScopes<'_>,
        (origin, started): (Instant, Instant),
    ) -> Result<GpuTimings, GpuError> {
        let (ctx, kernel, worked) = (&*self.ctx, job.kernel, !job.work.is_identity());
        let pipeline = self.pipelines.get(ctx, kernel, job.formula, job.workgroup, worked)?;
        let ts = ctx.timestamps();
        let auto = self.timing_mode == TimingMode::Auto;
        let gpu_clock = auto && self.timestamp_check.in_place(ctx)?;
        let pipelined = gpu_clock && ts.encoders;
        let download = dst.is_some();
        let bytes = self.budget.chunk_and_slice_bytes(kernel, job.work, display.is_some(), download);
        // Cut for overlap only where host copies can overlap GPU work: not on a software
        // adapter, whose "GPU" is the host's own cores (its driver finishes each chunk first).
        let overlap = pipelined && !ctx.is_software();
        let slots = if pipelined { pipelined::RING_SLOTS } else { 1 };
        let limits = self.limits(bytes, overlap, slots);
        let plan = RunPlan::new(kernel, (job.width, job.height), job.workgroup, limits)?;
        let mut t = GpuTimings {
            pipelined,
            bands: plan.bands.bands,
            chunks: plan.chunks.len() as u32,
            rows_per_chunk: plan.rows_per_chunk,
            slices: plan.slices.len() as u32,
            downloaded: download,
            displayed: display.is_some(),
            timestamps_read_late: auto && !gpu_clock,
            ..GpuTimings::default()
        };
        if plan.chunks.is_empty() {
            t.wall_ns = nanos(started.elapsed());
            return Ok(t);
        }
        let layout = job.keep_input.map(|key| InputLayout::new(key, kernel, plan.size, &plan.bands));
        let needs = plan.ring_needs(kernel, slots, gpu_clock && ts.passes);
        buffers.prepare(ctx, needs, layout, &plan.bands)?;
        scopes.check()?;
        let Buffers { ring: Some(ring), input } = buffers else {
            return Err(GpuError::Bug("no buffer ring"));
        };
        t.input_kept = input.is_some();
        t.input_resident = input.as_ref().zip(layout).is_some_and(|(i, l)| i.holds(&l));
        let max_groups = ctx.limits().max_compute_workgroups_per_dimension;
        let (dispatches, params) = dispatches_of(ctx, job, plan.slices.iter().map(|s| &s.rows), max_groups)?;
        let (band_in_bytes, band_out_bytes) = (ring.band_in_bytes(), ring.band_out_bytes());
        let Ring { band, slots, .. } = ring;
        let (inputs, bind_groups) = super::run::conversion::bindings(
            (ctx, &self.pipelines),
            kernel,
            input.as_ref(),
            (&band.input, band_in_bytes),
            (&band.output, band_out_bytes),
            &params,
        );
        let set_up = Instant::now();
        let mut run = Run {
            cmds: RunCommands {
                ctx,
                kernel,
                pipeline: &pipeline,
                bind_groups: &bind_groups,
                inputs: &inputs,
                upload: !t.input_resident,
                band,
                rows_per_band: plan.bands.rows_per_band,
                dispatches: &dispatches,
                display,
                download,
            },
            plan: &plan,
            job,
            dst,
            budget: &self.budget,
            t,
            origin,
            gpu_free_ns: 0,
        };
        run.span((GpuStep::Setup, None), (started, set_up), Clock::CpuClock);
        if pipelined {
            pipelined::drive(&mut run, slots, scopes)?;
        } else {
            let Some(slot) = slots.first_mut() else {
                return Err(GpuError::Bug("no staging slot"));
            };
            stepwise::drive(&mut run, slot, scopes)?;
        }
        if let Some(input) = input.as_mut() {
            input.uploaded = true;
        }
        let mut t = run.t;
        t.wall_ns = nanos(started.elapsed());
        Ok(t)
    }
}
