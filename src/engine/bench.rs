//! Repeated runs of one conversion: the first (cold) run kept apart, then min / median / max of
//! every phase over the warm runs, the kernel's throughput, and every phase at its median against
//! its ceiling (a CPU RGB8 kernel against the memory-stream baseline, run after each warm run).

use std::time::Instant;

use image::DynamicImage;

use super::convert::{OutBuffer, Prepared, job_of, prepare};
use super::report::{RunReport, Stats};
use super::spans::{Phase, PhaseTiming};
use super::{Backend, ConvertSettings, Engine, EngineError, ImageKey, Kernel, OpFigures, WorkFigures};
use crate::engine::ceilings::rates::{Ceilings, PhaseRate, phase_rates};
use crate::engine::ceilings::stream::{stream_gb_per_s, time_baseline};
use crate::system::clock::Clock;

/// Statistics of one phase over the warm runs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PhaseStats {
    /// Which phase.
    pub phase: Phase,
    /// The clock that measured it.
    pub source: Clock,
    /// min / median / max.
    #[serde(flatten)]
    pub stats: Stats,
}

/// A saved `graylab bench --json` (of this machine or another), read back as far as a
/// comparison needs: where it ran, and each setting's warm medians.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct SavedBench {
    /// What was converted ("synthetic 7680x4320 Rgb8", or the file).
    pub image: String,
    /// The GPU adapter it had (`None` for a bench of the CPU only).
    #[serde(default)]
    pub adapter: Option<String>,
    /// Each setting measured.
    pub results: Vec<SavedSetting>,
}

/// One setting of a [`SavedBench`].
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct SavedSetting {
    /// What ran.
    pub settings: ConvertSettings,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Each phase over the warm runs.
    pub phases: Vec<PhaseStats>,
    /// The whole conversion over the warm runs.
    pub total: Stats,
}

impl SavedBench {
    /// Reads the saved bench at `path` through the one reader of result files
    /// ([`crate::io::read_result`]: bounded, a regular file); the error says what the file is
    /// instead (another kind of graylab result, or not one).
    pub fn read(path: &std::path::Path) -> Result<Self, EngineError> {
        Ok(crate::io::read_result(path, Some(crate::io::ResultKind::Bench))?.body)
    }
}

impl SavedSetting {
    /// Its warm medians as one run's report: each phase's median, the wall time's median, and
    /// the remainder as overlap or other time (medians of parts need not add up to the median
    /// of the whole), with a note that says so.
    #[must_use]
    pub fn median_run(&self) -> RunReport {
        let s = &self.settings;
        let runs = crate::system::units::count(self.total.runs, "warm run");
        let note = format!(
            "medians of {runs}, saved by `graylab bench --json`; other (or overlap): the wall time's \
             median less the phases' medians"
        );
        let mut report = RunReport::new(s.backend, s.formula, (self.width, self.height), vec![note]);
        report.work = WorkFigures::new(s.work, None, report.pixels(), None);
        match s.backend {
            Backend::Gpu => report.workgroup = Some(s.workgroup),
            Backend::Cpu => report.threads = Some(s.threads),
        }
        report.phases = self
            .phases
            .iter()
            .map(|p| PhaseTiming { phase: p.phase, ns: p.stats.median_ns, source: p.source })
            .collect();
        report.settle(self.total.median_ns);
        report
    }
}

