//! Does a file hold what its header claims? Each format's header against the data behind it, at
//! the format's best compression ratio, read from the headers before anything is allocated; and
//! what that walk over the file finds on the way: how many frames or pages it holds, an EXIF
//! orientation the decoders miss, and the pixel density (which no decoder here reads).
//!
//! A ratio here is the most pixels a byte of data can ever give, so a file any encoder wrote
//! passes; only headers that claim more than the file could hold are refused.

mod bmp;
mod gif;
pub(super) mod jpeg;
mod others;
mod png;
mod tiff;
pub(in crate::io) mod tiff_ifd;
mod webp;

use std::io::{BufReader, Read as _, Seek as _, SeekFrom};
use std::path::Path;

use image::ImageFormat;
use image::metadata::Orientation;

use crate::io::IoError;
use crate::io::kind::open_regular;
use crate::io::read::pnm;

/// Canvases larger than this (in pixels) must be covered by their frames, within
/// [`CANVAS_SLACK`]; smaller ones cost little whatever their frames hold.
const CANVAS_FLOOR_PIXELS: u64 = 1 << 24;
/// How many times the area its frames cover a GIF screen or a WebP canvas may be.
pub(in crate::io) const CANVAS_SLACK: u64 = 16;

/// What the walk over a file found, besides "it can hold its header's claims".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(in crate::io) struct Facts {
    /// Frames (or TIFF pages) in the file, when it may hold more than one; the decoder reads
    /// the first.
    pub frames: Option<u32>,
    /// An EXIF orientation the decoder does not read (a LONG value, a PNG `eXIf` chunk after
    /// the image data), `None` when there is none.
    pub orientation: Option<Orientation>,
    /// The pixel density: a TIFF's resolution tags, a PNG's `pHYs` chunk, a BMP's pixels per
    /// metre, a JPEG's JFIF segment or EXIF block (read with libjpeg's header, `LibjpegHeader`).
    pub density: Option<crate::io::Density>,
    /// A PNM's header.
    pub pnm: Option<pnm::Header>,
    /// An APNG's still image is not a frame of its animation (it is counted in `frames`).
    pub still_apart: bool,
    /// The EXIF tags and XMP properties an export keeps, read by the walk (the decoders miss
    /// some): a TIFF's own directories and its tag 700, a PNG's `eXIf` chunk and XMP text
    /// chunk wherever they are (`ImageMagick` writes them after the image data).
    pub metadata: Option<std::sync::Arc<crate::io::KeptMetadata>>,
    /// The colour model the file stores where the decoder converts it and does not say so (a
    /// 2 or 4-bit gray PNG, given as 8-bit gray).
    pub stored_as: Option<&'static str>,
    /// A BMP longer than its header's size: the file's size and the header's.
    pub longer_than_header: Option<(u64, u64)>,
}

impl Facts {
    /// The frames (or, where `pages`, a TIFF's pages) of a file that holds more than one.
    pub(in crate::io) fn frame_count(&self, pages: bool) -> Option<crate::io::FrameCount> {
        let still_apart = self.still_apart;
        self.frames.map(|total| crate::io::FrameCount { converted: 1, total, pages, still_apart })
    }

    /// The warning of a file longer than its header says.
    pub(in crate::io) fn size_warning(&self) -> Option<crate::io::DecodeWarning> {
        let (file_bytes, header_bytes) = self.longer_than_header?;
        Some(crate::io::DecodeWarning::LongerThanHeader { file_bytes, header_bytes })
    }
}

/// Refuses a file that cannot hold what its header claims; returns what the walk found. A file
/// too damaged to walk passes: the decoder says what is wrong with it.
pub(in crate::io) fn check_claims(path: &Path, head: &[u8], format: ImageFormat) -> Result<Facts, IoError> {
    let Some(mut walk) = Walk::open(path) else { return Ok(Facts::default()) };
    match format {
        ImageFormat::Png => png::check(path, head, &mut walk),
        ImageFormat::Gif => gif::check(path, &mut walk),
        ImageFormat::Bmp => bmp::check(path, head, walk.len()).map(|()| Facts {
            density: bmp::density(head),
            longer_than_header: bmp::longer_than_header(head, walk.len()),
            ..Facts::default()
        }),
        ImageFormat::WebP => webp::check(path, &mut walk),
        ImageFormat::Tiff => tiff::check(path, head, &mut walk),
        ImageFormat::Tga => others::check_tga(path, head, walk.len()).map(|()| Facts::default()),
        ImageFormat::Qoi => others::check_qoi(path, head, walk.len()).map(|()| Facts::default()),
        ImageFormat::Ico => others::check_ico(path, &mut walk).map(|()| Facts::default()),
        ImageFormat::Pnm => others::check_pnm(path, &mut walk).map(|pnm| Facts { pnm, ..Facts::default() }),
        _ => Ok(Facts::default()),
    }
}

