//! Claims 5 and 9: images the size of the CPU's caches, and the size from which the GPU wins
//! end to end.

use crate::engine::bench::Repeat;
use crate::engine::claims::sampled::{self, Sampling, median, total_ns};
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::sampling::{ratios, rotation};
use crate::engine::sweep::{Series, SweepOptions, sweep};
use crate::engine::{ConvertSettings, Engine, EngineError, WorkgroupSize, synthetic_rgb};
use crate::gpu::GpuJob;
use crate::pixel::Formula;

/// The input sizes of claim 5: 16 KiB to 4 MiB of RGB pixels.
pub(super) const CACHE_SIZES_BYTES: [u64; 5] = [16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

/// A landscape `w x h` image of about `bytes` of RGB input.
pub(super) fn dims_for(bytes: u64) -> (u32, u32) {
    crate::engine::sweep::size_for(bytes as f64 / 3.0 / 1e6)
}

/// One round of claim 5 at one size: the CPU, the GPU end to end and the GPU with its input
/// kept (one pass), in turns.
fn cache_round<'r>(
    plan: &Sampling<'_>,
    (cpu, gpu): (&mut Repeat<'r>, &mut Repeat<'r>),
    kept: &mut impl FnMut() -> Result<f64, EngineError>,
    round: usize,
) -> Result<[f64; 3], EngineError> {
    let mut row = [0.0; 3];
    for side in rotation(round, 3) {
        row[side] = match side {
            0 | 1 => {
                let (repeat, name) =
                    if side == 0 { (&mut *cpu, "all threads") } else { (&mut *gpu, "end to end") };
                let report = repeat.run()?;
                plan.keep(name, &report);
                report.total_ns as f64
            }
            _ => kept()?,
        };
    }
    Ok(row)
}

/// The GPU's best (end to end or input kept) over the CPU, each round.
fn best_over_cpu(rounds: &[[f64; 3]]) -> Vec<f64> {
    rounds.iter().map(|r| r[1].min(r[2]) / r[0].max(1.0)).collect()
}

/// Claim 5: 16 KiB to 4 MiB images, the CPU against the GPU end to end and with the input kept,
/// all three in turns.
pub(super) fn cache_sized(engine: &Engine, plan: &Sampling<'_>) -> Result<ClaimResult, EngineError> {
    let mut points = Vec::new();
    let mut measurements = Vec::new();
    let converter = engine.gpu_converter()?;
    for (i, bytes) in CACHE_SIZES_BYTES.into_iter().enumerate() {
        let (w, h) = dims_for(bytes);
        let image = synthetic_rgb(w, h, 50 + i as u64);
        let size = rules::human(bytes);
        let mut cpu = Repeat::new(engine, &image, &ConvertSettings::default())?;
        let mut gpu = Repeat::new(engine, &image, &sampled::gpu())?;
        let input = cpu.bytes.to_vec();
        let job = GpuJob::new(cpu.kernel, Formula::Bt601, WorkgroupSize::DEFAULT, &input, (w, h));
        let mut kept = || -> Result<f64, EngineError> {
            let passes = converter.time_resident_passes(&job, 1, false)?;
            passes.last().map(|p| p.wall_ns as f64).ok_or(EngineError::Bug("no resident pass was timed"))
        };
        let sampled = plan.rounds(
            |round| cache_round(plan, (&mut cpu, &mut gpu), &mut kept, round),
            |r| plan.settled(&best_over_cpu(r), 1.0),
        );
        converter.release_buffers()?;
        let sampled = sampled?;
        let rounds = &sampled.rounds;
        let part = |i: usize| rounds.iter().map(|r| r[i]).collect::<Vec<f64>>();
        measurements.push(Measurement::ms_of(format!("CPU, {size}"), &part(0), "cpu-clock"));
        measurements.push(Measurement::ms_of(format!("GPU end to end, {size}"), &part(1), "cpu-clock"));
        measurements.push(Measurement::ms_of(format!("GPU, input kept, {size}"), &part(2), "cpu-clock"));
        let best: Vec<f64> = rounds.iter().map(|r| r[1].min(r[2])).collect();
        let e =
            plan.evidence(&format!("GPU's best / CPU at {size}"), &best_over_cpu(rounds), 1.0, sampled.stop);
        points.push((bytes, median(&part(0)), median(&best), e));
    }
    let caches = crate::system::cpu_caches::cpu_cache_bytes();
    for (level, bytes) in &caches {
        let (size, unit) = if bytes % (1 << 20) == 0 { (bytes >> 20, "MiB") } else { (bytes >> 10, "KiB") };
        measurements.push(Measurement::of(format!("L{level} cache"), size as f64, unit, "none"));
    }
    let l2 = caches.iter().find(|(level, _)| *level == 2).map(|c| c.1);
    // The copies' fixed costs, fitted, against the CPU's rate at the largest size.
    let mut floor = None;
    if let (Some(copies), Some(&(bytes, cpu_ns, ..))) = (engine.copy_latency(), points.last()) {
        let up_and_down_ns = copies.total_ns();
        let floor_bytes = up_and_down_ns * bytes as f64 / cpu_ns.max(1.0);
        let latency_us = up_and_down_ns / 1e3;
        measurements.push(Measurement::of("copies' latency (fitted)", latency_us, "µs", "cpu-clock"));
        measurements.push(Measurement::of("latency floor", floor_bytes / 1024.0, "KiB", "none"));
        let at = rules::human(bytes);
        floor = Some(rules::latency_floor(up_and_down_ns, &rules::human(floor_bytes as u64), &at));
    }
    let (verdict, why) = rules::cache_sized_data_loses(&points, l2, floor.as_deref());
    Ok(ClaimResult::new(
        (5, "If your data fits in CPU cache (< 256KB), GPU overhead will slow you down."),
        "RGB images of 16 KiB, 64 KiB, 256 KiB, 1 MiB and 4 MiB: the CPU on every thread against the GPU end to end and with the input kept on the GPU, all three in turns; this CPU's cache sizes from the system; the copies' latencies, fitted over 4 KiB to 4 MiB, give the input size below which the GPU cannot win".to_owned(),
        measurements,
        (verdict, why),
        points.into_iter().map(|p| p.3).collect(),
    ))
}