/// The result of `graylab bench` for one setting.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchResult {
    /// What ran.
    pub settings: ConvertSettings,
    /// The kernel used.
    pub kernel: Kernel,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The first run: pipeline creation, allocation, cold caches. Not in the statistics.
    pub cold: RunReport,
    /// Statistics of each phase over the warm runs.
    pub phases: Vec<PhaseStats>,
    /// Statistics of the whole conversion's wall time over the warm runs.
    pub total: Stats,
    /// Megapixels per second at the median kernel time.
    pub kernel_mpix_per_s: f64,
    /// Bytes read plus written per second by the kernel at its median time, in GB/s (1e9).
    pub kernel_gb_per_s: f64,
    /// The synthetic work per pixel, its operations per byte and the operations per second at
    /// the median kernel time.
    #[serde(flatten)]
    pub work: WorkFigures,
    /// The op on the gray plane after the grayscale, its operations per pixel and per second at
    /// the median of its passes, held against the backend's compute ceiling.
    pub op: OpFigures,
    /// CPU RGB8 runs: the memory-stream baseline (read 3 bytes, write 1, no arithmetic) at the
    /// same size and threads, timed right after each warm run.
    pub cpu_stream_baseline: Option<Stats>,
    /// Each phase that moves pixels, at its median, as GB/s and as a percentage of its ceiling
    /// (GPU phases: the probed ceilings the engine knows; CPU kernel: `cpu_stream_baseline`).
    pub rates: Vec<PhaseRate>,
    /// Whether the input was kept on the GPU: the warm runs uploaded nothing.
    pub input_kept_on_gpu: bool,
    /// Every warm run.
    pub warm: Vec<RunReport>,
}

/// How a benchmark runs.
#[derive(Clone, Copy, Debug)]
pub struct BenchOptions {
    /// Warm runs after the cold one (at least one).
    pub runs: usize,
    /// GPU: keep the input on the GPU, so only the cold run uploads it (the warm runs show what
    /// a re-run with the image already there costs).
    pub keep_input_on_gpu: bool,
}

/// One conversion prepared once (its pixels packed, its output allocated) and run as often as
/// asked: what [`bench_with`] and the claims' sampling time, run by run.
pub(crate) struct Repeat<'a> {
    engine: &'a Engine,
    settings: ConvertSettings,
    notes: Vec<String>,
    /// The conversion.
    pub(crate) kernel: Kernel,
    /// The packed input.
    pub(crate) bytes: std::borrow::Cow<'a, [u8]>,
    /// The output, written by every run.
    pub(crate) out: OutBuffer,
    /// Image width.
    pub(crate) width: u32,
    /// Image height.
    pub(crate) height: u32,
    /// GPU: keep the input on the GPU under this key.
    pub(crate) keep_input: Option<ImageKey>,
}

/// Why an image that is already gray has nothing to time, and what to time instead.
const ALREADY_GRAY: &str = "the input is already gray, so no conversion runs on it (bench a colour image, or --synthetic WxH: an \
     --op runs after the conversion there, timed as a phase of its own)";

/// Why a bench of `formula` on an image (in colour or not) would time no conversion, if it
/// would: stored luma is decoded alone, and a gray image is passed through. The CLI asks before
/// it decodes (stored luma) and before it measures anything (gray).
#[must_use]
pub fn nothing_to_time(formula: super::Formula, in_colour: bool) -> Option<EngineError> {
    if formula == super::Formula::StoredLuma {
        return Some(EngineError::NothingToTime(
            "a JPEG's stored luma is decoded alone, so no conversion runs on it (time `graylab convert \
             --formula stored-luma` as a whole, or bench a colour formula)",
        ));
    }
    (!in_colour).then_some(EngineError::NothingToTime(ALREADY_GRAY))
}

impl<'a> Repeat<'a> {
    /// Prepares `image` for `settings`; an image that is already gray has nothing to time.
    pub(crate) fn new(
        engine: &'a Engine,
        image: &'a DynamicImage,
        settings: &ConvertSettings,
    ) -> Result<Self, EngineError> {
        if let Some(e) = nothing_to_time(settings.formula, image.color().has_color()) {
            return Err(e);
        }
        let (prepared, notes) = prepare(image, settings.keeps_alpha())?;
        let Prepared::Colour { kernel, bytes } = prepared else {
            return Err(EngineError::NothingToTime(ALREADY_GRAY));
        };
        let (width, height) = (image.width(), image.height());
        let out = OutBuffer::new(kernel, width as usize * height as usize);
        Ok(Self { engine, settings: *settings, notes, kernel, bytes, out, width, height, keep_input: None })
    }

