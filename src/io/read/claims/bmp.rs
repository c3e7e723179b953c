//! A BMP's pixels against the bytes behind its header: uncompressed rows are all there, and an
//! RLE8 or RLE4 row takes at least one 2-byte run per 255 pixels in a file any encoder writes
//! (half that is allowed, for rows ended or skipped early). Also the DIBs inside an ICO, a
//! BMP's pixel density (pixels per metre), and a file longer than its header says.

use std::path::Path;

use crate::io::read::claims::check_size;
use crate::io::{Density, DensityUnit, IoError};

/// Compression codes of a BMP's info header.
const BI_RGB: u32 = 0;
const BI_RLE8: u32 = 1;
const BI_RLE4: u32 = 2;
const BI_BITFIELDS: u32 = 3;
const BI_ALPHABITFIELDS: u32 = 6;

/// Refuses a BMP whose header claims no pixels (its decoder calls that "too large") or more
/// than its data could hold.
pub(super) fn check(path: &Path, head: &[u8], file_bytes: u64) -> Result<(), IoError> {
    let le32 = |i: usize| head.get(i..i + 4).and_then(|b| b.try_into().ok()).map(i32::from_le_bytes);
    let le16 = |i: usize| head.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if !head.starts_with(b"BM") || le32(14).is_none_or(|size| size < 40) {
        return Ok(());
    }
    let (Some(w), Some(h)) = (le32(18), le32(22)) else { return Ok(()) };
    if w <= 0 || h == 0 {
        return Err(IoError::Decode {
            path: path.into(),
            reason: format!("the header claims {w}x{h} pixels"),
        });
    }
    let (Some(offset), Some(bits), Some(compression)) = (le32(10), le16(28), le32(30)) else { return Ok(()) };
    let (width, height) = (w.unsigned_abs(), h.unsigned_abs());
    let Some(min_bytes) = min_bytes(width, height, bits, compression.cast_unsigned()) else { return Ok(()) };
    let data_bytes = file_bytes.saturating_sub(u64::from(offset.cast_unsigned()));
    check_size(path, "BMP", (width, height), min_bytes, data_bytes, file_bytes)
}

/// The file's size and its header's (`bfSize`) where the file is longer: `None` where they
/// agree, the header gives 0 (as some writers do) or the file is shorter (its pixels are
/// checked by [`check`]).
pub(super) fn longer_than_header(head: &[u8], file_bytes: u64) -> Option<(u64, u64)> {
    let header_bytes = u64::from(u32::from_le_bytes(head.get(2..6)?.try_into().ok()?));
    (head.starts_with(b"BM") && header_bytes > 0 && file_bytes > header_bytes)
        .then_some((file_bytes, header_bytes))
}

/// The pixels per metre across and down of the BMP whose first bytes are `head` (in an info
/// header of 40 bytes or more); `None` where they are 0 (most BMPs) or there is none.
pub(super) fn density(head: &[u8]) -> Option<Density> {
    let le32 = |i: usize| head.get(i..i + 4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes);
    if !head.starts_with(b"BM") || le32(14)? < 40 {
        return None;
    }
    let per_metre = |i: usize| le32(i).filter(|&v| i32::try_from(v).is_ok());
    Density::new((per_metre(38)?, 1), (per_metre(42)?, 1), DensityUnit::Metre)
}

/// The fewest bytes of pixel data a `width` x `height` bitmap of `bits` per pixel needs with
/// this compression, or `None` when the compression is not checked (JPEG or PNG inside).
pub(super) fn min_bytes(width: u32, height: u32, bits: u16, compression: u32) -> Option<u64> {
    let (width, height) = (u64::from(width), u64::from(height));
    match compression {
        // A delta (4 bytes) skips up to 255 rows: reaching the last row takes one per 255 rows;
        // a bitmap that ends before it (end of bitmap, 2 bytes) holds less than it claims.
        BI_RLE8 | BI_RLE4 => Some(4 * height.div_ceil(255)),
        BI_RGB | BI_BITFIELDS | BI_ALPHABITFIELDS if matches!(bits, 1 | 2 | 4 | 8 | 16 | 24 | 32) => {
            // Rows are padded to 4 bytes; the last row's padding may be missing.
            let row_bytes = (width * u64::from(bits)).div_ceil(8);
            let stride = row_bytes.div_ceil(4) * 4;
            Some(stride.saturating_mul(height.saturating_sub(1)).saturating_add(row_bytes))
        }
        _ => None,
    }
}
