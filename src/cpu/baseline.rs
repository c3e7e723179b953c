//! The memory-bandwidth yardstick for the kernel: read 3 bytes and write 1 byte per pixel with no
//! arithmetic (the green byte is copied), through the same chunking, threads, prefetch and
//! instruction set as the real kernel. The benchmark reports the kernel's time relative to this.

use super::CpuError;
use super::parallel::{Watch, run_chunked};

/// Copies the middle byte of every 3-byte pixel of `src` into `dst` on `threads` threads.
pub fn stream_baseline(src: &[u8], dst: &mut [u8], threads: usize) -> Result<(), CpuError> {
    if src.len() != dst.len() * 3 {
        return Err(CpuError::LengthMismatch {
            kernel: crate::pixel::Kernel::Rgb8ToL8,
            src_bytes: src.len(),
            dst_bytes: dst.len(),
        });
    }
    run_chunked((3, 1), (src, dst), threads, Watch::default(), pick_best)
}

simd_copies! {
    fn pick_best / pick_avx2 / pick_avx512 => pick(src: &[u8], dst: &mut [u8])
}

#[inline(always)]
fn pick(src: &[u8], dst: &mut [u8]) {
    const BLOCK: usize = 32;
    let (s_blocks, s_tail) = src.as_chunks::<{ 3 * BLOCK }>();
    let (d_blocks, d_tail) = dst.as_chunks_mut::<BLOCK>();
    for (s, d) in s_blocks.iter().zip(d_blocks) {
        // The same prefetch as the RGB kernel, so the two differ only in the arithmetic.
        super::blocks::prefetch_ahead(s.as_ptr());
        for i in 0..BLOCK {
            d[i] = s[3 * i + 1];
        }
    }
    for (s, d) in s_tail.chunks_exact(3).zip(d_tail) {
        *d = s[1];
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_the_middle_byte() {
        let src: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let mut dst = vec![0u8; 100];
        super::stream_baseline(&src, &mut dst, 2).expect("sizes match");
        assert!(dst.iter().enumerate().all(|(i, &v)| v == (3 * i + 1) as u8));
    }
}
