//! Claims 1, 2 and 6: what moving the data costs, how many operations one round trip must carry
//! before the GPU wins, and what one cold run costs.

use std::time::{Duration, Instant};

use image::DynamicImage;

use crate::engine::claims::sampled::{Sampling, clock, gpu, median, phase_ns, side_ns, total_ns};
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::convert::{Prepared, prepare};
use crate::engine::round_trip::{self, RoundTripOptions};
use crate::engine::sampling::{Budget, Sampled, ratios, rotation};
use crate::engine::spans::Phase;
use crate::engine::{ConvertSettings, Engine, EngineError, RunOptions, WorkgroupSize, synthetic_rgb};
use crate::gpu::GpuJob;

/// Claim 1's image: 8K, in the quick set too (the same experiment, a smaller budget).
pub(super) const IMAGE: (u32, u32) = (7680, 4320);

/// What claim 1 measures and claim 8 builds on.
#[derive(Clone, Debug, Default)]
pub(super) struct Shared {
    /// The image's size, and the GPU's and the CPU's whole conversion, each round (ns): claim 8's
    /// plain-grayscale speed-up.
    pub(super) size: (u32, u32),
    pub(super) gpu_total_ns: Vec<f64>,
    pub(super) cpu_total_ns: Vec<f64>,
}

/// Passes over `image`'s input kept on the GPU until `decided` settles the claim, each timed
/// around its submits alone, until the GPU finished, and by GPU timestamps where it has them.
pub(super) fn resident_rounds(
    engine: &Engine,
    plan: &Sampling<'_>,
    image: &DynamicImage,
    decided: impl Fn(&[crate::gpu::ResidentPass]) -> bool,
) -> Result<Sampled<crate::gpu::ResidentPass>, EngineError> {
    let converter = engine.gpu_converter()?;
    let (Prepared::Colour { kernel, bytes }, _) = prepare(image, true)? else {
        return Err(EngineError::Bug("a synthetic image came out gray"));
    };
    converter.release_buffers()?;
    let size = (image.width(), image.height());
    let job = GpuJob::new(kernel, crate::pixel::Formula::Bt601, WorkgroupSize::DEFAULT, &bytes, size);
    let mut pool = Vec::new();
    let sampled = plan.rounds(
        |_| {
            if pool.is_empty() {
                pool = converter.time_resident_passes(&job, 3, true)?;
                pool.reverse();
            }
            pool.pop().ok_or(EngineError::Bug("no resident pass was timed"))
        },
        decided,
    );
    converter.release_buffers()?;
    sampled
}

/// Claim 1: an 8K image on both backends, interleaved; upload and download against the kernel.
pub(super) fn transfers(
    engine: &Engine,
    plan: &Sampling<'_>,
    shared: &mut Shared,
) -> Result<ClaimResult, EngineError> {
    let (w, h) = IMAGE;
    let image = synthetic_rgb(w, h, 1);
    let moving_over_kernel = |rounds: &[Vec<crate::engine::RunReport>]| {
        let moving = side_ns(rounds, 0, |r| Some(r.phase(Phase::Upload)?.ns + r.phase(Phase::Download)?.ns));
        ratios(&moving, &phase_ns(rounds, 0, Phase::Kernel))
    };
    let sides = [gpu(), ConvertSettings::default()];
    let statistic = ("(upload + download) / GPU kernel", 1.0);
    let (rounds, e) = plan.decide((engine, &image), &sides, statistic, moving_over_kernel)?;
    let [upload, download, kernel] =
        [Phase::Upload, Phase::Download, Phase::Kernel].map(|p| phase_ns(&rounds, 0, p));
    let cpu_total = total_ns(&rounds, 1);
    let [up, down, gpu, cpu] = [&upload, &download, &kernel, &cpu_total].map(|ns| median(ns));
    let (verdict, why) = rules::transfers_are_slow(&e, up, down, gpu, cpu);
    *shared = Shared { size: (w, h), gpu_total_ns: total_ns(&rounds, 0), cpu_total_ns: cpu_total.clone() };
    Ok(ClaimResult::new(
        (1, "Moving data between CPU and GPU memory is slow."),
        format!(
            "a {w}x{h} RGB image to gray (BT.601), the GPU and the CPU in turns, {} rounds: the GPU's upload and download against its kernel, and against the CPU's whole conversion on every thread",
            rounds.len()
        ),
        vec![
            Measurement::ms_of("upload", &upload, clock(&rounds, 0, Phase::Upload)),
            Measurement::ms_of("download", &download, clock(&rounds, 0, Phase::Download)),
            Measurement::ms_of("GPU kernel", &kernel, clock(&rounds, 0, Phase::Kernel)),
            Measurement::ms_of("CPU, whole conversion", &cpu_total, "cpu-clock"),
        ],
        (verdict, why),
        vec![e],
    ))
}

