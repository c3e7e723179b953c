//! A PNG's pixels against its compressed data (its IDAT chunks), the frames of an APNG, an
//! `eXIf` chunk the decoder skips (it reads only those before the image data: its orientation
//! and the tags an export keeps), and the pixel density of a `pHYs` chunk: from the chunk
//! headers, seeking over the data; and what a gray PNG of fewer than 8 bits stores.

use std::path::Path;

use crate::io::read::claims::{Facts, Walk, check_size};
use crate::io::read::orientation::exif_orientation;
use crate::io::{Density, IoError};

/// The best deflate can do: 258 bytes from one 1-bit length code and a 1-bit distance code.
pub(super) const DEFLATE_MAX_RATIO: u64 = 1032;
/// The largest `eXIf` chunk read.
const MAX_EXIF_BYTES: u32 = 1 << 20;

/// Refuses a PNG whose image data is too small for its pixels even at deflate's best ratio;
/// counts an APNG's frames and reads an `eXIf` chunk's orientation and tags and a `pHYs`
/// chunk's density.
pub(super) fn check(path: &Path, head: &[u8], walk: &mut Walk) -> Result<Facts, IoError> {
    let Some((width, height, min_bytes)) = min_data_bytes(head) else { return Ok(Facts::default()) };
    let file_bytes = walk.len();
    let chunks = chunks(walk, 8, file_bytes);
    let data_bytes = chunks.idat_bytes;
    check_size(path, "PNG", (width, height), min_bytes, data_bytes, file_bytes)?;
    // The default image is the first frame unless it is left out of the animation.
    let frames = chunks.animation_frames.map(|n| n.saturating_add(u32::from(!chunks.fctl_before_idat)));
    let frames = frames.filter(|&n| n > 1);
    let still_apart = frames.is_some() && !chunks.fctl_before_idat;
    let (orientation, density, exif) = (chunks.orientation, chunks.density, chunks.exif);
    let stored_as = stored_as(head);
    Ok(Facts { frames, orientation, density, still_apart, exif, stored_as, ..Facts::default() })
}

/// What a gray PNG of 2 or 4 bits a pixel stores (its header, `head`, says): the decoder gives
/// it as 8-bit gray, each level scaled as libpng scales it.
fn stored_as(head: &[u8]) -> Option<&'static str> {
    match (head.get(24)?, head.get(25)?) {
        (2, 0) => Some("2-bit gray"),
        (4, 0) => Some("4-bit gray"),
        _ => None,
    }
}

/// The width, height and least compressed bytes of the PNG whose first bytes are `head`, or
/// `None` when it is no PNG (or its header is damaged: the decoder says how).
pub(super) fn min_data_bytes(head: &[u8]) -> Option<(u32, u32, u64)> {
    if !head.starts_with(b"\x89PNG\r\n\x1a\n") || head.get(12..16) != Some(b"IHDR") {
        return None;
    }
    let be32 = |i: usize| head.get(i..i + 4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
    let (width, height, &depth, &color) = (be32(16)?, be32(20)?, head.get(24)?, head.get(25)?);
    let channels: u64 = match color {
        0 | 3 => 1,
        4 => 2,
        2 => 3,
        6 => 4,
        _ => return None, // The decoder names the bad colour type.
    };
    let row_bytes = (u64::from(width) * channels * u64::from(depth)).div_ceil(8) + 1;
    Some((width, height, (u64::from(height) * row_bytes) / DEFLATE_MAX_RATIO))
}

/// What the chunk headers of a PNG say.
#[derive(Default)]
pub(super) struct Chunks {
    /// Bytes in IDAT chunks.
    pub idat_bytes: u64,
    /// The frame count of an `acTL` chunk.
    animation_frames: Option<u32>,
    /// Whether an `fcTL` came before the first IDAT (the default image is a frame).
    fctl_before_idat: bool,
    /// The orientation of an `eXIf` chunk.
    orientation: Option<image::metadata::Orientation>,
    /// The kept tags of an `eXIf` chunk.
    exif: Option<std::sync::Arc<crate::io::Exif>>,
    /// The density of a `pHYs` chunk, in pixels per metre.
    density: Option<Density>,
}

/// Walks the chunks of a PNG from offset `start` to `end` (a PNG inside an ICO ends before the
/// file does).
pub(super) fn chunks(walk: &mut Walk, start: u64, end: u64) -> Chunks {
    let mut found = Chunks::default();
    if walk.seek(start).is_none() {
        return found;
    }
    let (mut seen_idat, mut seen_exif) = (false, false);
    while walk.at() + 8 <= end {
        let Some(header) = walk.read::<8>() else { break };
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let mut skip = u64::from(len) + 4;
        match &header[4..] {
            b"IDAT" => {
                seen_idat = true;
                found.idat_bytes += u64::from(len).min(end.saturating_sub(walk.at()));
            }
            b"acTL" if len >= 8 => {
                found.animation_frames = walk.read::<4>().map(u32::from_be_bytes);
                skip -= 4;
            }
            b"fcTL" => found.fctl_before_idat |= !seen_idat,
            b"eXIf" if len <= MAX_EXIF_BYTES && !seen_exif => {
                seen_exif = true;
                let block = walk.bytes(len as usize).unwrap_or_default();
                found.orientation = exif_orientation(&block);
                found.exif = crate::io::Exif::kept(&block).map(std::sync::Arc::new);
                skip = 4;
            }
            b"pHYs" if len == 9 => {
                found.density = walk.read::<9>().and_then(|p| {
                    let be32 = |b: &[u8]| b.try_into().ok().map(u32::from_be_bytes);
                    Density::from_png(be32(&p[..4])?, be32(&p[4..8])?, p[8])
                });
                skip = 4;
            }
            b"IEND" => break,
            _ => {}
        }
        if walk.skip(skip).is_none() {
            break;
        }
    }
    found
}
