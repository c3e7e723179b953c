//! A parallel PNG writer for gray and gray + alpha images, 8 or 16 bits (and 1-bit gray, the
//! dither's): rows are filtered
//! (adaptive per row: the filter with the smallest sum of absolute values, as libpng and the
//! `png` crate choose) and compressed in stripes on all cores, then the stripes are joined into
//! one zlib stream (see [`deflate`]) with the Adler-32 combined from theirs. A `tEXt` chunk
//! `Software` = graylab marks the file as graylab's ([`crate::io::mark`]); a `pHYs` chunk gives
//! the pixel density and an `eXIf` chunk the input's EXIF tags, where there are some.

mod deflate;
mod huffman;

use crate::io::mark::SOFTWARE;
use crate::io::{Density, WriteCause};
use std::io::Write;

use crate::io::codecs::rows::{GrayLayout, RowSource};
use crate::io::codecs::stripes::code_in_parallel_write_in_order;
use deflate::{DeflateCodes, deflate_stripe};

/// Rows filtered to choose the Huffman codes, spread over the image.
const SAMPLE_ROWS: usize = 64;

/// Raw bytes per stripe, about: large enough that the Huffman tables pay off, small enough for
/// many stripes on big images.
const STRIPE_BYTES: usize = 1 << 20;

/// 8-bit gray rows of `width` pixels packed to 1 bit a pixel: a value of 128 or more is a 1,
/// most significant bit first, each row padded to whole bytes with zeros.
#[must_use]
pub(in crate::io) fn pack_bits(gray: &[u8], width: usize) -> Vec<u8> {
    let row_bytes = width.div_ceil(8);
    let mut packed = Vec::with_capacity(gray.len().div_ceil(width.max(1)) * row_bytes);
    for row in gray.chunks(width.max(1)) {
        for eight in row.chunks(8) {
            let byte = eight.iter().enumerate().fold(0_u8, |b, (i, &v)| b | (u8::from(v >= 128) << (7 - i)));
            packed.push(byte);
        }
    }
    packed
}

/// Writes the rows of `source` as a PNG of `layout` at `depth` bits a sample (its
/// [`GrayLayout::bit_depth`], or 1 for gray without alpha packed 8 pixels a byte, most
/// significant bit first, each row padded to whole bytes, as [`pack_bits`] packs them), of
/// `density` (in a `pHYs` chunk; none where `None`) and `exif` (an `eXIf` chunk before the
/// image data, where there is one); `progress` gets the fraction of stripes done.
pub(in crate::io) fn write_png(
    source: &dyn RowSource,
    (layout, depth, density, exif): (GrayLayout, u8, Option<Density>, Option<&crate::io::KeptMetadata>),
    out: &mut (impl Write + Send),
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(), WriteCause> {
    let bpp = layout.bytes_per_pixel();
    let row_bytes = if depth == 1 { (layout.width as usize).div_ceil(8) } else { layout.row_bytes() };
    let rows = layout.height as usize;
    if row_bytes == 0 || rows == 0 {
        return Err(WriteCause::Encoder(format!("a {}x{} image has no pixels", layout.width, layout.height)));
    }
    // Filtered bytes of rows `range`, reading the row above the first one too.
    let filtered = |range: std::ops::Range<usize>| -> Result<Vec<u8>, WriteCause> {
        let with_prev = range.start.saturating_sub(1)..range.end;
        let data = source.rows(with_prev.clone());
        if data.len() != with_prev.len() * row_bytes {
            return Err(WriteCause::Encoder(format!(
                "{} bytes for rows {with_prev:?} of {row_bytes} bytes",
                data.len()
            )));
        }
        Ok(filter_rows(&data, row_bytes, bpp, layout.sixteen_bit, range.start > 0))
    };
    let sample_rows = SAMPLE_ROWS.min(rows);
    let mut sample = Vec::new();
    for i in 0..sample_rows {
        let y = i * rows / sample_rows;
        sample.extend(filtered(y..y + 1)?);
    }
    let codes = DeflateCodes::from_sample(&sample);
    let rows_per_stripe = (STRIPE_BYTES / row_bytes).max(1);
    let stripes = rows.div_ceil(rows_per_stripe);
    let io = WriteCause::Os;
    out.write_all(b"\x89PNG\r\n\x1a\n").map_err(io)?;
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&layout.width.to_be_bytes());
    ihdr.extend_from_slice(&layout.height.to_be_bytes());
    let color_type = if layout.alpha { 4 } else { 0 };
    ihdr.extend_from_slice(&[depth, color_type, 0, 0, 0]);
    out.write_all(&chunk(*b"IHDR", &ihdr)).map_err(io)?;
    // graylab's mark (see `crate::io::mark`): `Software` = graylab.
    let software = [&b"Software\0"[..], SOFTWARE.as_bytes()].concat();
    out.write_all(&chunk(*b"tEXt", &software)).map_err(io)?;
    if let Some((x, y)) = density.and_then(Density::per_metre) {
        // Pixels per metre across and down, unit 1 (the metre).
        let phys = [&x.to_be_bytes()[..], &y.to_be_bytes(), &[1]].concat();
        out.write_all(&chunk(*b"pHYs", &phys)).map_err(io)?;
    }
    if exif.is_some_and(|e| e.tags() > 0) {
        out.write_all(&chunk(*b"eXIf", &crate::io::exif::block(exif))).map_err(io)?;
    }
    // The XMP packet: an uncompressed `iTXt` chunk of keyword `XML:com.adobe.xmp`, no language.
    if let Some(packet) = exif.and_then(crate::io::KeptMetadata::xmp_packet) {
        let itxt = [&b"XML:com.adobe.xmp\0\0\0\0\0"[..], &packet].concat();
        out.write_all(&chunk(*b"iTXt", &itxt)).map_err(io)?;
    }
    // The zlib header (deflate, 32 KiB window, fastest level), the stripes, the checksum.
    out.write_all(&chunk(*b"IDAT", &[0x78, 0x01])).map_err(io)?;
    let mut adler = 1;
    code_in_parallel_write_in_order(
        stripes,
        |s| {
            let started = std::time::Instant::now();
            let first = s * rows_per_stripe;
            let stripe_rows = first..(first + rows_per_stripe).min(rows);
            let data = filtered(stripe_rows.clone())?;
            let mut checksum = simd_adler32::Adler32::new();
            checksum.write(&data);
            let stream = deflate_stripe(&data, &codes, s + 1 == stripes);
            source.coded(stripe_rows, started);
            Ok((chunk(*b"IDAT", &stream), checksum.finish(), data.len() as u64))
        },
        |_, (idat, stripe_adler, len)| {
            adler = adler32_combine(adler, stripe_adler, len);
            out.write_all(&idat).map_err(io)
        },
        progress,
    )?;
    out.write_all(&chunk(*b"IDAT", &adler.to_be_bytes())).map_err(io)?;
    out.write_all(&chunk(*b"IEND", &[])).map_err(io)
}