    /// One run, timed whole and by phase.
    pub(crate) fn run(&mut self) -> Result<RunReport, EngineError> {
        let started = Instant::now();
        let s = &self.settings;
        let mut report = RunReport::new(s.backend, s.formula, (self.width, self.height), self.notes.clone())
            .with_work(s.work);
        report.kernel = Some(self.kernel);
        let options = super::RunOptions { keep_input_on_gpu: self.keep_input, ..Default::default() };
        // After a 16-bit kernel the op runs on its output narrowed, as in `convert` (in "other").
        let (kernel_settings, op_after) = super::convert::split_op(self.kernel, s);
        let job = job_of(self.kernel, &self.bytes, (self.width, self.height), &kernel_settings, &options);
        self.engine.run_kernel(&job, self.out.bytes_mut(), &kernel_settings, (&mut report, started))?;
        if let (true, OutBuffer::U16(samples)) = (op_after, &self.out) {
            let mut gray = super::convert::narrowed_for_op(samples, s.op, &mut report);
            self.engine.run_op(&mut gray, (self.width, self.height), s, None, (&mut report, started))?;
        }
        self.engine.finish_report(&mut report, crate::system::clock::nanos_since(started));
        Ok(report)
    }
}

/// Runs one conversion `1 + runs` times: a cold run, then `runs` warm ones (at least one).
pub fn bench(
    engine: &Engine,
    image: &DynamicImage,
    settings: &ConvertSettings,
    runs: usize,
) -> Result<BenchResult, EngineError> {
    bench_with(engine, image, settings, &BenchOptions { runs, keep_input_on_gpu: false })
}

