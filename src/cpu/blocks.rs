//! The fast single-threaded kernels: fixed-size pixel blocks with `u32` arithmetic that the
//! compiler vectorises, compiled three times (baseline, AVX2, AVX-512) and picked at run time.
//!
//! A default x86-64 build only has SSE2, and the 3-byte RGB stride only vectorises well with AVX2
//! or better, so the `#[target_feature]` copies matter: see BENCHMARKS.md for the figures.

use std::sync::OnceLock;

use super::{CpuError, check_lengths};
use crate::pixel::{
    BT601_WEIGHTS as W601, BT709_WEIGHTS as W709, Formula, Kernel, LumaTables, luma_tables, weighted,
};

/// Pixels per block: one block is a fixed-size array so the inner loop has a constant trip count.
const BLOCK: usize = 32;

/// Which instruction set the kernel dispatch picked on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SimdLevel {
    /// The build's baseline (SSE2 on x86-64, or a non-x86 target).
    Baseline,
    /// AVX2 (x86-64).
    Avx2,
    /// AVX-512 F + BW (x86-64).
    Avx512,
}

impl SimdLevel {
    /// The instruction set's name as people write it ("AVX-512").
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Baseline => "baseline SIMD",
            Self::Avx2 => "AVX2",
            Self::Avx512 => "AVX-512",
        }
    }

    /// Whether this CPU can run the copies compiled for this instruction set.
    pub(crate) fn available(self) -> bool {
        match self {
            Self::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// The instruction set the CPU kernels use on this machine (detected once).
#[must_use]
pub fn simd_level() -> SimdLevel {
    static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        // `GRAYLAB_CPU_BASELINE` forces the baseline.
        let forced = std::env::var_os("GRAYLAB_CPU_BASELINE").is_some();
        let wider = [SimdLevel::Avx512, SimdLevel::Avx2].into_iter().find(|l| !forced && l.available());
        wider.unwrap_or(SimdLevel::Baseline)
    })
}

/// Makes ready what `formula`'s kernel reads, so that no kernel's time includes it: the
/// linear-light tables, built the first time (a few milliseconds of `powf`), as the GPU builds
/// them when it sets up its pipelines.
pub fn prepare(formula: Formula) {
    if formula == Formula::Linear {
        let _ = luma_tables();
    }
}

/// Converts one contiguous run of pixels on the calling thread with the best instruction set.
pub fn convert_chunk(kernel: Kernel, formula: Formula, src: &[u8], dst: &mut [u8]) -> Result<(), CpuError> {
    check_lengths(kernel, src, dst)?;
    convert_unchecked_len(kernel, formula, src, dst);
    Ok(())
}

simd_copies! {
    /// [`convert_chunk`] without the length check (the caller has made it).
    pub(crate) fn convert_unchecked_len / dispatch_avx2 / dispatch_avx512
        => dispatch(kernel: Kernel, formula: Formula, src: &[u8], dst: &mut [u8])
}

