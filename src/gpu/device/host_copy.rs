//! Host copies into and out of mapped GPU buffers with every available thread (rayon, 1 MiB
//! pieces): one thread cannot fill a mapped buffer at the machine's memory bandwidth. A copy too
//! small to give every thread a piece runs on the calling thread: split finer, it waits for
//! threads that may be busy elsewhere (on a software adapter, running the "GPU").
//!
//! wgpu 30 hands out a mapped write range as `WriteOnly<[u8]>`, which is not `Send`;
//! `WriteOnly::into_chunks` splits it into `WriteOnly<[u8; N]>` pieces, which are.

use std::time::Instant;

use rayon::prelude::*;

use crate::gpu::GpuError;

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

/// Whether a copy of `len` bytes gives every thread a piece.
fn parallel(len: usize) -> bool {
    len >= PIECE_BYTES * rayon::current_num_threads()
}

/// Copies `src` to the start of a mapped write range and zero-fills the rest of it; when each
/// thread that took part copied.
pub(crate) fn fill_mapped(view: &mut wgpu::BufferViewMut, src: &[u8]) -> Result<Vec<ThreadCopy>, GpuError> {
    let (head, mut tail) = view
        .slice(..)
        .split_at_checked(src.len())
        .map_err(|_| GpuError::Bug("a staging range shorter than what is copied into it"))?;
    if parallel(src.len()) {
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
        let mut head = head;
        Ok(vec![ThreadCopy::timed(|| {
            head.copy_from_slice(src);
            tail.fill(0);
        })])
    }
}

/// Copies the start of a mapped read range into `dst` (all of `dst`); when each thread that took
/// part copied.
pub(crate) fn read_mapped(view: &[u8], dst: &mut [u8]) -> Result<Vec<ThreadCopy>, GpuError> {
    let src = view
        .get(..dst.len())
        .ok_or(GpuError::Bug("a readback range shorter than what is copied out of it"))?;
    if parallel(dst.len()) {
        let copies: Vec<ThreadCopy> = dst
            .par_chunks_mut(PIECE_BYTES)
            .zip(src.par_chunks(PIECE_BYTES))
            .map(|(to, from)| ThreadCopy::timed(|| to.copy_from_slice(from)))
            .collect();
        Ok(per_thread(copies))
    } else {
        Ok(vec![ThreadCopy::timed(|| dst.copy_from_slice(src))])
    }
}
