//! Claims 1, 2 and 6: what moving the data costs, how many operations one round trip must
//! carry before the GPU wins (each round trip measured whole), and what one cold run costs.

use std::time::Instant;

use image::DynamicImage;

use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::convert::{Prepared, prepare};
use crate::engine::report::{Phase, Stats};
use crate::engine::{
    Backend, BenchResult, ConvertSettings, Engine, EngineError, RoundTripOptions, RunOptions, WorkgroupSize,
    bench, synthetic_rgb,
};
use crate::gpu::GpuJob;

/// What claim 1 measures and claims 2 and 8 build on.
#[derive(Clone, Debug, Default)]
pub(super) struct Shared {
    /// The image of claim 1.
    image: Option<DynamicImage>,
    /// The image's size, and the GPU's and the CPU's whole conversion (medians, ns): claim 8's
    /// plain-grayscale speed-up.
    pub(super) size: (u32, u32),
    pub(super) gpu_total_ns: f64,
    pub(super) cpu_total_ns: f64,
}

/// The median of `phase` in a benchmark, and its clock's label.
pub(super) fn median(r: &BenchResult, phase: Phase) -> Option<(f64, String)> {
    r.phases
        .iter()
        .find(|p| p.phase == phase)
        .map(|p| (p.stats.median_ns as f64, p.source.label().to_owned()))
}

/// The median of a list of nanoseconds.
pub(super) fn median_of(values: &[u64]) -> f64 {
    Stats::of(values).map_or(0.0, |s| s.median_ns as f64)
}

/// Times `runs` passes over `image`'s input kept on the GPU (after one cold pass); each pass
/// timed around its submits alone and until the GPU finished.
pub(super) fn resident_passes(
    engine: &Engine,
    image: &DynamicImage,
    runs: usize,
) -> Result<Vec<crate::gpu::ResidentPass>, EngineError> {
    let converter = engine.gpu_converter()?;
    let (Prepared::Colour { kernel, bytes }, _) = prepare(image, true)? else {
        return Err(EngineError::Bug("a synthetic image came out gray"));
    };
    converter.release_buffers()?;
    let job = GpuJob::new(
        kernel,
        crate::pixel::Formula::Bt601,
        WorkgroupSize::DEFAULT,
        &bytes,
        (image.width(), image.height()),
    );
    let passes = converter.time_resident_passes(&job, runs)?;
    converter.release_buffers()?;
    Ok(passes)
}

fn gpu() -> ConvertSettings {
    ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() }
}

/// Claim 1: an 8K image (4K quick) on both backends; upload and download against the kernel.
pub(super) fn transfers(
    engine: &Engine,
    quick: bool,
    shared: &mut Shared,
) -> Result<ClaimResult, EngineError> {
    let ((w, h), runs) = if quick { ((3840, 2160), 2) } else { ((7680, 4320), 3) };
    let image = synthetic_rgb(w, h, 1);
    let g = bench(engine, &image, &gpu(), runs)?;
    let c = bench(engine, &image, &ConvertSettings::default(), runs)?;
    let (upload, up_clock) = median(&g, Phase::Upload).unwrap_or_default();
    let (download, down_clock) = median(&g, Phase::Download).unwrap_or_default();
    let (kernel, kernel_clock) = median(&g, Phase::Kernel).unwrap_or_default();
    let cpu_total = c.total.median_ns as f64;
    let (verdict, why) = rules::transfers_are_slow(upload, download, kernel, cpu_total);
    *shared = Shared {
        image: Some(image),
        size: (w, h),
        gpu_total_ns: g.total.median_ns as f64,
        cpu_total_ns: cpu_total,
    };
    Ok(ClaimResult {
        id: 1,
        claim: "Moving data between CPU and GPU memory is slow.".to_owned(),
        experiment: format!(
            "a {w}x{h} RGB image to gray (BT.601), {} each: the GPU's upload and download against its kernel, and against the CPU's whole conversion on every thread",
            super::warm_runs(runs)
        ),
        measurements: vec![
            Measurement::ms("upload", upload, &up_clock),
            Measurement::ms("download", download, &down_clock),
            Measurement::ms("GPU kernel", kernel, &kernel_clock),
            Measurement::ms("CPU, whole conversion", cpu_total, "cpu-clock"),
        ],
        verdict,
        why,
    })
}