/// The width and height a PNG's header (`head`, its first bytes) claims: the format whose
/// decoder inflates metadata (an iCCP profile, compressed text) before any pixel, so the
/// decode caps it by the image's size; `None` for other formats.
pub(in crate::io) fn inflated_metadata_size(head: &[u8], format: ImageFormat) -> Option<(u32, u32)> {
    (format == ImageFormat::Png).then(|| png::min_data_bytes(head)).flatten().map(|(w, h, _)| (w, h))
}

/// Refuses a header whose pixels need more data (`min_bytes`) than the file has (`data_bytes`).
fn check_size(
    path: &Path,
    format: &'static str,
    (width, height): (u32, u32),
    min_bytes: u64,
    data_bytes: u64,
    file_bytes: u64,
) -> Result<(), IoError> {
    if data_bytes < min_bytes {
        return Err(IoError::ImpossibleSize {
            path: path.into(),
            format,
            width,
            height,
            min_bytes,
            data_bytes,
            file_bytes,
        });
    }
    Ok(())
}

/// Refuses a screen or canvas of `width` x `height` of which the frames cover at most
/// `covered_pixels` (each frame counted no larger than its data can fill).
fn check_canvas(
    path: &Path,
    format: &'static str,
    (width, height): (u32, u32),
    covered_pixels: u64,
) -> Result<(), IoError> {
    let pixels = u64::from(width) * u64::from(height);
    if pixels > CANVAS_FLOOR_PIXELS && pixels > covered_pixels.saturating_mul(CANVAS_SLACK) {
        return Err(IoError::ImpossibleCanvas { path: path.into(), format, width, height, covered_pixels });
    }
    Ok(())
}

/// The area of a frame at `left`, `top` of `size` inside a canvas of `canvas`.
fn clipped_area(left: u64, top: u64, size: (u64, u64), canvas: (u64, u64)) -> u64 {
    let width = (left + size.0).min(canvas.0).saturating_sub(left);
    let height = (top + size.1).min(canvas.1).saturating_sub(top);
    width * height
}

/// A file read forward (and seeked), for walking its structure; every read past its end is
/// `None`.
pub(in crate::io) struct Walk {
    file: BufReader<std::fs::File>,
    at: u64,
    len: u64,
}

impl Walk {
    /// Opens `path` (a regular file), or `None`.
    pub(in crate::io) fn open(path: &Path) -> Option<Self> {
        let file = open_regular(path).ok()?;
        let len = file.metadata().ok()?.len();
        Some(Self { file: BufReader::with_capacity(64 << 10, file), at: 0, len })
    }

    /// The file's size in bytes.
    pub(in crate::io) fn len(&self) -> u64 {
        self.len
    }

    /// The offset of the next byte read.
    pub(in crate::io) fn at(&self) -> u64 {
        self.at
    }

    /// The next `N` bytes.
    pub(in crate::io) fn read<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut bytes = [0u8; N];
        self.file.read_exact(&mut bytes).ok()?;
        self.at += N as u64;
        Some(bytes)
    }

    /// The next byte.
    pub(in crate::io) fn byte(&mut self) -> Option<u8> {
        self.read::<1>().map(|[b]| b)
    }

    /// The next `n` bytes (the caller caps `n`).
    pub(in crate::io) fn bytes(&mut self, n: usize) -> Option<Vec<u8>> {
        if n as u64 > self.len.saturating_sub(self.at) {
            return None;
        }
        let mut bytes = vec![0u8; n];
        self.file.read_exact(&mut bytes).ok()?;
        self.at += n as u64;
        Some(bytes)
    }

    /// Skips `n` bytes; `None` when the file ends first.
    pub(in crate::io) fn skip(&mut self, n: u64) -> Option<()> {
        self.seek(self.at.checked_add(n)?)
    }

    /// Moves to offset `to`; `None` past the end.
    pub(in crate::io) fn seek(&mut self, to: u64) -> Option<()> {
        if to > self.len {
            return None;
        }
        match i64::try_from(to.wrapping_sub(self.at)) {
            // Forward within the buffer or past it: the buffer is kept where it can be.
            Ok(delta) if to >= self.at => self.file.seek_relative(delta).ok()?,
            _ => {
                self.file.seek(SeekFrom::Start(to)).ok()?;
            }
        }
        self.at = to;
        Some(())
    }
}
