//! Cheap looks at a file before decoding it: is it an image at all, and how much memory will
//! decoding it take (from the header only).

use std::io::Read as _;
use std::path::Path;

use image::{ImageDecoder as _, ImageFormat, ImageReader};

use super::{IoError, owned};

/// What a file's header says, read without decoding the pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageProbe {
    /// The format, from the content.
    pub format: ImageFormat,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bytes of the decoded image plus its gray result: what converting it holds in memory, as
    /// [`super::decode_file`] counts it against the budget.
    pub working_bytes: u64,
}

/// The image format a file's first bytes show, or `None` when it is not an image graylab reads
/// (also for files that cannot be read; decoding them reports why).
#[must_use]
pub fn sniff_format(path: &Path) -> Option<ImageFormat> {
    let mut head = [0u8; 32];
    let mut file = std::fs::File::open(path).ok()?;
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    let format = image::guess_format(&head[..filled]).ok()?;
    matches!(
        format,
        ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::Tiff | ImageFormat::WebP | ImageFormat::Bmp
    )
    .then_some(format)
}

/// Reads a file's header: format, size and the memory converting it needs.
pub fn probe_file(path: &Path) -> Result<ImageProbe, IoError> {
    let open = |source| IoError::Open { path: owned(path), source };
    let reader = ImageReader::open(path).map_err(open)?.with_guessed_format().map_err(open)?;
    let format = reader.format().ok_or_else(|| IoError::UnknownFormat { path: owned(path) })?;
    let decoder = reader.into_decoder().map_err(|source| IoError::Decode { path: owned(path), source })?;
    let (width, height) = decoder.dimensions();
    let color = decoder.color_type();
    let pixels = u64::from(width) * u64::from(height);
    let sample_bytes = u64::from(color.bytes_per_pixel() / color.channel_count().max(1));
    let gray_bytes = pixels * sample_bytes * (1 + u64::from(color.has_alpha()));
    Ok(ImageProbe { format, width, height, working_bytes: decoder.total_bytes().saturating_add(gray_bytes) })
}
