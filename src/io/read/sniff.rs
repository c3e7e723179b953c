//! A cheap look at a file before decoding it: is it an image graylab reads at all (used to skip
//! other files in folders), without ever opening a FIFO or a device.

use std::io::Read as _;
use std::path::Path;

use image::ImageFormat;

use crate::io::kind::{open_regular, special_kind};
use crate::io::{IoError, owned};

/// What a file in an input folder is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// An image graylab reads, in this format.
    Image(ImageFormat),
    /// A regular file that is no image graylab reads.
    Other,
    /// Not a regular file (never opened): a FIFO, a device, a socket, in words.
    Special(&'static str),
}

/// What `path` is: its type from its metadata first (a FIFO is never opened), then the format
/// its first bytes show. A file that cannot be read (no permission, a name too long) is an
/// error naming it, not "no image".
pub fn classify_file(path: &Path) -> Result<FileKind, IoError> {
    let open = |cause| IoError::Open { path: owned(path), cause };
    let meta = std::fs::metadata(path).map_err(open)?;
    if let Some(kind) = special_kind(&meta) {
        return Ok(FileKind::Special(kind));
    }
    let mut head = [0u8; 32];
    let mut file = open_regular(path).map_err(open)?;
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(open(e)),
        }
    }
    let format = image::guess_format(&head[..filled]).ok().filter(|f| {
        matches!(
            f,
            ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::Tiff | ImageFormat::WebP | ImageFormat::Bmp
        )
    });
    Ok(format.map_or(FileKind::Other, FileKind::Image))
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
