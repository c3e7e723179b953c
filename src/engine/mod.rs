//! The conversion engine shared by the GUI, the CLI, the benchmarks and the tests: it chooses the
//! backend, prepares pixels for it, measures every phase and labels each figure with its clock.
//!
//! `sweep` holds the size sweep, `round_trip` the operations per round trip, `ceilings` this
//! machine's ceilings. Depends on [`crate::cpu`], [`crate::gpu`], [`crate::io`], [`crate::pixel`] and
//! [`crate::system`]; never on the UI (no egui, eframe or rfd here).

mod batch;
mod bench;
pub mod causes;
pub mod ceilings;
pub mod claims;
pub mod compare;
mod convert;
mod decode_while_encode;
pub mod estimate;
mod files;
mod memory;
mod options;
mod parity;
mod report;
pub mod round_trip;
pub mod sampling;
mod spans;
pub mod sweep;
mod synthetic;
pub mod trace;
mod work;

use std::sync::{Arc, Mutex, OnceLock};

use crate::gpu::{GpuConverter, TimingMode};
use crate::io::IoError;
use crate::pixel::{Formula, Kernel, Op, Work};
use ceilings::KnownCeilings;
use convert::{Prepared, prepare};

pub use batch::{BatchItem, BatchOptions, convert_batch};
pub use bench::{BenchOptions, BenchResult, PhaseStats, SavedBench, bench, bench_with, nothing_to_time};
pub use convert::Converted;
pub use files::{FileReport, convert_file, convert_stored_luma, default_output_path};
pub use memory::{bench_bytes, gpu_decode_options, op_copies, sweep_bytes, synthetic_bytes};
pub use options::{ImageKey, PixelProgress, RunOptions};
pub use parity::{DIFF_GAIN, DiffStats, ParityReport, diff};
pub use report::{RunReport, Stats};
pub use spans::{Phase, PhaseTiming, Span, SpanClock, Track, track_overlap};
pub use synthetic::synthetic_rgb;
pub use work::{OpFigures, WorkFigures};

pub use crate::cpu::{CpuCompute, SimdLevel, available_threads, simd_level};
pub use crate::gpu::{
    ADAPTER_NAME_ENV, AdapterReport, Bandwidth, GpuCeilings, GpuCompute, GpuContext, GpuError, GpuHostMemory,
    GpuTiles, PROBE_HOLD_BYTES, ParseWorkgroupError, WorkgroupSize, choose_window_adapter, list_adapters,
    wanted_adapter_name,
};

/// Where a conversion runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The rayon CPU kernel.
    #[default]
    Cpu,
    /// The wgpu compute shader.
    Gpu,
}

impl Backend {
    /// Both backends, in menu order.
    pub const ALL: [Self; 2] = [Self::Cpu, Self::Gpu];

    /// A one-line description, for help text.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::Cpu => "the rayon CPU kernel",
            Self::Gpu => "the wgpu compute shader",
        }
    }

    /// Lower-case name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown backend {s:?} (expected cpu or gpu)"))
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that decides one conversion's output and how it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConvertSettings {
    /// CPU or GPU.
    pub backend: Backend,
    /// The gray formula.
    pub formula: Formula,
    /// GPU workgroup shape (ignored on the CPU).
    pub workgroup: WorkgroupSize,
    /// CPU threads, clamped to `1..=available_threads()` (ignored on the GPU).
    pub threads: usize,
    /// Carry alpha through to a gray + alpha output (else drop it).
    pub keep_alpha: bool,
    /// The synthetic work per pixel after the formula, on either backend (none by default;
    /// settings saved without it load as none).
    #[serde(default)]
    pub work: Work,
    /// The operation on the gray plane after the grayscale, on the same backend (none by
    /// default; settings saved without it load as none). It runs on 8-bit gray: alpha is
    /// dropped for it, and a 16-bit conversion with an op is refused.
    #[serde(default)]
    pub op: Op,
}

impl ConvertSettings {
    /// Whether the output keeps alpha: asked for, and no op (ops run on 8-bit gray).
    #[must_use]
    pub fn keeps_alpha(&self) -> bool {
        self.keep_alpha && self.op.is_none()
    }

    /// How it runs in parallel, in words, for a trace's run names: "2 threads", "workgroup 16x16".
    #[must_use]
    pub fn parallelism(&self) -> String {
        match self.backend {
            Backend::Cpu => crate::system::units::count(self.threads, "thread"),
            Backend::Gpu => format!("workgroup {}", self.workgroup),
        }
    }
}

impl Default for ConvertSettings {
    fn default() -> Self {
        Self {
            backend: Backend::Cpu,
            formula: Formula::Bt601,
            workgroup: WorkgroupSize::DEFAULT,
            threads: available_threads(),
            keep_alpha: true,
            work: Work::NONE,
            op: Op::None,
        }
    }
}

