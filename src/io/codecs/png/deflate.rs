//! A fast deflate coder for PNG-filtered data: literals plus runs of zeros as distance-1
//! matches, eight bytes at a time (the approach of the `fdeflate` crate), in one dynamic-Huffman
//! block per stripe. The codes come from a sample of the whole image (every symbol gets a code),
//! so all stripes share them and each is coded in a single pass.
//!
//! Each stripe ends byte-aligned, so independently coded stripes concatenate into one valid
//! deflate stream (pigz-style): every stripe but the last ends with an empty stored block (a
//! sync flush) and only the last has BFINAL set.

use crate::io::codecs::png::huffman::{canonical_codes, code_lengths};

/// The longest deflate match.
const MAX_RUN: usize = 258;
/// Lit/len alphabet size (literals, end of block, length codes).
const LITLEN_SYMBOLS: usize = 286;
const END_OF_BLOCK: usize = 256;
/// Order in which code-length code lengths are stored (RFC 1951, 3.2.7).
const CODE_LENGTH_ORDER: [usize; 19] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/// Length symbol (257..=285), extra bits and extra value for a match length 3..=258.
#[inline(always)]
fn length_code(len: usize) -> (usize, u32, u32) {
    const BASE: [u16; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163,
        195, 227, 258,
    ];
    const EXTRA: [u8; 29] =
        [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
    let i = BASE.partition_point(|&b| usize::from(b) <= len) - 1;
    (257 + i, u32::from(EXTRA[i]), (len - usize::from(BASE[i])) as u32)
}

/// Receives the tokens of a sample, to count them.
trait Sink {
    fn literal(&mut self, byte: u8);
    fn run(&mut self, len: usize);
}

/// Splits `data` into literals and zero runs; a run follows a literal zero.
#[inline(always)]
fn tokenize(data: &[u8], sink: &mut impl Sink) {
    let mut i = 0;
    while let Some(&byte) = data.get(i) {
        sink.literal(byte);
        i += 1;
        if byte != 0 {
            continue;
        }
        let start = i;
        while let Some(chunk) = data.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([1; 8]));
            if word != 0 {
                i += (word.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        while data.get(i) == Some(&0) {
            i += 1;
        }
        let mut run = i - start;
        while run >= MAX_RUN {
            sink.run(MAX_RUN);
            run -= MAX_RUN;
        }
        if run >= 3 {
            sink.run(run);
        } else {
            for _ in 0..run {
                sink.literal(0);
            }
        }
    }
}

struct Counter([u32; LITLEN_SYMBOLS]);

impl Sink for Counter {
    #[inline(always)]
    fn literal(&mut self, byte: u8) {
        self.0[usize::from(byte)] += 1;
    }
    #[inline(always)]
    fn run(&mut self, len: usize) {
        self.0[length_code(len).0] += 1;
    }
}

/// Run-length codes the concatenated code lengths with symbols 16/17/18:
/// `(symbol, extra_bits, extra_value)`.
fn rle_lengths(lengths: &[u8]) -> Vec<(u8, u32, u32)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&l) = lengths.get(i) {
        let run = lengths[i..].iter().take_while(|&&x| x == l).count();
        if l == 0 && run >= 3 {
            let n = run.min(138);
            out.push(if n >= 11 { (18, 7, n as u32 - 11) } else { (17, 3, n as u32 - 3) });
            i += n;
        } else if l != 0 && run >= 4 {
            out.push((l, 0, 0));
            let n = (run - 1).min(6);
            out.push((16, 2, n as u32 - 3));
            i += 1 + n;
        } else {
            out.push((l, 0, 0));
            i += 1;
        }
    }
    out
}

/// The Huffman codes of one image's stripes and their dynamic-block header.
pub(crate) struct DeflateCodes {
    /// Per literal/length symbol: `code | len << 16`, bit-reversed for LSB-first writing.
    litlen: [u32; LITLEN_SYMBOLS],
    /// The header after BFINAL and BTYPE: `(value, bits)` pieces.
    header: Vec<(u32, u32)>,
}

