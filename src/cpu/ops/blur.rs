//! The blur on the CPU: stripes of rows on a rayon pool, each its horizontal sums (u32, its rows
//! and their apron) into a buffer of its own, then its vertical sums row by row. Each pass is a loop over taps around a loop over one
//! contiguous row of u32 (`acc[x] += w * row[x]`), which the compiler vectorises; an AVX2 copy
//! of each row function is picked at run time (SSE2, the default build's, has no 32-bit vector
//! multiply). The exact definition is [`crate::pixel::blur_reference`]'s.

use rayon::prelude::*;

use crate::cpu::CpuError;
use crate::pixel::{blur_round, blur_weights};

/// Blurs a `width` x `height` gray plane with radius `radius` on `threads` threads.
pub fn par_blur(
    src: &[u8],
    (width, height): (usize, usize),
    radius: u32,
    threads: usize,
) -> Result<Vec<u8>, CpuError> {
    let mut out = vec![0_u8; width * height];
    if width == 0 || height == 0 || src.len() != width * height {
        return Ok(out);
    }
    let weights = blur_weights(radius);
    let r = weights.len() / 2;
    // Each task blurs a stripe of rows: the horizontal sums of its rows and their apron into a
    // buffer of its own (cache-sized: at 8K and R = 8, 2.4 MB), then its output rows from them.
    // Stripes of at least 4R rows keep the apron's repeated sums under half the work.
    let stripe = (4 * r).max(64);
    let run = || {
        out.par_chunks_mut(width * stripe).enumerate().for_each_init(
            || (vec![0_u32; width + 2 * r], vec![0_u32; (stripe + 2 * r) * width], vec![0_u32; width]),
            |(padded, mid, acc), (s, out_rows)| {
                let y0 = s * stripe;
                let y1 = y0 + out_rows.len() / width;
                let first = y0.saturating_sub(r);
                let rows = first..(y1 + r).min(height);
                for (mid_row, row) in
                    mid.chunks_exact_mut(width).zip(src.chunks_exact(width).skip(first).take(rows.len()))
                {
                    rows_h(row, mid_row, padded, &weights);
                }
                for (j, out_row) in out_rows.chunks_exact_mut(width).enumerate() {
                    rows_v(mid, (width, height, first), y0 + j, (acc, out_row), &weights);
                }
            },
        );
    };
    crate::cpu::parallel::pool(threads.max(1))?.install(run);
    Ok(out)
}

/// [`horizontal`] in the copy this CPU runs best.
fn rows_h(row: &[u8], mid_row: &mut [u32], padded: &mut [u32], weights: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::simd_level() != crate::cpu::SimdLevel::Baseline {
        // SAFETY: `simd_level` vouches for AVX2 (AVX-512 implies it) on this CPU.
        unsafe { horizontal_avx2(row, mid_row, padded, weights) };
        return;
    }
    horizontal(row, mid_row, padded, weights);
}

/// [`vertical`] in the copy this CPU runs best.
fn rows_v(mid: &[u32], size: (usize, usize, usize), y: usize, out: (&mut [u32], &mut [u8]), weights: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::simd_level() != crate::cpu::SimdLevel::Baseline {
        // SAFETY: `simd_level` vouches for AVX2 (AVX-512 implies it) on this CPU.
        unsafe { vertical_avx2(mid, size, y, out, weights) };
        return;
    }
    vertical(mid, size, y, out, weights);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn horizontal_avx2(row: &[u8], mid_row: &mut [u32], padded: &mut [u32], weights: &[u32]) {
    horizontal(row, mid_row, padded, weights);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn vertical_avx2(
    mid: &[u32],
    size: (usize, usize, usize),
    y: usize,
    out: (&mut [u32], &mut [u8]),
    weights: &[u32],
) {
    vertical(mid, size, y, out, weights);
}

/// One row's horizontal sums: the row padded by its edge pixels, then tap after tap.
/// `inline(always)` so each `target_feature` copy gets its own vector code.
#[inline(always)]
fn horizontal(row: &[u8], mid_row: &mut [u32], padded: &mut [u32], weights: &[u32]) {
    let (width, r) = (row.len(), weights.len() / 2);
    let (first, last) = (row.first().copied().unwrap_or(0), row.last().copied().unwrap_or(0));
    for (i, p) in padded.iter_mut().enumerate() {
        *p = u32::from(if i < r {
            first
        } else if i >= r + width {
            last
        } else {
            row[i - r]
        });
    }
    mid_row.fill(0);
    for (i, &w) in weights.iter().enumerate() {
        for (acc, &p) in mid_row.iter_mut().zip(&padded[i..i + width]) {
            *acc += w * p;
        }
    }
}

/// One output row: the vertical sum of the horizontal rows around `y` (clamped to the edge),
/// rounded once; `mid` holds the horizontal sums of image rows from `first` on.
#[inline(always)]
fn vertical(
    mid: &[u32],
    (width, height, first): (usize, usize, usize),
    y: usize,
    (acc, out_row): (&mut [u32], &mut [u8]),
    weights: &[u32],
) {
    let r = weights.len() / 2;
    acc.fill(0);
    for (j, &w) in weights.iter().enumerate() {
        let src_y = (y + j).saturating_sub(r).min(height - 1) - first;
        let row = &mid[src_y * width..(src_y + 1) * width];
        for (a, &h) in acc.iter_mut().zip(row) {
            *a += w * h;
        }
    }
    for (o, &a) in out_row.iter_mut().zip(acc.iter()) {
        *o = blur_round(a);
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use crate::cpu::ops::noise;
    use crate::pixel::blur_reference;

    #[test]
    fn every_radius_and_shape_matches_the_reference() {
        // 3 x 200 and 2 x 600: several stripes (64 rows, 256 at R = 64) and their aprons.
        for (w, h) in [(1, 1), (1, 37), (41, 1), (17, 13), (130, 9), (3, 200), (2, 600)] {
            let src = noise(w * h, (w * 31 + h) as u64);
            for r in [1, 2, 3, 8, 16, 63, 64] {
                for threads in [1, 2] {
                    assert_eq!(
                        par_blur(&src, (w, h), r, threads).unwrap(),
                        blur_reference(&src, (w, h), r),
                        "{w}x{h} r={r} threads={threads}"
                    );
                }
            }
        }
    }
}
