//! Claims 5 and 9: images the size of the CPU's caches, and the size from which the GPU wins
//! end to end (measured by a short sweep, and modelled from this machine's ceilings).

use crate::engine::claims::transfers::{median_of, resident_passes};
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::{
    Backend, ConvertSettings, Engine, EngineError, Series, SweepOptions, WorkgroupSize, bench, sweep,
    synthetic_rgb,
};
use crate::pixel::Formula;

/// The input sizes of claim 5: 16 KB to 4 MB of RGB pixels.
const CACHE_SIZES_BYTES: [u64; 5] = [16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

/// This CPU's cache sizes by level (1 = L1 data), from Linux's sysfs; empty elsewhere.
#[must_use]
pub fn cpu_cache_bytes() -> Vec<(u8, u64)> {
    let mut caches = Vec::new();
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read =
            |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).ok().map(|s| s.trim().to_owned());
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else {
            break;
        };
        if kind == "Instruction" {
            continue;
        }
        let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit()).unwrap_or(size.len()));
        let scale = match unit {
            "K" => 1 << 10,
            "M" => 1 << 20,
            "G" => 1 << 30,
            _ => 1,
        };
        if let (Ok(level), Ok(n)) = (level.parse::<u8>(), digits.parse::<u64>()) {
            caches.push((level, n * scale));
        }
    }
    caches
}

/// A landscape `w x h` image of about `bytes` of RGB input.
fn dims_for(bytes: u64) -> (u32, u32) {
    crate::engine::size_for(bytes as f64 / 3.0 / 1e6)
}

/// Claim 5: 16 KB to 4 MB images, CPU against the GPU end to end and with the input kept.
pub(super) fn cache_sized(engine: &Engine, quick: bool) -> Result<ClaimResult, EngineError> {
    let (cpu_runs, gpu_runs) = if quick { (3, 2) } else { (7, 3) };
    let mut points = Vec::new();
    let mut measurements = Vec::new();
    for (i, bytes) in CACHE_SIZES_BYTES.into_iter().enumerate() {
        let (w, h) = dims_for(bytes);
        let image = synthetic_rgb(w, h, 50 + i as u64);
        let size = rules::human(bytes);
        let cpu = bench(engine, &image, &ConvertSettings::default(), cpu_runs)?.total.median_ns as f64;
        let gpu_settings = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
        let gpu = bench(engine, &image, &gpu_settings, gpu_runs)?.total.median_ns as f64;
        let kept = resident_passes(engine, &image, gpu_runs)?;
        let kept = median_of(&kept.iter().map(|p| p.wall_ns).collect::<Vec<_>>());
        measurements.push(Measurement::ms(format!("CPU, {size}"), cpu, "cpu-clock"));
        measurements.push(Measurement::ms(format!("GPU end to end, {size}"), gpu, "cpu-clock"));
        measurements.push(Measurement::ms(format!("GPU, input kept, {size}"), kept, "cpu-clock"));
        points.push((bytes, cpu, gpu, Some(kept)));
    }
    let caches = cpu_cache_bytes();
    for (level, bytes) in &caches {
        measurements.push(Measurement::of(format!("L{level} cache"), (bytes >> 10) as f64, "KB", "none"));
    }
    let l2 = caches.iter().find(|(level, _)| *level == 2).map(|c| c.1);
    let (verdict, why) = rules::cache_sized_data_loses(&points, l2);
    Ok(ClaimResult {
        id: 5,
        claim: "If your data fits in CPU cache (< 256KB), GPU overhead will slow you down.".to_owned(),
        experiment: "RGB images of 16 KB, 64 KB, 256 KB, 1 MB and 4 MB: the CPU on every thread against the GPU end to end and with the input kept on the GPU; this CPU's cache sizes from the system".to_owned(),
        measurements,
        verdict,
        why,
    })
}

/// Claim 9: a short size sweep of the plain grayscale (0.25 to 16 MP, to 4 MP quick), the
/// crossover measured and modelled from the ceilings (read from the cache or probed).
pub(super) fn crossover(engine: &Engine, quick: bool) -> Result<ClaimResult, EngineError> {
    let (sizes_mp, runs) = if quick { (vec![0.25, 1.0, 4.0], 1) } else { (vec![0.25, 1.0, 4.0, 16.0], 2) };
    // The model needs the ceilings; a failed probe leaves it out, and the sentence says so.
    let ceilings = engine.gpu_ceilings(false).is_ok();
    let options = SweepOptions {
        sizes_mp,
        runs,
        workgroup: WorkgroupSize::DEFAULT,
        formula: Formula::Bt601,
        gpu: true,
        work_levels: vec![0],
        divergent: false,
    };
    let result = sweep(engine, &options, None, &mut |_, _, _| true)?;
    let best_cpu = |p: &crate::engine::SweepPoint| {
        [Series::Cpu1, Series::CpuAll].iter().filter_map(|s| p.median_ns(*s)).min().unwrap_or(0) as f64
    };
    let mut measurements = Vec::new();
    for p in &result.points {
        let mp = p.megapixels;
        measurements.push(Measurement::ms(format!("best CPU, {mp:.2} MP"), best_cpu(p), "cpu-clock"));
        if let Some(ns) = p.median_ns(Series::GpuTotal) {
            measurements.push(Measurement::ms(format!("GPU end to end, {mp:.2} MP"), ns as f64, "cpu-clock"));
        }
    }
    let modelled = result.model.as_ref().and_then(|m| m.crossover_mp);
    if let Some(x) = result.crossover_mp {
        measurements.push(Measurement::of("measured crossover", x, "MP", "cpu-clock"));
    }
    if let Some(x) = modelled {
        measurements.push(Measurement::of("modelled crossover", x, "MP", "none"));
    }
    let smallest = result.points.first().map_or((0.0, 0.0, 0.0), |p| {
        (p.megapixels, p.median_ns(Series::GpuTotal).unwrap_or(0) as f64, best_cpu(p))
    });
    let largest = result.points.last().map_or(0.0, |p| p.megapixels);
    let (verdict, mut why) = rules::small_data_loses(smallest, result.crossover_mp, modelled, largest);
    if !ceilings {
        why.push_str(" (no ceilings could be measured for the model)");
    }
    Ok(ClaimResult {
        id: 9,
        claim: "Small dataset? … overhead of moving data to GPU outweighs benefits.".to_owned(),
        experiment: format!(
            "the plain grayscale at {} MP, {} each: the GPU end to end against the best CPU, the crossover measured and modelled from this machine's ceilings",
            options_sizes(&result),
            super::warm_runs(runs)
        ),
        measurements,
        verdict,
        why,
    })
}

fn options_sizes(r: &crate::engine::SweepResult) -> String {
    r.points.iter().map(|p| format!("{:.2}", p.megapixels)).collect::<Vec<_>>().join(", ")
}
