//! A TIFF's first image file directory, read before decoding: its strips or tiles against its
//! pixels at the compression's best ratio, and `PackBits` blocks against their rows; its pages
//! counted; an orientation stored as a LONG read; its resolution; the EXIF tags an export
//! keeps, of the first directory (the camera, the date, the credits) and of the EXIF directory it
//! points to (the exposure, the lens), a damaged entry skipped, never trusted, and the kept
//! properties of its XMP packet. Which variant it is (and the ones graylab cannot read) is
//! `tiff_header.rs`'s.

use std::path::Path;
use std::sync::Arc;

use crate::io::exif::{Directory, EXIF_POINTER_TAG, Entry, kept_value_len};
use crate::io::read::claims::png::DEFLATE_MAX_RATIO;
use crate::io::read::claims::tiff_ifd::tag::{
    BITS_PER_SAMPLE, COMPRESSION, IMAGE_LENGTH, IMAGE_WIDTH, ORIENTATION, PHOTOMETRIC, PLANAR_CONFIGURATION,
    RESOLUTION_UNIT, ROWS_PER_STRIP, SAMPLES_PER_PIXEL, STRIP_BYTE_COUNTS, STRIP_OFFSETS, TILE_BYTE_COUNTS,
    TILE_LENGTH, TILE_OFFSETS, TILE_WIDTH, X_RESOLUTION, XMP, Y_RESOLUTION,
};
use crate::io::read::claims::tiff_ifd::{Ifd, Layout};
use crate::io::read::claims::{Facts, Walk, check_size};
use crate::io::read::orientation::orientation_of;
use crate::io::{Density, IoError, KeptMetadata, Xmp};

/// `Compression` 32773: runs of one byte repeated and of literal bytes, per strip or tile.
const PACKBITS: u64 = 32773;
/// Strips or tiles summed at most; a file with more is left to the budget.
const MAX_BLOCKS: u64 = 1 << 18;
/// Pages counted at most.
const MAX_PAGES: u32 = 1 << 16;
/// Slack on every ratio: subsampled YCbCr holds half the samples its pixels suggest.
const SUBSAMPLING_SLACK: u64 = 2;

/// Refuses files whose strips or tiles cannot hold their pixels; counts the pages and reads the
/// orientation, the resolution and the EXIF tags.
pub(super) fn check(path: &Path, head: &[u8], walk: &mut Walk) -> Result<Facts, IoError> {
    let Some((layout, offset)) = Layout::of(head) else { return Ok(Facts::default()) };
    let Some(ifd) = layout.ifd(walk, offset) else { return Ok(Facts::default()) };
    check_data(path, layout, walk, &ifd)?;
    let orientation =
        layout.first(walk, &ifd, ORIENTATION).and_then(|v| orientation_of(u32::try_from(v).ok()?));
    let density = layout.rational(walk, &ifd, X_RESOLUTION).and_then(|x| {
        let y = layout.rational(walk, &ifd, Y_RESOLUTION);
        Density::from_tiff(x, y, layout.first(walk, &ifd, RESOLUTION_UNIT))
    });
    let exif = exif(layout, walk, &ifd);
    let pages = pages(layout, walk, ifd.next);
    Ok(Facts {
        frames: (pages > 1).then_some(pages),
        orientation,
        density,
        metadata: exif,
        ..Facts::default()
    })
}

/// The kept tags of the first directory, `first`, and of the EXIF directory it points to, with
/// the kept properties of its XMP packet (tag 700, of bytes); `None` where it keeps none.
fn exif(layout: Layout, walk: &mut Walk, first: &Ifd) -> Option<Arc<KeptMetadata>> {
    let pointer = first.entries.iter().find(|e| e.tag == EXIF_POINTER_TAG);
    let shot_at = pointer.and_then(|e| layout.values(walk, e, 1)).and_then(|v| v.first().copied());
    let shot = shot_at.and_then(|at| layout.ifd(walk, at));
    let ifd0 = kept(layout, walk, first, Directory::First);
    let shot = shot.map(|ifd| kept(layout, walk, &ifd, Directory::Shot)).unwrap_or_default();
    let packet = first.entries.iter().find(|e| e.tag == XMP && matches!(e.kind, 1 | 7)).and_then(|e| {
        let len = usize::try_from(e.count).ok().filter(|&n| n <= crate::io::xmp::MAX_PACKET_BYTES)?;
        layout.value_bytes(walk, e, len)
    });
    let xmp = packet.and_then(|p| Xmp::kept(&p));
    KeptMetadata::with_xmp(KeptMetadata::of_entries(layout.little(), ifd0, shot), xmp).map(Arc::new)
}

