//! graylab's mark on the images it writes, and the reader that finds it: a PNG `tEXt` chunk
//! `Software` = `graylab` right after `IHDR`, a JPEG `COM` segment `graylab` right after the
//! `JFIF` one, the TIFF `Software` tag (305) in the first directory, and that tag in a WebP's
//! `EXIF` chunk. A BMP has no place for text: graylab's BMP outputs are unmarked.
//!
//! A batch tells its own earlier outputs from a user's file of the same name by this mark
//! ([`is_graylab_output`]), never by the name. Reads a bounded number of bytes of any file; uses
//! only [`crate::io::kind`].

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

use crate::io::kind::open_regular;

/// The text of the mark: the `Software` value, the JPEG comment.
pub(crate) const SOFTWARE: &str = "graylab";

/// Bytes read from the start of a file to find a PNG's, JPEG's or TIFF's mark: where graylab
/// writes it, within the first few hundred.
const PREFIX_BYTES: u64 = 4096;

/// WebP chunks looked at, at most, before the `EXIF` one (graylab writes three before it).
const WEBP_CHUNKS: usize = 8;

/// Whether `path` is an image graylab wrote: a regular file that carries graylab's mark. Any
/// other file, one that cannot be read, and a BMP (which has no place for the mark) are not.
/// Reads at most a few KiB of the file.
#[must_use]
pub fn is_graylab_output(path: &Path) -> bool {
    let Ok(mut file) = open_regular(path) else { return false };
    let mut head = Vec::new();
    if (&mut file).take(PREFIX_BYTES).read_to_end(&mut head).is_err() {
        return false;
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        png_marked(&head)
    } else if head.starts_with(&[0xFF, 0xD8]) {
        jpeg_marked(&head)
    } else if head.starts_with(b"II*\0") || head.starts_with(b"MM\0*") {
        tiff_software(&head).is_some_and(|s| s == SOFTWARE.as_bytes())
    } else if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        webp_marked(&mut file)
    } else {
        false
    }
}

/// A PNG's chunks before its image data: one `tEXt` is `Software` = graylab.
fn png_marked(head: &[u8]) -> bool {
    let mut at = 8;
    while let Some(header) = head.get(at..at + 8) {
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let kind = &header[4..8];
        if kind == b"IDAT" || kind == b"IEND" {
            return false;
        }
        if kind == b"tEXt" {
            let data = head.get(at + 8..at + 8 + len);
            if data.is_some_and(|d| d.strip_prefix(b"Software\0") == Some(SOFTWARE.as_bytes())) {
                return true;
            }
        }
        at += 12 + len;
    }
    false
}

/// A JPEG's segments before its scan: one `COM` is graylab.
fn jpeg_marked(head: &[u8]) -> bool {
    let mut at = 2;
    while let Some(&[0xFF, marker, high, low]) = head.get(at..at + 4) {
        let len = usize::from(u16::from_be_bytes([high, low]));
        if marker == 0xDA || len < 2 {
            return false;
        }
        if marker == 0xFE && head.get(at + 4..at + 2 + len) == Some(SOFTWARE.as_bytes()) {
            return true;
        }
        at += 2 + len;
    }
    false
}

/// The `Software` value (without its NUL) in the first directory of the TIFF structure `tiff`
/// (a TIFF file's head, or an EXIF payload), where directory and value lie within it.
pub(crate) fn tiff_software(tiff: &[u8]) -> Option<&[u8]> {
    let little = tiff.starts_with(b"II");
    let u16_at = |at: usize| {
        let b: [u8; 2] = tiff.get(at..at + 2)?.try_into().ok()?;
        Some(if little { u16::from_le_bytes(b) } else { u16::from_be_bytes(b) })
    };
    let u32_at = |at: usize| {
        let b: [u8; 4] = tiff.get(at..at + 4)?.try_into().ok()?;
        Some(if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) } as usize)
    };
    let directory = u32_at(4)?;
    let entries = usize::from(u16_at(directory)?);
    (0..entries).find_map(|i| {
        let entry = directory + 2 + 12 * i;
        if u16_at(entry)? != 305 || u16_at(entry + 2)? != 2 {
            return None;
        }
        let count = u32_at(entry + 4)?;
        let value = if count <= 4 {
            tiff.get(entry + 8..entry + 8 + count)?
        } else {
            let at = u32_at(entry + 8)?;
            tiff.get(at..at.checked_add(count)?)?
        };
        Some(value.strip_suffix(b"\0").unwrap_or(value))
    })
}

/// A WebP's chunks, header by header (its `EXIF` chunk comes after the image data): the
/// `EXIF` one holds graylab's `Software` tag.
fn webp_marked(file: &mut File) -> bool {
    let mut at = 12u64;
    for _ in 0..WEBP_CHUNKS {
        let mut header = [0u8; 8];
        if file.seek(SeekFrom::Start(at)).is_err() || file.read_exact(&mut header).is_err() {
            return false;
        }
        let len = u64::from(u32::from_le_bytes([header[4], header[5], header[6], header[7]]));
        if &header[..4] == b"EXIF" {
            let mut exif = Vec::new();
            let read = file.take(len.min(PREFIX_BYTES)).read_to_end(&mut exif);
            return read.is_ok() && tiff_software(&exif) == Some(SOFTWARE.as_bytes());
        }
        // Chunks are padded to an even size.
        at += 8 + len + (len & 1);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_marked_png_or_jpeg_head_is_graylabs() {
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend_from_slice(&[0, 0, 0, 13]);
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&[0; 17]);
        let mut marked = png.clone();
        marked.extend_from_slice(&[0, 0, 0, 16]);
        marked.extend_from_slice(b"tEXtSoftware\0graylab");
        marked.extend_from_slice(&[0; 4]);
        assert!(png_marked(&marked));
        assert!(!png_marked(&png));
        assert!(jpeg_marked(&[0xFF, 0xD8, 0xFF, 0xFE, 0, 9, b'g', b'r', b'a', b'y', b'l', b'a', b'b']));
        assert!(!jpeg_marked(&[0xFF, 0xD8, 0xFF, 0xFE, 0, 6, b'g', b'r', b'a', b'y']));
        assert!(!jpeg_marked(&[0xFF, 0xD8, 0xFF, 0xDA, 0, 9, b'g', b'r', b'a', b'y', b'l', b'a', b'b']));
    }
}
