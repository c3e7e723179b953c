//! What one GPU conversion is asked to do ([`GpuJob`]) and what it measured ([`GpuTimings`]).

use std::sync::atomic::AtomicBool;

use crate::gpu::{GpuError, WorkgroupSize};
use crate::pixel::{Formula, Kernel, Work};
use crate::system::clock::Clock;
use crate::system::progress::PixelProgress;

/// What to convert on the GPU.
#[derive(Clone, Copy)]
pub struct GpuJob<'a> {
    /// The conversion.
    pub kernel: Kernel,
    /// The formula.
    pub formula: Formula,
    /// The workgroup shape.
    pub workgroup: WorkgroupSize,
    /// Packed input pixels, `width * height * kernel.in_bytes_per_pixel()` bytes.
    pub src: &'a [u8],
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Checked between submissions: once set, the run waits for what it submitted and returns
    /// [`crate::gpu::GpuError::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
    /// Keep the input on the GPU under this key, the caller's identity of the pixels in `src`
    /// (the same key promises the same pixels): a later job with the same key, kernel and size
    /// binds it and uploads nothing. `None` (the full round trip) frees a kept input.
    pub keep_input: Option<u64>,
    /// The synthetic work applied to every gray value after the formula (a run-time uniform:
    /// it never compiles another pipeline).
    pub work: Work,
    /// Counts the pixels of each slice once the host has seen its kernel finished on the GPU
    /// (not merely submitted), a heavy kernel's slices one by one. The caller starts the count.
    pub progress: Option<&'a PixelProgress>,
}

impl<'a> GpuJob<'a> {
    /// A job with no cancel flag.
    #[must_use]
    pub fn new(
        kernel: Kernel,
        formula: Formula,
        workgroup: WorkgroupSize,
        src: &'a [u8],
        (width, height): (u32, u32),
    ) -> Self {
        Self {
            kernel,
            formula,
            workgroup,
            src,
            width,
            height,
            cancel: None,
            keep_input: None,
            work: Work::NONE,
            progress: None,
        }
    }

    /// The same job, cancelled when `flag` is set.
    #[must_use]
    pub fn with_cancel(self, flag: &'a AtomicBool) -> Self {
        Self { cancel: Some(flag), ..self }
    }

    /// The same job, with `work` applied to every gray value (see [`Self::work`]).
    #[must_use]
    pub fn with_work(self, work: Work) -> Self {
        Self { work, ..self }
    }

    /// The same job, counting its pixels in `progress` as they finish (see [`Self::progress`]).
    #[must_use]
    pub fn with_progress(self, progress: &'a PixelProgress) -> Self {
        Self { progress: Some(progress), ..self }
    }

    /// The same job, keeping its input on the GPU under `key` (see [`Self::keep_input`]).
    #[must_use]
    pub fn keeping_input(self, key: u64) -> Self {
        Self { keep_input: Some(key), ..self }
    }

    /// Refuses a `src` (or a `dst`, where given) that does not hold this job's image.
    pub(crate) fn check_lengths(&self, dst: Option<&[u8]>) -> Result<(), GpuError> {
        let pixels = u64::from(self.width) * u64::from(self.height);
        let holds = |bytes: usize, per_pixel: usize| bytes as u64 == pixels * per_pixel as u64;
        if holds(self.src.len(), self.kernel.in_bytes_per_pixel())
            && dst.is_none_or(|d| holds(d.len(), self.kernel.out_bytes_per_pixel()))
        {
            return Ok(());
        }
        Err(self.length_mismatch())
    }

    /// The error for buffers that do not hold this job's image.
    pub(crate) fn length_mismatch(&self) -> GpuError {
        GpuError::LengthMismatch { width: self.width, height: self.height, kernel: self.kernel.name() }
    }
}

/// A step of a GPU run, as a timeline draws it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GpuStep {
    /// Pipeline lookup or compilation and buffer allocation (CPU clock).
    Setup,
    /// A host copy into or out of mapped staging memory, by one thread: its rayon index, or
    /// `None` for the calling thread outside the pool (CPU clock).
    HostCopy {
        /// The rayon thread index, `None` for a thread outside the pool.
        thread: Option<usize>,
        /// Into staging memory (part of the upload); else out of readback memory (the download).
        into_gpu: bool,
    },
    /// A copy from staging to the GPU's input buffer.
    Upload,
    /// A compute pass (one slice of a chunk).
    Kernel,
    /// A copy of a chunk's result into the display store.
    Display,
    /// Drawing the preview from the display store (CPU clock around bounded submissions).
    Preview,
    /// A copy from the GPU's output buffer to readback staging.
    Download,
}

/// When one step of a GPU run really ran, in ns since the run started, on the CPU clock: a
/// [`Clock::GpuTimestamp`] span is the step's timestamps mapped there (see
/// [`GpuTimings::gpu_clock_within_ns`]); a [`Clock::CpuClock`] span of a GPU step is the
/// submit-and-wait of that step alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSpan {
    /// Which step.
    pub step: GpuStep,
    /// Its start, ns since the run started.
    pub start_ns: u64,
    /// Its end, ns since the run started.
    pub end_ns: u64,
    /// What measured its length.
    pub clock: Clock,
    /// The row band its chunk belongs to (`None` for setup and the preview).
    pub band: Option<u32>,
}

/// One step's busy time and the clock that measured it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StepTime {
    /// Its busy time, summed over the run's chunks.
    pub ns: u64,
    /// What measured it.
    pub clock: Clock,
}

impl StepTime {
    /// A step timed on `clock`, nothing measured yet.
    #[must_use]
    pub fn on(clock: Clock) -> Self {
        Self { ns: 0, clock }
    }