/// The entries of `ifd` an export keeps as `directory`'s, with their values' bytes.
fn kept(layout: Layout, walk: &mut Walk, ifd: &Ifd, directory: Directory) -> Vec<Entry> {
    let entry = |e: &crate::io::read::claims::tiff_ifd::Entry, walk: &mut Walk| {
        let len = kept_value_len(directory, e.tag, e.kind, e.count)?;
        let value = layout.value_bytes(walk, e, len)?;
        Some(Entry { tag: e.tag, kind: e.kind, count: u32::try_from(e.count).ok()?, value })
    };
    ifd.entries.iter().filter_map(|e| entry(e, walk)).collect()
}

/// Refuses a first image whose strips or tiles hold fewer bytes than its pixels need at its
/// compression's best ratio. Compressions without a known ratio (CCITT fax) pass.
fn check_data(path: &Path, layout: Layout, walk: &mut Walk, ifd: &Ifd) -> Result<(), IoError> {
    let mut first = |tag| layout.first(walk, ifd, tag);
    let (Some(width), Some(height)) = (first(IMAGE_WIDTH), first(IMAGE_LENGTH)) else { return Ok(()) };
    let (Ok(width), Ok(height)) = (u32::try_from(width), u32::try_from(height)) else { return Ok(()) };
    let bits_each =
        ifd.entries.iter().find(|e| e.tag == BITS_PER_SAMPLE).and_then(|e| layout.values(walk, e, 16));
    let bits = bits_each.as_ref().and_then(|v| v.iter().copied().max()).unwrap_or(1);
    let samples = layout.first(walk, ifd, SAMPLES_PER_PIXEL).unwrap_or(1).clamp(1, 16);
    let pixels = u64::from(width) * u64::from(height);
    let raw_bytes = (u64::from(width) * samples * bits.min(64)).div_ceil(8).saturating_mul(u64::from(height));
    let compression = layout.first(walk, ifd, COMPRESSION).unwrap_or(1);
    let min_bytes = match compression {
        1 => raw_bytes,
        // LZW: 12-bit codes of at most 4096 bytes each.
        5 => raw_bytes.saturating_mul(3) / 8192,
        8 | 32946 => raw_bytes / DEFLATE_MAX_RATIO,
        // PackBits: 2 bytes repeat one byte 128 times.
        PACKBITS => raw_bytes / 64,
        // JPEG: at least 1 bit per 8x8 block of luma.
        6 | 7 => pixels / 512,
        _ => return Ok(()),
    } / SUBSAMPLING_SLACK;
    let counts = ifd.entries.iter().find(|e| e.tag == TILE_BYTE_COUNTS || e.tag == STRIP_BYTE_COUNTS);
    let Some(counts) = counts.and_then(|e| layout.values(walk, e, MAX_BLOCKS)) else { return Ok(()) };
    let data_bytes = counts.iter().fold(0u64, |sum, &c| sum.saturating_add(c)).min(walk.len());
    check_size(path, "TIFF", (width, height), min_bytes, data_bytes, walk.len())?;
    // Samples of different sizes, and subsampled YCbCr, lay rows out otherwise: left to the decoder.
    let same_bits = bits_each.is_none_or(|v| v.iter().all(|&b| b == bits));
    if compression == PACKBITS && same_bits && layout.first(walk, ifd, PHOTOMETRIC) != Some(6) {
        let image = Image { width, height, samples, bits: bits.min(64) };
        if let Some(damage) = packbits_damage(layout, walk, ifd, image, &counts) {
            return Err(IoError::Decode { path: path.into(), reason: damage });
        }
    }
    Ok(())
}

/// What [`packbits_damage`] needs of the first image.
#[derive(Clone, Copy)]
struct Image {
    width: u32,
    height: u32,
    samples: u64,
    bits: u64,
}

