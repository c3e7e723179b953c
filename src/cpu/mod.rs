//! The CPU backend: a scalar reference (the test oracle) and a fast, multi-threaded kernel.
//!
//! Both work on raw packed pixel bytes described by a [`Kernel`]; neither knows about files,
//! the GPU or the UI. Beside them, the synthetic work-per-pixel load ([`Work`]) that raises the
//! arithmetic intensity of a gray result in place, and this CPU's compute ceiling for it
//! ([`compute_ceiling`]).

/// `$name(args)` runs `$body` (an `inline(always)` fn) in the copy compiled for the instruction
/// set [`simd_level`] picked: `$avx2` and `$avx512` are the `#[target_feature]` copies (x86-64),
/// each vectorised for its own instruction set.
macro_rules! simd_copies {
    ($(#[$doc:meta])* $vis:vis fn $name:ident / $avx2:ident / $avx512:ident
        => $body:ident($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        $vis fn $name($($arg: $ty),*) {
            match $crate::cpu::simd_level() {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `simd_level` only reports AVX-512 when the CPU has avx512f and avx512bw.
                $crate::cpu::SimdLevel::Avx512 => unsafe { $avx512($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `simd_level` only reports AVX2 when the CPU has it.
                $crate::cpu::SimdLevel::Avx2 => unsafe { $avx2($($arg),*) },
                _ => $body($($arg),*),
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx2($($arg: $ty),*) {
            $body($($arg),*);
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512bw")]
        fn $avx512($($arg: $ty),*) {
            $body($($arg),*);
        }
    };
}

mod baseline;
mod blocks;
mod compute;
mod fused;
mod intensity;
pub mod ops;
mod parallel;
mod reference;
mod stretches;

pub use crate::pixel::{OPS_PER_ROUND, WORK_MULTIPLIER, WORK_SEED, Work, scalar_rounds};
pub use crate::system::huge_pages::zeroed_buffer;
pub use baseline::stream_baseline;
pub use blocks::{SimdLevel, convert_chunk, prepare, simd_level};
pub use compute::{CEILING_BLOCK_PIXELS, CEILING_ROUNDS, CpuCompute, compute_ceiling};
pub use fused::apply_work_to_output;
pub use intensity::{WORK_CHUNK_PIXELS, apply_work_chunk_u8, apply_work_chunk_u8_at, apply_work_chunk_u16};
pub(crate) use parallel::pool;
pub use parallel::{
    CHUNK_PIXELS, Watch, available_threads, par_convert, par_convert_counted, par_convert_with_work,
};
pub use reference::convert_reference;
pub use stretches::{STRETCH_GAP, Stretch, ThreadStretches};

use crate::pixel::Kernel;

/// Errors of the CPU backend.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// The input and output buffers do not hold the same number of pixels for this kernel.
    #[error("buffer sizes do not match for {kernel:?}: {src_bytes} input bytes, {dst_bytes} output bytes")]
    LengthMismatch {
        /// The conversion that was asked for.
        kernel: Kernel,
        /// Length of the input slice.
        src_bytes: usize,
        /// Length of the output slice.
        dst_bytes: usize,
    },
    /// A gray plane's bytes are not its width times its height.
    #[error("a {width}x{height} gray plane cannot hold {bytes} bytes")]
    PlaneMismatch {
        /// The plane's width.
        width: usize,
        /// The plane's height.
        height: usize,
        /// The bytes given.
        bytes: usize,
    },
    /// The rayon thread pool could not be created.
    #[error("cannot start {threads} worker threads: {reason}")]
    ThreadPool {
        /// The number of threads asked for.
        threads: usize,
        /// What rayon said.
        reason: String,
    },
}

/// Checks that `src` and `dst` hold the same whole number of pixels for `kernel`.
pub(crate) fn check_lengths(kernel: Kernel, src: &[u8], dst: &[u8]) -> Result<usize, CpuError> {
    let (inb, outb) = (kernel.in_bytes_per_pixel(), kernel.out_bytes_per_pixel());
    let pixels = src.len() / inb;
    if !src.len().is_multiple_of(inb) || dst.len() != pixels * outb {
        return Err(CpuError::LengthMismatch { kernel, src_bytes: src.len(), dst_bytes: dst.len() });
    }
    Ok(pixels)
}
