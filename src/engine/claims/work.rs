//! Claims 7 and 8, on the synthetic work per pixel ([`crate::pixel::Work`]): branching against
//! uniform work of the same average, and the work per pixel from which the GPU wins end to end.

use crate::engine::claims::transfers::{Shared, median};
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::report::Phase;
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, Work, bench, synthetic_rgb};

fn with_work(backend: Backend, work: Work) -> ConvertSettings {
    ConvertSettings { backend, work, ..ConvertSettings::default() }
}

/// The kernel's median with `work` on `backend`, and its clock.
fn kernel_with(
    engine: &Engine,
    image: &image::DynamicImage,
    backend: Backend,
    work: Work,
    runs: usize,
) -> Result<(f64, String), EngineError> {
    let r = bench(engine, image, &with_work(backend, work), runs)?;
    Ok(median(&r, Phase::Kernel).unwrap_or_default())
}

/// Claim 7: `k` rounds on the odd gray values only (about half the pixels, chosen by a branch)
/// against `k / 2` rounds on every pixel, on each backend.
pub(super) fn branching(engine: &Engine, quick: bool) -> Result<ClaimResult, EngineError> {
    let ((w, h), runs, rounds) = if quick { ((612, 408), 1, 64) } else { ((1224, 816), 2, 64) };
    let image = synthetic_rgb(w, h, 7);
    let divergent = Work { rounds, mask: 0, divergent: true };
    let uniform = Work { rounds: rounds / 2, mask: 0, divergent: false };
    let (gpu_div, gpu_clock) = kernel_with(engine, &image, Backend::Gpu, divergent, runs)?;
    let (gpu_uni, _) = kernel_with(engine, &image, Backend::Gpu, uniform, runs)?;
    let (cpu_div, _) = kernel_with(engine, &image, Backend::Cpu, divergent, runs)?;
    let (cpu_uni, _) = kernel_with(engine, &image, Backend::Cpu, uniform, runs)?;
    let (verdict, why) = rules::branching_hurts((gpu_div, gpu_uni), (cpu_div, cpu_uni));
    Ok(ClaimResult {
        id: 7,
        claim: "Complex branching logic? GPU cores don't handle if-else branches efficiently.".to_owned(),
        experiment: format!(
            "a {w}x{h} image with the synthetic work per pixel: {rounds} rounds on the pixels whose gray value is odd (a branch per pixel) against {} rounds on every pixel (the same average), the kernel on each backend, {}",
            rounds / 2,
            super::warm_runs(runs)
        ),
        measurements: vec![
            Measurement::ms(
                format!("GPU kernel, divergent, {rounds} rounds on odd pixels"),
                gpu_div,
                &gpu_clock,
            ),
            Measurement::ms(format!("GPU kernel, uniform, {} rounds", rounds / 2), gpu_uni, &gpu_clock),
            Measurement::ms(
                format!("CPU kernel, divergent, {rounds} rounds on odd pixels"),
                cpu_div,
                "cpu-clock",
            ),
            Measurement::ms(format!("CPU kernel, uniform, {} rounds", rounds / 2), cpu_uni, "cpu-clock"),
        ],
        verdict,
        why,
    })
}

/// Claim 8: the GPU's end-to-end speed-up over the CPU at 8K for the plain grayscale (claim 1's
/// runs), then on a 1 MP image (0.25 MP quick) for growing work per pixel.
pub(super) fn work_levels(engine: &Engine, quick: bool, shared: &Shared) -> Result<ClaimResult, EngineError> {
    let ((w, h), levels): ((u32, u32), &[u32]) =
        if quick { ((612, 408), &[0, 16, 256]) } else { ((1224, 816), &[0, 16, 256, 1024]) };
    let image = synthetic_rgb(w, h, 8);
    let mut measurements = Vec::new();
    if shared.gpu_total_ns > 0.0 {
        let (sw, sh) = shared.size;
        measurements.push(Measurement::of(
            format!("GPU end-to-end speed-up, {sw}x{sh}, plain grayscale"),
            shared.cpu_total_ns / shared.gpu_total_ns,
            "x",
            "cpu-clock",
        ));
    }
    let mut speedups = Vec::new();
    for &rounds in levels {
        let work = Work { rounds, mask: 0, divergent: false };
        let gpu = bench(engine, &image, &with_work(Backend::Gpu, work), 1)?.total.median_ns as f64;
        let cpu = bench(engine, &image, &with_work(Backend::Cpu, work), 1)?.total.median_ns as f64;
        measurements.push(Measurement::ms(format!("GPU end to end, {rounds} rounds"), gpu, "cpu-clock"));
        measurements.push(Measurement::ms(format!("CPU, {rounds} rounds"), cpu, "cpu-clock"));
        speedups.push((rounds, cpu / gpu.max(1.0)));
    }
    for &(rounds, s) in &speedups {
        measurements.push(Measurement::of(
            format!("GPU end-to-end speed-up, {rounds} rounds"),
            s,
            "x",
            "cpu-clock",
        ));
    }
    let (verdict, why) = rules::image_processing_shines(&speedups);
    Ok(ClaimResult {
        id: 8,
        claim: "Image processing – each pixel can be processed independently … slash execution times from hours to minutes."
            .to_owned(),
        experiment: format!(
            "the GPU end to end against the CPU on every thread: the plain grayscale on claim 1's image, then a {w}x{h} image with {} rounds of synthetic work per pixel (3 integer operations a round)",
            levels.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        measurements,
        verdict,
        why,
    })
}