/// Errors of the engine: a backend's or a file's, or a GPU that is not there.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The CPU backend failed.
    #[error(transparent)]
    Cpu(#[from] crate::cpu::CpuError),
    /// The GPU backend failed.
    #[error(transparent)]
    Gpu(GpuError),
    /// Reading or writing a file failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The GPU was asked for but none could be opened.
    #[error("the GPU is not available")]
    GpuUnavailable(#[source] Arc<GpuError>),
    /// The work was cancelled (a newer request superseded it, or the app is closing).
    #[error("cancelled")]
    Cancelled,
    /// graylab broke one of its own invariants: a bug, reported instead of panicking.
    #[error("an internal fault in graylab ({0}); please report it")]
    Bug(&'static str),
    /// An op on the gray plane was asked of a conversion whose output is not 8-bit gray.
    #[error("{op} runs on 8-bit gray, and this conversion ({kernel}) outputs 16-bit samples")]
    OpNeedsGray8 {
        /// The op, as written.
        op: String,
        /// The conversion's kernel.
        kernel: &'static str,
    },
    /// The image's pixel type has no conversion.
    #[error("unsupported pixel type {0}")]
    UnsupportedPixels(String),
    /// A benchmark of an image no kernel runs on (why).
    #[error("nothing to time: {0}")]
    NothingToTime(&'static str),
    /// A figure could not be kept: there is no cache folder.
    #[error("no cache folder: neither XDG_CACHE_HOME nor HOME is set")]
    NoCacheFolder,
    /// A measurement's buffers do not fit the memory budget now.
    #[error(transparent)]
    OverBudget(#[from] crate::system::memory_budget::OverBudget),
}

/// The engine: a CPU backend that always works and a GPU converter opened on first use.
pub struct Engine {
    gpu: OnceLock<Result<Arc<GpuConverter>, Arc<GpuError>>>,
    /// The GPU's ceilings, once loaded or measured.
    ceilings: Mutex<Option<KnownCeilings>>,
    /// The last memory-stream baseline measured for [`Engine::phase_rates`].
    stream: Mutex<Option<ceilings::stream::StreamBaseline>>,
    /// The CPU's compute ceiling, once loaded or measured ([`Engine::cpu_compute`]).
    cpu_compute: Mutex<Option<CpuCompute>>,
    /// The copies' fitted latencies, once timed ([`Engine::copy_latency`]).
    copy_latency: OnceLock<Option<ceilings::paths::CopyLatency>>,
    /// Whether the ceilings (the GPU's, and the CPU's compute ceiling) are read from and written
    /// to the cache folder.
    ceiling_cache: bool,
    /// Whether the GPU's submissions were sized from its known ceilings before its first run.
    gpu_budget_started: std::sync::Once,
    /// The cached ceilings refused as measured on a busy machine while this one was quiet.
    busy_refused: ceilings::cache::BusyRefused,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    /// An engine that opens the best GPU adapter the first time the GPU is needed.
    #[must_use]
    pub fn new() -> Self {
        Self::with_cell(OnceLock::new())
    }

    fn with_cell(gpu: OnceLock<Result<Arc<GpuConverter>, Arc<GpuError>>>) -> Self {
        Self {
            gpu,
            ceilings: Mutex::new(None),
            stream: Mutex::new(None),
            cpu_compute: Mutex::new(None),
            copy_latency: OnceLock::new(),
            ceiling_cache: true,
            gpu_budget_started: std::sync::Once::new(),
            busy_refused: ceilings::cache::BusyRefused::default(),
        }
    }

    /// This engine measures the GPU's ceilings itself and keeps them to itself: it neither reads
    /// nor writes the cache folder (tests, whose measurements under load must not be kept).
    #[must_use]
    pub fn without_ceiling_cache(mut self) -> Self {
        self.ceiling_cache = false;
        self
    }

    /// An engine on an existing GPU context (a test's), timed as the adapter allows.
    #[must_use]
    pub fn with_gpu(gpu: Arc<GpuContext>) -> Self {
        Self::with_converter(Arc::new(GpuConverter::new(gpu)))
    }

    /// The engine on a window's GPU context, shared with its frames; `chunk_limit_bytes` fixes
    /// the input bytes of one submission (tests). On a software adapter every step is timed on
    /// the CPU clock: llvmpipe reads its timestamps late once a frame has been drawn on the
    /// device, and a window draws all the time, so its GPU figures would be far too low.
    #[must_use]
    pub fn for_window(window_gpu: Arc<GpuContext>, chunk_limit_bytes: Option<u64>) -> Self {
        let software = window_gpu.is_software();
        Self::on_context(window_gpu, chunk_limit_bytes, software)
    }

    /// An engine on a converter of `gpu` that cuts submissions at `chunk_limit_bytes` and, with
    /// `cpu_clock`, times every step with submit-and-wait on the CPU clock.
    fn on_context(gpu: Arc<GpuContext>, chunk_limit_bytes: Option<u64>, cpu_clock: bool) -> Self {
        let mut converter = GpuConverter::new(gpu);
        converter.set_chunk_limit_bytes(chunk_limit_bytes);
        if cpu_clock {
            converter.set_timing_mode(TimingMode::CpuClock);
        }
        Self::with_converter(Arc::new(converter))
    }

    /// The engine on a device of its own, opened now on the adapter `like` describes (a
    /// window's), so that no frame waits behind its work; without a GPU (and why) when that
    /// device cannot be opened. No frame is drawn on it, so its timestamps are trusted.
    /// Call it on the thread that will do the work: a software adapter's driver threads
    /// inherit its priority.
    #[must_use]
    pub fn own_device(like: &wgpu::AdapterInfo, chunk_limit_bytes: Option<u64>) -> Self {
        match GpuContext::new_like(like) {
            Ok(gpu) => Self::on_context(Arc::new(gpu), chunk_limit_bytes, false),
            Err(e) => {
                log::warn!("cannot open a second device on {}: {}", like.name, causes::one_line(&e));
                Self::without_gpu(e)
            }
        }
    }

    /// An engine on an existing GPU converter (a test's or a benchmark's tuned one).
    #[must_use]
    pub fn with_converter(converter: Arc<GpuConverter>) -> Self {
        Self::with_cell(OnceLock::from(Ok(converter)))
    }

    /// An engine whose GPU could not be opened, and why.
    #[must_use]
    pub fn without_gpu(why: GpuError) -> Self {
        Self::with_cell(OnceLock::from(Err(Arc::new(why))))
    }

    /// An engine that runs on the CPU only (a GPU is never opened: tests, references).
    #[must_use]
    pub fn cpu_only() -> Self {
        Self::without_gpu(GpuError::NotOpened)
    }

    /// An engine whose GPU (opened now) times every step with submit-and-wait on the CPU clock,
    /// even where the adapter has timestamps (`graylab bench --cpu-clock`).
    pub fn on_cpu_clock() -> Result<Self, EngineError> {
        Ok(Self::on_context(Arc::new(GpuContext::new()?), None, true))
    }

    /// Checks, before anything is measured, that the rows of `image` fit this GPU's buffers (a
    /// row wider than one storage binding cannot be banded). Gray images pass: they are not
    /// converted.
    pub fn check_fits_gpu(&self, image: &image::DynamicImage) -> Result<(), EngineError> {
        if let (Prepared::Colour { kernel, .. }, _) = prepare(image, true)? {
            let band_limit_bytes = self.gpu_converter()?.band_limit_bytes();
            crate::gpu::BandPlan::new(kernel, image.width(), image.height(), band_limit_bytes)?;
        }
        Ok(())
    }

    /// Where and how a result of this engine is made, to stamp the file it is saved in: this
    /// process, its CPU threads and the adapter of the GPU opened so far, if one was (a run that
    /// never needed the GPU names none, and does not open it to name it).
    #[must_use]
    pub fn provenance(&self) -> crate::io::Provenance {
        let adapter = match self.gpu.get() {
            Some(Ok(converter)) => Some(converter.context().report()),
            _ => None,
        };
        crate::io::Provenance::now(adapter.as_ref(), available_threads())
    }

    /// The GPU context, opening it on first use.
    pub fn gpu(&self) -> Result<&Arc<GpuContext>, EngineError> {
        self.gpu_converter().map(|c| c.context())
    }

    /// What a GPU run on this engine holds in host memory (its converter's band limit, its
    /// adapter's type): the rule every reservation for GPU work takes. Opens the GPU.
    pub fn gpu_host_memory(&self) -> Result<GpuHostMemory, EngineError> {
        Ok(self.gpu_converter()?.host_memory())
    }

    /// Frees the input kept on the GPU by runs with [`RunOptions::keep_input_on_gpu`], if any
    /// (e.g. when the user switches keeping off). Nothing happens when no GPU was opened.
    pub fn release_kept_input(&self) -> Result<(), EngineError> {
        match self.gpu.get() {
            Some(Ok(converter)) => Ok(converter.release_kept_input()?),
            _ => Ok(()),
        }
    }

    /// The GPU converter, opening the device on first use.
    pub fn gpu_converter(&self) -> Result<&Arc<GpuConverter>, EngineError> {
        self.gpu
            .get_or_init(|| {
                crate::system::one_time::timed(|| {
                    GpuContext::new().map(|ctx| Arc::new(GpuConverter::new(Arc::new(ctx)))).map_err(Arc::new)
                })
            })
            .as_ref()
            .map_err(|e| EngineError::GpuUnavailable(Arc::clone(e)))
    }
}

impl From<GpuError> for EngineError {
    fn from(e: GpuError) -> Self {
        match e {
            GpuError::Cancelled => Self::Cancelled,
            e => Self::Gpu(e),
        }
    }
}
