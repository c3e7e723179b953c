//! The constant tables of a baseline JPEG: the Annex K luminance quantisation table with the IJG
//! quality scaling (what libjpeg, and so `OpenCV`, use), the zigzag order, and the Annex K
//! "typical" luminance Huffman tables.

/// Annex K.1 luminance quantisation table, natural (row-major) order.
const LUMA_QUANT: [u16; 64] = [
    16, 11, 10, 16, 24, 40, 51, 61, //
    12, 12, 14, 19, 26, 58, 60, 55, //
    14, 13, 16, 24, 40, 57, 69, 56, //
    14, 17, 22, 29, 51, 87, 80, 62, //
    18, 22, 37, 56, 68, 109, 103, 77, //
    24, 35, 55, 64, 81, 104, 113, 92, //
    49, 64, 78, 87, 103, 121, 120, 101, //
    72, 92, 95, 98, 112, 100, 103, 99,
];

/// The natural index of each zigzag position.
pub(crate) const ZIGZAG: [u8; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7,
    14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39,
    46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// Annex K.3 luminance DC table: code counts per length 1..=16.
pub(crate) const DC_LENGTHS: [u8; 16] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
/// Annex K.3 luminance DC table: the symbols.
pub(crate) const DC_VALUES: [u8; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
/// Annex K.3 luminance AC table: code counts per length 1..=16.
pub(crate) const AC_LENGTHS: [u8; 16] = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D];
/// Annex K.3 luminance AC table: the symbols.
pub(crate) const AC_VALUES: [u8; 162] = [
    0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22,
    0x71, 0x14, 0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0, 0x24, 0x33,
    0x62, 0x72, 0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x34,
    0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x53, 0x54, 0x55,
    0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x73, 0x74, 0x75, 0x76,
    0x77, 0x78, 0x79, 0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96,
    0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5,
    0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4,
    0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1,
    0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA,
];

/// The AAN DCT's per-frequency scale factors (libjpeg's `aanscalefactor`).
const AAN_SCALE: [f32; 8] =
    [1.0, 1.387_039_8, 1.306_563, 1.175_875_6, 1.0, 0.785_694_96, 0.541_196_1, 0.275_899_38];

/// The quantisation table for an IJG quality (1-100), natural order, each entry 1..=255
/// (baseline), exactly as libjpeg's `jpeg_set_quality(.., force_baseline = TRUE)` builds it.
#[must_use]
pub(crate) fn quant_table(quality: u8) -> [u8; 64] {
    let quality = u32::from(quality.clamp(1, 100));
    let scale = if quality < 50 { 5000 / quality } else { 200 - quality * 2 };
    LUMA_QUANT.map(|q| ((u32::from(q) * scale + 50) / 100).clamp(1, 255) as u8)
}

/// Reciprocal divisors for the float DCT's output, in the transposed layout the block coder uses
/// (entry `u * 8 + v` holds the divisor of natural coefficient `v * 8 + u`).
#[must_use]
pub(crate) fn reciprocals_transposed(quant: &[u8; 64]) -> [f32; 64] {
    std::array::from_fn(|t| {
        let (u, v) = (t / 8, t % 8);
        1.0 / (f32::from(quant[v * 8 + u]) * AAN_SCALE[v] * AAN_SCALE[u] * 8.0)
    })
}

/// For each zigzag position, the index into the transposed coefficient array.
#[must_use]
pub(crate) fn zigzag_transposed() -> [u8; 64] {
    ZIGZAG.map(|n| (n % 8) * 8 + n / 8)
}

/// A Huffman code table for writing: for each symbol, the code in the low bits and its length.
pub(crate) struct HuffmanCodes {
    /// `code | length << 16` per symbol; 0 for symbols without a code.
    pub(crate) packed: [u32; 256],
}

impl HuffmanCodes {
    /// The canonical codes (JPEG Annex C) for code counts per length and symbols in code order.
    #[must_use]
    pub(crate) fn new(counts: &[u8; 16], symbols: &[u8]) -> Self {
        let mut packed = [0; 256];
        let mut code = 0u32;
        let mut next = symbols.iter();
        for (len_minus_1, &count) in counts.iter().enumerate() {
            for _ in 0..count {
                if let Some(&symbol) = next.next() {
                    packed[usize::from(symbol)] = code | ((len_minus_1 as u32 + 1) << 16);
                }
                code += 1;
            }
            code <<= 1;
        }
        Self { packed }
    }
}

#[cfg(test)]
mod tests {
    use crate::io::codecs::jpeg::tables::*;

    #[test]
    fn quality_scaling_matches_libjpeg() {
        // libjpeg: quality 50 is the table itself, 100 is all ones, 90 scales by 0.2.
        assert_eq!(quant_table(50)[0], 16);
        assert!(quant_table(100).iter().all(|&q| q == 1));
        assert_eq!(quant_table(90)[..4], [3, 2, 2, 3]);
        assert_eq!(quant_table(1)[0], 255);
    }

    #[test]
    fn standard_codes_are_canonical() {
        let dc = HuffmanCodes::new(&DC_LENGTHS, &DC_VALUES);
        // Category 0 is "00", 1 is "010", 11 is "111111110" (Annex K, table K.3).
        assert_eq!(dc.packed[0], 2 << 16);
        assert_eq!(dc.packed[1], 0b010 | 3 << 16);
        assert_eq!(dc.packed[11], 0b1_1111_1110 | 9 << 16);
        let ac = HuffmanCodes::new(&AC_LENGTHS, &AC_VALUES);
        // EOB is "1010", ZRL is "11111111001" (table K.5).
        assert_eq!(ac.packed[0x00], 0b1010 | 4 << 16);
        assert_eq!(ac.packed[0xF0], 0b111_1111_1001 | 11 << 16);
    }

    #[test]
    fn zigzag_is_a_permutation() {
        let mut seen = [false; 64];
        for &n in &zigzag_transposed() {
            seen[usize::from(n)] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
