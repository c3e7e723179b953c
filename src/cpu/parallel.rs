//! The multi-threaded driver: splits the image into chunks of [`CHUNK_PIXELS`] and runs the block
//! kernel on a rayon pool of the requested size (pools are built once per size and kept).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use rayon::prelude::*;

use super::blocks::convert_unchecked_len;
use super::fused::apply_work_to_output;
use super::stretches::ThreadStretches;
use super::{CpuError, check_lengths};
use crate::pixel::{Formula, Kernel, Work};
use crate::system::progress::PixelProgress;

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
    par_convert_counted(kernel, formula, (src, dst), threads, work, Watch::default())
}

/// What a parallel run reports as it goes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Watch<'a> {
    /// Each chunk's pixels, added as the chunk finishes (one relaxed add per chunk of
    /// [`CHUNK_PIXELS`]; one thread then runs the chunks one after another on the calling
    /// thread). The caller starts the count ([`PixelProgress::start`]).
    pub progress: Option<&'a PixelProgress>,
    /// When each thread worked (runs on more than one thread only: one thread's work is the
    /// run's own span).
    pub stretches: Option<&'a ThreadStretches>,
}

/// [`par_convert_with_work`], reporting to `watch` as it goes.
pub fn par_convert_counted(
    kernel: Kernel,
    formula: Formula,
    (src, dst): (&[u8], &mut [u8]),
    threads: usize,
    work: Work,
    watch: Watch<'_>,
) -> Result<(), CpuError> {
    check_lengths(kernel, src, dst)?;
    let (inb, outb) = (kernel.in_bytes_per_pixel(), kernel.out_bytes_per_pixel());
    run_chunked((inb, outb), (src, dst), threads, watch, |s, d| {
        convert_unchecked_len(kernel, formula, s, d);
        apply_work_to_output(kernel, d, work);
    })
}

/// Runs `f` over matching chunks of [`CHUNK_PIXELS`] pixels of `src` and `dst` on `threads`
/// threads (on the calling thread alone for one thread or one chunk: in one call without
/// progress to report), reporting each chunk to `watch` once it is done.
pub(crate) fn run_chunked(
    (in_bytes_per_pixel, out_bytes_per_pixel): (usize, usize),
    (src, dst): (&[u8], &mut [u8]),
    threads: usize,
    watch: Watch<'_>,
    f: impl Fn(&[u8], &mut [u8]) + Sync,
) -> Result<(), CpuError> {
    let threads = threads.clamp(1, available_threads());
    let (in_chunk, out_chunk) = (CHUNK_PIXELS * in_bytes_per_pixel, CHUNK_PIXELS * out_bytes_per_pixel);
    let stretches = watch.stretches.filter(|_| threads > 1);
    let counted = |s: &[u8], d: &mut [u8]| {
        let started = stretches.map(|_| Instant::now());
        f(s, d);
        if let (Some(stretches), Some(started)) = (stretches, started) {
            stretches.record(started, Instant::now());
        }
        if let Some(p) = watch.progress {
            p.add((d.len() / out_bytes_per_pixel.max(1)) as u64);
        }
    };
    match (threads, watch.progress) {
        (1, None) => f(src, dst),
        (1, Some(_)) => src.chunks(in_chunk).zip(dst.chunks_mut(out_chunk)).for_each(|(s, d)| counted(s, d)),
        // One chunk cannot be shared: the calling thread runs it, without the hand-over to the
        // pool and back (tens of µs when its threads sleep, as long as a 16 KiB image's pass).
        _ if src.len() <= in_chunk => counted(src, dst),
        _ => pool(threads)?.install(|| {
            src.par_chunks(in_chunk).zip(dst.par_chunks_mut(out_chunk)).for_each(|(s, d)| counted(s, d));
        }),
    }
    Ok(())
}

/// The cached pool of exactly `threads` threads (a core each when they are as many as the cores:
/// [`crate::system::affinity`]).
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
        .start_handler(move |i| crate::system::affinity::pin_pool_thread(i, threads))
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
    use crate::pixel::noise;

    #[test]
    fn every_kernel_and_thread_count_matches_the_reference() {
        // Odd pixel counts exercise the block tails and the last, short parallel chunk.
        for pixels in [1, 31, 33, CHUNK_PIXELS + 7, 3 * CHUNK_PIXELS - 1] {
            for kernel in Kernel::ALL {
                let src = noise(pixels * kernel.in_bytes_per_pixel(), pixels as u32);
                for formula in Formula::COMPUTED {
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
    fn progress_counts_every_pixel_once_for_every_split_and_thread_count() {
        // Whole chunks, a short last chunk, one short chunk alone; 8- and 16-bit outputs.
        for pixels in [1, CHUNK_PIXELS, 3 * CHUNK_PIXELS, 2 * CHUNK_PIXELS + 13] {
            for kernel in [Kernel::Rgb8ToL8, Kernel::Rgba16ToLa16] {
                let src = noise(pixels * kernel.in_bytes_per_pixel(), 3);
                for threads in [1, 2, 3] {
                    let mut dst = vec![0u8; pixels * kernel.out_bytes_per_pixel()];
                    let progress = PixelProgress::new();
                    progress.start(pixels as u64);
                    let stretches = ThreadStretches::new(threads);
                    let before = Instant::now();
                    par_convert_counted(
                        kernel,
                        Formula::Bt709,
                        (&src, &mut dst),
                        threads,
                        Work::NONE,
                        Watch { progress: Some(&progress), stretches: Some(&stretches) },
                    )
                    .expect("sizes match");
                    let after = Instant::now();
                    assert_eq!(progress.done(), pixels as u64, "{kernel:?} {pixels} px {threads} threads");
                    assert_eq!(progress.fraction(), Some(1.0));
                    // Every chunk in one thread's stretch, on more than one thread; none on one.
                    let stretches = stretches.into_stretches();
                    let chunks: u32 = stretches.iter().map(|s| s.chunks).sum();
                    let parallel = threads.min(available_threads()) > 1;
                    assert_eq!(chunks as usize, if parallel { pixels.div_ceil(CHUNK_PIXELS) } else { 0 });
                    // One chunk runs on the calling thread (outside the pool), more on the pool's.
                    let one_chunk = pixels <= CHUNK_PIXELS;
                    assert!(
                        stretches.iter().all(|s| s.thread.is_none() == one_chunk),
                        "{pixels} px: {stretches:?}"
                    );
                    assert!(
                        stretches
                            .iter()
                            .all(|s| before <= s.started && s.started <= s.ended && s.ended <= after)
                    );
                }
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