/// Claim 9's smallest size, where the verdict is decided: 0.25 MP.
pub(super) const SMALLEST_MP: f64 = 0.25;

/// Claim 9's sweep: 1 to 16 MP, two warm runs a size (to 4 MP, one run, quick).
pub(super) fn sweep_options(quick: bool) -> SweepOptions {
    let (sizes_mp, runs) = if quick { (vec![1.0, 4.0], 1) } else { (vec![1.0, 4.0, 16.0], 2) };
    SweepOptions { sizes_mp, runs, gpu: true, work_levels: vec![0], ..SweepOptions::default() }
}

/// Claim 9: the GPU end to end against the CPU at 0.25 MP, in turns, decides; a short sweep
/// ([`sweep_options`]) gives the crossover measured and modelled from the ceilings.
pub(super) fn crossover(
    engine: &Engine,
    plan: &Sampling<'_>,
    quick: bool,
) -> Result<ClaimResult, EngineError> {
    let (w, h) = crate::engine::sweep::size_for(SMALLEST_MP);
    let image = synthetic_rgb(w, h, 9);
    let gpu_over_cpu = |r: &[Vec<crate::engine::RunReport>]| ratios(&total_ns(r, 0), &total_ns(r, 1));
    let sides = [sampled::gpu(), ConvertSettings::default()];
    let statistic = format!("GPU / CPU end to end at {SMALLEST_MP} MP");
    let (taken, e) = plan.decide((engine, &image), &sides, (&statistic, 1.0), gpu_over_cpu)?;
    let options = sweep_options(quick);
    let runs = options.runs;
    // The model needs the ceilings; a failed probe leaves it out, and the sentence says so.
    let ceilings = engine.gpu_ceilings(false, None).is_ok();
    let result = sweep(engine, &options, None, &mut |_, _, _| true)?;
    let mut measurements = vec![
        Measurement::ms_of(format!("CPU, {SMALLEST_MP:.2} MP"), &total_ns(&taken, 1), "cpu-clock"),
        Measurement::ms_of(format!("GPU end to end, {SMALLEST_MP:.2} MP"), &total_ns(&taken, 0), "cpu-clock"),
    ];
    for p in &result.points {
        let (mp, cpu_ns) = (p.megapixels, p.best_cpu_ns().unwrap_or(0) as f64);
        measurements.push(Measurement::ms(format!("CPU, {mp:.2} MP"), cpu_ns, "cpu-clock"));
        let gpu_ns = p.median_ns(Series::GpuTotal).map(|ns| ns as f64);
        measurements
            .extend(gpu_ns.map(|ns| Measurement::ms(format!("GPU end to end, {mp:.2} MP"), ns, "cpu-clock")));
    }
    let modelled = result.model.as_ref().and_then(|m| m.crossover_mp);
    let measured = result.crossover_mp.map(|x| Measurement::of("measured crossover", x, "MP", "cpu-clock"));
    measurements.extend(measured);
    measurements.extend(modelled.map(|x| Measurement::of("modelled crossover", x, "MP", "none")));
    let smallest = (SMALLEST_MP, median(&total_ns(&taken, 0)), median(&total_ns(&taken, 1)));
    let largest = result.points.last().map_or(SMALLEST_MP, |p| p.megapixels);
    // The copies' fixed costs, fitted: what the CPU converts in that time no GPU can win.
    let floor = engine.copy_latency().map(|copies| {
        let cpu_ns_per_pixel = smallest.2 / (SMALLEST_MP * 1e6);
        let floor_mp = copies.total_ns() / cpu_ns_per_pixel.max(f64::MIN_POSITIVE) / 1e6;
        measurements.push(Measurement::of("upload latency (fitted)", copies.up_ns / 1e3, "µs", "cpu-clock"));
        let down_us = copies.down_ns / 1e3;
        measurements.push(Measurement::of("download latency (fitted)", down_us, "µs", "cpu-clock"));
        measurements.push(Measurement::of("latency floor", floor_mp, "MP", "none"));
        (copies.total_ns(), floor_mp)
    });
    let (verdict, mut why) =
        rules::small_data_loses(&e, smallest, (result.crossover_mp, modelled, floor), largest);
    if !ceilings {
        why.push_str(" (no ceilings could be measured for the model)");
    }
    Ok(ClaimResult::new(
        (9, "Small dataset? … overhead of moving data to GPU outweighs benefits."),
        format!(
            "the plain grayscale: the GPU end to end against the CPU on every thread at {SMALLEST_MP} MP in turns, {} rounds, decides; a sweep at {} MP, {} each (its CPU the faster of one and every thread), gives the crossover measured and modelled from this machine's ceilings; the copies' latencies, fitted over 4 KiB to 4 MiB, give the size below which the GPU cannot win",
            taken.len(),
            result.points.iter().map(|p| format!("{:.2}", p.megapixels)).collect::<Vec<_>>().join(", "),
            if runs == 1 { "1 warm run".to_owned() } else { format!("{runs} warm runs") }
        ),
        measurements,
        (verdict, why),
        vec![e],
    ))
}
