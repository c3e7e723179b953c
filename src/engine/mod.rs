//! The conversion engine shared by the GUI, the CLI, the benchmarks and the tests: it chooses the
//! backend, prepares pixels for it, measures every phase and labels each figure with its clock.
//!
//! `sweep` holds the size sweep and the operations per round trip, `ceilings` this machine's
//! ceilings. Depends on [`crate::cpu`], [`crate::gpu`], [`crate::io`], [`crate::pixel`] and
//! [`crate::system`]; never on the UI (no egui, eframe or rfd here).

mod batch;
mod bench;
pub mod causes;
mod ceilings;
pub mod claims;
mod convert;
pub mod estimate;
mod files;
mod memory;
mod options;
mod parity;
mod report;
mod round_trip;
pub mod sampling;
mod spans;
mod sweep;
mod synthetic;
mod work;

use std::sync::{Arc, Mutex, OnceLock};

pub use batch::{BatchItem, BatchOptions, convert_batch};
pub use bench::{BenchOptions, BenchResult, PhaseStats, bench, bench_with};
pub use ceilings::cache::{KnownCeilings, PLAUSIBLE_OPS_PER_S, cache_dir, cached_ceilings};
pub use ceilings::compute::{cached_cpu_compute, compute_ceilings_of};
pub use ceilings::rates::{Ceiling, Ceilings, PhasePart, PhaseRate, phase_rates};
pub use convert::{Converted, Prepared, prepare};
pub use estimate::{Estimate, Pace};
pub use files::{FileReport, JsonPath, convert_file, default_output_path};
pub use memory::{bench_bytes, sweep_bytes, synthetic_bytes};
pub use options::{ImageKey, PixelProgress, RunOptions};
pub use parity::{DIFF_GAIN, DiffStats, ParityReport, diff};
pub use report::{Phase, PhaseTiming, RunReport, Stats};
pub use round_trip::{
    DEFAULT_PASSES, MAX_PASSES, RoundTripClocks, RoundTripOptions, RoundTripPoint, RoundTripResult,
    round_trip_budget, round_trip_bytes, round_trips,
};
pub use spans::{Lane, Span, SpanClock, lane_overlap};
pub use sweep::compare::{Sides, compare};
pub use sweep::frontier::{frontier_sentence, measured_frontier, modelled_frontier};
pub use sweep::grid::{
    ComputeCeilings, FORMULA_OPS_PER_PIXEL, Frontier, FrontierPoint, Roofline, RooflinePoint, Series,
};
pub use sweep::model::crossover_mp;
pub use sweep::plan::{
    CALIBRATION_MP, CALIBRATION_ROUNDS, CELL_SERIES_BUDGET_NS, Calibration, CellPlan, DEFAULT_SIZES_MP,
    DEFAULT_WORK_LEVELS, DEFAULT_WORK_SIZES_MP, GridEstimate, SweepOptions, calibrate, estimate_grid,
    size_for, teach_pace,
};
pub use sweep::result::{Comparison, CostModel, ModelledPoint, SweepModel, SweepPoint, SweepResult, Winner};
pub use sweep::roofline::roofline;
pub use sweep::run::{sweep, sweep_planned};
pub use sweep::verdict::{analyse, to_csv};
pub use sweep::workgroups::{ShapeTime, WorkgroupRace, workgroups};
pub use synthetic::{parse_size, synthetic_rgb};
pub use work::WorkFigures;