/// Picks the monomorphised loop. `inline(always)` so that each `target_feature` copy gets its
/// own vectorised code.
#[inline(always)]
fn dispatch(kernel: Kernel, formula: Formula, src: &[u8], dst: &mut [u8]) {
    let w601 = |r, g, b| weighted(W601, r, g, b);
    let w709 = |r, g, b| weighted(W709, r, g, b);
    match (kernel, formula) {
        // The linear-light tables are built the first time they are read (a few milliseconds of
        // `powf`): only here, so that no other formula's kernel time includes them.
        (_, Formula::Linear) => linear(kernel, luma_tables(), src, dst),
        (Kernel::Rgb8ToL8, Formula::Bt601 | Formula::StoredLuma) => rgb8_to_l8(w601, src, dst),
        (Kernel::Rgb8ToL8, Formula::Bt709) => rgb8_to_l8(w709, src, dst),
        (Kernel::Rgba8ToL8, Formula::Bt601 | Formula::StoredLuma) => rgba8_to_l8(w601, src, dst),
        (Kernel::Rgba8ToL8, Formula::Bt709) => rgba8_to_l8(w709, src, dst),
        (Kernel::Rgba8ToLa8, Formula::Bt601 | Formula::StoredLuma) => rgba8_to_la8(w601, src, dst),
        (Kernel::Rgba8ToLa8, Formula::Bt709) => rgba8_to_la8(w709, src, dst),
        (Kernel::Rgb16ToL16, Formula::Bt601 | Formula::StoredLuma) => rgbx16::<3, false>(w601, src, dst),
        (Kernel::Rgb16ToL16, Formula::Bt709) => rgbx16::<3, false>(w709, src, dst),
        (Kernel::Rgba16ToL16, Formula::Bt601 | Formula::StoredLuma) => rgbx16::<4, false>(w601, src, dst),
        (Kernel::Rgba16ToL16, Formula::Bt709) => rgbx16::<4, false>(w709, src, dst),
        (Kernel::Rgba16ToLa16, Formula::Bt601 | Formula::StoredLuma) => rgbx16::<4, true>(w601, src, dst),
        (Kernel::Rgba16ToLa16, Formula::Bt709) => rgbx16::<4, true>(w709, src, dst),
    }
}

/// [`dispatch`]'s linear-light loops, through the tables `t`. `inline(always)` for the same
/// reason.
#[inline(always)]
fn linear(kernel: Kernel, t: &LumaTables, src: &[u8], dst: &mut [u8]) {
    let lin8 = |r: u32, g: u32, b: u32| {
        let at = |v: u32| u32::from(t.srgb8_to_linear[v as usize & 0xff]);
        u32::from(t.linear_to_srgb8[weighted(W709, at(r), at(g), at(b)) as usize & 0xffff])
    };
    let lin16 = |r: u32, g: u32, b: u32| {
        let at = |v: u32| u32::from(t.srgb16_to_linear[v as usize & 0xffff]);
        u32::from(t.linear_to_srgb16[weighted(W709, at(r), at(g), at(b)) as usize & 0xffff])
    };
    match kernel {
        Kernel::Rgb8ToL8 => rgb8_to_l8(lin8, src, dst),
        Kernel::Rgba8ToL8 => rgba8_to_l8(lin8, src, dst),
        Kernel::Rgba8ToLa8 => rgba8_to_la8(lin8, src, dst),
        Kernel::Rgb16ToL16 => rgbx16::<3, false>(lin16, src, dst),
        Kernel::Rgba16ToL16 => rgbx16::<4, false>(lin16, src, dst),
        Kernel::Rgba16ToLa16 => rgbx16::<4, true>(lin16, src, dst),
    }
}

/// How far ahead of the block being converted the RGB loop prefetches its input, in bytes.
/// Measured on the 2-core CI machine against `OpenCV` (`BENCHMARKS.md`): a few percent at one
/// thread. The RGBA loops do better without it.
const PREFETCH_BYTES: usize = 1024;

/// Asks the CPU to start loading `p + PREFETCH_BYTES`; a hint that never faults.
#[inline(always)]
pub(crate) fn prefetch_ahead(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never dereferences and never faults, whatever the
    // address, so an address past the end of the slice is fine.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            p.wrapping_add(PREFETCH_BYTES).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

// The loops below take whole pixels in `src` and the matching `dst` length (checked by the
// caller). Fixed-size blocks give the compiler a constant trip count, no bounds checks and a
// vectorisable body; the tail (under one block) goes pixel by pixel.

#[inline(always)]
fn rgb8_to_l8(luma: impl Fn(u32, u32, u32) -> u32, src: &[u8], dst: &mut [u8]) {
    let (s_blocks, s_tail) = src.as_chunks::<{ 3 * BLOCK }>();
    let (d_blocks, d_tail) = dst.as_chunks_mut::<BLOCK>();
    for (s, d) in s_blocks.iter().zip(d_blocks) {
        prefetch_ahead(s.as_ptr());
        for i in 0..BLOCK {
            d[i] = luma(s[3 * i].into(), s[3 * i + 1].into(), s[3 * i + 2].into()) as u8;
        }
    }
    for (s, d) in s_tail.chunks_exact(3).zip(d_tail) {
        *d = luma(s[0].into(), s[1].into(), s[2].into()) as u8;
    }
}

#[inline(always)]
fn rgba8_to_l8(luma: impl Fn(u32, u32, u32) -> u32, src: &[u8], dst: &mut [u8]) {
    let (s_blocks, s_tail) = src.as_chunks::<{ 4 * BLOCK }>();
    let (d_blocks, d_tail) = dst.as_chunks_mut::<BLOCK>();
    for (s, d) in s_blocks.iter().zip(d_blocks) {
        for i in 0..BLOCK {
            // Whole little-endian words vectorise far better than a stride-4 byte gather.
            let p = u32::from_le_bytes([s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]]);
            d[i] = luma(p & 0xff, (p >> 8) & 0xff, (p >> 16) & 0xff) as u8;
        }
    }
    for (s, d) in s_tail.chunks_exact(4).zip(d_tail) {
        *d = luma(s[0].into(), s[1].into(), s[2].into()) as u8;
    }
}

