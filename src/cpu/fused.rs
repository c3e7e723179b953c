//! A kernel's gray output with the synthetic work ([`Work`]) applied, one chunk at a time, so the
//! work runs while the chunk is still in cache: 8- and 16-bit gray in place, and the gray samples
//! of a gray + alpha output through a small gathered scratch (alpha is never touched).

use super::intensity::{apply_work_chunk_u8, apply_work_chunk_u16};
use crate::pixel::{Kernel, Work};

/// Gray samples gathered at once for a gray + alpha output: a multiple of every work block
/// (32, 72 and 256 lanes), so only the last piece of a chunk has a partial block.
const SCRATCH_PIXELS: usize = 4608;

/// Applies `work` in place to the gray samples of `out`, a whole number of `kernel`'s output
/// pixels. Does nothing for the identity ([`Work::is_identity`]).
pub fn apply_work_to_output(kernel: Kernel, out: &mut [u8], work: Work) {
    if work.is_identity() {
        return;
    }
    let stride = kernel.out_bytes_per_pixel();
    if !kernel.is_16bit() {
        if stride == 1 {
            apply_work_chunk_u8(out, work);
        } else {
            gray_strided(out, stride, u8::from_ne_bytes, u8::to_ne_bytes, |g| apply_work_chunk_u8(g, work));
        }
        return;
    }
    if stride == 2
        && let Ok(gray) = bytemuck::try_cast_slice_mut::<u8, u16>(out)
    {
        apply_work_chunk_u16(gray, work);
    } else {
        gray_strided(out, stride, u16::from_ne_bytes, u16::to_ne_bytes, |g| apply_work_chunk_u16(g, work));
    }
}

/// The gray sample (the first `N` bytes of every `stride`, native-endian) through the scratch.
fn gray_strided<P: Copy + Default, const N: usize>(
    out: &mut [u8],
    stride: usize,
    from: impl Fn([u8; N]) -> P,
    to: impl Fn(P) -> [u8; N],
    apply: impl Fn(&mut [P]),
) {
    let mut scratch = [P::default(); SCRATCH_PIXELS];
    for piece in out.chunks_mut(stride * SCRATCH_PIXELS) {
        let n = scratch
            .iter_mut()
            .zip(piece.chunks_exact(stride))
            .map(|(s, p)| *s = p.first_chunk::<N>().map_or_else(P::default, |b| from(*b)))
            .count();
        apply(&mut scratch[..n]);
        for (s, p) in scratch.iter().zip(piece.chunks_exact_mut(stride)) {
            if let Some(g) = p.first_chunk_mut::<N>() {
                *g = to(*s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pixel::noise;

    /// Every kernel's output with the work applied sample by sample: gray changed, alpha not.
    fn reference(kernel: Kernel, out: &[u8], work: Work) -> Vec<u8> {
        let stride = kernel.out_bytes_per_pixel();
        let mut want = out.to_vec();
        for p in want.chunks_exact_mut(stride) {
            if kernel.is_16bit() {
                let g = u16::from_ne_bytes([p[0], p[1]]);
                p[..2].copy_from_slice(&(work.reference_pixel(g.into()) as u16).to_ne_bytes());
            } else {
                p[0] = work.reference_pixel(p[0].into()) as u8;
            }
        }
        want
    }

    #[test]
    fn every_output_layout_matches_the_reference() {
        for kernel in Kernel::ALL {
            // Across a scratch boundary, odd lengths, and a misaligned 16-bit start.
            for pixels in [0, 1, 7, 73, SCRATCH_PIXELS - 1, SCRATCH_PIXELS + 5, 2 * SCRATCH_PIXELS + 3] {
                let len = pixels * kernel.out_bytes_per_pixel();
                let mut buf = noise(len + 1, len as u32);
                for offset in [0, 1] {
                    let out = &mut buf[offset..offset + len];
                    for work in [
                        Work { rounds: 5, mask: 0xFFFF, divergent: false },
                        Work { rounds: 3, mask: 0xFF, divergent: true },
                        Work::NONE,
                    ] {
                        let want = reference(kernel, out, work);
                        let mut got = out.to_vec();
                        apply_work_to_output(kernel, &mut got, work);
                        assert!(got == want, "{kernel:?} {pixels} px offset {offset} {work:?}");
                        // In place too, at the original (possibly misaligned) address.
                        let saved = out.to_vec();
                        apply_work_to_output(kernel, out, work);
                        assert!(out == want.as_slice(), "{kernel:?} {pixels} px in place offset {offset}");
                        out.copy_from_slice(&saved);
                    }
                }
            }
        }
    }
}