/// Claim 2: 1, 4 and 16 operations between one upload and one download, each round trip
/// measured whole on the CPU clock ([`crate::engine::round_trips`]), against the CPU doing the
/// same operations one after the other.
pub(super) fn round_trips(engine: &Engine, quick: bool, shared: &Shared) -> Result<ClaimResult, EngineError> {
    let Some(image) = &shared.image else { return Err(EngineError::Bug("claim 2 runs after claim 1")) };
    let runs = if quick { 2 } else { 3 };
    let options = RoundTripOptions { passes: vec![1, 4, 16], runs, cancel: None };
    let r =
        crate::engine::round_trips(engine, image, &ConvertSettings::default(), &options, &mut |_, _, _| {})?;
    let per_op: Vec<(u32, f64, f64)> =
        r.points.iter().map(|p| (p.passes, p.gpu_per_op_ns, p.cpu_per_op_ns.median_ns as f64)).collect();
    let mut measurements: Vec<Measurement> = per_op
        .iter()
        .map(|&(n, gpu, _)| {
            Measurement::ms(format!("GPU per operation, {n} per round trip"), gpu, &r.clocks.gpu_total)
        })
        .collect();
    for &(n, _, cpu) in &per_op {
        measurements.push(Measurement::ms(format!("CPU per operation, {n} in a row"), cpu, &r.clocks.cpu));
    }
    let cpu_pass = median_of(&r.points.iter().map(|p| p.cpu_per_op_ns.median_ns).collect::<Vec<_>>());
    measurements.push(Measurement::ms("one CPU pass", cpu_pass, &r.clocks.cpu));
    let (verdict, mut why) = rules::keep_data_on_gpu(&per_op);
    if r.points.iter().any(|p| !p.matches_cpu) {
        why.push_str("; but the GPU's result differed from the CPU's");
    }
    Ok(ClaimResult {
        id: 2,
        claim: "Keep data on the GPU for multiple operations.".to_owned(),
        experiment: format!(
            "the same {}x{} image, {}: one upload, n full passes of the kernel over the kept input, one download, timed whole and divided by n (n = 1, 4, 16), against n CPU passes on every thread",
            image.width(),
            image.height(),
            super::warm_runs(runs)
        ),
        measurements,
        verdict,
        why,
    })
}

/// Claim 6: a cold GPU run (a new device, its pipeline and first submission) against a warm one
/// and against one CPU run, on a 1 MP image (0.25 MP quick).
pub(super) fn cold_run(engine: &Engine, quick: bool) -> Result<ClaimResult, EngineError> {
    let (w, h) = if quick { (612, 408) } else { (1224, 816) };
    let image = synthetic_rgb(w, h, 6);
    let started = Instant::now();
    let fresh = Engine::new().without_ceiling_cache();
    fresh.convert(&image, &gpu(), RunOptions::default())?;
    let cold_ns = started.elapsed().as_nanos() as f64;
    let warm_ns = fresh.convert(&image, &gpu(), RunOptions::default())?.report.total_ns as f64;
    drop(fresh);
    let cpu_ns =
        engine.convert(&image, &ConvertSettings::default(), RunOptions::default())?.report.total_ns as f64;
    let (verdict, why) = rules::run_once_loses(cold_ns, warm_ns, cpu_ns);
    Ok(ClaimResult {
        id: 6,
        claim: "If you run the calculation once, CPU may be faster.".to_owned(),
        experiment: format!(
            "a {w}x{h} image: a GPU run on a device opened for it (device, pipeline, buffers, first submission), a second run on that device, and one CPU run"
        ),
        measurements: vec![
            Measurement::ms("cold GPU run, device opened for it", cold_ns, "cpu-clock"),
            Measurement::ms("warm GPU run", warm_ns, "cpu-clock"),
            Measurement::ms("one CPU run", cpu_ns, "cpu-clock"),
        ],
        verdict,
        why,
    })
}
