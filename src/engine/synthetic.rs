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

/// Parses `4k`, `8k`, `16k` or `WxH` into a width and height.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    match s.to_ascii_lowercase().as_str() {
        "hd" | "1080p" => Ok((1920, 1080)),
        "4k" => Ok((3840, 2160)),
        "8k" => Ok((7680, 4320)),
        "16k" => Ok((15360, 8640)),
        other => {
            let bad = || format!("invalid size {s:?} (expected 4k, 8k, 16k or WxH, e.g. 6000x4000)");
            let (w, h) = other.split_once('x').ok_or_else(bad)?;
            let w: u32 = w.trim().parse().map_err(|_| bad())?;
            let h: u32 = h.trim().parse().map_err(|_| bad())?;
            if w == 0 || h == 0 { Err(bad()) } else { Ok((w, h)) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("8K"), Ok((7680, 4320)));
        assert_eq!(parse_size("6000x4000"), Ok((6000, 4000)));
        assert!(parse_size("0x5").is_err());
        assert!(parse_size("big").is_err());
    }

    #[test]
    fn synthetic_is_deterministic_and_varied() {
        let a = synthetic_rgb(64, 32, 7);
        assert_eq!(a.as_bytes(), synthetic_rgb(64, 32, 7).as_bytes());
        assert_ne!(a.as_bytes(), synthetic_rgb(64, 32, 8).as_bytes());
        let distinct: std::collections::HashSet<u8> = a.as_bytes().iter().copied().collect();
        assert!(distinct.len() > 200, "only {} distinct byte values", distinct.len());
    }
}
