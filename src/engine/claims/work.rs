//! Claims 7 and 8, on the work per pixel ([`Work`]): branching against uniform work of the same
//! average, and the work from which the GPU wins end to end, synthetic and a real blur.

use crate::engine::claims::sampled::{Sampling, clock, phase_ns, total_ns};
use crate::engine::claims::transfers::Shared;
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::report::RunReport;
use crate::engine::sampling::ratios;
use crate::engine::spans::Phase;
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, synthetic_rgb};
use crate::pixel::{Op, Work};

/// The image of claims 7 and 8: 1 MP.
pub(super) const IMAGE: (u32, u32) = (1224, 816);

fn with_work(backend: Backend, work: Work) -> ConvertSettings {
    ConvertSettings { backend, work, ..ConvertSettings::default() }
}

/// Claim 7's two ratios, round by round: the GPU's divergent over uniform kernel, and that
/// slowdown over the CPU's (sides: GPU divergent, GPU uniform, CPU divergent, CPU uniform).
fn slowdowns(rounds: &[Vec<RunReport>]) -> (Vec<f64>, Vec<f64>) {
    let kernel = |side| phase_ns(rounds, side, Phase::Kernel);
    let gpu = ratios(&kernel(0), &kernel(1));
    let cpu = ratios(&kernel(2), &kernel(3));
    let more = ratios(&gpu, &cpu);
    (gpu, more)
}

/// Claim 7's rounds on the odd pixels (against half as many on every pixel).
pub(super) const BRANCH_ROUNDS: u32 = 64;

/// Claim 7: `k` rounds on the odd gray values only (about half the pixels, chosen by a branch)
/// against `k / 2` rounds on every pixel, on each backend, all four in turns.
pub(super) fn branching(engine: &Engine, plan: &Sampling<'_>) -> Result<ClaimResult, EngineError> {
    let (w, h) = IMAGE;
    let rounds = BRANCH_ROUNDS;
    let image = synthetic_rgb(w, h, 7);
    let divergent = Work { rounds, mask: 0, divergent: true };
    let uniform = Work { rounds: rounds / 2, mask: 0, divergent: false };
    let sides = [
        with_work(Backend::Gpu, divergent),
        with_work(Backend::Gpu, uniform),
        with_work(Backend::Cpu, divergent),
        with_work(Backend::Cpu, uniform),
    ];
    let sampled = plan.interleaved(engine, &image, &sides, |r| {
        let (gpu, more) = slowdowns(r);
        plan.settled(&gpu, rules::BRANCHING_HURTS_RATIO)
            && plan.settled(&more, rules::BRANCHING_HURTS_GPU_MORE_RATIO)
    })?;
    let taken = &sampled.rounds;
    let (gpu, more) = slowdowns(taken);
    let slowdown = plan.evidence("GPU divergent / uniform", &gpu, rules::BRANCHING_HURTS_RATIO, sampled.stop);
    let more = plan.evidence(
        "GPU slowdown / CPU slowdown",
        &more,
        rules::BRANCHING_HURTS_GPU_MORE_RATIO,
        sampled.stop,
    );
    let kernel = |side| phase_ns(taken, side, Phase::Kernel);
    let (verdict, why) = rules::branching_hurts(&slowdown, &more);
    let gpu_clock = clock(taken, 0, Phase::Kernel);
    let each =
        [format!("divergent, {rounds} rounds on odd pixels"), format!("uniform, {} rounds", rounds / 2)];
    Ok(ClaimResult::new(
        (7, "Complex branching logic? GPU cores don't handle if-else branches efficiently."),
        format!(
            "a {w}x{h} image with the synthetic work per pixel: {rounds} rounds on the pixels whose gray value is odd (a branch per pixel) against {} rounds on every pixel (the same average), the kernel on each backend, all four in turns, {} rounds",
            rounds / 2,
            taken.len()
        ),
        (0..4)
            .map(|side| {
                let (backend, clock) = if side < 2 { ("GPU", gpu_clock) } else { ("CPU", "cpu-clock") };
                Measurement::ms_of(format!("{backend} kernel, {}", each[side % 2]), &kernel(side), clock)
            })
            .collect(),
        (verdict, why),
        vec![slowdown, more],
    ))
}

