//! What the ops on the gray plane cost on one backend ([`OpRates`]), measured whole on a small
//! plane when the ceilings are measured, so that a first estimate of a run with an op rests on
//! this machine and not on the synthetic work's rate: an op is not its operation count (lavapipe's
//! GPU blur took about 10x its count at the synthetic rate, its dither's wavefront waits between
//! steps).

use super::op::Op;

/// The blur radius the rates are measured at.
pub const RATE_BLUR_RADIUS: u32 = 8;
/// The plane the rates are measured on: 0.5 MP, 2:1.
pub const RATE_PLANE: (u32, u32) = (1024, 512);

/// What the ops cost on one backend, each measured whole: on the GPU the stage with its copies
/// of the plane; on the CPU on every thread.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpRates {
    /// The blur, ns per pixel and tap (2R + 1 taps), at radius [`RATE_BLUR_RADIUS`].
    pub blur_ns_per_pixel_tap: f64,
    /// The dither, ns per wavefront step (`w + 2h - 2` steps, each waiting for the one before):
    /// the GPU's cost, 0 on the CPU.
    pub dither_ns_per_step: f64,
    /// The dither, ns per pixel: the CPU's sequential loop, 0 on the GPU.
    pub dither_ns_per_pixel: f64,
}

impl OpRates {
    /// The rates from the blur's and the dither's times (ns) on a `(w, h)` plane: per step on the
    /// GPU (`per_step`), per pixel on the CPU.
    #[must_use]
    pub fn from_times(blur_ns: f64, dither_ns: f64, (w, h): (u32, u32), per_step: bool) -> Self {
        let pixels = (f64::from(w) * f64::from(h)).max(1.0);
        let taps = f64::from(2 * RATE_BLUR_RADIUS + 1);
        let steps = f64::from(w + 2 * h).max(3.0) - 2.0;
        Self {
            blur_ns_per_pixel_tap: blur_ns / (pixels * taps),
            dither_ns_per_step: if per_step { dither_ns / steps } else { 0.0 },
            dither_ns_per_pixel: if per_step { 0.0 } else { dither_ns / pixels },
        }
    }

    /// The rates of a backend that runs an op whole on the [`rate_plane`] in `run`'s time (ns):
    /// the fastest of `runs` after `warm_ups`, each op apart; per step on the GPU (`per_step`).
    pub(crate) fn measured<E>(
        per_step: bool,
        (warm_ups, runs): (usize, usize),
        mut run: impl FnMut(Op) -> Result<u64, E>,
    ) -> Result<Self, E> {
        let mut fastest_ns = |op| -> Result<f64, E> {
            let mut best = u64::MAX;
            for i in 0..warm_ups + runs {
                let ns = run(op)?;
                if i >= warm_ups {
                    best = best.min(ns);
                }
            }
            Ok(best as f64)
        };
        let blur_ns = fastest_ns(Op::Blur { radius: RATE_BLUR_RADIUS })?;
        let dither_ns = fastest_ns(Op::Dither)?;
        Ok(Self::from_times(blur_ns, dither_ns, RATE_PLANE, per_step))
    }

    /// Seconds `op` takes on an image of `megapixels` whose height is `height_per_width` times
    /// its width (2/3 for the claims' and the sweep's 3:2 images): the dither's wavefront takes
    /// `w + 2h - 2` steps.
    #[must_use]
    pub fn seconds(&self, op: Op, megapixels: f64, height_per_width: f64) -> f64 {
        let pixels = megapixels.max(0.0) * 1e6;
        let ns = match op {
            Op::None => 0.0,
            Op::Blur { radius } => pixels * f64::from(2 * radius + 1) * self.blur_ns_per_pixel_tap,
            Op::Dither => {
                let w = (pixels / height_per_width.max(f64::MIN_POSITIVE)).sqrt();
                let h = w * height_per_width;
                let steps = (w + 2.0 * h - 2.0).max(1.0);
                steps * self.dither_ns_per_step + pixels * self.dither_ns_per_pixel
            }
        };
        ns / 1e9
    }
}

/// A `(w, h)` plane of noise to measure the rates on (the dither's work does not depend on the
/// values, the blur's not at all).
#[must_use]
pub fn rate_plane((w, h): (u32, u32)) -> Vec<u8> {
    noise(w as usize * h as usize, 1)
}

/// `len` bytes of deterministic noise (xorshift32) from `seed`: the rate plane, and test data.
pub(crate) fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 24) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_scale_with_pixels_taps_and_steps() {
        // A GPU: 2 ms of blur:8 and 90 ms of dither on 1024 x 512 (2046 steps).
        let gpu = OpRates::from_times(2e6, 90e6, RATE_PLANE, true);
        let at = |op, mp| gpu.seconds(op, mp, 2.0 / 3.0);
        // The blur's time is the pixels' and the taps': 4x the pixels, 4x the time; radius 32
        // has 65 taps against 17.
        assert!(
            (at(Op::Blur { radius: 8 }, 2.097_152) / at(Op::Blur { radius: 8 }, 0.524_288) - 4.0).abs()
                < 1e-9
        );
        assert!(
            (at(Op::Blur { radius: 32 }, 1.0) / at(Op::Blur { radius: 8 }, 1.0) - 65.0 / 17.0).abs() < 1e-9
        );
        // The GPU's dither goes with its steps: 1224 x 816 has 2854, about 1.39x the plane's.
        let steps = 1224.0 + 2.0 * 816.0 - 2.0;
        assert!((at(Op::Dither, 1224.0 * 816.0 / 1e6) / 0.090 - steps / 2046.0).abs() < 0.01);
        // A tall image of as many pixels has far more steps: 200 x 20000, 40198 (a 3:2 one 5713).
        let tall = gpu.seconds(Op::Dither, 4.0, 100.0) / gpu.seconds(Op::Dither, 4.0, 2.0 / 3.0);
        assert!((tall - 40198.0 / (2449.49 + 2.0 * 1632.99 - 2.0)).abs() < 0.1, "{tall}");
        assert!(at(Op::None, 16.0).abs() < f64::EPSILON);
        // The CPU's dither goes with its pixels.
        let cpu = OpRates::from_times(1e6, 1.2e6, RATE_PLANE, false);
        assert!((cpu.seconds(Op::Dither, 4.0 * 0.524_288, 2.0 / 3.0) / 4.8e-3 - 1.0).abs() < 1e-9);
        assert!(cpu.dither_ns_per_step.abs() < f64::EPSILON);
        assert_eq!(rate_plane((3, 2)).len(), 6);
    }
}
