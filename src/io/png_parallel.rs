//! A parallel PNG writer for gray and gray + alpha images, 8 or 16 bits: rows are filtered
//! (adaptive per row: the filter with the smallest sum of absolute values, as libpng and the
//! `png` crate choose) and compressed in stripes on all cores, then the stripes are joined into
//! one zlib stream (see [`super::deflate`]) with the Adler-32 combined from theirs.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::deflate::{DeflateCodes, adler32_combine, deflate_stripe};
use super::rows::{GrayLayout, RowSource};

/// Rows filtered to choose the Huffman codes, spread over the image.
const SAMPLE_ROWS: usize = 64;

/// Raw bytes per stripe, about: large enough that the Huffman tables pay off, small enough for
/// many stripes on big images.
const STRIPE_BYTES: usize = 1 << 20;

/// Writes the rows of `source` as a PNG; `progress` gets the fraction of stripes done.
pub(super) fn write_png(
    source: &dyn RowSource,
    layout: GrayLayout,
    out: &mut impl Write,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(), String> {
    let bpp = layout.bytes_per_pixel();
    let row_bytes = layout.row_bytes();
    let rows = layout.height as usize;
    if row_bytes == 0 || rows == 0 {
        return Err(format!("a {}x{} image has no pixels", layout.width, layout.height));
    }
    // Filtered bytes of rows `range`, reading the row above the first one too.
    let filtered = |range: std::ops::Range<usize>| -> Result<Vec<u8>, String> {
        let with_prev = range.start.saturating_sub(1)..range.end;
        let data = source.rows(with_prev.clone());
        if data.len() != with_prev.len() * row_bytes {
            return Err(format!("{} bytes for rows {with_prev:?} of {row_bytes} bytes", data.len()));
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
    let done = AtomicUsize::new(0);
    let stripe_results: Vec<(Vec<u8>, u32, u64)> = (0..stripes)
        .into_par_iter()
        .with_max_len(1)
        .map(|s| {
            let first = s * rows_per_stripe;
            let data = filtered(first..(first + rows_per_stripe).min(rows))?;
            let mut adler = simd_adler32::Adler32::new();
            adler.write(&data);
            let stream = deflate_stripe(&data, &codes, s + 1 == stripes);
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(finished as f32 / stripes as f32);
            Ok((chunk(*b"IDAT", &stream), adler.finish(), data.len() as u64))
        })
        .collect::<Result<_, String>>()?;
    let adler = stripe_results.iter().fold(1, |acc, &(_, a, len)| adler32_combine(acc, a, len));
    let io = |e: std::io::Error| e.to_string();
    out.write_all(b"\x89PNG\r\n\x1a\n").map_err(io)?;
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&layout.width.to_be_bytes());
    ihdr.extend_from_slice(&layout.height.to_be_bytes());
    let color_type = if layout.alpha { 4 } else { 0 };
    ihdr.extend_from_slice(&[if layout.sixteen_bit { 16 } else { 8 }, color_type, 0, 0, 0]);
    out.write_all(&chunk(*b"IHDR", &ihdr)).map_err(io)?;
    // The zlib header (deflate, 32 KiB window, fastest level), the stripes, the checksum.
    out.write_all(&chunk(*b"IDAT", &[0x78, 0x01])).map_err(io)?;
    for (idat, _, _) in &stripe_results {
        out.write_all(idat).map_err(io)?;
    }
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
    let mut candidates: [Vec<u8>; 5] = std::array::from_fn(|_| vec![0; row_bytes]);
    let first = usize::from(has_prev);
    let mut out = Vec::with_capacity((rows.len() - first) * (row_bytes + 1));
    for y in first..rows.len() {
        let prev: &[u8] = if y == 0 { &zero_row } else { &rows[y - 1] };
        let best = filter_row(&rows[y], prev, bpp, &mut candidates);
        out.push(best as u8);
        out.extend_from_slice(&candidates[best]);
    }
    out
}

/// Fills the five filtered versions of `cur` and returns the index of the one to keep.
fn filter_row(cur: &[u8], prev: &[u8], bpp: usize, candidates: &mut [Vec<u8>; 5]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { filter_row_avx2(cur, prev, bpp, candidates) };
    }
    filter_row_generic(cur, prev, bpp, candidates)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn filter_row_avx2(cur: &[u8], prev: &[u8], bpp: usize, candidates: &mut [Vec<u8>; 5]) -> usize {
    filter_row_generic(cur, prev, bpp, candidates)
}

#[inline(always)]
#[expect(clippy::many_single_char_names, reason = "a, b, c and x are the PNG specification's names")]
fn filter_row_generic(cur: &[u8], prev: &[u8], bpp: usize, candidates: &mut [Vec<u8>; 5]) -> usize {
    let n = cur.len().min(prev.len());
    let [none, sub, up, avg, paeth] = candidates;
    let (cur, prev) = (&cur[..n], &prev[..n]);
    none[..n].copy_from_slice(cur);
    up[..n].iter_mut().zip(cur.iter().zip(prev)).for_each(|(o, (&x, &b))| *o = x.wrapping_sub(b));
    // The first pixel has no left neighbour (a = c = 0).
    for i in 0..bpp.min(n) {
        sub[i] = cur[i];
        avg[i] = cur[i].wrapping_sub(prev[i] >> 1);
        paeth[i] = cur[i].wrapping_sub(prev[i]);
    }
    if n > bpp {
        let (left, here) = (&cur[..n - bpp], &cur[bpp..]);
        let (up_left, above) = (&prev[..n - bpp], &prev[bpp..]);
        for i in 0..n - bpp {
            let (x, a, b, c) = (here[i], left[i], above[i], up_left[i]);
            sub[bpp + i] = x.wrapping_sub(a);
            avg[bpp + i] = x.wrapping_sub(((u16::from(a) + u16::from(b)) >> 1) as u8);
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
            paeth[bpp + i] = x.wrapping_sub(predicted);
        }
    }
    let cost =
        |row: &[u8]| -> u64 { row[..n].iter().map(|&v| u64::from(v.cast_signed().unsigned_abs())).sum() };
    let costs = [cost(none), cost(sub), cost(up), cost(avg), cost(paeth)];
    (0..5).min_by_key(|&i| costs[i]).unwrap_or(0)
}
