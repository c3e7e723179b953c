//! The operations applied to the gray plane after the grayscale ([`Op`]), and their exact
//! integer definitions, shared by the CPU kernels and the GPU shader host code.
//!
//! **Blur of radius R** (1..=64): a separable Gaussian of `2R + 1` taps, sigma
//! `0.3 (R - 1) + 0.8` (`OpenCV`'s default for `ksize = 2R + 1`), quantised once, on the host, to
//! integer weights summing to exactly [`BLUR_WEIGHT_SUM`] = 2^12 ([`blur_weights`]). The
//! horizontal pass keeps `h = Σ w_i p(x + i)` whole (u32, at most 255 · 2^12); the vertical pass
//! sums `Σ w_j h(y + j)` (u32, at most 255 · 2^24, no overflow) and rounds once:
//! `out = (acc + 2^23) >> 24`. Borders clamp to the edge. 2 (2R + 1) multiply-adds per pixel,
//! counted as 4 (2R + 1) integer operations.
//!
//! **Dither**: Floyd–Steinberg to 1 bit, left to right on every row (not serpentine). Each pixel
//! keeps its error `e = v - out` (i32). A pixel's value is
//! `v = g + ((7 e(x-1, y) + 3 e(x+1, y-1) + 5 e(x, y-1) + 1 e(x-1, y-1) + 8) >> 4)` (arithmetic
//! shift: the sixteenths rounded half up; a neighbour outside the image counts 0), its output
//! `255` when `v >= 128`, else `0`. Every sum is exact, so the result does not depend on the
//! order in which independent pixels run: the GPU's wavefront gives the same bytes.

use std::fmt;
use std::str::FromStr;

/// The smallest blur radius.
pub const MIN_BLUR_RADIUS: u32 = 1;
/// The largest blur radius (a 129-tap kernel).
pub const MAX_BLUR_RADIUS: u32 = 64;
/// log2 of the sum of the 1-D blur weights.
pub const BLUR_WEIGHT_BITS: u32 = 12;
/// The sum of the 1-D blur weights.
pub const BLUR_WEIGHT_SUM: u32 = 1 << BLUR_WEIGHT_BITS;
/// The dither's threshold: a value at or above it becomes white.
pub const DITHER_THRESHOLD: i32 = 128;
/// Integer operations per dithered pixel: 4 multiply-adds (8), the rounding add and shift (2),
/// the threshold (1) and the error (1).
pub const DITHER_OPS_PER_PIXEL: u64 = 12;

/// An operation on the gray plane after the grayscale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Op {
    /// Nothing: the grayscale is the result.
    #[default]
    None,
    /// The separable integer Gaussian of `radius` (1..=64) pixels.
    Blur {
        /// Taps on each side of the centre.
        radius: u32,
    },
    /// Floyd–Steinberg error diffusion to 1 bit (0 or 255).
    Dither,
}

impl Op {
    /// Whether the op changes nothing (and costs nothing).
    #[must_use]
    pub fn is_none(self) -> bool {
        self == Self::None
    }

    /// Integer operations per pixel, for ops/s figures: 4 (2R + 1) for a blur,
    /// [`DITHER_OPS_PER_PIXEL`] for the dither.
    #[must_use]
    pub fn ops_per_pixel(self) -> u64 {
        match self {
            Self::None => 0,
            Self::Blur { radius } => 4 * (2 * u64::from(radius) + 1),
            Self::Dither => DITHER_OPS_PER_PIXEL,
        }
    }

    /// Its operations per pixel as rounds of the synthetic work (3 operations each, rounded
    /// up): how an op is priced before its rates are measured (a blur of radius 16: 44).
    #[must_use]
    pub fn synthetic_rounds(self) -> u32 {
        u32::try_from(self.ops_per_pixel().div_ceil(u64::from(super::OPS_PER_ROUND))).unwrap_or(u32::MAX)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::Blur { radius } => write!(f, "blur:{radius}"),
            Self::Dither => f.write_str("dither"),
        }
    }
}

/// Why a text is not an [`Op`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown operation {text:?} (expected none, blur:R with R in {MIN_BLUR_RADIUS}..={MAX_BLUR_RADIUS}, or dither)"
)]
pub struct ParseOpError {
    /// The text given.
    pub text: String,
}

impl FromStr for Op {
    type Err = ParseOpError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseOpError { text: s.to_owned() };
        let lower = s.trim().to_ascii_lowercase();
        match lower.as_str() {
            "none" => Ok(Self::None),
            "dither" => Ok(Self::Dither),
            _ => {
                let radius: u32 = lower.strip_prefix("blur:").ok_or_else(err)?.parse().map_err(|_| err())?;
                if (MIN_BLUR_RADIUS..=MAX_BLUR_RADIUS).contains(&radius) {
                    Ok(Self::Blur { radius })
                } else {
                    Err(err())
                }
            }
        }
    }
}