    /// Two steps as one: their times summed, on the clock of the parts that took time.
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        let clock = match (self.ns, other.ns) {
            (_, 0) => self.clock,
            (0, _) => other.clock,
            _ => self.clock.and(other.clock),
        };
        Self { ns: self.ns + other.ns, clock }
    }
}

/// What one GPU run measured: when each step ran ([`Self::spans`], the one record of its times,
/// each step's busy time derived from them), and how the run was cut and timed. Pipelined steps
/// overlap, so they can add up to more than `wall_ns` ([`Self::overlap_ns`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[expect(clippy::struct_excessive_bools, reason = "independent facts about one run, serialised flat")]
pub struct GpuTimings {
    /// Time the host spent blocked waiting for the GPU (CPU clock).
    pub wait_ns: u64,
    /// Wall time of the whole conversion, setup included (CPU clock).
    pub wall_ns: u64,
    /// Whether steps of different chunks ran at the same time (host copies beside GPU work).
    pub pipelined: bool,
    /// Row bands the image was cut into (each fits one storage binding).
    pub bands: u32,
    /// Chunks of rows the bands were cut into: one upload copy and one download copy each, cut
    /// as the plain grayscale's would be at any work per pixel.
    pub chunks: u32,
    /// Rows per chunk.
    pub rows_per_chunk: u32,
    /// Slices the chunks were cut into: one kernel dispatch and one submission each, within the
    /// submission budget (as many as the chunks for the plain grayscale; more for a heavy kernel).
    pub slices: u32,
    /// Whether the result was copied back to the host.
    pub downloaded: bool,
    /// Whether the result was kept on the GPU for display (and its preview drawn).
    pub displayed: bool,
    /// Whether the input was already on the GPU, kept by an earlier run of the same image: nothing
    /// was uploaded (`upload_host` and `upload_copy` are 0).
    pub input_resident: bool,
    /// Whether the input stays on the GPU after this run, for the next run of the same image.
    pub input_kept: bool,
    /// Whether the device's timestamps were found to be read late (Mesa's llvmpipe once a render
    /// target is bound, e.g. by eframe's frames), so this run was timed step by step on the CPU
    /// clock although timestamps were asked for.
    pub timestamps_read_late: bool,
    /// Chunks whose GPU timestamps cannot be right (a span longer than the CPU clock saw from
    /// submit to completion, or a kernel that took no time); their GPU figures are left out, so
    /// the `gpu-timestamp` phases of such a run are too low.
    pub suspect_timestamps: u32,
    /// How closely the GPU steps' spans sit on the CPU clock: `Some(ns)` when a calibration from
    /// this run's own chunks mapped them there, good to within that many ns; `None` when each
    /// chunk was placed at its submission instead (no timestamps, or no single offset fits).
    pub gpu_clock_within_ns: Option<u64>,
    /// When each step really ran: a timeline, and every step's time (the report carries them
    /// in its own terms).
    #[serde(skip)]
    pub spans: Vec<GpuSpan>,
}

impl GpuTimings {
    /// The busy time of the steps `pick` takes, from their spans (host copies by several threads
    /// at once count once), on their clock.
    #[must_use]
    pub fn step(&self, pick: impl Fn(GpuStep) -> bool) -> StepTime {
        let pieces = self.spans.iter().filter(|s| pick(s.step));
        // Host copies share one key: threads copying one chunk at once are one step.
        let key = |step| match step {
            GpuStep::HostCopy { into_gpu, .. } => GpuStep::HostCopy { thread: None, into_gpu },
            other => other,
        };
        let pieces = pieces.map(|s| (key(s.step), s.start_ns, s.end_ns, s.clock)).collect();
        crate::system::clock::busy_time(pieces)
            .map_or_else(StepTime::default, |(ns, clock)| StepTime { ns, clock })
    }

    /// Pipeline lookup or compilation and buffer allocation (CPU clock); large on a cold run.
    #[must_use]
    pub fn setup_ns(&self) -> u64 {
        self.step(|s| s == GpuStep::Setup).ns
    }

    /// Host copies of the input into mapped staging memory (CPU clock).
    #[must_use]
    pub fn upload_host(&self) -> StepTime {
        self.step(|s| matches!(s, GpuStep::HostCopy { into_gpu: true, .. }))
    }

    /// Copies from staging to the GPU input buffer.
    #[must_use]
    pub fn upload_copy(&self) -> StepTime {
        self.step(|s| s == GpuStep::Upload)
    }

    /// The compute passes.
    #[must_use]
    pub fn kernel(&self) -> StepTime {
        self.step(|s| s == GpuStep::Kernel)
    }

    /// Drawing the preview from the display store (CPU clock; 0 when not shown).
    #[must_use]
    pub fn preview(&self) -> StepTime {
        self.step(|s| s == GpuStep::Preview)
    }

    /// Copies from the GPU output buffer to the readback staging.
    #[must_use]
    pub fn download_copy(&self) -> StepTime {
        self.step(|s| s == GpuStep::Download)
    }

    /// Host copies out of mapped readback memory (CPU clock).
    #[must_use]
    pub fn download_host(&self) -> StepTime {
        self.step(|s| matches!(s, GpuStep::HostCopy { into_gpu: false, .. }))
    }

    /// How much more the steps add up to than the wall time: time during which two of them ran
    /// at once (at least this much; idle gaps hide more).
    #[must_use]
    pub fn overlap_ns(&self) -> u64 {
        self.step(|_| true).ns.saturating_sub(self.wall_ns)
    }
}