#[inline(always)]
fn rgba8_to_la8(luma: impl Fn(u32, u32, u32) -> u32, src: &[u8], dst: &mut [u8]) {
    let (s_blocks, s_tail) = src.as_chunks::<{ 4 * BLOCK }>();
    let (d_blocks, d_tail) = dst.as_chunks_mut::<{ 2 * BLOCK }>();
    for (s, d) in s_blocks.iter().zip(d_blocks) {
        for i in 0..BLOCK {
            let p = u32::from_le_bytes([s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]]);
            d[2 * i] = luma(p & 0xff, (p >> 8) & 0xff, (p >> 16) & 0xff) as u8;
            d[2 * i + 1] = (p >> 24) as u8;
        }
    }
    for (s, d) in s_tail.chunks_exact(4).zip(d_tail.chunks_exact_mut(2)) {
        d[0] = luma(s[0].into(), s[1].into(), s[2].into()) as u8;
        d[1] = s[3];
    }
}

/// Reads the native-endian `u16` sample `i` of a byte slice.
#[inline(always)]
fn sample16(s: &[u8], i: usize) -> u32 {
    u32::from(u16::from_ne_bytes([s[2 * i], s[2 * i + 1]]))
}

#[inline(always)]
fn put16(d: &mut [u8], i: usize, v: u32) {
    let [first, second] = (v as u16).to_ne_bytes();
    d[2 * i] = first;
    d[2 * i + 1] = second;
}

/// 16-bit RGB (`CH = 3`) or RGBA (`CH = 4`) to gray, alpha copied when `ALPHA`. 16-bit images
/// are rarer and smaller, so one generic loop serves all three layouts.
#[inline(always)]
fn rgbx16<const CH: usize, const ALPHA: bool>(
    luma: impl Fn(u32, u32, u32) -> u32,
    src: &[u8],
    dst: &mut [u8],
) {
    let out_samples = if ALPHA { 2 } else { 1 };
    let s_blocks = src.chunks_exact(2 * CH * BLOCK);
    let d_blocks = dst.chunks_exact_mut(2 * out_samples * BLOCK);
    let (s_tail, mut d_tail_start) = (s_blocks.remainder(), 0);
    for (s, d) in s_blocks.zip(d_blocks) {
        for i in 0..BLOCK {
            let y = luma(sample16(s, CH * i), sample16(s, CH * i + 1), sample16(s, CH * i + 2));
            put16(d, out_samples * i, y);
            if ALPHA {
                put16(d, out_samples * i + 1, sample16(s, CH * i + 3));
            }
        }
        d_tail_start += d.len();
    }
    let d_tail = &mut dst[d_tail_start..];
    for (i, s) in s_tail.chunks_exact(2 * CH).enumerate() {
        put16(d_tail, out_samples * i, luma(sample16(s, 0), sample16(s, 1), sample16(s, 2)));
        if ALPHA {
            put16(d_tail, out_samples * i + 1, sample16(s, 3));
        }
    }
}
