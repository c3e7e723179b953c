//! Synthetic test and benchmark images: deterministic, photo-sized, fast to make.

use image::{DynamicImage, RgbImage};
use rayon::prelude::*;

/// A deterministic RGB8 image: smooth gradients plus per-pixel noise, so every byte value and
/// every kernel path occur and no compressor or cache can cheat.
#[must_use]
pub fn synthetic_rgb(width: u32, height: u32, seed: u64) -> DynamicImage {
    let row_bytes = width as usize * 3;
    let mut data: Vec<u8> = crate::cpu::zeroed_buffer(row_bytes * height as usize);
    if row_bytes > 0 {
        data.par_chunks_mut(row_bytes).enumerate().for_each(|(y, row)| {
            let mut x = seed ^ (y as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for (i, px) in row.chunks_exact_mut(3).enumerate() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let noise = (x >> 56) as u8 & 0x3f;
                px[0] = (i * 255 / width as usize) as u8 ^ noise;
                px[1] = (y * 255 / height as usize) as u8 ^ (noise >> 1);
                px[2] = (x >> 32) as u8;
            }
        });
    }
    DynamicImage::ImageRgb8(RgbImage::from_raw(width, height, data).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_is_deterministic_and_varied() {
        let a = synthetic_rgb(64, 32, 7);
        assert_eq!(a.as_bytes(), synthetic_rgb(64, 32, 7).as_bytes());
        assert_ne!(a.as_bytes(), synthetic_rgb(64, 32, 8).as_bytes());
        let distinct: std::collections::HashSet<u8> = a.as_bytes().iter().copied().collect();
        assert!(distinct.len() > 200, "only {} distinct byte values", distinct.len());
    }
}