/// [`bench()`] with [`BenchOptions`].
pub fn bench_with(
    engine: &Engine,
    image: &DynamicImage,
    settings: &ConvertSettings,
    options: &BenchOptions,
) -> Result<BenchResult, EngineError> {
    // The compute ceiling before these runs, which may raise it (said so).
    let ceiling_before = engine.known_compute_ceiling(settings.backend);
    let mut repeat = Repeat::new(engine, image, settings)?;
    let (kernel, width, height) = (repeat.kernel, repeat.width, repeat.height);
    repeat.keep_input = (options.keep_input_on_gpu && settings.backend == Backend::Gpu).then(ImageKey::new);
    let keep_input = repeat.keep_input;
    let threads = settings.threads.clamp(1, crate::cpu::available_threads());
    // The CPU kernel's ceiling: the memory-stream baseline over the same bytes, into the same buffer.
    let stream = settings.backend == Backend::Cpu && kernel == Kernel::Rgb8ToL8;
    let mut baseline_ns = Vec::new();
    let mut one_run = |warm: bool| -> Result<RunReport, EngineError> {
        let report = repeat.run()?;
        // Timed after the cold run too, untimed then: its first touch of the buffers.
        if stream
            && let Some(ns) = time_baseline(&repeat.bytes, repeat.out.bytes_mut(), threads)
            && warm
        {
            baseline_ns.push(ns);
        }
        Ok(report)
    };
    let cold = one_run(false)?;
    let warm = (0..options.runs.max(1)).map(|_| one_run(true)).collect::<Result<Vec<_>, _>>()?;
    if keep_input.is_some() {
        engine.release_kept_input()?;
    }
    let phases: Vec<PhaseStats> = cold
        .phases
        .iter()
        .filter_map(|p| {
            let values: Vec<u64> = warm.iter().filter_map(|r| r.phase(p.phase)).map(|t| t.ns).collect();
            Some(PhaseStats { phase: p.phase, source: p.source, stats: Stats::of(&values)? })
        })
        .collect();
    let total_values: Vec<u64> = warm.iter().map(|r| r.total_ns).collect();
    // The wall time of each run and the memory stream, on the CPU clock.
    let total = Stats::of(&total_values)
        .unwrap_or(Stats { min_ns: 0, median_ns: 0, max_ns: 0, runs: 0, clock: None })
        .on(Clock::CpuClock);
    let kernel_ns = phases.iter().find(|p| p.phase == Phase::Kernel).map_or(0, |p| p.stats.median_ns).max(1);
    let pixels = u64::from(width) * u64::from(height);
    let bytes_moved = pixels as f64 * (kernel.in_bytes_per_pixel() + kernel.out_bytes_per_pixel()) as f64;
    let cpu_stream_baseline = Stats::of(&baseline_ns).map(|s| s.on(Clock::CpuClock));
    // Another layout's kernel (RGBA, 16-bit) is held against the stream over its own bytes, as
    // the app holds it (it had no ceiling here).
    let other_layout = settings.backend == Backend::Cpu && !stream;
    let cpu_stream_gb_per_s = match cpu_stream_baseline {
        Some(s) => Some(stream_gb_per_s(pixels, s.median_ns)),
        None if other_layout => engine.cpu_stream_gb_per_s(kernel, pixels, threads),
        None => None,
    };
    let ceilings = Ceilings { gpu: engine.known_gpu_ceilings().map(|k| k.ceilings), cpu_stream_gb_per_s };
    let mut rates = median_rates(&warm, &ceilings);
    // The bench's rates say "raised now" of a ceiling they beat: so it is.
    engine.raise_ceilings_beaten_by(&mut rates);
    Ok(BenchResult {
        settings: *settings,
        kernel,
        width,
        height,
        cold,
        phases,
        total,
        kernel_mpix_per_s: pixels as f64 / kernel_ns as f64 * 1e3,
        kernel_gb_per_s: bytes_moved / kernel_ns as f64,
        work: WorkFigures::new(settings.work, Some(kernel), pixels, Some(kernel_ns)).held_against_raised(
            settings.backend,
            (ceiling_before, engine.known_compute_ceiling(settings.backend)),
        ),
        op: median_op(&warm, settings, pixels).held_against(engine.known_compute_ceiling(settings.backend)),
        cpu_stream_baseline,
        rates,
        input_kept_on_gpu: keep_input.is_some(),
        warm,
    })
}

/// The op's figures at the median of the warm runs' passes.
fn median_op(warm: &[RunReport], settings: &ConvertSettings, pixels: u64) -> OpFigures {
    let median = |part: fn(&OpFigures) -> u64| {
        Stats::of(&warm.iter().map(|r| part(&r.op)).collect::<Vec<_>>()).map_or(0, |s| s.median_ns)
    };
    let Some(first) = warm.first() else { return OpFigures::default() };
    OpFigures {
        upload_ns: median(|o| o.upload_ns),
        download_ns: median(|o| o.download_ns),
        bands: first.op.bands,
        wavefront: first.op.wavefront,
        setup_ns: median(|o| o.setup_ns),
        ..OpFigures::new(settings.op, pixels, (median(|o| o.kernel_ns), first.op.kernel_clock))
    }
}

/// Each phase's rate (and each copy's) at its median over the warm runs, held against the same
/// ceilings.
fn median_rates(warm: &[RunReport], ceilings: &Ceilings) -> Vec<PhaseRate> {
    let each: Vec<Vec<PhaseRate>> = warm.iter().map(|r| phase_rates(r, ceilings)).collect();
    let Some(first) = each.first() else { return Vec::new() };
    first
        .iter()
        .map(|r| {
            let same = |x: &&PhaseRate| (x.phase, x.part) == (r.phase, r.part);
            let ns: Vec<u64> =
                each.iter().filter_map(|rates| rates.iter().find(same)).map(|x| x.ns).collect();
            let known = r.ceiling_gb_per_s.zip(r.ceiling_source);
            r.at(Stats::of(&ns).map_or(r.ns, |s| s.median_ns), known)
        })
        .collect()
}
