//! Splitting an image into row bands that each fit one GPU storage binding.

use crate::gpu::GpuError;
use crate::pixel::{Kernel, Op};

/// Largest band graylab plans: every index in the shader stays within `u32`.
pub(crate) const MAX_BAND_BYTES: u64 = (1 << 32) - 256;

/// The largest band on a device with `limits`: its largest storage binding and buffer, within
/// [`MAX_BAND_BYTES`].
#[must_use]
pub(crate) fn band_limit_bytes(limits: &wgpu::Limits) -> u64 {
    limits.max_storage_buffer_binding_size.min(limits.max_buffer_size).min(MAX_BAND_BYTES)
}

/// How an image is cut into row bands for the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BandPlan {
    /// Image rows per band (the last band may have fewer).
    pub rows_per_band: u32,
    /// Number of bands.
    pub bands: u32,
    /// Output words (one shader invocation each) in the largest band.
    pub max_words: u64,
    /// Bytes of the largest band's input buffer, padded to whole output words.
    pub max_in_bytes: u64,
    /// Bytes of the largest band's output buffer.
    pub max_out_bytes: u64,
}

/// Bytes a pixel of a band takes in the largest binding of `op`: the blur's u32 sums, else
/// the gray plane's byte.
pub(crate) fn op_binding_bytes_per_pixel(op: Op) -> u64 {
    if matches!(op, Op::Blur { .. }) { 4 } else { 1 }
}

/// Words and padded byte sizes of a band of `pixels` pixels.
#[must_use]
pub(crate) fn band_sizes(kernel: Kernel, pixels: u64) -> (u64, u64, u64) {
    let ppw = kernel.pixels_per_word() as u64;
    let words = pixels.div_ceil(ppw);
    (words, words * kernel.in_words_per_out_word() as u64 * 4, words * 4)
}

impl BandPlan {
    /// Plans bands of at most `limit_bytes` of (padded) input for a `width` x `height` image.
    pub fn new(kernel: Kernel, width: u32, height: u32, limit_bytes: u64) -> Result<Self, GpuError> {
        let row_bytes = u64::from(width) * kernel.in_bytes_per_pixel() as u64;
        // A band's input is padded by less than one word's worth of pixels.
        let pad = kernel.pixels_per_word() as u64 * kernel.in_bytes_per_pixel() as u64;
        let fits = |rows: u64| band_sizes(kernel, rows * u64::from(width)).1 <= limit_bytes;
        if row_bytes == 0 || height == 0 {
            return Ok(Self { rows_per_band: 1, bands: 0, max_words: 0, max_in_bytes: 0, max_out_bytes: 0 });
        }
        if !fits(1) {
            return Err(GpuError::RowTooLarge { rows: 1, row_bytes, limit_bytes });
        }
        let mut rows = (limit_bytes.saturating_sub(pad) / row_bytes).clamp(1, u64::from(height));
        while rows < u64::from(height) && fits(rows + 1) {
            rows += 1;
        }
        let rows_per_band = rows as u32;
        let (max_words, max_in_bytes, max_out_bytes) = band_sizes(kernel, rows * u64::from(width));
        Ok(Self {
            rows_per_band,
            bands: height.div_ceil(rows_per_band),
            max_words,
            max_in_bytes,
            max_out_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_band_when_it_fits() {
        let p = BandPlan::new(Kernel::Rgb8ToL8, 7680, 4320, 128 << 20).expect("fits");
        assert_eq!((p.bands, p.rows_per_band), (1, 4320));
        assert_eq!(p.max_words, (7680 * 4320 / 4) as u64);
    }

    #[test]
    fn bands_respect_the_limit_exactly() {
        for (w, h, limit) in [(5, 3, 16u64), (4097, 2161, 1 << 20), (3, 1000, 100), (1, 1, 16)] {
            for kernel in Kernel::ALL {
                let Ok(p) = BandPlan::new(kernel, w, h, limit) else {
                    assert!(band_sizes(kernel, u64::from(w)).1 > limit);
                    continue;
                };
                assert!(p.max_in_bytes <= limit, "{kernel:?} {w}x{h}");
                assert_eq!(p.bands, h.div_ceil(p.rows_per_band));
                // One more row would not have fitted.
                if p.rows_per_band < h {
                    let more = band_sizes(kernel, u64::from(p.rows_per_band + 1) * u64::from(w)).1;
                    assert!(more > limit, "{kernel:?} {w}x{h}: bands could be bigger");
                }
            }
        }
    }

    #[test]
    fn refuses_a_row_wider_than_the_limit() {
        assert!(matches!(
            BandPlan::new(Kernel::Rgb8ToL8, 100, 2, 64),
            Err(GpuError::RowTooLarge { rows: 1, row_bytes: 300, limit_bytes: 64 })
        ));
    }
}