/// A PNG chunk: length, type, data, CRC of type and data.
fn chunk(kind: [u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 12);
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(&kind);
    out.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(&kind);
    crc.update(data);
    out.extend_from_slice(&crc.finalize().to_be_bytes());
    out
}

/// The filtered bytes of the rows in `data` (packed, native byte order): per row a filter-type
/// byte and the filtered row. With `has_prev` the first row of `data` is only the row above.
fn filter_rows(data: &[u8], row_bytes: usize, bpp: usize, sixteen_bit: bool, has_prev: bool) -> Vec<u8> {
    let rows: Vec<std::borrow::Cow<'_, [u8]>> = data
        .chunks_exact(row_bytes)
        .map(|row| {
            if sixteen_bit {
                // PNG stores 16-bit samples big-endian.
                row.chunks_exact(2).flat_map(|s| u16::from_ne_bytes([s[0], s[1]]).to_be_bytes()).collect()
            } else {
                std::borrow::Cow::Borrowed(row)
            }
        })
        .collect();
    let zero_row = vec![0u8; row_bytes];
    let first = usize::from(has_prev);
    let mut out = Vec::with_capacity((rows.len() - first) * (row_bytes + 1));
    for y in first..rows.len() {
        let prev: &[u8] = if y == 0 { &zero_row } else { &rows[y - 1] };
        filter_row(&rows[y], prev, bpp, &mut out);
    }
    out
}

