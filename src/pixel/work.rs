//! The definition of the synthetic work-per-pixel load ([`Work`]), shared by the CPU kernels and
//! the GPU shader host code: `rounds` rounds of a 3-op integer hash on every gray value.
//!
//! ```text
//! h = g + 0x9E3779B9;  rounds times: h = (h ^ (h >> 15)) * 0x2C1B3C6D;  out = g ^ (h & mask)
//! ```
//!
//! all in wrapping `u32` arithmetic, `out` truncated to the pixel width. It is synthetic on
//! purpose (like mixbench's kernel): a knob on arithmetic intensity, 3 integer operations
//! (shift, xor, multiply) per round. The divergent variant runs the rounds only for odd gray
//! values.

/// Added to the gray value before the first round (the 32-bit golden-ratio constant).
pub const WORK_SEED: u32 = 0x9E37_79B9;

/// The multiplier of one round.
pub const WORK_MULTIPLIER: u32 = 0x2C1B_3C6D;

/// Integer operations the gray formula does per pixel (3 multiplies, 3 adds, 1 shift), counted on
/// the roofline so that the plain grayscale has a place on its log axis, and in a run's
/// operations per byte (`WorkFigures::ops_per_byte`), so that both put a level on the same side
/// of the ridge.
pub const FORMULA_OPS_PER_PIXEL: u64 = 7;

/// Integer operations per round (shift, xor, multiply), for ops/s figures.
pub const OPS_PER_ROUND: u32 = 3;

/// The most rounds a pixel's work may take: 65,536 (196,608 operations a pixel, far past any
/// machine's ridge point; at 8K about 4 minutes on lavapipe). Within it, a GPU invocation's
/// loops stay under llvmpipe's loop limiter (`shaders/work.wgsl`).
pub const MAX_WORK_ROUNDS: u32 = 1 << 16;

/// How much synthetic work each pixel gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Work {
    /// Rounds of the hash per pixel (0 leaves `h` at its seed value).
    pub rounds: u32,
    /// `AND`ed into the hash before it is `XOR`ed into the gray value; 0 keeps the image unchanged
    /// (the rounds still run), `0xFF` / `0xFFFF` make every output bit depend on the work.
    pub mask: u32,
    /// Run the rounds only for odd gray values; even ones get zero rounds.
    pub divergent: bool,
}

impl Work {
    /// No work at all: the plain grayscale.
    pub const NONE: Self = Self { rounds: 0, mask: 0, divergent: false };

    /// Whether applying this work changes nothing and costs nothing (zero rounds, mask 0), so
    /// the kernels may skip it.
    #[must_use]
    pub fn is_identity(self) -> bool {
        self.rounds == 0 && self.mask == 0
    }

    /// Integer operations asked of each pixel: [`OPS_PER_ROUND`] per round. The divergent
    /// variant is counted the same (the work asked for; only the odd gray values do it).
    #[must_use]
    pub fn ops_per_pixel(self) -> u64 {
        u64::from(self.rounds) * u64::from(OPS_PER_ROUND)
    }

    /// The reference result for one gray value `g` (0..=255 or 0..=65535), before truncation to
    /// the pixel width: plain scalar code, what the fast kernels and the GPU must match.
    #[must_use]
    pub fn reference_pixel(self, g: u32) -> u32 {
        let rounds = if self.divergent && g & 1 == 0 { 0 } else { self.rounds };
        g ^ (scalar_rounds(g, rounds) & self.mask)
    }
}

/// The hash of gray value `g` after `rounds` rounds (the scalar reference, no mask).
#[must_use]
pub fn scalar_rounds(g: u32, rounds: u32) -> u32 {
    let mut h = g.wrapping_add(WORK_SEED);
    for _ in 0..rounds {
        h = round(h);
    }
    h
}

/// One round of the hash.
#[inline(always)]
pub(crate) fn round(h: u32) -> u32 {
    (h ^ (h >> 15)).wrapping_mul(WORK_MULTIPLIER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(scalar_rounds(0, 0), WORK_SEED);
        assert_eq!(scalar_rounds(0, 1), (WORK_SEED ^ (WORK_SEED >> 15)).wrapping_mul(WORK_MULTIPLIER));
        // Divergent: even values get zero rounds, odd ones all of them.
        let w = Work { rounds: 3, mask: 0xFF, divergent: true };
        assert_eq!(w.reference_pixel(4), 4 ^ (scalar_rounds(4, 0) & 0xFF));
        assert_eq!(w.reference_pixel(5), 5 ^ (scalar_rounds(5, 3) & 0xFF));
        assert!(Work::default().is_identity() && Work::NONE == Work::default());
        assert!(!Work { rounds: 1, ..Work::NONE }.is_identity());
        assert_eq!(Work { rounds: 256, ..Work::NONE }.ops_per_pixel(), 768);
    }

    #[test]
    fn settings_without_work_fields_load() {
        let w: Work = serde_json::from_str(r#"{"rounds": 4}"#).expect("partial work parses");
        assert_eq!(w, Work { rounds: 4, mask: 0, divergent: false });
    }
}
