//! The synthetic work per pixel ([`Work`], defined in [`crate::pixel`]) applied in place to an
//! already converted gray buffer: a knob on arithmetic intensity (as mixbench's kernel), so that
//! the CPU and the GPU can be compared where compute, not memory, decides. With `mask == 0` the
//! image stays the exact grayscale but the rounds still run: the mask is hidden behind
//! `black_box`, so the compiler cannot drop them.
//!
//! The kernel works on fixed-size blocks of `u32` lanes so the round loop vectorises, compiled
//! three times (baseline, AVX2, AVX-512) and picked at run time by [`simd_level`]. On AVX2 a block
//! is 64 vector lanes plus 8 lanes kept in general-purpose registers: on Zen 2 `vpmulld ymm`
//! issues every 2 cycles while the scalar `imul` runs on a separate pipe, so the scalar lanes come
//! almost for free (about 10% faster than 64 vector lanes alone; BENCHMARKS.md has the figures). The
//! divergent variant computes every lane and blends the zero-round hash back into the even lanes
//! once at the end, which is exact and costs nothing per round.

use std::hint::black_box;

use crate::cpu::{SimdLevel, simd_level};
use crate::pixel::{WORK_SEED, Work, round};

/// Pixels per task when a buffer is spread over threads: 72 Ki, a multiple of every block size
/// below, so only the last chunk of a buffer has a partial block.
pub const WORK_CHUNK_PIXELS: usize = 72 * 1024;

/// Applies `work` in place to one contiguous run of 8-bit gray pixels on the calling thread, with
/// the best instruction set of this machine.
pub fn apply_work_chunk_u8(gray: &mut [u8], work: Work) {
    dispatch(gray, work, simd_level());
}

/// [`apply_work_chunk_u8`] for 16-bit gray pixels.
pub fn apply_work_chunk_u16(gray: &mut [u16], work: Work) {
    dispatch(gray, work, simd_level());
}

/// [`apply_work_chunk_u8`] with the instruction set forced (tests and benches). Returns false and
/// leaves `gray` untouched when this CPU lacks `level`.
pub fn apply_work_chunk_u8_at(gray: &mut [u8], work: Work, level: SimdLevel) -> bool {
    let available = level.available();
    if available {
        dispatch(gray, work, level);
    }
    available
}

/// A gray pixel width the kernel works on: widened into `u32` lanes, truncated back.
trait Gray: Copy + Default + Into<u32> {
    fn narrow(v: u32) -> Self;
}

impl Gray for u8 {
    #[inline(always)]
    fn narrow(v: u32) -> Self {
        v as u8
    }
}

impl Gray for u16 {
    #[inline(always)]
    fn narrow(v: u32) -> Self {
        v as u16
    }
}

/// Picks the compiled copy. Callers pass a level that [`SimdLevel::available`] (or [`simd_level`])
/// vouched for.
fn dispatch<P: Gray>(gray: &mut [P], work: Work, level: SimdLevel) {
    // The mask is a run-time value already; hiding it also stops a caller's constant 0 from
    // letting the compiler drop the rounds, which are the whole point.
    let work = Work { mask: black_box(work.mask), ..work };
    match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `simd_level` and `SimdLevel::available` only vouch for Avx512 on a CPU with avx512f
        // and avx512bw.
        SimdLevel::Avx512 => unsafe { chunk_avx512(gray, work) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `simd_level` and `SimdLevel::available` only vouch for Avx2 on a CPU with avx2.
        SimdLevel::Avx2 => unsafe { chunk_avx2(gray, work) },
        _ => chunk::<P, 32, 0>(gray, work),
    }
}

/// 64 lanes in 8 `ymm` registers plus 8 scalar lanes (see the module doc).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn chunk_avx2<P: Gray>(gray: &mut [P], work: Work) {
    chunk::<P, 64, 8>(gray, work);
}

/// 256 lanes in 16 `zmm` registers: enough independent chains to cover a 10-cycle `vpmulld zmm`.
/// Not measured (no AVX-512 machine was available); the tests cover it where the CPU has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn chunk_avx512<P: Gray>(gray: &mut [P], work: Work) {
    chunk::<P, 256, 0>(gray, work);
}

