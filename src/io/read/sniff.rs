//! A cheap look at a file before decoding it: is it an image graylab reads at all (used to skip
//! other files in folders), or an image format graylab does not read (named, not "not an
//! image"), without ever opening a FIFO or a device.

use std::path::Path;

use image::ImageFormat;

use crate::io::IoError;
use crate::io::kind::{looks_like, open_regular, read_capped, special_kind};
use crate::io::read::tiff_header::RAW_SENSOR_DATA;

/// The bytes of a file's start that show its format.
const HEAD_BYTES: u64 = 32;

/// The formats graylab reads, for messages.
pub const RECOGNISED_FORMATS: &str = "JPEG, PNG, TIFF, WebP, BMP, GIF, PNM, TGA, ICO, QOI";

/// What a file in an input folder is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// An image graylab reads, in this format.
    Image(ImageFormat),
    /// A regular file that is no image (an image graylab does not read is an error naming it:
    /// [`classify_file`]).
    Other,
    /// Not a regular file (never opened): a FIFO, a device, a socket, in words.
    Special(&'static str),
}

/// What `path` is: its type from its metadata first (a FIFO is never opened), then the format
/// its first bytes show. A file that cannot be read (no permission, a name too long) is an
/// error naming it, not "no image"; so is an image graylab does not read, naming its format
/// (a HEIC photo: [`IoError::UnsupportedFormat`]) or what it is (a camera raw, whose TIFF
/// structure holds a preview: [`IoError::Unsupported`]), as decoding it would.
pub fn classify_file(path: &Path) -> Result<FileKind, IoError> {
    let open = |cause| IoError::Open { path: path.into(), cause };
    let meta = std::fs::metadata(path).map_err(open)?;
    if let Some(kind) = special_kind(&meta) {
        return Ok(FileKind::Special(kind));
    }
    let head = read_capped(path, HEAD_BYTES).map_err(open)?;
    // A bare JPEG XL codestream's signature is two bytes (FF 0A) that any file may start with:
    // in a folder it counts only with its name's `.jxl`.
    let bare_jxl = head.starts_with(&[0xFF, 0x0A]) && !has_extension(path, "jxl");
    if !bare_jxl {
        refuse_unread(path, &head)?;
    }
    let format = format_of(path, &head);
    if format == Some(ImageFormat::Tiff) {
        crate::io::read::tiff_header::check_camera_raw(path, &head)?;
    }
    Ok(format.map_or(FileKind::Other, FileKind::Image))
}

/// The format graylab reads that `head` (a file's first bytes) shows; TGA has no signature, so
/// a `.tga` name is taken for one.
pub(in crate::io) fn format_of(path: &Path, head: &[u8]) -> Option<ImageFormat> {
    // BigTIFF, which `image::guess_format` does not know; its decoder reads it.
    if head.starts_with(b"II+\0") || head.starts_with(b"MM\0+") {
        return Some(ImageFormat::Tiff);
    }
    match image::guess_format(head) {
        Ok(format) => readable(format).then_some(format),
        Err(_) if unsupported_in(head).is_none() && has_extension(path, "tga") => Some(ImageFormat::Tga),
        Err(_) => None,
    }
}

/// The image format a file's first bytes show, or `None` when it is not an image graylab reads
/// (also for files that cannot be read and for FIFOs and devices; decoding them reports why).
#[must_use]
pub fn sniff_format(path: &Path) -> Option<ImageFormat> {
    match classify_file(path) {
        Ok(FileKind::Image(format)) => Some(format),
        _ => None,
    }
}

/// The bytes of a JPEG read to find its frame header: room for large EXIF and ICC segments.
const JPEG_HEADER_BYTES: u64 = 1 << 20;

/// The width and height an image file's header claims, read without decoding its pixels (a
/// JPEG's structure walk over its first MiB, the other formats' decoders stopped after their
/// header), so a size the export cannot store is refused before the decode; `None` when the
/// header cannot be read (the decode then says why).
#[must_use]
pub fn header_dimensions(path: &Path) -> Option<(u32, u32)> {
    // A FIFO or a device is never opened, so never waited on.
    if special_kind(&std::fs::metadata(path).ok()?).is_some() {
        return None;
    }
    let head = read_capped(path, HEAD_BYTES).ok()?;
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        let bytes = read_capped(path, JPEG_HEADER_BYTES).ok()?;
        let layout = crate::io::read::jpeg_scan::scan(&bytes).ok()?;
        return Some((layout.width, layout.height));
    }
    let format = format_of(path, &head)?;
    let file = std::io::BufReader::new(open_regular(path).ok()?);
    let mut reader = image::ImageReader::with_format(file, format);
    let mut limits = image::Limits::default();
    // A header needs little: a decoder that would allocate more is not asked.
    limits.max_alloc = Some(64 << 20);
    reader.limits(limits);
    // A decoder bug a hostile header finds is left for the decode to report.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reader.into_dimensions())).ok()?.ok()
}

/// What is checked before a file is read: that it is a regular file with bytes, and what its
/// first 64 bytes say it is (an image, or a named other kind of file).
pub(in crate::io) fn first_look(path: &Path) -> Result<(std::fs::Metadata, Vec<u8>), IoError> {
    let open = |cause| IoError::Open { path: path.into(), cause };
    let meta = std::fs::metadata(path).map_err(open)?;
    if meta.is_dir() {
        return Err(open(std::io::Error::other("it is a folder")));
    }
    // A FIFO, a device or a socket is never opened (a FIFO would block, a device never end).
    if let Some(kind) = special_kind(&meta) {
        return Err(IoError::NotAFile { path: path.into(), kind });
    }
    let head = read_capped(path, 64).map_err(open)?;
    if meta.len() == 0 {
        return Err(if head.is_empty() {
            IoError::Empty { path: path.into() }
        } else {
            IoError::NotAFile { path: path.into(), kind: "a special file that reports no size (as in /proc)" }
        });
    }
    if image::guess_format(&head).is_err()
        && let Some(looks_like) = looks_like(&head)
    {
        return Err(IoError::NotAnImage { path: path.into(), looks_like });
    }
    Ok((meta, head))
}

