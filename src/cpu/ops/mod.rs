//! The operations on the gray plane after the grayscale ([`crate::pixel::Op`]) on the CPU: the
//! blur a row at a time, vertical pass first, symmetric taps folded (`blur.rs`); the dither as
//! the one sequential loop it is (`dither.rs`). Both are byte-identical to the scalar references
//! in [`crate::pixel`].
mod blur;
mod dither;

pub use blur::par_blur;
pub use dither::dither;

use super::CpuError;
use crate::pixel::Op;

/// Applies `op` to a `width` x `height` gray plane, returning the new plane (a copy for
/// [`Op::None`]), the blur on `threads` threads.
pub fn apply_op(
    op: Op,
    plane: &[u8],
    (width, height): (usize, usize),
    threads: usize,
) -> Result<Vec<u8>, CpuError> {
    if plane.len() != width * height {
        return Err(CpuError::PlaneMismatch { width, height, bytes: plane.len() });
    }
    match op {
        Op::None => Ok(plane.to_vec()),
        Op::Blur { radius } => par_blur(plane, (width, height), radius, threads),
        Op::Dither => Ok(dither(plane, (width, height))),
    }
}