/// Full blocks of `V + S` pixels, then the tail through one zero-padded block (exact: lanes are
/// independent). `inline(always)` so each `target_feature` copy gets its own vector code.
#[inline(always)]
fn chunk<P: Gray, const V: usize, const S: usize>(gray: &mut [P], work: Work) {
    let mut blocks = gray.chunks_exact_mut(V + S);
    for b in &mut blocks {
        let (v, s) = b.split_at_mut(V);
        if let (Ok(v), Ok(s)) = (<&mut [P; V]>::try_from(v), <&mut [P; S]>::try_from(s)) {
            block(v, s, work);
        }
    }
    let tail = blocks.into_remainder();
    if !tail.is_empty() {
        let (mut pad_v, mut pad_s) = ([P::default(); V], [P::default(); S]);
        let (tv, ts) = tail.split_at_mut(tail.len().min(V));
        pad_v[..tv.len()].copy_from_slice(tv);
        pad_s[..ts.len()].copy_from_slice(ts);
        block(&mut pad_v, &mut pad_s, work);
        tv.copy_from_slice(&pad_v[..tv.len()]);
        ts.copy_from_slice(&pad_s[..ts.len()]);
    }
}

/// One block: `V` lanes the compiler vectorises (`pv`) and `S` lanes it must keep scalar (`ps`).
#[inline(always)]
fn block<P: Gray, const V: usize, const S: usize>(pv: &mut [P; V], ps: &mut [P; S], work: Work) {
    let Work { rounds, mask, divergent } = work;
    let g: [u32; V] = pv.map(Into::into);
    let mut h = g.map(|g| g.wrapping_add(WORK_SEED));
    let gs: [u32; S] = ps.map(Into::into);
    let mut hs = gs.map(|g| g.wrapping_add(WORK_SEED));
    for _ in 0..rounds {
        for h in &mut h {
            *h = round(*h);
        }
        // black_box keeps these lanes out of the vectoriser, so they run on the integer pipes
        // beside the vector multiplies (one store + load each, no extra arithmetic).
        for h in &mut hs {
            *h = black_box(round(*h));
        }
    }
    finish(pv, &g, &h, mask, divergent);
    finish(ps, &gs, &hs, mask, divergent);
}

/// `out = g ^ (h & mask)`, with the zero-round hash for even `g` in the divergent variant.
#[inline(always)]
fn finish<P: Gray>(px: &mut [P], g: &[u32], h: &[u32], mask: u32, divergent: bool) {
    for ((p, &g), &h) in px.iter_mut().zip(g).zip(h) {
        let h = if divergent && g & 1 == 0 { g.wrapping_add(WORK_SEED) } else { h };
        *p = P::narrow(g ^ (h & mask));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: deterministic test data.
    fn rng(seed: u64) -> impl FnMut() -> u32 {
        let mut s = seed | 1;
        move || {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
        }
    }

    const LEVELS: [SimdLevel; 3] = [SimdLevel::Baseline, SimdLevel::Avx2, SimdLevel::Avx512];
    const ROUNDS: [u32; 8] = [0, 1, 2, 3, 4, 16, 64, 257];
    const MASKS: [u32; 3] = [0, 0xFF, 0xFFFF];
    /// Around every block size (32, 72, 256) and not multiples of any.
    const LENGTHS: [usize; 12] = [0, 1, 7, 31, 33, 71, 73, 143, 255, 257, 600, 1001];

    fn works() -> impl Iterator<Item = Work> {
        ROUNDS.into_iter().flat_map(|rounds| {
            MASKS.into_iter().flat_map(move |mask| {
                [false, true].into_iter().map(move |divergent| Work { rounds, mask, divergent })
            })
        })
    }

    /// Every compiled copy this CPU has, on every length and work, against the scalar reference.
    fn every_level_matches_the_reference<P: Gray + PartialEq + std::fmt::Debug>(seed: u64) {
        let mut r = rng(seed);
        for level in LEVELS {
            if !level.available() {
                eprintln!("{level:?} skipped: not on this CPU");
                continue;
            }
            for len in LENGTHS {
                let src: Vec<P> = (0..len).map(|_| P::narrow(r())).collect();
                for work in works() {
                    let mut got = src.clone();
                    dispatch(&mut got, work, level);
                    let want: Vec<P> =
                        src.iter().map(|&g| P::narrow(work.reference_pixel(g.into()))).collect();
                    assert_eq!(got, want, "{level:?} {work:?} {len} pixels");
                }
            }
        }
    }

    #[test]
    fn every_level_matches_the_reference_u8_and_u16() {
        every_level_matches_the_reference::<u8>(1);
        every_level_matches_the_reference::<u16>(2);
    }
}
