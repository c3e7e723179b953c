//! Does a file hold what its header claims? A JPEG's frame against its coded data (and where a
//! truncated one ends), a PNG's pixels against its compressed data, a BMP's dimensions: checked
//! from the headers, before anything is allocated.

use std::path::Path;

use image::DynamicImage;

use crate::io::read::jpeg_scan::{self, FrameKind, Layout, ScanError};
use crate::io::{IoError, TruncatedAt, owned};

/// The best deflate can do: 258 bytes from one 1-bit length code and a 1-bit distance code.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// Reads a JPEG's structure: names unsupported variants, refuses files whose data cannot hold
/// the frame.
pub(in crate::io) fn check_jpeg(path: &Path, bytes: &[u8], allow_truncated: bool) -> Result<Layout, IoError> {
    let layout = jpeg_scan::scan(bytes).map_err(|e| match e {
        ScanError::EndsInHeaders => IoError::Truncated { path: owned(path), at: TruncatedAt::Unknown },
        ScanError::Corrupt(reason) => IoError::Decode { path: owned(path), reason },
    })?;
    let unsupported = |reason: String| Err(IoError::Unsupported { path: owned(path), reason });
    if let FrameKind::Unsupported(n) = layout.kind {
        return unsupported(format!(
            "{}; graylab reads baseline, extended and progressive Huffman-coded JPEG",
            FrameKind::describe(n)
        ));
    }
    if layout.precision != 8 {
        return unsupported(format!("{}-bit JPEG; graylab reads 8-bit JPEG", layout.precision));
    }
    if layout.scans == 0 {
        return Err(IoError::Truncated { path: owned(path), at: TruncatedAt::Unknown });
    }
    let min_bytes = layout.min_coded_bytes();
    // A truncated file below the floor may still be kept in part when asked.
    if layout.coded_bytes < min_bytes && (layout.complete || !allow_truncated) {
        return Err(IoError::ImpossibleSize {
            path: owned(path),
            format: "JPEG",
            width: layout.width,
            height: layout.height,
            min_bytes,
            data_bytes: layout.coded_bytes,
            file_bytes: bytes.len() as u64,
        });
    }
    Ok(layout)
}

/// Refuses a PNG whose image data (its IDAT chunks) is too small for its pixels even at
/// deflate's best ratio. Only chunk headers are read.
pub(in crate::io) fn check_png(path: &Path, head: &[u8], file_bytes: u64) -> Result<(), IoError> {
    if !head.starts_with(b"\x89PNG\r\n\x1a\n") || head.get(12..16) != Some(b"IHDR") {
        return Ok(());
    }
    let be32 = |i: usize| head.get(i..i + 4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
    let (Some(width), Some(height), Some(&depth), Some(&color)) =
        (be32(16), be32(20), head.get(24), head.get(25))
    else {
        return Ok(());
    };
    let channels: u64 = match color {
        0 | 3 => 1,
        4 => 2,
        2 => 3,
        6 => 4,
        _ => return Ok(()), // The decoder names the bad colour type.
    };
    let row_bytes = (u64::from(width) * channels * u64::from(depth)).div_ceil(8) + 1;
    let min_bytes = (u64::from(height) * row_bytes) / DEFLATE_MAX_RATIO;
    // Cheap before the walk: the whole file is below the floor.
    let data_bytes =
        if file_bytes < min_bytes { file_bytes } else { png_idat_bytes(path).unwrap_or(file_bytes) };
    if data_bytes < min_bytes {
        return Err(IoError::ImpossibleSize {
            path: owned(path),
            format: "PNG",
            width,
            height,
            min_bytes,
            data_bytes,
            file_bytes,
        });
    }
    Ok(())
}

/// Bytes in a PNG's IDAT chunks, read from the chunk headers (seeking over the data).
fn png_idat_bytes(path: &Path) -> Option<u64> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    file.seek(SeekFrom::Start(8)).ok()?;
    let mut total = 0u64;
    let mut header = [0u8; 8];
    while file.read_exact(&mut header).is_ok() {
        let len = u64::from(u32::from_be_bytes([header[0], header[1], header[2], header[3]]));
        match &header[4..] {
            b"IDAT" => total += len,
            b"IEND" => break,
            _ => {}
        }
        file.seek_relative(i64::try_from(len + 4).ok()?).ok()?;
    }
    Some(total)
}

/// Refuses a BMP whose header claims no pixels (its decoder calls that "too large").
pub(in crate::io) fn check_bmp(path: &Path, head: &[u8]) -> Result<(), IoError> {
    let le32 = |i: usize| head.get(i..i + 4).and_then(|b| b.try_into().ok()).map(i32::from_le_bytes);
    if !head.starts_with(b"BM") || le32(14).is_none_or(|size| size < 40) {
        return Ok(());
    }
    match (le32(18), le32(22)) {
        (Some(w), Some(h)) if w <= 0 || h == 0 => {
            Err(IoError::Decode { path: owned(path), reason: format!("the header claims {w}x{h} pixels") })
        }
        _ => Ok(()),
    }
}

/// Where a JPEG without its end marker stopped: the decoder fills what it did not get with
/// gray (128 in every sample) from the start of a row of MCUs, and the MCU row before that may
/// have been decoded from padding; the rows before it are whole.
pub(in crate::io) fn truncated_at(image: &DynamicImage, layout: &Layout) -> TruncatedAt {
    let height = image.height();
    let row_bytes = image.width() as usize * usize::from(image.color().bytes_per_pixel());
    let bytes = image.as_bytes();
    let gray_rows = if row_bytes == 0 {
        0
    } else {
        bytes.rchunks_exact(row_bytes).take_while(|row| row.iter().all(|&b| b == 128)).count() as u32
    };
    let with_data = height.saturating_sub(gray_rows);
    if layout.kind == FrameKind::Progressive && gray_rows == 0 {
        return TruncatedAt::Refinement;
    }
    let mcu = layout.mcu_rows().max(1);
    TruncatedAt::Row { rows: (with_data.div_ceil(mcu).saturating_sub(1) * mcu).min(height), height }
}