/// The work levels of claim 8, in rounds per pixel.
pub(super) const LEVELS: [u32; 4] = [0, 16, 256, 1024];

/// The real operation beside them: blur radii (4 (2R + 1) operations a pixel: 20, 68 and 260).
pub(super) const BLUR_RADII: [u32; 3] = [2, 8, 32];

/// One level of a claim-8 knob: its name in a sentence ("a radius-8 blur"), its short name
/// for a chart's category ("blur:8"), and its two sides (GPU, CPU).
type Level = (String, String, [ConvertSettings; 2]);

/// Claim 8's knobs: the synthetic work, then the blur on the plain grayscale.
fn knobs() -> [Vec<Level>; 2] {
    let work = LEVELS.iter().map(|&rounds| {
        let work = Work { rounds, mask: 0, divergent: false };
        let sides = [with_work(Backend::Gpu, work), with_work(Backend::Cpu, work)];
        (format!("{rounds} rounds per pixel"), format!("{rounds} rounds"), sides)
    });
    let blur = BLUR_RADII.iter().map(|&radius| {
        let op = Op::Blur { radius };
        let with = |backend| ConvertSettings { backend, op, ..ConvertSettings::default() };
        (format!("a radius-{radius} blur"), op.to_string(), [with(Backend::Gpu), with(Backend::Cpu)])
    });
    [work.collect(), blur.collect()]
}

/// Claim 8: the GPU's end-to-end speed-up over the CPU at 8K for the plain grayscale (claim 1's
/// rounds), then on a 1 MP image for growing synthetic work per pixel and for a real blur of
/// growing radius, both backends in turns.
pub(super) fn work_levels(
    engine: &Engine,
    plan: &Sampling<'_>,
    shared: &Shared,
) -> Result<ClaimResult, EngineError> {
    let (w, h) = IMAGE;
    let image = synthetic_rgb(w, h, 8);
    let mut measurements = Vec::new();
    if !shared.gpu_total_ns.is_empty() {
        let (sw, sh) = shared.size;
        let name = format!("GPU end-to-end speed-up, {sw}x{sh}, plain grayscale");
        let speedup = ratios(&shared.cpu_total_ns, &shared.gpu_total_ns);
        measurements.push(Measurement::sampled(name, &speedup, "x", "cpu-clock"));
    }
    let mut speedup_figures = Vec::new();
    let mut read = Vec::new();
    for levels in knobs() {
        let mut speedups = Vec::new();
        for (level, short, sides) in levels {
            let speedup = |r: &[Vec<RunReport>]| ratios(&total_ns(r, 1), &total_ns(r, 0));
            let statistic = format!("CPU / GPU end to end at {level}");
            let (taken, e) = plan.decide((engine, &image), &sides, (&statistic, 1.0), speedup)?;
            let gpu_name = format!("GPU end to end, {short}");
            measurements.push(Measurement::ms_of(gpu_name, &total_ns(&taken, 0), "cpu-clock"));
            measurements.push(Measurement::ms_of(format!("CPU, {short}"), &total_ns(&taken, 1), "cpu-clock"));
            // The interval the level was decided on: one interval for one ratio.
            let name = format!("GPU end-to-end speed-up, {short}");
            let figure = Measurement::of_interval(name, e.interval, &speedup(&taken), "x", "cpu-clock");
            speedup_figures.push(figure);
            speedups.push((level, e));
        }
        read.push(speedups);
    }
    measurements.extend(speedup_figures);
    let blur = read.pop().unwrap_or_default();
    let work = read.pop().unwrap_or_default();
    let (verdict, why) = rules::image_processing_shines(&work, &blur);
    Ok(ClaimResult::new(
        (
            8,
            "Image processing – each pixel can be processed independently … slash execution times from hours to minutes.",
        ),
        format!(
            "the GPU end to end against the CPU on every thread, in turns: the plain grayscale on claim 1's image, then a {w}x{h} image with {} rounds of synthetic work per pixel (3 integer operations a round), and with a blur of radius {} after the grayscale (a real filter, every pixel independent)",
            LEVELS.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            BLUR_RADII.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        measurements,
        (verdict, why),
        work.into_iter().chain(blur).map(|s| s.1).collect(),
    ))
}
