//! The multi-threaded driver: splits the image into chunks of [`CHUNK_PIXELS`] and runs the block
//! kernel on a rayon pool of the requested size (pools are built once per size and kept).

use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use super::blocks::convert_unchecked_len;
use super::fused::apply_work_to_output;
use super::{CpuError, check_lengths};
use crate::pixel::{Formula, Kernel, Work};

/// Pixels per parallel task: large enough that scheduling costs nothing, small enough that two to
/// a few dozen cores all get work on a 4K image.
pub const CHUNK_PIXELS: usize = 64 * 1024;

/// The number of hardware threads this process may use, asked once: the standard library reads
/// the cgroup's CPU quota from files each time, and the app asks every frame.
#[must_use]
pub fn available_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// Converts `src` into `dst` on `threads` threads (clamped to `1..=available_threads()`).
///
/// One thread runs on the calling thread with no pool at all, so the single-thread figure is the
/// plain kernel.
pub fn par_convert(
    kernel: Kernel,
    formula: Formula,
    src: &[u8],
    dst: &mut [u8],
    threads: usize,
) -> Result<(), CpuError> {
    par_convert_with_work(kernel, formula, src, dst, threads, Work::NONE)
}

/// [`par_convert`], then `work` applied to each chunk's gray samples while the chunk is still in
/// cache ([`apply_work_to_output`]; nothing more for the identity).
pub fn par_convert_with_work(
    kernel: Kernel,
    formula: Formula,
    src: &[u8],
    dst: &mut [u8],
    threads: usize,
    work: Work,
) -> Result<(), CpuError> {
    check_lengths(kernel, src, dst)?;
    let (inb, outb) = (kernel.in_bytes_per_pixel(), kernel.out_bytes_per_pixel());
    run_chunked(inb, outb, src, dst, threads, |s, d| {
        convert_unchecked_len(kernel, formula, s, d);
        apply_work_to_output(kernel, d, work);
    })
}

/// Runs `f` over matching chunks of [`CHUNK_PIXELS`] pixels of `src` and `dst` on `threads`
/// threads (on the calling thread alone for one).
pub(crate) fn run_chunked(
    in_bytes_per_pixel: usize,
    out_bytes_per_pixel: usize,
    src: &[u8],
    dst: &mut [u8],
    threads: usize,
    f: impl Fn(&[u8], &mut [u8]) + Sync,
) -> Result<(), CpuError> {
    let threads = threads.clamp(1, available_threads());
    if threads == 1 {
        f(src, dst);
        return Ok(());
    }
    let pool = pool(threads)?;
    let (in_chunk, out_chunk) = (CHUNK_PIXELS * in_bytes_per_pixel, CHUNK_PIXELS * out_bytes_per_pixel);
    pool.install(|| {
        src.par_chunks(in_chunk).zip(dst.par_chunks_mut(out_chunk)).for_each(|(s, d)| f(s, d));
    });
    Ok(())
}

/// The cached pool of exactly `threads` threads.
pub(crate) fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, CpuError> {
    static POOLS: OnceLock<Mutex<Vec<Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(Mutex::default);
    let mut pools = pools.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(p) = pools.iter().find(|p| p.current_num_threads() == threads) {
        return Ok(Arc::clone(p));
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("graylab-cpu-{threads}t-{i}"))
        .build()
        .map_err(|e| CpuError::ThreadPool { threads, reason: e.to_string() })?;
    let p = Arc::new(p);
    pools.push(Arc::clone(&p));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::convert_reference;

    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn every_kernel_and_thread_count_matches_the_reference() {
        // Odd pixel counts exercise the block tails and the last, short parallel chunk.
        for pixels in [1, 31, 33, CHUNK_PIXELS + 7, 3 * CHUNK_PIXELS - 1] {
            for kernel in Kernel::ALL {
                let src = noise(pixels * kernel.in_bytes_per_pixel(), pixels as u64);
                for formula in Formula::ALL {
                    let mut want = vec![0u8; pixels * kernel.out_bytes_per_pixel()];
                    convert_reference(kernel, formula, &src, &mut want).expect("sizes match");
                    for threads in [1, 2, 3] {
                        let mut got = vec![0xAAu8; want.len()];
                        par_convert(kernel, formula, &src, &mut got, threads).expect("sizes match");
                        assert!(got == want, "{kernel:?} {formula} {pixels} px {threads} threads");
                    }
                }
            }
        }
    }

    #[test]
    fn work_in_every_chunk_matches_work_on_the_whole_output() {
        let work = Work { rounds: 7, mask: 0xFFFF, divergent: true };
        for kernel in Kernel::ALL {
            let pixels = 2 * CHUNK_PIXELS + 13;
            let src = noise(pixels * kernel.in_bytes_per_pixel(), 7);
            let mut want = vec![0u8; pixels * kernel.out_bytes_per_pixel()];
            convert_reference(kernel, Formula::Bt709, &src, &mut want).expect("sizes match");
            apply_work_to_output(kernel, &mut want, work);
            for threads in [1, 2, 3] {
                let mut got = vec![0u8; want.len()];
                par_convert_with_work(kernel, Formula::Bt709, &src, &mut got, threads, work)
                    .expect("sizes match");
                assert!(got == want, "{kernel:?} {threads} threads");
            }
        }
    }

    #[test]
    fn rejects_mismatched_buffers() {
        let mut dst = [0u8; 2];
        let err = par_convert(Kernel::Rgb8ToL8, Formula::Bt601, &[0; 9], &mut dst, 2);
        assert!(matches!(err, Err(CpuError::LengthMismatch { src_bytes: 9, dst_bytes: 2, .. })));
        let err = par_convert(Kernel::Rgb8ToL8, Formula::Bt601, &[0; 8], &mut dst, 1);
        assert!(matches!(err, Err(CpuError::LengthMismatch { .. })));
    }
}