/// The first `PackBits` strip or tile (of `counts` bytes each) whose data does not unpack to the
/// bytes its rows hold, in words; `None` when every one does, or when the blocks cannot be
/// walked (the decoder then says what is wrong). A block that ends short leaves rows without
/// data; a run that crosses the block's end shifts every byte after the damage. libtiff refuses
/// the first and warns of the second; the `tiff` crate says nothing of either, and would give
/// a wrong image with exit 0. A block that unpacks to its size and then holds more is padding.
fn packbits_damage(
    layout: Layout,
    walk: &mut Walk,
    ifd: &Ifd,
    image: Image,
    counts: &[u64],
) -> Option<String> {
    let mut first = |tag| layout.first(walk, ifd, tag);
    let planes = if first(PLANAR_CONFIGURATION) == Some(2) { image.samples } else { 1 };
    let samples_per_block = image.samples / planes;
    let height = u64::from(image.height);
    // Rows per block, the bytes of a block's row, blocks across, and what a block is called.
    let (block_rows, row_bytes, across, what) = match (first(TILE_WIDTH), first(TILE_LENGTH)) {
        (Some(tile_width), Some(tile_rows)) if tile_width > 0 && tile_rows > 0 => (
            tile_rows,
            (tile_width * samples_per_block * image.bits).div_ceil(8),
            u64::from(image.width).div_ceil(tile_width),
            "tile",
        ),
        _ => (
            first(ROWS_PER_STRIP).unwrap_or(height).clamp(1, height.max(1)),
            (u64::from(image.width) * samples_per_block * image.bits).div_ceil(8),
            1,
            "strip",
        ),
    };
    let offsets_tag = if what == "tile" { TILE_OFFSETS } else { STRIP_OFFSETS };
    let entry = ifd.entries.iter().find(|e| e.tag == offsets_tag)?;
    let offsets = layout.values(walk, entry, MAX_BLOCKS)?;
    let per_plane = height.div_ceil(block_rows).checked_mul(across)?;
    if offsets.len() != counts.len() || Some(offsets.len() as u64) != per_plane.checked_mul(planes) {
        return None;
    }
    for (n, (&offset, &count)) in (0u64..).zip(offsets.iter().zip(counts)) {
        let top = (n % per_plane) / across * block_rows;
        // A strip holds the rows left; a tile always holds whole tile rows.
        let rows = if what == "tile" { block_rows } else { block_rows.min(height - top) };
        let want = rows.checked_mul(row_bytes)?;
        let unpacked = unpacked_bytes(walk, offset, count, want)?;
        if unpacked != want {
            let how = if unpacked < want {
                format!("ends after {unpacked} of its {want} bytes")
            } else {
                format!("unpacks to {unpacked} bytes where its rows hold {want}")
            };
            return Some(format!(
                "its PackBits data is damaged: {what} {} of {} (rows {} to {} of {height}) {how}",
                n + 1,
                offsets.len(),
                top + 1,
                (top + rows).min(height),
            ));
        }
    }
    None
}

/// How many bytes the `PackBits` data of `count` bytes at `offset` unpacks to, walked up to the
/// run that reaches `want`; `None` when it lies past the file's end.
fn unpacked_bytes(walk: &mut Walk, offset: u64, count: u64, want: u64) -> Option<u64> {
    if offset.checked_add(count)? > walk.len() {
        return None;
    }
    walk.seek(offset)?;
    let (mut read, mut unpacked) = (0u64, 0u64);
    while unpacked < want && read < count {
        let header = walk.byte()?;
        read += 1;
        let left = count - read;
        match header {
            // A literal run of header + 1 bytes; one cut by the block's end gives what is there.
            0..=127 => {
                let n = (u64::from(header) + 1).min(left);
                walk.skip(n)?;
                read += n;
                unpacked += n;
            }
            // A no-op.
            128 => {}
            // One byte repeated 257 - header times; without its byte, nothing.
            _ if left == 0 => break,
            _ => {
                walk.skip(1)?;
                read += 1;
                unpacked += 257 - u64::from(header);
            }
        }
    }
    Some(unpacked)
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
