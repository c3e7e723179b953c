//! Host copies into and out of mapped GPU buffers with every available thread (rayon; 1 MiB
//! pieces into an upload, one piece per thread of at least 256 KiB out of a readback): one
//! thread cannot fill or drain a mapped buffer at the machine's memory bandwidth. A copy too
//! small to give every thread a piece runs on the calling thread: split finer, it waits for
//! threads that may be busy elsewhere (on a software adapter, running the "GPU").
//!
//! wgpu 30 hands out a mapped write range as `WriteOnly<[u8]>`, which is not `Send`;
//! `WriteOnly::into_chunks` splits it into `WriteOnly<[u8; N]>` pieces, which are.

use std::time::Instant;

use rayon::prelude::*;

use crate::gpu::GpuError;
use crate::system::clock::Clock;

/// The time one thread spent in one host copy: from the start of its first piece to the end of
/// its last (a thread copies its pieces one after another).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThreadCopy {
    /// The rayon thread index, `None` for a thread outside the pool.
    pub thread: Option<usize>,
    /// When its first piece started.
    pub started: Instant,
    /// When its last piece ended.
    pub ended: Instant,
}

impl ThreadCopy {
    /// Runs `copy` on this thread, timed.
    fn timed(copy: impl FnOnce()) -> Self {
        let started = Instant::now();
        copy();
        Self { thread: rayon::current_thread_index(), started, ended: Instant::now() }
    }
}

/// The time any thread was copying: what a run's spans count for one copy, and what the
/// transfer probes time, so that a run and its ceiling are measured alike.
pub(crate) fn copying_ns(copies: &[ThreadCopy]) -> u64 {
    let Some(origin) = copies.iter().map(|c| c.started).min() else { return 0 };
    let since = |at: Instant| crate::gpu::device::wait::nanos(at.saturating_duration_since(origin));
    let pieces = copies.iter().map(|c| ((), since(c.started), since(c.ended), Clock::CpuClock)).collect();
    crate::system::clock::busy_time(pieces).map_or(0, |(ns, _)| ns)
}

/// One span per thread out of one span per piece.
fn per_thread(pieces: impl IntoIterator<Item = ThreadCopy>) -> Vec<ThreadCopy> {
    let mut threads: Vec<ThreadCopy> = Vec::new();
    for piece in pieces {
        match threads.iter_mut().find(|t| t.thread == piece.thread) {
            Some(t) => {
                t.started = t.started.min(piece.started);
                t.ended = t.ended.max(piece.ended);
            }
            None => threads.push(piece),
        }
    }
    threads
}

/// Bytes each rayon task copies.
pub const PIECE_BYTES: usize = 1 << 20;

/// Copies `src` to the start of a mapped write range and zero-fills the rest of it; when each
/// thread that took part copied.
pub(crate) fn fill_mapped(view: &mut wgpu::BufferViewMut, src: &[u8]) -> Result<Vec<ThreadCopy>, GpuError> {
    let (mut head, mut tail) = view
        .slice(..)
        .split_at_checked(src.len())
        .map_err(|_| GpuError::Bug("a staging range shorter than what is copied into it"))?;
    // On every thread only where each gets a piece.
    if src.len() >= PIECE_BYTES * rayon::current_num_threads() {
        let (pieces, mut rest) = head.into_chunks::<PIECE_BYTES>();
        let pieces: Vec<wgpu::WriteOnly<'_, [u8; PIECE_BYTES]>> = pieces.into_iter().collect();
        let (src_pieces, src_rest) = src.split_at(pieces.len() * PIECE_BYTES);
        let mut copies: Vec<ThreadCopy> = pieces
            .into_par_iter()
            .zip(src_pieces.par_chunks_exact(PIECE_BYTES))
            .map(|(piece, from)| {
                ThreadCopy::timed(|| {
                    let mut piece: wgpu::WriteOnly<'_, [u8]> = piece.into();
                    piece.copy_from_slice(from);
                })
            })
            .collect();
        copies.push(ThreadCopy::timed(|| {
            rest.copy_from_slice(src_rest);
            tail.fill(0);
        }));
        Ok(per_thread(copies))
    } else {
        Ok(vec![ThreadCopy::timed(|| {
            head.copy_from_slice(src);
            tail.fill(0);
        })])
    }
}

