//! The per-stripe work of the JPEG encoder: 8x8 blocks through the DCT and quantisation
//! ([`crate::io::codecs::jpeg::dct`]) and Huffman coding into a byte-stuffed entropy segment.
//!
//! A stripe is one restart interval, so stripes code independently and in parallel.

use crate::io::codecs::jpeg::dct::{transform, transform_avx2};
#[cfg(target_arch = "x86_64")]
use crate::io::codecs::jpeg::tables::{
    AC_LENGTHS, AC_VALUES, DC_LENGTHS, DC_VALUES, HuffmanCodes, quant_table, reciprocals_transposed,
    zigzag_transposed,
};

/// Everything a stripe needs that depends only on the quality.
pub(crate) struct BlockCoder {
    /// The quantisation table, natural order (for the DQT segment).
    pub(crate) quant: [u8; 64],
    recip: [f32; 64],
    zigzag: [u8; 64],
    /// The zigzag position of each transposed entry.
    zigzag_position: [u8; 64],
    dc: HuffmanCodes,
    ac: HuffmanCodes,
}

/// A gray image borrowed for coding: `width` x `height` samples, rows packed.
#[derive(Clone, Copy)]
pub(crate) struct GrayPlane<'a> {
    /// The samples.
    pub(crate) pixels: &'a [u8],
    /// Width in pixels.
    pub(crate) width: usize,
    /// Height in pixels.
    pub(crate) height: usize,
}

/// A byte-stuffing bit writer, most significant bit first. The state is kept apart from the
/// output so it stays in registers.
#[derive(Clone, Copy)]
struct BitWriter {
    acc: u64,
    bits: u32,
}

impl BitWriter {
    /// Appends the low `len` bits of `code` (`len` <= 27, no bit of `code` above them).
    #[inline(always)]
    fn put(&mut self, out: &mut Vec<u8>, code: u32, len: u32) {
        // `bits` < 32 and `len` <= 27 here, so nothing pending is shifted out.
        self.acc = (self.acc << len) | u64::from(code);
        self.bits += len;
        if self.bits >= 32 {
            self.bits -= 32;
            let word = (self.acc >> self.bits) as u32;
            let inverted = !word;
            // A 0xFF byte is a zero byte of the inverted word; those need a stuffed 0x00.
            if inverted.wrapping_sub(0x0101_0101) & !inverted & 0x8080_8080 == 0 {
                out.extend_from_slice(&word.to_be_bytes());
            } else {
                stuff(out, &word.to_be_bytes());
            }
        }
    }

    /// Pads the last byte with one-bits and flushes what is pending.
    fn finish(mut self, out: &mut Vec<u8>) {
        let pad = (8 - self.bits % 8) % 8;
        self.put(out, (1 << pad) - 1, pad);
        let whole_bytes = self.bits / 8;
        let pending: Vec<u8> = (0..whole_bytes).rev().map(|i| (self.acc >> (i * 8)) as u8).collect();
        stuff(out, &pending);
    }
}

/// Appends `bytes`, each 0xFF followed by a stuffed 0x00.
#[cold]
fn stuff(out: &mut Vec<u8>, bytes: &[u8]) {
    for &byte in bytes {
        out.push(byte);
        if byte == 0xFF {
            out.push(0);
        }
    }
}

/// The magnitude category of a coefficient and its additional bits (JPEG F.1.2.1).
#[inline(always)]
fn magnitude(value: i32) -> (u32, u32) {
    let category = 32 - value.unsigned_abs().leading_zeros();
    let bits = if value < 0 { (value - 1) as u32 } else { value as u32 };
    (category, bits & ((1 << category) - 1))
}

impl BlockCoder {
    /// The tables for an IJG quality, 1-100.
    #[must_use]
    pub(crate) fn new(quality: u8) -> Self {
        let quant = quant_table(quality);
        Self {
            quant,
            recip: reciprocals_transposed(&quant),
            zigzag: zigzag_transposed(),
            zigzag_position: {
                let mut position = [0u8; 64];
                for (k, &t) in zigzag_transposed().iter().enumerate() {
                    position[usize::from(t)] = k as u8;
                }
                position
            },
            dc: HuffmanCodes::new(&DC_LENGTHS, &DC_VALUES),
            ac: HuffmanCodes::new(&AC_LENGTHS, &AC_VALUES),
        }
    }

