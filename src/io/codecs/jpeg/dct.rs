//! The forward DCT and quantisation of one 8x8 block: libjpeg's float AAN DCT (`jfdctflt`),
//! then rounding as libjpeg does. A portable version and an AVX2 one (chosen at run time by the
//! caller); both give the same coefficients.
//!
//! Input: 64 samples, row-major. Output: quantised coefficients in the transposed layout
//! (entry `u * 8 + v` is vertical frequency `v`, horizontal frequency `u`), clamped to the
//! baseline ranges (DC to 11 bits, AC to 10), and a mask of the nonzero entries (bit `t` for
//! entry `t`).

type Vec8 = [f32; 8];

#[inline(always)]
fn add(a: Vec8, b: Vec8) -> Vec8 {
    std::array::from_fn(|i| a[i] + b[i])
}

#[inline(always)]
fn sub(a: Vec8, b: Vec8) -> Vec8 {
    std::array::from_fn(|i| a[i] - b[i])
}

#[inline(always)]
fn scale(a: Vec8, s: f32) -> Vec8 {
    a.map(|x| x * s)
}

/// One pass of the AAN DCT on 8 lanes at once: `d[k]` holds sample `k` of each lane's signal.
/// Generic over the lane type so the portable and AVX2 versions share the butterflies.
macro_rules! fdct_pass {
    ($d:expr, $add:expr, $sub:expr, $scale:expr) => {{
        let d = $d;
        let (add, sub, scale) = ($add, $sub, $scale);
        let [tmp0, tmp1, tmp2, tmp3] = std::array::from_fn(|k| add(d[k], d[7 - k]));
        let [tmp7, tmp6, tmp5, tmp4] = std::array::from_fn(|k| sub(d[k], d[7 - k]));
        // Even part.
        let tmp10 = add(tmp0, tmp3);
        let tmp13 = sub(tmp0, tmp3);
        let tmp11 = add(tmp1, tmp2);
        let tmp12 = sub(tmp1, tmp2);
        let z1 = scale(add(tmp12, tmp13), 0.707_106_77);
        let out0 = add(tmp10, tmp11);
        let out4 = sub(tmp10, tmp11);
        let out2 = add(tmp13, z1);
        let out6 = sub(tmp13, z1);
        // Odd part.
        let tmp10 = add(tmp4, tmp5);
        let tmp11 = add(tmp5, tmp6);
        let tmp12 = add(tmp6, tmp7);
        let z5 = scale(sub(tmp10, tmp12), 0.382_683_43);
        let z2 = add(scale(tmp10, 0.541_196_1), z5);
        let z4 = add(scale(tmp12, 1.306_563), z5);
        let z3 = scale(tmp11, 0.707_106_77);
        let z11 = add(tmp7, z3);
        let z13 = sub(tmp7, z3);
        [out0, add(z11, z4), out2, sub(z13, z2), out4, add(z13, z2), out6, sub(z11, z4)]
    }};
}

/// libjpeg's rounding (add 16384.5 and truncate), then the baseline range of entry `t`.
#[inline(always)]
fn round(c: f32, t: usize) -> i16 {
    let limit = if t == 0 { 2047 } else { 1023 };
    ((c + 16384.5) as i32 - 16384).clamp(-limit, limit) as i16
}

/// The portable version.
#[inline(always)]
pub(crate) fn transform(block: &[u8; 64], recip: &[f32; 64]) -> ([i16; 64], u64) {
    let rows: [Vec8; 8] =
        std::array::from_fn(|r| std::array::from_fn(|x| f32::from(block[r * 8 + x]) - 128.0));
    // Columns first (the lanes are the 8 columns), then rows.
    let vertical = fdct_pass!(rows, add, sub, scale);
    let transposed: [Vec8; 8] = std::array::from_fn(|x| std::array::from_fn(|v| vertical[v][x]));
    let horizontal = fdct_pass!(transposed, add, sub, scale);
    let out: [i16; 64] = std::array::from_fn(|t| round(horizontal[t / 8][t % 8] * recip[t], t));
    let nonzero = out.iter().enumerate().fold(0u64, |m, (t, &c)| m | (u64::from(c != 0) << t));
    (out, nonzero)
}

