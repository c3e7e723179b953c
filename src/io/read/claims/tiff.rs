//! A TIFF's first image file directory, read before decoding: its strips or tiles against its
//! pixels at the compression's best ratio; its pages counted; an orientation stored as a LONG
//! read. Which variant it is (and the ones graylab cannot read) is `tiff_header.rs`'s.

use std::path::Path;

use crate::io::IoError;
use crate::io::read::claims::png::DEFLATE_MAX_RATIO;
use crate::io::read::claims::tiff_ifd::{Ifd, Layout};
use crate::io::read::claims::{Facts, Walk, check_size};
use crate::io::read::orientation::orientation_of;

const IMAGE_WIDTH: u16 = 256;
const IMAGE_LENGTH: u16 = 257;
const BITS_PER_SAMPLE: u16 = 258;
const COMPRESSION: u16 = 259;
const ORIENTATION: u16 = 274;
const SAMPLES_PER_PIXEL: u16 = 277;
const STRIP_BYTE_COUNTS: u16 = 279;
const TILE_BYTE_COUNTS: u16 = 325;
/// Strips or tiles summed at most; a file with more is left to the budget.
const MAX_BLOCKS: u64 = 1 << 18;
/// Pages counted at most.
const MAX_PAGES: u32 = 1 << 16;
/// Slack on every ratio: subsampled YCbCr holds half the samples its pixels suggest.
const SUBSAMPLING_SLACK: u64 = 2;

/// Refuses files whose strips or tiles cannot hold their pixels; counts the pages and reads the
/// orientation.
pub(super) fn check(path: &Path, head: &[u8], walk: &mut Walk) -> Result<Facts, IoError> {
    let Some((layout, offset)) = Layout::of(head) else { return Ok(Facts::default()) };
    let Some(ifd) = layout.ifd(walk, offset) else { return Ok(Facts::default()) };
    check_data(path, layout, walk, &ifd)?;
    let orientation =
        layout.first(walk, &ifd, ORIENTATION).and_then(|v| orientation_of(u32::try_from(v).ok()?));
    let pages = pages(layout, walk, ifd.next);
    Ok(Facts { frames: (pages > 1).then_some(pages), orientation, pnm: None })
}

/// Refuses a first image whose strips or tiles hold fewer bytes than its pixels need at its
/// compression's best ratio. Compressions without a known ratio (CCITT fax) pass.
fn check_data(path: &Path, layout: Layout, walk: &mut Walk, ifd: &Ifd) -> Result<(), IoError> {
    let mut first = |tag| layout.first(walk, ifd, tag);
    let (Some(width), Some(height)) = (first(IMAGE_WIDTH), first(IMAGE_LENGTH)) else { return Ok(()) };
    let (Ok(width), Ok(height)) = (u32::try_from(width), u32::try_from(height)) else { return Ok(()) };
    let bits = ifd
        .entries
        .iter()
        .find(|e| e.tag == BITS_PER_SAMPLE)
        .and_then(|e| layout.values(walk, e, 16))
        .and_then(|v| v.into_iter().max())
        .unwrap_or(1);
    let samples = layout.first(walk, ifd, SAMPLES_PER_PIXEL).unwrap_or(1).clamp(1, 16);
    let pixels = u64::from(width) * u64::from(height);
    let raw_bytes = (u64::from(width) * samples * bits.min(64)).div_ceil(8).saturating_mul(u64::from(height));
    let min_bytes = match layout.first(walk, ifd, COMPRESSION).unwrap_or(1) {
        1 => raw_bytes,
        // LZW: 12-bit codes of at most 4096 bytes each.
        5 => raw_bytes.saturating_mul(3) / 8192,
        8 | 32946 => raw_bytes / DEFLATE_MAX_RATIO,
        // PackBits: 2 bytes repeat one byte 128 times.
        32773 => raw_bytes / 64,
        // JPEG: at least 1 bit per 8x8 block of luma.
        6 | 7 => pixels / 512,
        _ => return Ok(()),
    } / SUBSAMPLING_SLACK;
    let counts = ifd.entries.iter().find(|e| e.tag == TILE_BYTE_COUNTS || e.tag == STRIP_BYTE_COUNTS);
    let Some(counts) = counts.and_then(|e| layout.values(walk, e, MAX_BLOCKS)) else { return Ok(()) };
    let data_bytes = counts.iter().fold(0u64, |sum, &c| sum.saturating_add(c)).min(walk.len());
    check_size(path, "TIFF", (width, height), min_bytes, data_bytes, walk.len())
}

/// Pages in the chain of directories from the first (counted) and then `next`, up to
/// [`MAX_PAGES`]; a loop or a damaged link ends the count.
fn pages(layout: Layout, walk: &mut Walk, mut next: u64) -> u32 {
    let mut seen = std::collections::HashSet::new();
    let mut pages = 1;
    while next != 0 && pages < MAX_PAGES && seen.insert(next) {
        let Some(after) = layout.next_ifd(walk, next) else { break };
        pages += 1;
        next = after;
    }
    pages
}
