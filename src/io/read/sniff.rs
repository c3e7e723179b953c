//! A cheap look at a file before decoding it: is it an image graylab reads at all (used to skip
//! other files in folders).

use std::io::Read as _;
use std::path::Path;

use image::ImageFormat;

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