/// The AVX2 version: the same operations in the same order on 256-bit vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) fn transform_avx2(block: &[u8; 64], recip: &[f32; 64]) -> ([i16; 64], u64) {
    use std::arch::x86_64::{
        __m256, __m256i, _mm_set_epi64x, _mm256_add_ps, _mm256_cmpeq_epi16, _mm256_cvtepi32_ps,
        _mm256_cvtepu8_epi32, _mm256_cvttps_epi32, _mm256_max_epi32, _mm256_min_epi32, _mm256_movemask_epi8,
        _mm256_mul_ps, _mm256_packs_epi16, _mm256_packs_epi32, _mm256_permute4x64_epi64, _mm256_set1_epi32,
        _mm256_set1_ps, _mm256_setr_epi32, _mm256_setzero_si256, _mm256_sub_epi32, _mm256_sub_ps,
    };
    let add = |a, b| _mm256_add_ps(a, b);
    let sub = |a, b| _mm256_sub_ps(a, b);
    let scale = |a, s| _mm256_mul_ps(a, _mm256_set1_ps(s));
    let centre = _mm256_set1_ps(128.0);
    let rows: [__m256; 8] = std::array::from_fn(|r| {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(&block[r * 8..r * 8 + 8]);
        let bytes = _mm_set_epi64x(0, i64::from_le_bytes(eight));
        _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)), centre)
    });
    let vertical: [__m256; 8] = fdct_pass!(rows, add, sub, scale);
    let horizontal: [__m256; 8] = fdct_pass!(transpose(vertical), add, sub, scale);
    let (bias, offset) = (_mm256_set1_ps(16384.5), _mm256_set1_epi32(16384));
    // Entry 0 is the DC coefficient (11 bits); all others are AC (10 bits).
    let (high_dc, high) =
        (_mm256_setr_epi32(2047, 1023, 1023, 1023, 1023, 1023, 1023, 1023), _mm256_set1_epi32(1023));
    let (low_dc, low) =
        (_mm256_setr_epi32(-2047, -1023, -1023, -1023, -1023, -1023, -1023, -1023), _mm256_set1_epi32(-1023));
    let quantised: [__m256i; 8] = std::array::from_fn(|u| {
        let mut r = [0.0f32; 8];
        r.copy_from_slice(&recip[u * 8..u * 8 + 8]);
        let scaled = _mm256_add_ps(_mm256_mul_ps(horizontal[u], bytemuck::cast(r)), bias);
        let rounded = _mm256_sub_epi32(_mm256_cvttps_epi32(scaled), offset);
        let (lo, hi) = if u == 0 { (low_dc, high_dc) } else { (low, high) };
        _mm256_min_epi32(_mm256_max_epi32(rounded, lo), hi)
    });
    let mut out = [0i16; 64];
    let mut zero_mask = 0u64;
    let zero = _mm256_setzero_si256();
    let mut halves = [zero; 4];
    for ((pair, slot), half) in quantised.chunks_exact(2).zip(out.chunks_exact_mut(16)).zip(&mut halves) {
        // packs works per 128-bit lane; the permute restores the order.
        let packed = _mm256_permute4x64_epi64::<0xD8>(_mm256_packs_epi32(pair[0], pair[1]));
        slot.copy_from_slice(&bytemuck::cast::<__m256i, [i16; 16]>(packed));
        *half = _mm256_cmpeq_epi16(packed, zero);
    }
    for (i, pair) in halves.chunks_exact(2).enumerate() {
        let bytes = _mm256_permute4x64_epi64::<0xD8>(_mm256_packs_epi16(pair[0], pair[1]));
        zero_mask |= u64::from(_mm256_movemask_epi8(bytes).cast_unsigned()) << (32 * i);
    }
    (out, !zero_mask)
}

/// Transposes 8 vectors of 8 floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn transpose(rows: [std::arch::x86_64::__m256; 8]) -> [std::arch::x86_64::__m256; 8] {
    use std::arch::x86_64::{
        __m256, _mm256_permute2f128_ps, _mm256_shuffle_ps, _mm256_unpackhi_ps, _mm256_unpacklo_ps,
    };
    // Interleave pairs of rows, then pairs of pairs, then swap 128-bit halves.
    let pairs: [__m256; 8] = std::array::from_fn(|i| {
        let (x, y) = (rows[i & !1], rows[i | 1]);
        if i % 2 == 0 { _mm256_unpacklo_ps(x, y) } else { _mm256_unpackhi_ps(x, y) }
    });
    let quads: [__m256; 8] = std::array::from_fn(|i| {
        let k = (i & 4) + (i & 2) / 2;
        let (x, y) = (pairs[k], pairs[k + 2]);
        if i % 2 == 0 { _mm256_shuffle_ps::<0x44>(x, y) } else { _mm256_shuffle_ps::<0xEE>(x, y) }
    });
    std::array::from_fn(|i| {
        let (x, y) = (quads[i % 4], quads[i % 4 + 4]);
        if i < 4 { _mm256_permute2f128_ps::<0x20>(x, y) } else { _mm256_permute2f128_ps::<0x31>(x, y) }
    })
}

#[cfg(test)]
mod tests {
    use crate::io::codecs::jpeg::dct::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_matches_portable() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let recip = crate::io::codecs::jpeg::tables::reciprocals_transposed(
            &crate::io::codecs::jpeg::tables::quant_table(90),
        );
        let mut seed = 12345u32;
        for _ in 0..2000 {
            let block: [u8; 64] = std::array::from_fn(|_| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (seed >> 24) as u8
            });
            // SAFETY: AVX2 is present, checked above.
            let fast = unsafe { transform_avx2(&block, &recip) };
            assert_eq!(fast, transform(&block, &recip));
        }
    }

    #[test]
    fn flat_block_has_only_dc() {
        let recip = crate::io::codecs::jpeg::tables::reciprocals_transposed(&[1; 64]);
        let (out, nonzero) = transform(&[200; 64], &recip);
        // The DC of a flat block is 8 x its offset from 128; nothing else is set.
        assert_eq!(out[0], 72 * 8);
        assert!(out[1..].iter().all(|&c| c == 0));
        assert_eq!(nonzero, 1);
    }
}