/// Appends the best-filtered version of `cur` (filter-type byte first) to `out`.
fn filter_row(cur: &[u8], prev: &[u8], bpp: usize, out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { filter_row_avx2(cur, prev, bpp, out) };
    }
    filter_row_generic(cur, prev, bpp, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn filter_row_avx2(cur: &[u8], prev: &[u8], bpp: usize, out: &mut Vec<u8>) {
    filter_row_generic(cur, prev, bpp, out);
}

/// PNG filter types, in their numbering.
const NONE: u8 = 0;
const SUB: u8 = 1;
const UP: u8 = 2;
const AVERAGE: u8 = 3;
const PAETH: u8 = 4;

/// The filtered byte for `x` with left `a`, above `b` and upper-left `c`.
#[inline(always)]
fn filtered<const FILTER: u8>(x: u8, a: u8, b: u8, c: u8) -> u8 {
    match FILTER {
        SUB => x.wrapping_sub(a),
        UP => x.wrapping_sub(b),
        AVERAGE => x.wrapping_sub(((u16::from(a) + u16::from(b)) >> 1) as u8),
        PAETH => {
            let (ai, bi, ci) = (i16::from(a), i16::from(b), i16::from(c));
            let pa = (bi - ci).abs();
            let pb = (ai - ci).abs();
            let pc = (ai + bi - 2 * ci).abs();
            let predicted = if pa <= pb && pa <= pc {
                a
            } else if pb <= pc {
                b
            } else {
                c
            };
            x.wrapping_sub(predicted)
        }
        _ => x,
    }
}

/// The costs of the five filters for one row: sums of the filtered bytes taken as signed
/// magnitudes, all five in one pass over the row.
#[inline(always)]
fn costs(cur: &[u8], prev: &[u8], bpp: usize) -> [u64; 5] {
    let magnitude = |v: u8| u32::from(v.cast_signed().unsigned_abs());
    let mut total = [0u64; 5];
    let add = |x: u8, a: u8, b: u8, c: u8, sums: &mut [u32; 5]| {
        sums[0] += magnitude(filtered::<NONE>(x, a, b, c));
        sums[1] += magnitude(filtered::<SUB>(x, a, b, c));
        sums[2] += magnitude(filtered::<UP>(x, a, b, c));
        sums[3] += magnitude(filtered::<AVERAGE>(x, a, b, c));
        sums[4] += magnitude(filtered::<PAETH>(x, a, b, c));
    };
    let mut head = [0u32; 5];
    for (&x, &b) in cur.iter().zip(prev).take(bpp) {
        add(x, 0, b, 0, &mut head);
    }
    for (t, h) in total.iter_mut().zip(head) {
        *t += u64::from(h);
    }
    let start = bpp.min(cur.len());
    // Sums of at most 4096 bytes fit u32 lanes, which vectorise well.
    for offset in (start..cur.len()).step_by(4096) {
        let end = (offset + 4096).min(cur.len());
        let mut sums = [0u32; 5];
        let lanes = cur[offset..end]
            .iter()
            .zip(&cur[offset - bpp..end - bpp])
            .zip(prev[offset..end].iter().zip(&prev[offset - bpp..end - bpp]));
        for ((&x, &a), (&b, &c)) in lanes {
            add(x, a, b, c, &mut sums);
        }
        for (t, s) in total.iter_mut().zip(sums) {
            *t += u64::from(s);
        }
    }
    total
}

/// Writes the row filtered with `FILTER` into `dst` (same length as `cur`).
#[inline(always)]
fn apply<const FILTER: u8>(cur: &[u8], prev: &[u8], bpp: usize, dst: &mut [u8]) {
    let head = bpp.min(cur.len());
    for ((d, &x), &b) in dst[..head].iter_mut().zip(&cur[..head]).zip(prev) {
        *d = filtered::<FILTER>(x, 0, b, 0);
    }
    let rest = dst[head..].iter_mut().zip(cur[head..].iter().zip(cur)).zip(prev[head..].iter().zip(prev));
    for ((d, (&x, &a)), (&b, &c)) in rest {
        *d = filtered::<FILTER>(x, a, b, c);
    }
}

#[inline(always)]
fn filter_row_generic(cur: &[u8], prev: &[u8], bpp: usize, out: &mut Vec<u8>) {
    let n = cur.len().min(prev.len());
    let (cur, prev) = (&cur[..n], &prev[..n]);
    // The heuristic of libpng and the `png` crate: the smallest sum of absolute values (as
    // signed bytes) wins; ties go to the lower filter number.
    let costs = costs(cur, prev, bpp);
    let best = (0..5u8).min_by_key(|&f| costs[usize::from(f)]).unwrap_or(NONE);
    let start = out.len();
    out.resize(start + 1 + n, best);
    let dst = &mut out[start + 1..];
    match best {
        SUB => apply::<SUB>(cur, prev, bpp, dst),
        UP => apply::<UP>(cur, prev, bpp, dst),
        AVERAGE => apply::<AVERAGE>(cur, prev, bpp, dst),
        PAETH => apply::<PAETH>(cur, prev, bpp, dst),
        _ => dst.copy_from_slice(cur),
    }
}

/// The Adler-32 of `a ++ b` from the checksums of `a` and `b` and the length of `b` (zlib's
/// `adler32_combine`).
#[must_use]
pub(in crate::io) fn adler32_combine(adler_a: u32, adler_b: u32, len_b: u64) -> u32 {
    const BASE: u64 = 65_521;
    let rem = len_b % BASE;
    let a1 = u64::from(adler_a & 0xFFFF);
    let sum1 = (a1 + u64::from(adler_b & 0xFFFF) + BASE - 1) % BASE;
    let sum2 = ((rem * a1) % BASE + u64::from(adler_a >> 16) + u64::from(adler_b >> 16) + BASE - rem) % BASE;
    ((sum2 << 16) | sum1) as u32
}

#[cfg(test)]
mod tests {
    use crate::io::codecs::png::*;

    fn adler(data: &[u8]) -> u32 {
        let mut a = simd_adler32::Adler32::new();
        a.write(data);
        a.finish()
    }

    #[test]
    fn adler_combines() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7919 % 256) as u8).collect();
        for split in [0, 1, 65_521, 99_999, 100_000] {
            let (a, b) = data.split_at(split);
            assert_eq!(adler32_combine(adler(a), adler(b), b.len() as u64), adler(&data));
        }
    }
}
