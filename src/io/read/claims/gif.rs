//! A GIF's logical screen against its frames, and its first frame against its LZW data: walked
//! block by block (descriptors, extensions, sub-block lengths), seeking over the data.

use std::path::Path;

use crate::io::IoError;
use crate::io::read::claims::{Facts, Walk, check_canvas, check_size, clipped_area};

/// LZW's best: each 12-bit code gives at most 4096 pixels, so a byte gives at most 8192/3.
const LZW_PIXELS_PER_3_BYTES: u64 = 8192;

/// One image descriptor and its data.
struct Frame {
    left: u16,
    top: u16,
    width: u16,
    height: u16,
    data_bytes: u64,
}

impl Frame {
    fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// The fewest LZW bytes that can hold the frame's pixels.
    fn min_bytes(&self) -> u64 {
        self.pixels() * 3 / LZW_PIXELS_PER_3_BYTES
    }

    /// The most pixels its data can fill.
    fn fillable_pixels(&self) -> u64 {
        (self.data_bytes + 1).saturating_mul(LZW_PIXELS_PER_3_BYTES) / 3
    }
}

/// Refuses a GIF whose first frame needs more LZW data than it has, or whose screen its frames
/// (each counted no larger than its data can fill) do not come near to covering. Counts the
/// frames.
pub(super) fn check(path: &Path, walk: &mut Walk) -> Result<Facts, IoError> {
    let Some(header) = walk.read::<13>() else { return Ok(Facts::default()) };
    let screen = (u16::from_le_bytes([header[6], header[7]]), u16::from_le_bytes([header[8], header[9]]));
    let flags = header[10];
    if flags & 0x80 != 0 && walk.skip(3 << ((flags & 7) + 1)).is_none() {
        return Ok(Facts::default());
    }
    let (mut frames, mut covered) = (0u32, 0u64);
    let canvas = (u64::from(screen.0), u64::from(screen.1));
    while let Some(block) = walk.byte() {
        match block {
            0x21 => {
                if walk.byte().is_none() || !sub_blocks(walk).1 {
                    break;
                }
            }
            0x2C => {
                // A frame cut short is counted with the data it has.
                let Some((frame, whole)) = frame(walk) else { break };
                if frames == 0 {
                    let size = (u32::from(frame.width), u32::from(frame.height));
                    check_size(path, "GIF", size, frame.min_bytes(), frame.data_bytes, walk.len())?;
                }
                let at = (u64::from(frame.left), u64::from(frame.top));
                let size = (u64::from(frame.width), u64::from(frame.height));
                covered = covered
                    .saturating_add(clipped_area(at.0, at.1, size, canvas).min(frame.fillable_pixels()));
                frames = frames.saturating_add(1);
                if !whole {
                    break;
                }
            }
            _ => break, // The trailer, or damage the decoder names.
        }
    }
    if frames > 0 {
        check_canvas(path, "GIF", (u32::from(screen.0), u32::from(screen.1)), covered)?;
    }
    Ok(Facts { frames: (frames > 1).then_some(frames), ..Facts::default() })
}

/// Reads an image descriptor, skips its colour table and counts its data; with whether the
/// data ends before the file does.
fn frame(walk: &mut Walk) -> Option<(Frame, bool)> {
    let d = walk.read::<9>()?;
    let at = |i: usize| u16::from_le_bytes([d[i], d[i + 1]]);
    if d[8] & 0x80 != 0 {
        walk.skip(3 << ((d[8] & 7) + 1))?;
    }
    walk.byte()?; // The LZW minimum code size.
    let (data_bytes, whole) = sub_blocks(walk);
    Some((Frame { left: at(0), top: at(2), width: at(4), height: at(6), data_bytes }, whole))
}

/// Skips data sub-blocks up to the empty one: their bytes, and whether the empty one was
/// found before the file ended (a cut block counts what the file holds of it).
fn sub_blocks(walk: &mut Walk) -> (u64, bool) {
    let mut total = 0u64;
    loop {
        let Some(len) = walk.byte() else { return (total, false) };
        if len == 0 {
            return (total, true);
        }
        if walk.skip(u64::from(len)).is_none() {
            return (total + walk.len().saturating_sub(walk.at()), false);
        }
        total += u64::from(len);
    }
}
