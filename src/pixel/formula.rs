//! The three grayscale formulas and their per-pixel integer definitions.

use std::fmt;
use std::str::FromStr;

use super::tables::luma_tables;

/// How a colour pixel becomes one gray value.
///
/// All three are defined in integer arithmetic so that every backend (scalar, SIMD, GPU) produces
/// the same bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Formula {
    /// BT.601 luma on encoded values, exactly `OpenCV`'s `cvtColor(RGB2GRAY)` for 8-bit images:
    /// `(R*9798 + G*19235 + B*3735 + 16384) >> 15`. Pure red gives 76.
    #[default]
    Bt601,
    /// BT.709 luma on encoded values (what `image`'s `grayscale()` approximates):
    /// `(R*6966 + G*23436 + B*2366 + 16384) >> 15`. Pure red gives 54.
    Bt709,
    /// Linear-light luminance: sRGB decode, BT.709 weights on linear values, sRGB encode, through
    /// integer tables with a 16-bit linear intermediate. Pure red gives 127.
    Linear,
    /// The luma a YCbCr JPEG stores, decoded alone (no chroma, no upsampling, no colour
    /// conversion): what the encoder computed from the original RGB with BT.601's weights, within
    /// a level or two of [`Formula::Bt601`] of the decoded RGB. Every other input (and a JPEG
    /// stored as RGB, CMYK or YCCK) is converted as [`Formula::Bt601`].
    #[serde(rename = "stored-luma")]
    StoredLuma,
}

impl Formula {
    /// Every formula, in menu order.
    pub const ALL: [Self; 4] = [Self::Bt601, Self::Bt709, Self::Linear, Self::StoredLuma];
    /// The formulas the kernels compute (every other is one of these on decoded pixels).
    pub const COMPUTED: [Self; 3] = [Self::Bt601, Self::Bt709, Self::Linear];

    /// The formula the kernels compute for this one: [`Formula::StoredLuma`] falls back to
    /// BT.601 on whatever is decoded as colour.
    #[must_use]
    pub fn computed(self) -> Self {
        match self {
            Self::StoredLuma => Self::Bt601,
            other => other,
        }
    }

    /// The short name used on the command line and in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Bt601 => "bt601",
            Self::Bt709 => "bt709",
            Self::Linear => "linear",
            Self::StoredLuma => "stored-luma",
        }
    }

    /// A one-line human description, for menus and help text.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::Bt601 => "BT.601 luma, exactly OpenCV cvtColor(RGB2GRAY)",
            Self::Bt709 => "BT.709 luma on encoded values",
            Self::Linear => "linear-light luminance (sRGB decode / encode)",
            Self::StoredLuma => "the JPEG's own Y plane, decoded alone (bt601 for other inputs)",
        }
    }

    /// The red, green and blue weights in 1/32768 units; they sum to exactly 32768 so that white
    /// stays white.
    #[must_use]
    pub fn weights(self) -> [u32; 3] {
        match self {
            Self::Bt601 | Self::StoredLuma => BT601_WEIGHTS,
            Self::Bt709 | Self::Linear => BT709_WEIGHTS,
        }
    }

    /// The number the GPU shader's `FORMULA` override constant takes for this formula.
    #[must_use]
    pub fn shader_id(self) -> u32 {
        match self {
            Self::Bt601 | Self::StoredLuma => 0,
            Self::Bt709 => 1,
            Self::Linear => 2,
        }
    }

    /// The gray value of one 8-bit RGB pixel: the definition every kernel is tested against.
    #[must_use]
    pub fn luma8(self, r: u8, g: u8, b: u8) -> u8 {
        let t = luma_tables();
        self.luma([r, g, b], &t.srgb8_to_linear, &t.linear_to_srgb8) as u8
    }

    /// The gray value of one 16-bit RGB pixel (same weights, wider integers).
    #[must_use]
    pub fn luma16(self, r: u16, g: u16, b: u16) -> u16 {
        let t = luma_tables();
        self.luma([r, g, b], &t.srgb16_to_linear, &t.linear_to_srgb16) as u16
    }

    /// One pixel's gray value; the linear formula goes through the tables of its width: decode,
    /// weigh, encode.
    fn luma<P: Into<u32>, O: Into<u32> + Copy>(self, rgb: [P; 3], to_linear: &[u16], to_srgb: &[O]) -> u32 {
        let [r, g, b] = rgb.map(Into::into);
        if self != Self::Linear {
            return weighted(self.weights(), r, g, b);
        }
        let at = |v: u32| u32::from(to_linear[v as usize]);
        to_srgb[weighted(BT709_WEIGHTS, at(r), at(g), at(b)) as usize].into()
    }
}