    /// Codes block rows `block_rows` of `plane` as one entropy-coded segment (DC prediction
    /// starting from 0, the last byte padded with ones), ready to be followed by a marker.
    pub(crate) fn encode_stripe(&self, plane: GrayPlane<'_>, block_rows: std::ops::Range<usize>) -> Vec<u8> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("lzcnt")
        {
            // SAFETY: the CPU has AVX2, BMI1 and LZCNT, checked just above.
            return unsafe { self.encode_stripe_avx2(plane, block_rows) };
        }
        self.encode_stripe_generic(plane, block_rows, false)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,lzcnt")]
    unsafe fn encode_stripe_avx2(&self, plane: GrayPlane<'_>, block_rows: std::ops::Range<usize>) -> Vec<u8> {
        self.encode_stripe_generic(plane, block_rows, true)
    }

    #[inline(always)]
    fn encode_stripe_generic(
        &self,
        plane: GrayPlane<'_>,
        block_rows: std::ops::Range<usize>,
        avx2: bool,
    ) -> Vec<u8> {
        let blocks_across = plane.width.div_ceil(8);
        let rows = block_rows.len() * 8;
        let mut out = Vec::with_capacity(rows * plane.width / 4 + 64);
        let mut writer = BitWriter { acc: 0, bits: 0 };
        let mut previous_dc = 0;
        let mut block = [0u8; 64];
        for block_row in block_rows {
            // The rows of this block row, the last image row repeated past the bottom edge.
            let row_slices: [&[u8]; 8] = std::array::from_fn(|r| {
                let y = (block_row * 8 + r).min(plane.height - 1);
                plane.pixels.get(y * plane.width..(y + 1) * plane.width).unwrap_or(&[])
            });
            for bx in 0..blocks_across {
                let x0 = bx * 8;
                for (dst, row) in block.chunks_exact_mut(8).zip(&row_slices) {
                    if let Some(src) = row.get(x0..x0 + 8) {
                        dst.copy_from_slice(src);
                    } else {
                        // The right edge: repeat the last column.
                        let last = row.len().saturating_sub(1);
                        for (i, d) in dst.iter_mut().enumerate() {
                            *d = row.get((x0 + i).min(last)).copied().unwrap_or(0);
                        }
                    }
                }
                let coefficients = self.transform(&block, avx2);
                self.code_block(&mut writer, &mut out, &coefficients, &mut previous_dc);
            }
        }
        writer.finish(&mut out);
        out
    }

    /// DCT and quantisation of one block (64 samples, row-major): coefficients in the
    /// transposed layout and the mask of nonzero ones.
    #[inline(always)]
    fn transform(&self, block: &[u8; 64], avx2: bool) -> ([i16; 64], u64) {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: `avx2` is only true when the CPU has AVX2 (see `encode_stripe`).
            return unsafe { transform_avx2(block, &self.recip) };
        }
        let _ = avx2;
        transform(block, &self.recip)
    }

    #[inline(always)]
    fn code_block(
        &self,
        writer: &mut BitWriter,
        out: &mut Vec<u8>,
        (coefficients, nonzero): &([i16; 64], u64),
        previous_dc: &mut i32,
    ) {
        // The nonzero AC coefficients in zigzag order: only the few nonzero ones are moved.
        let mut zigzag_nonzero = 0u64;
        let mut rest = *nonzero & !1;
        while rest != 0 {
            zigzag_nonzero |= 1 << self.zigzag_position[rest.trailing_zeros() as usize];
            rest &= rest - 1;
        }
        let mut nonzero = zigzag_nonzero;
        let zz = |k: u32| i32::from(coefficients[usize::from(self.zigzag[k as usize])]);
        let dc = i32::from(coefficients[0]);
        let (category, bits) = magnitude((dc - *previous_dc).clamp(-2047, 2047));
        *previous_dc = dc;
        let code = self.dc.packed[category as usize];
        writer.put(out, ((code & 0xFFFF) << category) | bits, (code >> 16) + category);
        let mut last = 0;
        while nonzero != 0 {
            let k = nonzero.trailing_zeros();
            let mut run = k - last - 1;
            while run >= 16 {
                let zrl = self.ac.packed[0xF0];
                writer.put(out, zrl & 0xFFFF, zrl >> 16);
                run -= 16;
            }
            let (category, bits) = magnitude(zz(k));
            let code = self.ac.packed[((run << 4) | category) as usize];
            writer.put(out, ((code & 0xFFFF) << category) | bits, (code >> 16) + category);
            last = k;
            nonzero &= nonzero - 1;
        }
        if last != 63 {
            let eob = self.ac.packed[0x00];
            writer.put(out, eob & 0xFFFF, eob >> 16);
        }
    }
}
