//! The blur on the CPU, vertical pass first: for each output row, the weighted sum of its
//! `2R + 1` source rows (u8 in, u32 out, one row buffer per task), then the horizontal pass over
//! that row while it is still in L1. Both passes fold the symmetric taps (`w_k (a + b)`, R + 1
//! multiplies for 2R + 1 taps) and keep [`LANES`] sums in registers across the taps, so each tap
//! costs one load per operand and no store. The loops are plain Rust over fixed-size arrays,
//! vectorised by the compiler; an AVX2 and an AVX-512 copy are picked at run time. Integer sums
//! are exact whatever their order, so the bytes are [`crate::pixel::blur_reference`]'s, which sums
//! the other pass first.

use rayon::prelude::*;

use crate::cpu::CpuError;
use crate::pixel::{blur_round, blur_weights};

/// Pixels whose sums one block keeps in registers across the taps: four AVX2 vectors of u32, or
/// two AVX-512 ones. At 4K on an AVX-512 EPYC, 32 took 6.0 / 41.6 ms at R = 8 / 64 where 16 took
/// 7.2 / 50.1 ms (best of 15, one thread).
const LANES: usize = 32;

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
    // The centre and one side: `blur_weights` is symmetric (`pixel::op`'s tests hold it to that).
    let half = weights[r..].to_vec();
    // Tasks of a few rows each, several per thread, so an uneven thread still finishes together.
    let rows_per_task = (height / (threads.max(1) * 8)).clamp(1, 64);
    let run = || {
        out.par_chunks_mut(width * rows_per_task).enumerate().for_each_init(
            || vec![0_u32; width + 2 * r],
            |sums, (task, out_rows)| {
                for (j, out_row) in out_rows.chunks_exact_mut(width).enumerate() {
                    let y = task * rows_per_task + j;
                    blur_row(src, (width, height), y, &half, sums, out_row);
                }
            },
        );
    };
    crate::cpu::parallel::pool(threads.max(1))?.install(run);
    Ok(out)
}

simd_copies! {
    /// Output row `y`: its vertical sums into `sums` (padded by R on each side with the edge
    /// columns' sums), then the horizontal pass into `out_row`, in the copy this CPU runs best.
    fn blur_row / blur_row_avx2 / blur_row_avx512 => blur_row_any(
        src: &[u8],
        size: (usize, usize),
        y: usize,
        half: &[u32],
        sums: &mut [u32],
        out_row: &mut [u8]
    )
}

/// [`blur_row`]'s body. `inline(always)` so each `target_feature` copy gets its own vector code.
#[inline(always)]
fn blur_row_any(
    src: &[u8],
    (width, height): (usize, usize),
    y: usize,
    half: &[u32],
    sums: &mut [u32],
    out_row: &mut [u8],
) {
    let r = half.len() - 1;
    // Rows `y - k` and `y + k`, clamped to the edge.
    let row = |sy: usize| &src[sy * width..(sy + 1) * width];
    let pairs: Vec<(&[u8], &[u8])> =
        (1..=r).map(|k| (row(y.saturating_sub(k)), row((y + k).min(height - 1)))).collect();
    vertical(row(y), &pairs, half, &mut sums[r..r + width]);
    let (first, last) = (sums[r], sums[r + width - 1]);
    sums[..r].fill(first);
    sums[r + width..].fill(last);
    horizontal(sums, half, out_row);
}

/// `sums[x] = w_0 centre[x] + Σ_k w_k (up_k[x] + down_k[x])`, `pairs[k - 1]` = `(up_k, down_k)`.
#[inline(always)]
fn vertical(centre: &[u8], pairs: &[(&[u8], &[u8])], half: &[u32], sums: &mut [u32]) {
    let width = sums.len();
    let blocks = width / LANES * LANES;
    for x in (0..blocks).step_by(LANES) {
        let mut acc = [0_u32; LANES];
        let c: &[u8; LANES] = centre[x..x + LANES].try_into().unwrap_or(&[0; LANES]);
        for l in 0..LANES {
            acc[l] = half[0] * u32::from(c[l]);
        }
        for (&(up, down), &w) in pairs.iter().zip(&half[1..]) {
            let a: &[u8; LANES] = up[x..x + LANES].try_into().unwrap_or(&[0; LANES]);
            let b: &[u8; LANES] = down[x..x + LANES].try_into().unwrap_or(&[0; LANES]);
            for l in 0..LANES {
                acc[l] += w * (u32::from(a[l]) + u32::from(b[l]));
            }
        }
        sums[x..x + LANES].copy_from_slice(&acc);
    }
    for x in blocks..width {
        let mut acc = half[0] * u32::from(centre[x]);
        for (&(up, down), &w) in pairs.iter().zip(&half[1..]) {
            acc += w * (u32::from(up[x]) + u32::from(down[x]));
        }
        sums[x] = acc;
    }
}