/// `OpenCV`'s 8-bit `RGB2GRAY` weights (`R2Y = 9798, G2Y = 19235, B2Y = 3735`, shift 15).
pub(crate) const BT601_WEIGHTS: [u32; 3] = [9798, 19235, 3735];
/// BT.709 weights 0.2126 / 0.7152 / 0.0722 in 1/32768 units, rounded and adjusted to sum to 32768.
pub(crate) const BT709_WEIGHTS: [u32; 3] = [6966, 23436, 2366];

/// `(r*wr + g*wg + b*wb + 2^14) >> 15`: round-to-nearest fixed-point weighting. Never overflows
/// a `u32` for inputs up to 65535 because the weights sum to 32768.
#[inline(always)]
#[must_use]
pub(crate) fn weighted(w: [u32; 3], r: u32, g: u32, b: u32) -> u32 {
    (r * w[0] + g * w[1] + b * w[2] + 16384) >> 15
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for a formula name that is not one of `bt601`, `bt709`, `linear`, `stored-luma`.
#[derive(Debug, thiserror::Error)]
#[error("unknown formula {0:?} (expected bt601, bt709, linear or stored-luma)")]
pub struct ParseFormulaError(String);

impl FromStr for Formula {
    type Err = ParseFormulaError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseFormulaError(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_pure_primaries_and_extremes() {
        assert_eq!(Formula::Bt601.luma8(255, 0, 0), 76);
        assert_eq!(Formula::Bt709.luma8(255, 0, 0), 54);
        assert_eq!(Formula::Linear.luma8(255, 0, 0), 127);
        assert_eq!(Formula::Bt601.luma8(0, 255, 0), 150);
        assert_eq!(Formula::Bt601.luma8(0, 0, 255), 29);
        for f in Formula::ALL {
            assert_eq!(f.weights().iter().sum::<u32>(), 32768, "{f}");
            assert_eq!(f.luma8(0, 0, 0), 0, "{f}");
            assert_eq!(f.luma8(255, 255, 255), 255, "{f}");
            assert_eq!(f.luma16(0, 0, 0), 0, "{f}");
            assert_eq!(f.luma16(65535, 65535, 65535), 65535, "{f}");
            for v in 0..=255u8 {
                assert_eq!(f.luma8(v, v, v), v, "{f}: gray {v} must stay {v}");
            }
        }
    }

    #[test]
    fn bt601_matches_opencv_float_reference_within_rounding() {
        // OpenCV documents Y = 0.299 R + 0.587 G + 0.114 B; its fixed-point form may differ from
        // the float by at most one level.
        for (r, g, b) in [(12u8, 200u8, 99u8), (255, 128, 0), (1, 2, 3), (250, 5, 77)] {
            let float = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
            let fixed = f64::from(Formula::Bt601.luma8(r, g, b));
            assert!((float - fixed).abs() <= 1.0, "{r},{g},{b}: {float} vs {fixed}");
        }
    }

    #[test]
    fn linear_is_within_one_level_of_float_reference() {
        use crate::pixel::tables::{srgb_decode as decode, srgb_encode as encode};
        let mut worst = 0.0f64;
        for r in (0..=255u8).step_by(5) {
            for g in (0..=255u8).step_by(5) {
                for b in (0..=255u8).step_by(5) {
                    let y = 0.2126 * decode(f64::from(r) / 255.0)
                        + 0.7152 * decode(f64::from(g) / 255.0)
                        + 0.0722 * decode(f64::from(b) / 255.0);
                    let float = encode(y) * 255.0;
                    let got = f64::from(Formula::Linear.luma8(r, g, b));
                    worst = worst.max((float - got).abs());
                }
            }
        }
        assert!(worst <= 1.0, "linear differs from the float reference by {worst} levels");
    }

    #[test]
    fn parses_names() {
        assert_eq!("BT709".parse::<Formula>().ok(), Some(Formula::Bt709));
        // Stored luma is bt601 wherever pixels are computed, in name and in JSON its own.
        assert_eq!("stored-luma".parse::<Formula>().ok(), Some(Formula::StoredLuma));
        assert_eq!(Formula::StoredLuma.computed(), Formula::Bt601);
        assert_eq!(Formula::StoredLuma.luma8(255, 0, 0), 76);
        assert_eq!(serde_json::to_string(&Formula::StoredLuma).ok().as_deref(), Some("\"stored-luma\""));
        assert!(!Formula::COMPUTED.contains(&Formula::StoredLuma));
        assert!("bt2020".parse::<Formula>().is_err());
    }
}
