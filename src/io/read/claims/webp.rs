//! A WebP's canvas against its frames, and each lossy frame against its data: from the RIFF
//! chunk headers and the frame headers inside them.
//!
//! The first image's chunks must end inside the file: a bitstream with bytes missing from its
//! middle would otherwise decode to a wrong image without an error (`image-webp` reads what is
//! there), as a fuzzed file did.
//!
//! A lossless (VP8L) frame has no floor: a flat image takes a few bytes at any size. A lossy
//! (VP8) key frame codes a mode for every 16x16 macroblock with fixed probabilities, at least
//! about 2 bits each; a quarter of that is the floor here.

use std::path::Path;

use crate::io::read::claims::{Facts, Walk, check_canvas, check_size, clipped_area};
use crate::io::{IoError, TruncatedAt};

/// Lossy macroblocks that one byte of VP8 data can hold at most (0.5 bits each).
const VP8_MACROBLOCKS_PER_BYTE: u64 = 16;
/// Frames walked at most (an animation longer than this is counted no further).
const MAX_FRAMES: u32 = 1 << 20;

/// One frame's image: its size, and the bytes of a lossy bitstream (`None` for lossless).
struct Image {
    width: u32,
    height: u32,
    lossy_bytes: Option<u64>,
}

impl Image {
    fn macroblocks(&self) -> u64 {
        u64::from(self.width.div_ceil(16)) * u64::from(self.height.div_ceil(16))
    }

    /// The most pixels its data can fill.
    fn fillable_pixels(&self) -> u64 {
        let all = u64::from(self.width) * u64::from(self.height);
        self.lossy_bytes.map_or(all, |bytes| all.min((bytes + 1) * VP8_MACROBLOCKS_PER_BYTE * 256))
    }
}

/// Refuses a WebP whose first lossy frame is too short for its macroblocks, or whose canvas its
/// frames do not come near to covering; counts an animation's frames.
pub(super) fn check(path: &Path, walk: &mut Walk) -> Result<Facts, IoError> {
    let Some(riff) = walk.read::<12>() else { return Ok(Facts::default()) };
    if &riff[..4] != b"RIFF" || &riff[8..] != b"WEBP" {
        return Ok(Facts::default());
    }
    let (mut canvas, mut frames, mut covered) = (None, 0u32, 0u64);
    while frames < MAX_FRAMES {
        let Some((fourcc, size)) = chunk_header(walk) else { break };
        let end = walk.at() + size + (size & 1);
        // The first image's chunk cut short, its pad byte included: libwebp refuses a file
        // shorter than its RIFF header says, and a byte missing inside an odd-sized chunk
        // would otherwise pass for the pad byte.
        if frames == 0 && matches!(&fourcc, b"ALPH" | b"VP8 " | b"VP8L" | b"ANMF") && end > walk.len() {
            let orientation = image::metadata::Orientation::NoTransforms;
            return Err(IoError::Truncated { path: path.into(), at: TruncatedAt::Unknown, orientation });
        }
        match &fourcc {
            b"VP8X" => {
                canvas = walk.read::<10>().map(|c| (le24(&c[4..7]) + 1, le24(&c[7..10]) + 1));
            }
            b"ANMF" => {
                let Some(f) = walk.read::<16>() else { break };
                let (left, top) = (u64::from(le24(&f[..3])) * 2, u64::from(le24(&f[3..6])) * 2);
                let Some(image) = frame_image(walk, end) else { break };
                frames += 1;
                covered =
                    covered.saturating_add(covered_by(&image, (left, top), canvas, path, frames, walk)?);
            }
            b"VP8 " | b"VP8L" => {
                let Some(image) = image(walk, fourcc, size) else { break };
                frames += 1;
                covered = covered.saturating_add(covered_by(&image, (0, 0), canvas, path, frames, walk)?);
            }
            _ => {}
        }
        if walk.seek(end).is_none() {
            break;
        }
    }
    if let Some((width, height)) = canvas.filter(|_| frames > 0) {
        check_canvas(path, "WebP", (width, height), covered)?;
    }
    Ok(Facts { frames: (frames > 1).then_some(frames), ..Facts::default() })
}

/// The pixels of the canvas `image` covers at `at`; refuses the first frame when it is lossy
/// and too short for its macroblocks.
fn covered_by(
    image: &Image,
    at: (u64, u64),
    canvas: Option<(u32, u32)>,
    path: &Path,
    frame: u32,
    walk: &Walk,
) -> Result<u64, IoError> {
    if let Some(data_bytes) = image.lossy_bytes {
        let min_bytes = image.macroblocks() / VP8_MACROBLOCKS_PER_BYTE;
        if frame == 1 {
            check_size(path, "WebP", (image.width, image.height), min_bytes, data_bytes, walk.len())?;
        }
    }
    let size = (u64::from(image.width), u64::from(image.height));
    let canvas = canvas.map_or(size, |(w, h)| (u64::from(w), u64::from(h)));
    Ok(clipped_area(at.0, at.1, size, canvas).min(image.fillable_pixels()))
}

/// The image inside an ANMF chunk ending at `end`: the first VP8 or VP8L sub-chunk.
fn frame_image(walk: &mut Walk, end: u64) -> Option<Image> {
    while walk.at() + 8 <= end {
        let (fourcc, size) = chunk_header(walk)?;
        if matches!(&fourcc, b"VP8 " | b"VP8L") {
            return image(walk, fourcc, size.min(end - walk.at()));
        }
        walk.skip(size + (size & 1))?;
    }
    None
}

/// A VP8 or VP8L bitstream's size from its header; the walk is at its start.
fn image(walk: &mut Walk, fourcc: [u8; 4], size: u64) -> Option<Image> {
    if &fourcc == b"VP8L" {
        let h = walk.read::<5>()?;
        let bits = u32::from_le_bytes([h[1], h[2], h[3], h[4]]);
        return Some(Image {
            width: (bits & 0x3FFF) + 1,
            height: ((bits >> 14) & 0x3FFF) + 1,
            lossy_bytes: None,
        });
    }
    let h = walk.read::<10>()?;
    let width = u32::from(u16::from_le_bytes([h[6], h[7]]) & 0x3FFF);
    let height = u32::from(u16::from_le_bytes([h[8], h[9]]) & 0x3FFF);
    Some(Image { width, height, lossy_bytes: Some(size) })
}

/// A RIFF chunk's code and size.
fn chunk_header(walk: &mut Walk) -> Option<([u8; 4], u64)> {
    let h = walk.read::<8>()?;
    Some(([h[0], h[1], h[2], h[3]], u64::from(u32::from_le_bytes([h[4], h[5], h[6], h[7]]))))
}

fn le24(b: &[u8]) -> u32 {
    b.iter().rev().fold(0, |v, &x| (v << 8) | u32::from(x))
}