/// Refuses `path` where its first bytes (`head`) show an image graylab does not read: a format
/// ([`unsupported_format_of`]) or a camera raw of a layout of its own ([`camera_raw_of`]).
pub(in crate::io) fn refuse_unread(path: &Path, head: &[u8]) -> Result<(), IoError> {
    if let Some(format) = unsupported_format_of(head) {
        return Err(IoError::UnsupportedFormat { path: path.into(), format });
    }
    if let Some(kind) = camera_raw_of(head) {
        let reason = format!("a camera raw ({kind}) file: {RAW_SENSOR_DATA}");
        return Err(IoError::Unsupported { path: path.into(), reason });
    }
    Ok(())
}

/// The camera raw a file's first bytes (`head`) show, of those not laid out as a TIFF (the
/// TIFF-based ones, DNG, CR2, NEF, ARW, PEF, are known by their first directory:
/// `tiff_header.rs`), else `None`. Refused by name, not as "no image".
fn camera_raw_of(head: &[u8]) -> Option<&'static str> {
    let name = match () {
        () if head.get(4..12) == Some(b"ftypcrx ".as_slice()) => "Canon CR3",
        () if head.starts_with(b"II") && head.get(6..14) == Some(b"HEAPCCDR".as_slice()) => "Canon CRW",
        () if head.starts_with(b"FUJIFILMCCD-RAW") => "Fujifilm RAF",
        () if head.starts_with(b"IIRO") || head.starts_with(b"IIRS") || head.starts_with(b"MMOR") => {
            "Olympus ORF"
        }
        () if head.starts_with(b"IIU\0") => "Panasonic RW2",
        () if head.starts_with(b"FOVb") => "Sigma X3F",
        () if head.starts_with(b"\0MRM") => "Minolta MRW",
        () => return None,
    };
    Some(name)
}

/// The name of the image format a file's first bytes (`head`) show when graylab does not read
/// it (AVIF, HEIF, JPEG XL, JPEG 2000, `OpenEXR`, Radiance HDR, DDS, Photoshop, farbfeld, ...),
/// else `None`.
fn unsupported_format_of(head: &[u8]) -> Option<String> {
    if let Some(name) = unsupported_in(head) {
        return Some(name.to_owned());
    }
    image::guess_format(head).ok().filter(|&f| !readable(f)).map(|f| format!("{f:?}").to_uppercase())
}

/// What a file that is no image looks like, from its first bytes, for messages (a PDF, an
/// archive and the other kinds [`crate::io::looks_like`] names were refused before), text by
/// the same rule.
pub(in crate::io) fn describe_head(head: &[u8]) -> &'static str {
    if crate::io::looks_like(head) == Some("text") {
        "it looks like text"
    } else {
        "its first bytes match no image format"
    }
}

/// Whether graylab reads `format`.
pub(in crate::io) fn readable(format: ImageFormat) -> bool {
    matches!(
        format,
        ImageFormat::Jpeg
            | ImageFormat::Png
            | ImageFormat::Tiff
            | ImageFormat::WebP
            | ImageFormat::Bmp
            | ImageFormat::Gif
            | ImageFormat::Pnm
            | ImageFormat::Tga
            | ImageFormat::Ico
            | ImageFormat::Qoi
    )
}

/// Signatures of image formats graylab does not read.
fn unsupported_in(head: &[u8]) -> Option<&'static str> {
    let brand = head.get(4..12);
    let name = match () {
        () if brand == Some(b"ftypavif") || brand == Some(b"ftypavis") => "AVIF",
        () if matches!(brand, Some(b) if b.starts_with(b"ftyphei") || b.starts_with(b"ftypmif1") || b.starts_with(b"ftyphev")) => {
            "HEIF/HEIC"
        }
        () if head.starts_with(&[0xFF, 0x0A]) || head.starts_with(b"\0\0\0\x0CJXL \r\n\x87\n") => "JPEG XL",
        () if head.starts_with(b"\0\0\0\x0CjP  \r\n\x87\n")
            || head.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]) =>
        {
            "JPEG 2000"
        }
        () if head.starts_with(&[0x76, 0x2F, 0x31, 0x01]) => "OpenEXR",
        () if head.starts_with(b"#?RADIANCE") || head.starts_with(b"#?RGBE") => "Radiance HDR",
        () if head.starts_with(b"DDS ") => "DDS",
        () if head.starts_with(b"8BPS") => "Photoshop (PSD)",
        () if head.starts_with(b"farbfeld") => "farbfeld",
        () => return None,
    };
    Some(name)
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_byte_jpeg_xl_signature_counts_only_with_its_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let bytes = [0xFF, 0x0A, b'n', b'o', b't', b'e', b's'];
        for (name, jxl) in [("notes.bin", false), ("photo.jxl", true)] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).expect("write");
            match classify_file(&path) {
                Err(IoError::UnsupportedFormat { format, .. }) => {
                    assert!(jxl && format.contains("JPEG XL"), "{name}");
                }
                other => assert!(!jxl && matches!(other, Ok(FileKind::Other)), "{name}: {other:?}"),
            }
        }
    }
}