impl DeflateCodes {
    /// Codes fitted to `sample` (filtered bytes representative of the image); every symbol gets
    /// a code, so any data can be written with them.
    #[must_use]
    pub(crate) fn from_sample(sample: &[u8]) -> Self {
        let mut counter = Counter([0; LITLEN_SYMBOLS]);
        tokenize(sample, &mut counter);
        // Scale so that the floor of one for unseen symbols stays cheap for the common ones.
        let freqs: Vec<u32> = counter.0.iter().map(|&f| f.saturating_mul(16).max(1)).collect();
        let litlen_lengths = code_lengths(&freqs, 15);
        // Two distance codes of one bit each: code 0 (distance 1) is all we use.
        let dist_lengths = [1u8, 1];
        let all: Vec<u8> = litlen_lengths.iter().chain(&dist_lengths).copied().collect();
        let rle = rle_lengths(&all);
        let mut cl_freqs = [0u32; 19];
        for &(symbol, _, _) in &rle {
            cl_freqs[usize::from(symbol)] += 1;
        }
        let cl_lengths = code_lengths(&cl_freqs, 7);
        let cl_codes = canonical_codes(&cl_lengths);
        let hclen = CODE_LENGTH_ORDER.iter().rposition(|&s| cl_lengths[s] > 0).map_or(4, |p| (p + 1).max(4));
        let mut header = vec![
            ((LITLEN_SYMBOLS - 257) as u32, 5),
            ((dist_lengths.len() - 1) as u32, 5),
            ((hclen - 4) as u32, 4),
        ];
        header.extend(CODE_LENGTH_ORDER[..hclen].iter().map(|&s| (u32::from(cl_lengths[s]), 3)));
        for &(symbol, extra_len, extra) in &rle {
            let c = cl_codes[usize::from(symbol)];
            header.push((c & 0xFFFF, c >> 16));
            header.push((extra, extra_len));
        }
        let codes = canonical_codes(&litlen_lengths);
        Self { litlen: std::array::from_fn(|s| codes.get(s).copied().unwrap_or(0)), header }
    }

    /// The code and length of a literal.
    #[inline(always)]
    fn literal(&self, byte: u8) -> (u64, u32) {
        let c = self.litlen[usize::from(byte)];
        (u64::from(c & 0xFFFF), c >> 16)
    }
}

/// An LSB-first bit writer with a 64-bit buffer; its state is kept apart from the output so it
/// stays in registers.
#[derive(Clone, Copy)]
struct Bits {
    acc: u64,
    count: u32,
}

impl Bits {
    /// Adds `len` (at most 64) bits.
    #[inline(always)]
    fn put(&mut self, out: &mut Vec<u8>, value: u64, len: u32) {
        self.acc |= value << self.count;
        self.count += len;
        if self.count >= 64 {
            out.extend_from_slice(&self.acc.to_le_bytes());
            self.count -= 64;
            self.acc = value.checked_shr(len - self.count).unwrap_or(0);
        }
    }

    /// Pads with zero bits to a byte boundary and flushes.
    fn align(&mut self, out: &mut Vec<u8>) {
        let bytes = self.count.div_ceil(8) as usize;
        out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
        self.acc = 0;
        self.count = 0;
    }
}

/// Codes data with `codes`; the output is passed separately so that the bit state stays in
/// registers (a `Vec` that may grow has to live in memory).
struct StripeWriter<'a> {
    bits: Bits,
    codes: &'a DeflateCodes,
}

