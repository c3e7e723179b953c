//! A PNG's pixels against its compressed data (its IDAT chunks), the frames of an APNG, an
//! `eXIf` chunk the decoder skips (it reads only those before the image data: its orientation
//! and the tags an export keeps), the pixel density of a `pHYs` chunk and an XMP packet in a
//! text chunk: from the chunk headers, seeking over the data; and what a gray PNG of fewer than
//! 8 bits stores.

use std::path::Path;

use crate::io::read::claims::{Facts, Walk, check_size};
use crate::io::read::orientation::exif_orientation;
use crate::io::xmp::MAX_PACKET_BYTES;
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
    let (orientation, density) = (chunks.orientation, chunks.density);
    let metadata = crate::io::KeptMetadata::with_xmp(chunks.exif, chunks.xmp).map(std::sync::Arc::new);
    let stored_as = stored_as(head);
    Ok(Facts { frames, orientation, density, still_apart, metadata, stored_as, ..Facts::default() })
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
    exif: Option<crate::io::KeptMetadata>,
    /// The kept properties of an XMP packet in a text chunk, before or after the image data.
    xmp: Option<crate::io::Xmp>,
    /// The density of a `pHYs` chunk, in pixels per metre.
    density: Option<Density>,
}

/// The XMP packet of a text chunk of type `kind` and contents `data`: an `iTXt` of keyword
/// `XML:com.adobe.xmp` (as exiftool and Photoshop write it), or `ImageMagick`'s "Raw profile type
/// xmp" (hex digits, in a `zTXt`, `tEXt` or `iTXt`); compressed or not, at most
/// [`MAX_PACKET_BYTES`] once inflated.
fn xmp_of_text(kind: &[u8], data: &[u8]) -> Option<crate::io::Xmp> {
    let nul = data.iter().position(|&b| b == 0)?;
    let (keyword, rest) = (&data[..nul], &data[nul + 1..]);
    let inflated = |z: &[u8]| fdeflate::decompress_to_vec_bounded(z, MAX_PACKET_BYTES).ok();
    let text = match kind {
        b"iTXt" => {
            let [compressed, _method, rest @ ..] = rest else { return None };
            // The language tag and the translated keyword, each ended by a NUL.
            let mut parts = rest.splitn(3, |&b| b == 0);
            let text = parts.nth(2)?;
            if *compressed == 1 { inflated(text)? } else { text.to_vec() }
        }
        b"zTXt" => inflated(rest.get(1..)?)?,
        _ => rest.to_vec(),
    };
    let packet = match keyword {
        b"XML:com.adobe.xmp" => text,
        b"Raw profile type xmp" => raw_profile(&text)?,
        _ => return None,
    };
    crate::io::Xmp::kept(&packet)
}

/// The bytes of `ImageMagick`'s raw profile text: its name, its length in bytes, then the bytes
/// as hex digits across lines.
fn raw_profile(text: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(text).ok()?;
    let mut words = text.split_ascii_whitespace();
    let _name = words.next()?;
    let len: usize = words.next()?.parse().ok().filter(|&n| n <= MAX_PACKET_BYTES)?;
    let digits: Vec<u8> = words.flat_map(str::bytes).collect();
    let hex = |b: u8| char::from(b).to_digit(16);
    let bytes: Option<Vec<u8>> =
        digits.chunks_exact(2).take(len).map(|p| Some((hex(p[0])? * 16 + hex(p[1])?) as u8)).collect();
    bytes.filter(|b| b.len() == len)
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
                found.exif = crate::io::KeptMetadata::of_exif(&block);
                skip = 4;
            }
            b"iTXt" | b"zTXt" | b"tEXt" if len as usize <= MAX_PACKET_BYTES && found.xmp.is_none() => {
                found.xmp = walk.bytes(len as usize).and_then(|data| xmp_of_text(&header[4..], &data));
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