impl serde::Serialize for Op {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Op {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The `2R + 1` integer weights of the blur of `radius` (clamped to 1..=64), centre in the
/// middle, summing to exactly [`BLUR_WEIGHT_SUM`]: each Gaussian weight scaled to the sum and
/// rounded, the remainder added to the centre.
#[must_use]
pub fn blur_weights(radius: u32) -> Vec<u32> {
    let r = radius.clamp(MIN_BLUR_RADIUS, MAX_BLUR_RADIUS);
    let sigma = 0.3 * f64::from(r - 1) + 0.8;
    let gauss: Vec<f64> = (0..=2 * r)
        .map(|i| {
            let d = f64::from(i) - f64::from(r);
            (-(d * d) / (2.0 * sigma * sigma)).exp()
        })
        .collect();
    let total: f64 = gauss.iter().sum();
    let mut weights: Vec<u32> =
        gauss.iter().map(|g| (g / total * f64::from(BLUR_WEIGHT_SUM)).round() as u32).collect();
    let sum: u32 = weights.iter().sum();
    let centre = r as usize;
    if let Some(c) = weights.get_mut(centre) {
        *c = (*c + BLUR_WEIGHT_SUM).saturating_sub(sum);
    }
    weights
}

/// The blur's final rounding of a vertical sum.
#[inline(always)]
#[must_use]
pub fn blur_round(acc: u32) -> u8 {
    ((acc + (1 << (2 * BLUR_WEIGHT_BITS - 1))) >> (2 * BLUR_WEIGHT_BITS)) as u8
}

/// The scalar reference blur of a `width` x `height` gray plane (the oracle).
#[must_use]
pub fn blur_reference(src: &[u8], (width, height): (usize, usize), radius: u32) -> Vec<u8> {
    let weights = blur_weights(radius);
    let r = weights.len() / 2;
    // Clamp to the edge: tap `i` of pixel `x` reads `x + i - r` within `0..n`.
    let clamp = |v: usize, i: usize, n: usize| (v + i).saturating_sub(r).min(n - 1);
    let mut mid = vec![0_u32; width * height];
    for y in 0..height {
        for x in 0..width {
            let mut acc = 0_u32;
            for (i, w) in weights.iter().enumerate() {
                acc += w * u32::from(src[y * width + clamp(x, i, width)]);
            }
            mid[y * width + x] = acc;
        }
    }
    let mut out = vec![0_u8; width * height];
    for y in 0..height {
        for x in 0..width {
            let mut acc = 0_u32;
            for (j, w) in weights.iter().enumerate() {
                acc += w * mid[clamp(y, j, height) * width + x];
            }
            out[y * width + x] = blur_round(acc);
        }
    }
    out
}

/// The dither's value of a pixel of gray `g`, given its neighbours' errors (left, up-right, up,
/// up-left; 0 outside the image): `(output, error)`.
#[inline(always)]
#[must_use]
pub fn dither_pixel(g: u8, [left, up_right, up, up_left]: [i32; 4]) -> (u8, i32) {
    let v = i32::from(g) + ((7 * left + 3 * up_right + 5 * up + up_left + 8) >> 4);
    if v >= DITHER_THRESHOLD { (255, v - 255) } else { (0, v) }
}

/// The scalar reference dither of a `width` x `height` gray plane (the oracle): 0 or 255 per
/// pixel.
#[must_use]
pub fn dither_reference(src: &[u8], (width, height): (usize, usize)) -> Vec<u8> {
    let mut err = vec![0_i32; width * height];
    let mut out = vec![0_u8; width * height];
    for y in 0..height {
        for x in 0..width {
            let left = if x > 0 { err[y * width + x - 1] } else { 0 };
            let (mut up_right, mut up, mut up_left) = (0, 0, 0);
            if y > 0 {
                let row = (y - 1) * width;
                up = err[row + x];
                up_left = if x > 0 { err[row + x - 1] } else { 0 };
                up_right = if x + 1 < width { err[row + x + 1] } else { 0 };
            }
            let (o, e) = dither_pixel(src[y * width + x], [left, up_right, up, up_left]);
            out[y * width + x] = o;
            err[y * width + x] = e;
        }
    }
    out
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn ops_parse_print_and_count() {
        for (text, op) in [("none", Op::None), ("blur:8", Op::Blur { radius: 8 }), ("dither", Op::Dither)] {
            assert_eq!(text.parse::<Op>(), Ok(op));
            assert_eq!(op.to_string(), text);
            assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<Op>(&format!("\"{text}\"")).unwrap(), op);
        }
        for bad in ["blur:0", "blur:65", "blur", "blur:x", "sharpen"] {
            assert!(bad.parse::<Op>().is_err(), "{bad}");
        }
        assert_eq!(Op::Blur { radius: 8 }.ops_per_pixel(), 68);
        assert_eq!(Op::Dither.ops_per_pixel(), 12);
        assert_eq!(Op::None.ops_per_pixel(), 0);
    }

    #[test]
    fn weights_sum_to_the_power_of_two_and_are_symmetric() {
        for r in 1..=64 {
            let w = blur_weights(r);
            assert_eq!(w.len(), 2 * r as usize + 1);
            assert_eq!(w.iter().sum::<u32>(), BLUR_WEIGHT_SUM, "r = {r}");
            assert!(w.iter().zip(w.iter().rev()).all(|(a, b)| a == b), "r = {r}");
            assert!(w[r as usize] >= w[0], "r = {r}");
        }
        assert_eq!(blur_weights(1), vec![979, 2138, 979]);
        // The largest vertical sum, with its rounding half, stays within u32.
        assert!(255_u64 * u64::from(BLUR_WEIGHT_SUM).pow(2) + (1 << 23) < 1 << 32);
    }

    #[test]
    fn a_flat_plane_stays_flat_and_the_dither_keeps_the_mean() {
        let flat = vec![77_u8; 9 * 5];
        assert_eq!(blur_reference(&flat, (9, 5), 3), flat);
        assert_eq!(blur_reference(&[200], (1, 1), 64), vec![200]);
        let d = dither_reference(&vec![128_u8; 64 * 64], (64, 64));
        let white: usize = d.iter().map(|&v| usize::from(v == 255)).sum();
        assert!(d.iter().all(|&v| v == 0 || v == 255));
        assert!(white.abs_diff(2048) < 64, "{white} white of 4096");
        assert_eq!(dither_reference(&[127, 128], (2, 1)), vec![0, 255]);
    }
}
