//! Integer lookup tables for the linear-light formula, built once and shared by the CPU kernels
//! and the GPU (which receives them as storage buffers), so both compute the same bytes.

use std::sync::OnceLock;

/// sRGB <-> 16-bit linear-light tables.
///
/// Linear values are in `0..=65535`. The tables are computed once in `f64`; whatever the platform's
/// `powf` rounding, CPU and GPU read the same table and so agree bit for bit.
pub struct LumaTables {
    /// 8-bit sRGB -> 16-bit linear, 256 entries.
    pub srgb8_to_linear: Vec<u16>,
    /// 16-bit sRGB -> 16-bit linear, 65536 entries.
    pub srgb16_to_linear: Vec<u16>,
    /// 16-bit linear -> 8-bit sRGB (round to nearest), 65536 entries.
    pub linear_to_srgb8: Vec<u8>,
    /// 16-bit linear -> 16-bit sRGB (round to nearest), 65536 entries.
    pub linear_to_srgb16: Vec<u16>,
}

/// The process-wide tables, built on first use (about a millisecond).
#[must_use]
pub fn luma_tables() -> &'static LumaTables {
    static TABLES: OnceLock<LumaTables> = OnceLock::new();
    TABLES.get_or_init(LumaTables::build)
}

pub(super) fn srgb_decode(v: f64) -> f64 {
    if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
}

pub(super) fn srgb_encode(v: f64) -> f64 {
    if v <= 0.003_130_8 { v * 12.92 } else { 1.055 * v.powf(1.0 / 2.4) - 0.055 }
}

/// Rounds `unit * max` to the nearest integer, clamped to `0..=max`.
fn quantize(unit: f64, max: f64) -> f64 {
    (unit * max).round().clamp(0.0, max)
}

impl LumaTables {
    fn build() -> Self {
        let srgb8_to_linear =
            (0..=255u32).map(|i| quantize(srgb_decode(f64::from(i) / 255.0), 65535.0) as u16).collect();
        let srgb16_to_linear =
            (0..=65535u32).map(|i| quantize(srgb_decode(f64::from(i) / 65535.0), 65535.0) as u16).collect();
        let linear_to_srgb8 =
            (0..=65535u32).map(|i| quantize(srgb_encode(f64::from(i) / 65535.0), 255.0) as u8).collect();
        let linear_to_srgb16 =
            (0..=65535u32).map(|i| quantize(srgb_encode(f64::from(i) / 65535.0), 65535.0) as u16).collect();
        Self { srgb8_to_linear, srgb16_to_linear, linear_to_srgb8, linear_to_srgb16 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_monotone_and_span_the_range() {
        let t = luma_tables();
        assert_eq!(t.srgb8_to_linear.len(), 256);
        assert_eq!(t.linear_to_srgb8.len(), 65536);
        assert_eq!((t.srgb8_to_linear[0], t.srgb8_to_linear[255]), (0, 65535));
        assert_eq!((t.linear_to_srgb8[0], t.linear_to_srgb8[65535]), (0, 255));
        assert_eq!((t.linear_to_srgb16[0], t.linear_to_srgb16[65535]), (0, 65535));
        assert!(t.srgb8_to_linear.windows(2).all(|w| w[0] <= w[1]));
        assert!(t.srgb16_to_linear.windows(2).all(|w| w[0] <= w[1]));
        assert!(t.linear_to_srgb8.windows(2).all(|w| w[0] <= w[1]));
        // Mid gray: sRGB 128 is about 21.6% linear.
        assert_eq!(t.srgb8_to_linear[128], 14_146);
        // Every 8-bit sRGB value survives the round trip through 16-bit linear.
        for v in 0..=255u8 {
            assert_eq!(t.linear_to_srgb8[usize::from(t.srgb8_to_linear[usize::from(v)])], v);
        }
    }
}