impl StripeWriter<'_> {
    #[inline(always)]
    fn literals(&mut self, out: &mut Vec<u8>, bytes: &[u8]) {
        for &b in bytes {
            let (code, len) = self.codes.literal(b);
            self.bits.put(out, code, len);
        }
    }

    /// Four literals in one put (at most 60 bits).
    #[inline(always)]
    fn literals4(&mut self, out: &mut Vec<u8>, bytes: &[u8]) {
        let (mut value, mut len) = (0u64, 0u32);
        for &b in bytes {
            let (c, l) = self.codes.literal(b);
            value |= c << len;
            len += l;
        }
        self.bits.put(out, value, len);
    }

    /// A zero literal followed by `run - 1` more zeros as distance-1 matches.
    #[inline(always)]
    fn run(&mut self, out: &mut Vec<u8>, run: usize) {
        self.literals(out, &[0]);
        let mut rest = run - 1;
        while rest >= MAX_RUN {
            self.matched(out, MAX_RUN);
            rest -= MAX_RUN;
        }
        if rest >= 3 {
            self.matched(out, rest);
        } else {
            for _ in 0..rest {
                self.literals(out, &[0]);
            }
        }
    }

    #[inline(always)]
    fn matched(&mut self, out: &mut Vec<u8>, len: usize) {
        let (symbol, extra_len, extra) = length_code(len);
        let c = self.codes.litlen[symbol];
        // Then distance code 0 (distance 1): the single bit 0.
        let value = u64::from(c & 0xFFFF) | (u64::from(extra) << (c >> 16));
        self.bits.put(out, value, (c >> 16) + extra_len + 1);
    }

    fn write(&mut self, out: &mut Vec<u8>, data: &[u8]) {
        let mut run = 0;
        let mut chunks = data.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            if word == 0 {
                run += 8;
                continue;
            }
            // Zeros at the start of this chunk continue the run.
            let leading = (word.trailing_zeros() / 8) as usize;
            // Zeros at its end start the next one.
            let trailing = (word.leading_zeros() / 8) as usize;
            if run > 0 || leading > 0 {
                self.run(out, run + leading);
                self.literals(out, &chunk[leading..8 - trailing]);
            } else if trailing > 0 {
                self.literals(out, &chunk[..8 - trailing]);
            } else {
                self.literals4(out, &chunk[..4]);
                self.literals4(out, &chunk[4..]);
            }
            run = trailing;
        }
        if run > 0 {
            self.run(out, run);
        }
        self.literals(out, chunks.remainder());
    }
}

/// Compresses `data` as one dynamic block with `codes`; `last` sets BFINAL, otherwise the
/// block is followed by an empty stored block so the output ends byte-aligned and another
/// stripe can follow.
#[must_use]
pub(crate) fn deflate_stripe(data: &[u8], codes: &DeflateCodes, last: bool) -> Vec<u8> {
    // At most 15 bits per byte, plus the header: the output never reallocates.
    let mut out = Vec::with_capacity(data.len() * 15 / 8 + 1024);
    let mut writer = StripeWriter { bits: Bits { acc: 0, count: 0 }, codes };
    writer.bits.put(&mut out, u64::from(last) | (2 << 1), 3);
    for &(value, len) in &codes.header {
        writer.bits.put(&mut out, u64::from(value), len);
    }
    writer.write(&mut out, data);
    let mut bits = writer.bits;
    let eob = codes.litlen[END_OF_BLOCK];
    bits.put(&mut out, u64::from(eob & 0xFFFF), eob >> 16);
    if !last {
        // An empty stored block: header 000, align, LEN 0, NLEN 0xFFFF.
        bits.put(&mut out, 0, 3);
        bits.align(&mut out);
        out.extend_from_slice(&[0, 0, 0xFF, 0xFF]);
    }
    bits.align(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use crate::io::codecs::png::deflate::*;

    fn inflate(stream: &[u8]) -> Vec<u8> {
        miniz_oxide::inflate::decompress_to_vec(stream).expect("a valid deflate stream")
    }

    #[test]
    fn stripes_join_into_one_stream() {
        let data: Vec<u8> =
            (0..200_000u32).map(|i| if i % 7 < 3 { 0 } else { (i * 31 % 251) as u8 }).collect();
        let (a, b) = data.split_at(77_777);
        let codes = DeflateCodes::from_sample(&data[..1000]);
        let mut joined = deflate_stripe(a, &codes, false);
        joined.extend(deflate_stripe(b, &codes, true));
        assert_eq!(inflate(&joined), data);
    }

    #[test]
    fn edge_cases_round_trip() {
        for data in [vec![0u8], vec![7], vec![0; 100_000], vec![0, 0, 1, 0, 0, 0, 0], (0..=255).collect()] {
            let codes = DeflateCodes::from_sample(&data);
            assert_eq!(inflate(&deflate_stripe(&data, &codes, true)), data);
            let mut two = deflate_stripe(&data, &codes, false);
            two.extend(deflate_stripe(&data, &codes, true));
            assert_eq!(inflate(&two), [data.clone(), data].concat());
        }
    }

    #[test]
    fn every_run_length_round_trips() {
        for run in 1..600 {
            let mut data = vec![5u8; 3];
            data.extend(std::iter::repeat_n(0, run));
            data.push(9);
            let codes = DeflateCodes::from_sample(&[]);
            assert_eq!(inflate(&deflate_stripe(&data, &codes, true)), data, "run {run}");
        }
    }
}
