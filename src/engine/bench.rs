//! Repeated runs of one conversion: the first (cold) run kept apart, then min / median / max of
//! every phase over the warm runs, and the kernel's throughput.

use std::time::Instant;

use image::DynamicImage;

use super::convert::{KernelInput, OutBuffer, Prepared, prepare};
use super::report::{ClockSource, Phase, RunReport, Stats};
use super::{ConvertSettings, Engine, EngineError, Kernel};

/// Statistics of one phase over the warm runs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PhaseStats {
    /// Which phase.
    pub phase: Phase,
    /// The clock that measured it.
    pub source: ClockSource,
    /// min / median / max.
    #[serde(flatten)]
    pub stats: Stats,
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
    /// Every warm run.
    pub warm: Vec<RunReport>,
}

/// Runs one conversion `1 + runs` times: a cold run, then `runs` warm ones (at least one).
pub fn bench(
    engine: &Engine,
    image: &DynamicImage,
    settings: &ConvertSettings,
    runs: usize,
) -> Result<BenchResult, EngineError> {
    let (prepared, notes) = prepare(image, settings.keep_alpha)?;
    let Prepared::Colour { kernel, bytes } = prepared else {
        return Err(EngineError::UnsupportedPixels(
            "the input is already gray: there is nothing to convert or measure".to_owned(),
        ));
    };
    let (width, height) = (image.width(), image.height());
    let mut out = OutBuffer::new(kernel, width as usize * height as usize);
    let mut one_run = || -> Result<RunReport, EngineError> {
        let started = Instant::now();
        let mut report = RunReport::new(settings.backend, settings.formula, (width, height), notes.clone());
        report.kernel = Some(kernel);
        let input = KernelInput { kernel, src: &bytes, width, height, cancel: None };
        engine.run_kernel(&input, out.bytes_mut(), settings, &mut report)?;
        report.finish(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        Ok(report)
    };
    let cold = one_run()?;
    let warm = (0..runs.max(1)).map(|_| one_run()).collect::<Result<Vec<_>, _>>()?;
    let phases: Vec<PhaseStats> = cold
        .phases
        .iter()
        .filter_map(|p| {
            let values: Vec<u64> = warm.iter().filter_map(|r| r.phase(p.phase)).map(|t| t.ns).collect();
            Some(PhaseStats { phase: p.phase, source: p.source, stats: Stats::of(&values)? })
        })
        .collect();
    let total_values: Vec<u64> = warm.iter().map(|r| r.total_ns).collect();
    let total = Stats::of(&total_values).unwrap_or(Stats { min_ns: 0, median_ns: 0, max_ns: 0, runs: 0 });
    let kernel_ns = phases.iter().find(|p| p.phase == Phase::Kernel).map_or(0, |p| p.stats.median_ns).max(1);
    let pixels = f64::from(width) * f64::from(height);
    let bytes_moved = pixels * (kernel.in_bytes_per_pixel() + kernel.out_bytes_per_pixel()) as f64;
    Ok(BenchResult {
        settings: *settings,
        kernel,
        width,
        height,
        cold,
        phases,
        total,
        kernel_mpix_per_s: pixels / kernel_ns as f64 * 1e3,
        kernel_gb_per_s: bytes_moved / kernel_ns as f64,
        warm,
    })
}