pub use crate::cpu::{CpuCompute, SimdLevel, available_threads, simd_level};
pub use crate::gpu::ParseWorkgroupError;
pub use crate::gpu::{
    AdapterReport, Bandwidth, GpuCeilings, GpuCompute, GpuContext, GpuConverter, GpuError, GpuTiles,
    PROBE_HOLD_BYTES, TimingMode, WorkgroupSize, list_adapters,
};
pub use crate::io::{
    BudgetSource, DecodeOptions, DecodeWarning, EncodeReport, ExportFormat, ExportOptions, FileKind, IoError,
    OverBudget, Reservation, TruncatedAt, WriteCause, budget, classify_file, decode_file,
    encode_file_with_progress, peak_resident_bytes, sniff_format, special_kind, write_atomically,
};
pub use crate::pixel::{Formula, Kernel, OPS_PER_ROUND, Work};
pub use crate::system::clock::Clock;
pub use crate::system::units::{SECONDS_FROM_NS, duration, gb, human_bytes, ms, ops_per_s};

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
    #[error("the GPU is not available ({0})")]
    GpuUnavailable(String),
    /// The work was cancelled (a newer request superseded it, or the app is closing).
    #[error("cancelled")]
    Cancelled,
    /// graylab broke one of its own invariants: a bug, reported instead of panicking.
    #[error("an internal fault in graylab ({0}); please report it")]
    Bug(&'static str),
    /// The image's pixel type has no conversion.
    #[error("unsupported pixel type {0}")]
    UnsupportedPixels(String),
    /// A benchmark of an image no kernel runs on (why).
    #[error("nothing to time: {0}")]
    NothingToTime(&'static str),
}

/// The engine: a CPU backend that always works and a GPU converter opened on first use.
pub struct Engine {
    gpu: OnceLock<Result<Arc<GpuConverter>, String>>,
    /// The GPU's ceilings, once loaded or measured.
    ceilings: Mutex<Option<KnownCeilings>>,
    /// The last memory-stream baseline measured for [`Engine::phase_rates`].
    stream: Mutex<Option<ceilings::stream::StreamBaseline>>,
    /// The CPU's compute ceiling, once loaded or measured ([`Engine::cpu_compute`]).
    cpu_compute: Mutex<Option<CpuCompute>>,
    /// Whether the ceilings (the GPU's, and the CPU's compute ceiling) are read from and written
    /// to the cache folder.
    ceiling_cache: bool,
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

    fn with_cell(gpu: OnceLock<Result<Arc<GpuConverter>, String>>) -> Self {
        Self {
            gpu,
            ceilings: Mutex::new(None),
            stream: Mutex::new(None),
            cpu_compute: Mutex::new(None),
            ceiling_cache: true,
        }
    }

    /// This engine measures the GPU's ceilings itself and keeps them to itself: it neither reads
    /// nor writes the cache folder (tests, whose measurements under load must not be kept).
    #[must_use]
    pub fn without_ceiling_cache(mut self) -> Self {
        self.ceiling_cache = false;
        self
    }

    /// An engine on an existing GPU context (eframe's device).
    #[must_use]
    pub fn with_gpu(gpu: Arc<GpuContext>) -> Self {
        Self::with_converter(Arc::new(GpuConverter::new(gpu)))
    }

    /// An engine on an existing GPU converter (a test's or a benchmark's tuned one).
    #[must_use]
    pub fn with_converter(converter: Arc<GpuConverter>) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(Ok(converter));
        Self::with_cell(cell)
    }

    /// An engine whose GPU is known to be unavailable, with the reason.
    #[must_use]
    pub fn without_gpu(reason: impl Into<String>) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(Err(reason.into()));
        Self::with_cell(cell)
    }

    /// An engine whose GPU (opened now) times every step with submit-and-wait on the CPU clock,
    /// even where the adapter has timestamps (`graylab bench --cpu-clock`).
    pub fn on_cpu_clock() -> Result<Self, EngineError> {
        let ctx = GpuContext::new()?;
        let mut converter = GpuConverter::new(Arc::new(ctx));
        converter.set_timing_mode(TimingMode::CpuClock);
        Ok(Self::with_converter(Arc::new(converter)))
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

    /// The GPU context, opening it on first use.
    pub fn gpu(&self) -> Result<&Arc<GpuContext>, EngineError> {
        self.gpu_converter().map(|c| c.context())
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
                    GpuContext::new()
                        .map(|ctx| Arc::new(GpuConverter::new(Arc::new(ctx))))
                        .map_err(|e| e.to_string())
                })
            })
            .as_ref()
            .map_err(|e| EngineError::GpuUnavailable(e.clone()))
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