/// Claim 2's image: 2 MP (the GPU makes 21 passes over it each round).
pub(super) const ROUND_TRIP_IMAGE: (u32, u32) = (1732, 1155);

/// One warm round per count and call (after the cold round trip apart): the claim takes its own
/// rounds, the counts in turns.
const ONE_ROUND: Budget = Budget { warmup_rounds: 0, min_rounds: 1, max_rounds: 1, max_time: Duration::ZERO };

/// The counts of operations per round trip claim 2 compares.
pub(super) const ROUND_TRIP_COUNTS: [u32; 3] = [1, 4, 16];

/// Claim 2: 1, 4 and 16 operations between one upload and one download, each round trip timed
/// whole ([`crate::engine::round_trip::round_trips`]) against as many CPU passes; in turns.
pub(super) fn round_trips(engine: &Engine, plan: &Sampling<'_>) -> Result<ClaimResult, EngineError> {
    let (w, h) = ROUND_TRIP_IMAGE;
    let image = synthetic_rgb(w, h, 2);
    let (counts, settings) = (ROUND_TRIP_COUNTS, ConvertSettings::default());
    let mut clocks = None;
    // Each round's (GPU, CPU) per operation and whether they matched, a count each.
    let column = |rounds: &[Vec<(f64, f64, bool)>], i: usize, part: fn(&(f64, f64, bool)) -> f64| {
        rounds.iter().filter_map(|r| r.get(i)).map(part).collect::<Vec<f64>>()
    };
    let gpu_over_cpu = |rounds: &[Vec<(f64, f64, bool)>], i| column(rounds, i, |(g, c, _)| g / c.max(1.0));
    let sampled = plan.rounds(
        |round| {
            let mut row = vec![(0.0, 0.0, true); counts.len()];
            for i in rotation(round, counts.len()) {
                let options =
                    RoundTripOptions { passes: vec![counts[i]], budget: ONE_ROUND, cancel: plan.cancel };
                let r = round_trip::round_trips(engine, &image, &settings, &options, &mut |_, _, _| {})?;
                let p = r.points.first().ok_or(EngineError::Bug("a round trip measured nothing"))?;
                row[i] = (p.gpu_per_op_ns, p.cpu_per_op_ns.median_ns as f64, p.matches_cpu);
                clocks = Some(r.clocks);
            }
            Ok(row)
        },
        |rounds| (0..counts.len()).all(|i| plan.settled(&gpu_over_cpu(rounds, i), 1.0)),
    )?;
    let rounds = &sampled.rounds;
    let clocks = clocks.ok_or(EngineError::Bug("no round trip was measured"))?;
    let side = |i, part| column(rounds, i, part);
    let mut measurements = Vec::new();
    let mut per_op = Vec::new();
    for (i, n) in counts.iter().enumerate() {
        let (gpu, cpu) = (side(i, |p| p.0), side(i, |p| p.1));
        let gpu_name = format!("GPU per operation, {n} per round trip");
        measurements.push(Measurement::ms_of(gpu_name, &gpu, &clocks.gpu_total));
        measurements.push(Measurement::ms_of(format!("CPU per operation, {n} in a row"), &cpu, &clocks.cpu));
        let statistic = format!("GPU / CPU per operation at {n}");
        let e = plan.evidence(&statistic, &gpu_over_cpu(rounds, i), 1.0, sampled.stop);
        per_op.push((*n, median(&gpu), median(&cpu), e));
    }
    // The chart's line: one CPU pass, every count's rounds pooled.
    let pooled: Vec<f64> = (0..counts.len()).flat_map(|i| side(i, |p| p.1)).collect();
    measurements.push(Measurement::ms_of("one CPU pass", &pooled, &clocks.cpu));
    let (verdict, mut why) = rules::keep_data_on_gpu(&per_op);
    if rounds.iter().flatten().any(|p| !p.2) {
        why.push_str("; but the GPU's result differed from the CPU's");
    }
    Ok(ClaimResult::new(
        (2, "Keep data on the GPU for multiple operations."),
        format!(
            "a {w}x{h} image, {} rounds with the counts in turns: one upload, n full passes of the kernel over the kept input, one download, timed whole and divided by n (n = 1, 4, 16), against n CPU passes on every thread",
            rounds.len()
        ),
        measurements,
        (verdict, why),
        per_op.into_iter().map(|p| p.3).collect(),
    ))
}

