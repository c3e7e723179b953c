//! Host copies into and out of mapped GPU buffers with every available thread (rayon, 1 MiB
//! pieces): one thread cannot fill a mapped buffer at the machine's memory bandwidth. A copy too
//! small to give every thread a piece runs on the calling thread: split finer, it waits for
//! threads that may be busy elsewhere (on a software adapter, running the "GPU").
//!
//! wgpu 30 hands out a mapped write range as `WriteOnly<[u8]>`, which is not `Send`;
//! `WriteOnly::into_chunks` splits it into `WriteOnly<[u8; N]>` pieces, which are.

use rayon::prelude::*;

use crate::gpu::GpuError;

/// Bytes each rayon task copies.
pub const PIECE_BYTES: usize = 1 << 20;

/// Whether a copy of `len` bytes gives every thread a piece.
fn parallel(len: usize) -> bool {
    len >= PIECE_BYTES * rayon::current_num_threads()
}

/// Copies `src` to the start of a mapped write range and zero-fills the rest of it.
pub(crate) fn fill_mapped(view: &mut wgpu::BufferViewMut, src: &[u8]) -> Result<(), GpuError> {
    let range_bytes = view.len();
    let too_long =
        || GpuError::Map(format!("{} bytes do not fit a {range_bytes} byte staging range", src.len()));
    let (head, mut tail) = view.slice(..).split_at_checked(src.len()).map_err(|_| too_long())?;
    if parallel(src.len()) {
        let (pieces, mut rest) = head.into_chunks::<PIECE_BYTES>();
        let pieces: Vec<wgpu::WriteOnly<'_, [u8; PIECE_BYTES]>> = pieces.into_iter().collect();
        let (src_pieces, src_rest) = src.split_at(pieces.len() * PIECE_BYTES);
        pieces.into_par_iter().zip(src_pieces.par_chunks_exact(PIECE_BYTES)).for_each(|(piece, from)| {
            let mut piece: wgpu::WriteOnly<'_, [u8]> = piece.into();
            piece.copy_from_slice(from);
        });
        rest.copy_from_slice(src_rest);
    } else {
        let mut head = head;
        head.copy_from_slice(src);
    }
    tail.fill(0);
    Ok(())
}

/// Copies the start of a mapped read range into `dst` (all of `dst`).
pub(crate) fn read_mapped(view: &[u8], dst: &mut [u8]) -> Result<(), GpuError> {
    let src = view.get(..dst.len()).ok_or_else(|| {
        GpuError::Map(format!("a {} byte readback range holds no {} bytes", view.len(), dst.len()))
    })?;
    if parallel(dst.len()) {
        dst.par_chunks_mut(PIECE_BYTES)
            .zip(src.par_chunks(PIECE_BYTES))
            .for_each(|(to, from)| to.copy_from_slice(from));
    } else {
        dst.copy_from_slice(src);
    }
    Ok(())
}
