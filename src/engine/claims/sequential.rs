//! Claim 10: "sequential operations (step A must finish before step B)" lose on the GPU.
//! Floyd–Steinberg error diffusion ([`Op::Dither`]) needs each pixel's left and upper neighbours'
//! errors, so a GPU runs it as a wavefront ([`wavefront`]); the blur, every pixel independent,
//! runs beside it. Each size's four sides run in turns; the verdict rests on the dither alone.

use crate::engine::claims::sampled::{Sampling, median, side_ns};
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::report::RunReport;
use crate::engine::sampling::ratios;
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, synthetic_rgb};
use crate::pixel::Op;
use crate::system::clock::Clock;

/// The sizes of the full set, as (width, height): 1, 4 and 16 MP at 3:2.
pub(super) const SIZES: [(u32, u32); 3] = [(1224, 816), (2448, 1632), (4896, 3264)];

/// The quick set's sizes: 1 and 4 MP.
pub(super) const QUICK_SIZES: [(u32, u32); 2] = [(1224, 816), (2448, 1632)];

/// The blur set beside the dither: radius 8, a real filter's work (68 operations a pixel).
pub(super) const BLUR: Op = Op::Blur { radius: 8 };

/// The op's passes (ns) of side `side`, each round.
fn op_ns(rounds: &[Vec<RunReport>], side: usize) -> Vec<f64> {
    side_ns(rounds, side, |r| Some(r.op.kernel_ns))
}

/// Claim 10: the dither's passes on the GPU against the CPU's sequential loop at each size (the
/// blur's beside them), in turns until decided.
pub(super) fn dither(engine: &Engine, plan: &Sampling<'_>, quick: bool) -> Result<ClaimResult, EngineError> {
    let sizes: &[(u32, u32)] = if quick { &QUICK_SIZES } else { &SIZES };
    // The four sides of each size, in turns: GPU dither, CPU dither, GPU blur, CPU blur.
    let four =
        [(Backend::Gpu, Op::Dither), (Backend::Cpu, Op::Dither), (Backend::Gpu, BLUR), (Backend::Cpu, BLUR)]
            .map(|(backend, op)| ConvertSettings { backend, op, ..ConvertSettings::default() });
    let mut measurements = Vec::new();
    let mut per_size = Vec::new();
    let mut blur_speedups = Vec::new();
    for &(w, h) in sizes {
        let image = synthetic_rgb(w, h, 10);
        let label = format!("{:.0} MP", crate::system::units::megapixels(w, h));
        let statistic = format!("GPU / CPU dither at {label}");
        let slower = |r: &[Vec<RunReport>]| ratios(&op_ns(r, 0), &op_ns(r, 1));
        let (taken, e) =
            plan.decide((engine, &image), &four, (&statistic, rules::SEQUENTIAL_LOSES_RATIO), slower)?;
        for (side, s) in four.iter().enumerate() {
            let name = format!("{} {}, {label} ({w}x{h})", s.backend.name().to_uppercase(), s.op);
            let clock =
                taken.first().and_then(|r| r.get(side)).map_or(Clock::CpuClock, |r| r.op.kernel_clock);
            measurements.push(Measurement::ms_of(name, &op_ns(&taken, side), clock.label()));
        }
        per_size.push((label.clone(), median(&op_ns(&taken, 0)), median(&op_ns(&taken, 1)), e));
        blur_speedups.push((label, median(&ratios(&op_ns(&taken, 3), &op_ns(&taken, 2)))));
    }
    let &(w, h) = sizes.last().unwrap_or(&SIZES[0]);
    let (verdict, why) = rules::sequential_loses(&per_size, wavefront(w, h), &blur_speedups);
    Ok(ClaimResult::new(
        (10, "Sequential operations (step A must finish before step B) are better left to the CPU."),
        format!(
            "Floyd–Steinberg error diffusion to 1 bit (7, 3, 5, 1 / 16) on the gray plane of {} images: the CPU's \
             sequential loop against the GPU's wavefront (pixel (x, y) at step x + 2y), the op's passes alone; a \
             radius-8 blur (every pixel independent) beside it at the same sizes; all four in turns",
            sizes.iter().map(|&(w, h)| format!("{w}x{h}")).collect::<Vec<_>>().join(", ")
        ),
        measurements,
        (verdict, why),
        per_size.into_iter().map(|s| s.3).collect(),
    ))
}

/// The dither's wavefront on a `w` x `h` image: its steps (`w + 2h - 2`, each waiting for the one
/// before) and the most pixels any step holds (`min(h, ⌈w / 2⌉)`), out of `w * h`.
#[must_use]
pub fn wavefront(w: u32, h: u32) -> rules::Wavefront {
    let (w, h) = (u64::from(w), u64::from(h));
    rules::Wavefront { steps: w + 2 * h - 2, widest: h.min(w.div_ceil(2)), pixels: w * h }
}
