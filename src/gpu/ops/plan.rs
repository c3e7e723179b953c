//! The row bands of an op on the GPU: each band's input rows (for the blur its output rows and
//! an apron of `radius` rows a side, clamped to the image) fit one storage binding, as do the
//! blur's u32 horizontal sums of them; a dither band needs its rows only (the error rows, a
//! ring of 4 rows of i32 in a binding of their own, stay on the GPU). Pure arithmetic.

use std::ops::Range;

use crate::gpu::GpuError;
use crate::gpu::plan::bands::op_binding_bytes_per_pixel;
use crate::pixel::Op;

/// Most output rows in one band: one workgroup row a row in the blur's horizontal pass stays
/// within every device's 65,535 workgroups a dimension, with its apron.
pub(crate) const MAX_BAND_ROWS: u32 = 16_384;

/// One band: the image rows uploaded and the image rows written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OpBand {
    /// Rows uploaded (and, for the blur, summed horizontally).
    pub input: Range<u32>,
    /// Rows the band outputs.
    pub output: Range<u32>,
}

/// Pixels in a row of the blur's sums and output: the width rounded up to whole words, so that
/// each output word holds one row's pixels (`stride()` in `shaders/blur.wgsl`).
pub(crate) fn blur_stride(width: u32) -> u32 {
    width.next_multiple_of(4)
}

/// The bands of `op` over a `width` x `height` plane with bindings of at most `limit_bytes`.
pub(crate) fn op_bands(
    op: Op,
    (width, height): (u32, u32),
    limit_bytes: u64,
) -> Result<Vec<OpBand>, GpuError> {
    let (apron, bytes_per_row) = match op {
        Op::Blur { radius } => (radius, op_binding_bytes_per_pixel(op) * u64::from(blur_stride(width))),
        Op::None | Op::Dither => (0, u64::from(width)),
    };
    let fit = limit_bytes / bytes_per_row.max(1);
    // A plane that fits whole is one band: its apron is the image's edge, not rows to carry.
    let apron_rows = if fit >= u64::from(height) { 0 } else { 2 * u64::from(apron) };
    let rows = fit.saturating_sub(apron_rows).min(u64::from(MAX_BAND_ROWS)) as u32;
    if rows == 0 {
        let band_rows = (1 + 2 * u64::from(apron)).min(u64::from(height).max(1));
        return Err(GpuError::RowTooLarge {
            rows: band_rows,
            row_bytes: bytes_per_row * band_rows,
            limit_bytes,
        });
    }
    let mut bands = Vec::new();
    let mut y0 = 0;
    while y0 < height {
        let y1 = (y0 + rows).min(height);
        bands.push(OpBand { input: y0.saturating_sub(apron)..(y1 + apron).min(height), output: y0..y1 });
        y0 = y1;
    }
    Ok(bands)
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn blur_bands_carry_their_apron_and_cover_every_row_once() {
        // 100 px rows of u32 sums: 4 KiB binding = 10 rows, of which 2 x 3 are apron.
        let bands = op_bands(Op::Blur { radius: 3 }, (100, 12), 4096).unwrap();
        assert_eq!(bands[0], OpBand { input: 0..7, output: 0..4 });
        assert_eq!(bands[1], OpBand { input: 1..11, output: 4..8 });
        assert_eq!(bands[2], OpBand { input: 5..12, output: 8..12 });
        assert_eq!(bands.len(), 3);
        assert!(op_bands(Op::Blur { radius: 5 }, (100, 11), 4096).is_err(), "no room besides the apron");
        // A plane that fits whole needs no apron rows: 10 rows at radius 5 are one band.
        assert_eq!(
            op_bands(Op::Blur { radius: 5 }, (100, 10), 4096).unwrap(),
            vec![OpBand { input: 0..10, output: 0..10 }]
        );
        let dither = op_bands(Op::Dither, (100, 1000), 1000).unwrap();
        assert_eq!((dither.len(), dither[9].output.clone()), (100, 90..100));
        assert_eq!(
            op_bands(Op::Dither, (7, 3), 1 << 20).unwrap(),
            vec![OpBand { input: 0..3, output: 0..3 }]
        );
    }
}