/// The least bytes a thread copies out of a mapped read range: at a single thread's 8 GB/s,
/// 32 µs, far above what handing a piece to a rayon thread costs.
pub const MIN_READ_PIECE_BYTES: usize = 256 << 10;

/// The piece each thread copies out of a `len`-byte readback on `threads` threads (`None`: on
/// the calling thread alone): the range cut into one piece per thread, each at least
/// [`MIN_READ_PIECE_BYTES`], in whole 64 KiB. A download chunk is a third of its upload's
/// bytes, so the upload's whole-MiB pieces (a MiB per thread at least) left it on one thread: on
/// the H200's 16 cores, every chunk under 16 MiB, at 7.6 GB/s, one thread's speed.
#[must_use]
pub fn read_piece_bytes(len: usize, threads: usize) -> Option<usize> {
    if threads < 2 || len < 2 * MIN_READ_PIECE_BYTES {
        return None;
    }
    Some(len.div_ceil(threads).next_multiple_of(64 << 10).max(MIN_READ_PIECE_BYTES))
}

/// Copies the start of a mapped read range into `dst` (all of `dst`) on every thread
/// ([`read_piece_bytes`]); when each thread that took part copied.
pub(crate) fn read_mapped(view: &[u8], dst: &mut [u8]) -> Result<Vec<ThreadCopy>, GpuError> {
    let src = view
        .get(..dst.len())
        .ok_or(GpuError::Bug("a readback range shorter than what is copied out of it"))?;
    match read_piece_bytes(dst.len(), rayon::current_num_threads()) {
        Some(piece) => {
            let copies: Vec<ThreadCopy> = dst
                .par_chunks_mut(piece)
                .zip(src.par_chunks(piece))
                .map(|(to, from)| ThreadCopy::timed(|| to.copy_from_slice(from)))
                .collect();
            Ok(per_thread(copies))
        }
        None => Ok(vec![ThreadCopy::timed(|| dst.copy_from_slice(src))]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_readback_is_cut_into_one_piece_per_thread_of_at_least_256_kib() {
        // An 8K download chunk of 4 MiB on the H200's 16 threads: 16 pieces of 256 KiB.
        assert_eq!(read_piece_bytes(4 << 20, 16), Some(256 << 10));
        // The whole 8K result (33.2 MB) on 16 threads: 16 pieces, whole 64 KiB.
        let piece = read_piece_bytes(33_177_600, 16).expect("parallel");
        assert_eq!(piece % (64 << 10), 0);
        assert_eq!(33_177_600_usize.div_ceil(piece), 16);
        // On 2 threads (this machine): two pieces.
        assert_eq!(read_piece_bytes(4 << 20, 2), Some(2 << 20));
        // Small copies and one thread stay on the calling thread.
        assert_eq!(read_piece_bytes((512 << 10) - 1, 16), None);
        assert_eq!(read_piece_bytes(64 << 20, 1), None);
        // A piece is never under 256 KiB, whatever the thread count.
        assert_eq!(read_piece_bytes(1 << 20, 64), Some(256 << 10));
    }

    #[test]
    fn a_readback_copies_every_byte_whatever_its_pieces() {
        for len in [0, 1000, (512 << 10) + 7, (3 << 20) + 12_345] {
            let src: Vec<u8> = (0..len + 100).map(|i| (i * 7 + i / 256) as u8).collect();
            let mut dst = vec![0u8; len];
            let copies = read_mapped(&src, &mut dst).expect("copied");
            assert_eq!(dst, src[..len], "{len} bytes");
            assert!(!copies.is_empty());
        }
    }
}
