//! A JPEG's frame against its coded data, and where a truncated one ends: read from the walk
//! over its segments, before anything is allocated.

use std::path::Path;

use image::DynamicImage;

use crate::io::read::jpeg_scan::{self, FrameKind, Layout, ScanError};
use crate::io::{IoError, TruncatedAt};

/// Reads a JPEG's structure: names unsupported variants, refuses files whose data cannot hold
/// the frame.
pub(in crate::io) fn check_jpeg(path: &Path, bytes: &[u8], allow_truncated: bool) -> Result<Layout, IoError> {
    let layout = jpeg_scan::scan(bytes).map_err(|e| match e {
        ScanError::EndsInHeaders => IoError::Truncated {
            path: path.into(),
            at: TruncatedAt::Unknown,
            orientation: image::metadata::Orientation::NoTransforms,
        },
        ScanError::Corrupt(reason) => IoError::Decode { path: path.into(), reason },
    })?;
    let unsupported = |reason: String| Err(IoError::Unsupported { path: path.into(), reason });
    if let FrameKind::Unsupported(n) = layout.kind {
        return unsupported(format!(
            "{}; graylab reads baseline, extended and progressive JPEG, Huffman or arithmetic-coded",
            FrameKind::describe(n)
        ));
    }
    if layout.precision != 8 {
        return unsupported(format!("{}-bit JPEG; graylab reads 8-bit JPEG", layout.precision));
    }
    if layout.scans == 0 {
        return Err(IoError::Truncated {
            path: path.into(),
            at: TruncatedAt::Unknown,
            orientation: image::metadata::Orientation::NoTransforms,
        });
    }
    let min_bytes = layout.min_coded_bytes();
    // A truncated file below the floor may still be kept in part when asked.
    if layout.complete || !allow_truncated {
        let size = (layout.width, layout.height);
        super::check_size(path, "JPEG", size, min_bytes, layout.coded_bytes, bytes.len() as u64)?;
    }
    Ok(layout)
}

/// Where a JPEG without its end marker stopped: libjpeg fills what it did not get with
/// gray (128 in every sample) from the start of a row of MCUs, and the MCU row before that may
/// have been decoded from padding; the rows before it are whole. A CMYK or YCCK JPEG's 128s
/// come out as another colour once made RGB (about 64): its fill is its last pixel's.
pub(in crate::io) fn truncated_at(image: &DynamicImage, layout: &Layout) -> TruncatedAt {
    let height = image.height();
    let pixel_bytes = usize::from(image.color().bytes_per_pixel());
    let row_bytes = image.width() as usize * pixel_bytes;
    let bytes = image.as_bytes();
    let gray = vec![128u8; pixel_bytes];
    let fill = match bytes.len().checked_sub(pixel_bytes) {
        Some(last) if layout.components.len() == 4 => &bytes[last..],
        _ => gray.as_slice(),
    };
    let filled = |row: &[u8]| !fill.is_empty() && row.chunks_exact(fill.len()).all(|px| px == fill);
    let gray_rows = if row_bytes == 0 {
        0
    } else {
        bytes.rchunks_exact(row_bytes).take_while(|row| filled(row)).count() as u32
    };
    // libjpeg's fancy upsampling lends the first gray row of colour a little of the chroma above
    // it: below gray rows, one row less is counted with data, so colour and luma name one row.
    let with_data = height.saturating_sub(gray_rows).saturating_sub(u32::from(gray_rows > 0));
    if layout.kind.progressive() && gray_rows == 0 {
        return TruncatedAt::Refinement;
    }
    let mcu = layout.mcu_rows().max(1);
    TruncatedAt::Row { rows: (with_data.div_ceil(mcu).saturating_sub(1) * mcu).min(height), height }
}