/// Claim 6's image: 1 MP.
pub(super) const COLD_IMAGE: (u32, u32) = (1224, 816);

/// Claim 6: a cold GPU run (a new device, its pipeline and first submission) against one CPU
/// run, in turns, each round on a device opened for it; and a warm run on that device.
pub(super) fn cold_run(engine: &Engine, plan: &Sampling<'_>) -> Result<ClaimResult, EngineError> {
    let (w, h) = COLD_IMAGE;
    let image = synthetic_rgb(w, h, 6);
    let sampled = plan.rounds(
        |round| {
            let mut row = [0.0; 3];
            for side in rotation(round, 2) {
                if side == 0 {
                    let started = Instant::now();
                    let fresh = Engine::new().without_ceiling_cache();
                    let cold = fresh.convert(&image, &gpu(), RunOptions::default())?.report;
                    row[0] = started.elapsed().as_nanos() as f64;
                    let warm = fresh.convert(&image, &gpu(), RunOptions::default())?.report;
                    row[1] = warm.total_ns as f64;
                    plan.keep("cold, on a device opened for it", &cold);
                    plan.keep("warm, second run on that device", &warm);
                } else {
                    let cpu =
                        engine.convert(&image, &ConvertSettings::default(), RunOptions::default())?.report;
                    row[2] = cpu.total_ns as f64;
                    plan.keep("all threads", &cpu);
                }
            }
            Ok(row)
        },
        |rounds| plan.settled(&rounds.iter().map(|r| r[0] / r[2].max(1.0)).collect::<Vec<_>>(), 1.0),
    )?;
    let rounds = &sampled.rounds;
    let part = |i: usize| rounds.iter().map(|r| r[i]).collect::<Vec<f64>>();
    let (cold, warm, cpu) = (part(0), part(1), part(2));
    let e = plan.evidence("cold GPU run / one CPU run", &ratios(&cold, &cpu), 1.0, sampled.stop);
    let (verdict, why) = rules::run_once_loses(&e, median(&cold), median(&warm), median(&cpu));
    Ok(ClaimResult::new(
        (6, "If you run the calculation once, CPU may be faster."),
        format!(
            "a {w}x{h} image, {} rounds: a GPU run on a device opened for it (device, pipeline, buffers, first submission) and a second run on that device, in turns with one CPU run",
            rounds.len()
        ),
        vec![
            Measurement::ms_of("cold GPU run, device opened for it", &cold, "cpu-clock"),
            Measurement::ms_of("warm GPU run", &warm, "cpu-clock"),
            Measurement::ms_of("one CPU run", &cpu, "cpu-clock"),
        ],
        (verdict, why),
        vec![e],
    ))
}