/// `out[x] = round(w_0 s[x] + Σ_k w_k (s[x - k] + s[x + k]))` over the padded vertical sums.
#[inline(always)]
fn horizontal(padded: &[u32], half: &[u32], out_row: &mut [u8]) {
    let r = half.len() - 1;
    let width = out_row.len();
    let blocks = width / LANES * LANES;
    for x in (0..blocks).step_by(LANES) {
        let mut acc = [0_u32; LANES];
        let c: &[u32; LANES] = padded[x + r..x + r + LANES].try_into().unwrap_or(&[0; LANES]);
        for l in 0..LANES {
            acc[l] = half[0] * c[l];
        }
        for (k, &w) in half.iter().enumerate().skip(1) {
            let a: &[u32; LANES] = padded[x + r - k..x + r - k + LANES].try_into().unwrap_or(&[0; LANES]);
            let b: &[u32; LANES] = padded[x + r + k..x + r + k + LANES].try_into().unwrap_or(&[0; LANES]);
            for l in 0..LANES {
                acc[l] += w * (a[l] + b[l]);
            }
        }
        for (o, &a) in out_row[x..x + LANES].iter_mut().zip(&acc) {
            *o = blur_round(a);
        }
    }
    for x in blocks..width {
        let mut acc = half[0] * padded[x + r];
        for (k, &w) in half.iter().enumerate().skip(1) {
            acc += w * (padded[x + r - k] + padded[x + r + k]);
        }
        out_row[x] = blur_round(acc);
    }
}
#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use crate::pixel::blur_reference;
    use crate::pixel::noise;

    /// Blurs with one row function, as `par_blur` does on one thread.
    fn blur_with(
        row_fn: impl Fn(&[u8], (usize, usize), usize, &[u32], &mut [u32], &mut [u8]),
        src: &[u8],
        (w, h): (usize, usize),
        radius: u32,
    ) -> Vec<u8> {
        let weights = blur_weights(radius);
        let r = weights.len() / 2;
        let (mut sums, mut out) = (vec![0_u32; w + 2 * r], vec![0_u8; w * h]);
        for (y, row) in out.chunks_exact_mut(w).enumerate() {
            row_fn(src, (w, h), y, &weights[r..], &mut sums, row);
        }
        out
    }

    #[test]
    fn every_radius_and_shape_matches_the_reference() {
        // Widths below, at and beyond a block of LANES; heights of one row to several tasks.
        for (w, h) in [(1, 1), (1, 37), (41, 1), (17, 13), (130, 9), (3, 200), (2, 600), (64, 70), (97, 33)] {
            let src = noise(w * h, (w * 31 + h) as u32);
            for r in [1, 2, 3, 8, 16, 63, 64] {
                let expected = blur_reference(&src, (w, h), r);
                for threads in [1, 2] {
                    assert_eq!(
                        par_blur(&src, (w, h), r, threads).unwrap(),
                        expected,
                        "{w}x{h} r={r} threads={threads}"
                    );
                }
                // Every copy this CPU can run, not only the one it picks.
                assert_eq!(blur_with(blur_row_any, &src, (w, h), r), expected, "portable {w}x{h} r={r}");
                #[cfg(target_arch = "x86_64")]
                if is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 was just detected.
                    let avx2 = |s: &[u8], z, y, c: &[u32], m: &mut [u32], o: &mut [u8]| unsafe {
                        blur_row_avx2(s, z, y, c, m, o);
                    };
                    assert_eq!(blur_with(avx2, &src, (w, h), r), expected, "avx2 {w}x{h} r={r}");
                }
            }
        }
    }

    #[test]
    fn the_brightest_plane_does_not_overflow() {
        let (w, h) = (70, 9);
        for r in [1, 8, 64] {
            assert_eq!(par_blur(&vec![255; w * h], (w, h), r, 2).unwrap(), vec![255; w * h], "r = {r}");
        }
    }
}
