//! TIFF variants the `image` crate refuses or misreads, each opened as an `image` decoder so
//! that `decode_file` reserves memory and applies orientation for them as for any image:
//! associated alpha made straight (`straight.rs`), gray with alpha, floating-point gray, palette
//! and CMYK images read through the `tiff` crate (`direct.rs`), CCITT one-dimensional coding
//! (`fax.rs`), and JPEG compression, its pieces decoded by libjpeg (`jpeg.rs`). Which variant a file is comes from `tiff_header.rs`. Knows nothing of budgets.

mod direct;
mod fax;
mod jpeg;
mod straight;

use std::io::{BufRead, Seek};

use image::codecs::tiff::TiffDecoder;
use image::{ImageDecoder, ImageResult};

use crate::io::read::tiff_header::Variant;

/// A decoder for `variant` over `reader` with `limits` set, and the bytes it holds besides
/// its output while it decodes.
pub(in crate::io) fn open<'a, R: BufRead + Seek + 'a>(
    reader: R,
    variant: Variant,
    limits: &image::Limits,
) -> ImageResult<(Box<dyn ImageDecoder + 'a>, u64)> {
    Ok(match variant {
        Variant::Premultiplied => {
            let mut decoder = TiffDecoder::new(reader)?;
            decoder.set_limits(limits.clone())?;
            (Box::new(straight::Straightened(decoder)), 0)
        }
        Variant::Gray { alpha, white_is_zero } => {
            direct::DirectDecoder::gray(reader, alpha, white_is_zero)?.with_limits(limits)
        }
        Variant::Palette(patch) => direct::DirectDecoder::palette(reader, patch)?.with_limits(limits),
        Variant::Cmyk => direct::DirectDecoder::cmyk(reader)?.with_limits(limits),
        Variant::Jpeg { gray } => {
            let decoder = jpeg::JpegTiffDecoder::new(reader, gray)?;
            let scratch_bytes = decoder.scratch_bytes();
            (Box::new(decoder), scratch_bytes)
        }
        Variant::Fax { huffman, black_is_zero, reversed_bits } => {
            (Box::new(fax::FaxDecoder::new(reader, huffman, black_is_zero, reversed_bits)?), 0)
        }
    })
}
