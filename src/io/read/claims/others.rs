//! TGA, QOI, ICO and PNM: the bytes behind the header against the pixels, at each format's
//! best ratio (a TGA RLE packet repeats one pixel 128 times, a QOI run byte 62 times).

use std::path::Path;

use crate::io::IoError;
use crate::io::read::claims::{Walk, bmp, check_size, png};
use crate::io::read::pnm;

/// ICO directory entries checked at most.
const MAX_ICO_ENTRIES: u16 = 256;
/// The longest PNM header read (comments included).
pub(in crate::io) const MAX_PNM_HEADER_BYTES: usize = 4096;

/// Refuses a TGA whose data (after its header, ID and palette) cannot hold its pixels.
pub(super) fn check_tga(path: &Path, head: &[u8], file_bytes: u64) -> Result<(), IoError> {
    let le16 = |i: usize| head.get(i..i + 2).map(|b| u64::from(u16::from_le_bytes([b[0], b[1]])));
    let (Some(&id_len), Some(&map_type), Some(&kind), Some(map_len), Some(&map_bits)) =
        (head.first(), head.get(1), head.get(2), le16(5), head.get(7))
    else {
        return Ok(());
    };
    let (Some(width), Some(height), Some(&depth)) = (le16(12), le16(14), head.get(16)) else { return Ok(()) };
    let palette = if map_type == 1 { map_len * u64::from(map_bits).div_ceil(8) } else { 0 };
    let pixel_bytes = u64::from(depth).div_ceil(8);
    let pixels = width * height;
    let min_bytes = match kind {
        1..=3 => pixels * pixel_bytes,
        // A run packet: one header byte and one pixel for up to 128 pixels.
        9..=11 => pixels.div_ceil(128) * (1 + pixel_bytes),
        _ => return Ok(()),
    };
    let data_bytes = file_bytes.saturating_sub(18 + u64::from(id_len) + palette);
    let size = (u32::try_from(width).unwrap_or(0), u32::try_from(height).unwrap_or(0));
    check_size(path, "TGA", size, min_bytes, data_bytes, file_bytes)
}

/// Refuses a QOI whose data cannot hold its pixels: one run byte gives at most 62.
pub(super) fn check_qoi(path: &Path, head: &[u8], file_bytes: u64) -> Result<(), IoError> {
    let be32 = |i: usize| head.get(i..i + 4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
    let (Some(width), Some(height)) = (be32(4), be32(8)) else { return Ok(()) };
    let min_bytes = (u64::from(width) * u64::from(height)).div_ceil(62);
    let data_bytes = file_bytes.saturating_sub(14);
    check_size(path, "QOI", (width, height), min_bytes, data_bytes, file_bytes)
}

/// Refuses a PNM whose samples cannot fill its pixels.
pub(super) fn check_pnm(path: &Path, walk: &mut Walk) -> Result<Option<pnm::Header>, IoError> {
    let len = usize::try_from(walk.len()).unwrap_or(usize::MAX).min(MAX_PNM_HEADER_BYTES);
    let Some(header) = walk.bytes(len).as_deref().and_then(pnm::header) else { return Ok(None) };
    // Netpbm's maxval is 1 to 65535: another would be scaled to a wrong image.
    if !matches!(header.magic, b'1' | b'4') && !(1..=65535).contains(&header.maxval) {
        let reason = format!("its maxval {} is outside 1 to 65535, which Netpbm allows", header.maxval);
        return Err(IoError::Decode { path: path.into(), reason });
    }
    let min_bytes = header.min_data_bytes();
    let data_bytes = walk.len().saturating_sub(header.data_offset);
    check_size(path, "PNM", (header.width, header.height), min_bytes, data_bytes, walk.len())?;
    Ok(Some(header))
}

/// Refuses an ICO any of whose images (a PNG, or a bitmap without its file header) cannot
/// hold its pixels within the bytes its entry gives it.
pub(super) fn check_ico(path: &Path, walk: &mut Walk) -> Result<(), IoError> {
    let Some(dir) = walk.read::<6>() else { return Ok(()) };
    let count = u16::from_le_bytes([dir[4], dir[5]]).min(MAX_ICO_ENTRIES);
    let mut entries = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        let Some(e) = walk.read::<16>() else { return Ok(()) };
        let bytes = u64::from(u32::from_le_bytes([e[8], e[9], e[10], e[11]]));
        let offset = u64::from(u32::from_le_bytes([e[12], e[13], e[14], e[15]]));
        entries.push((offset, bytes.min(walk.len().saturating_sub(offset))));
    }
    for (offset, bytes) in entries {
        if walk.seek(offset).is_none() {
            continue;
        }
        let Some(head) = walk.read::<40>() else { continue };
        if let Some((width, height, min_bytes)) = png::min_data_bytes(&head) {
            let data_bytes = png::chunks(walk, offset + 8, offset + bytes).idat_bytes;
            check_size(path, "ICO (PNG)", (width, height), min_bytes, data_bytes, walk.len())?;
            continue;
        }
        let le32 = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let (width, height) =
            (le32(4).cast_signed().unsigned_abs(), le32(8).cast_signed().unsigned_abs() / 2);
        let bits = u16::from_le_bytes([head[14], head[15]]);
        let Some(min_bytes) = bmp::min_bytes(width, height.max(1), bits, le32(16)) else { continue };
        let data_bytes = bytes.saturating_sub(u64::from(le32(0)));
        check_size(path, "ICO (BMP)", (width, height), min_bytes, data_bytes, walk.len())?;
    }
    Ok(())
}
