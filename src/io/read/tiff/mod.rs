//! TIFF variants the `image` crate refuses or misreads, and plain TIFFs, each opened as an
//! `image` decoder so that `decode_file` reserves memory and applies orientation for them as for
//! any image: plain 8 and 16-bit gray, gray and alpha, RGB and RGBA read straight into the output
//! (`plain.rs`; LZW and Deflate strips and tiles on all cores in `chunks.rs`), associated alpha
//! made straight (`straight.rs`), floating-point gray, palette and CMYK images read through the
//! `tiff` crate (`direct.rs`), CCITT one-dimensional coding (`fax.rs`), and JPEG compression, its
//! pieces decoded by libjpeg (`jpeg.rs`). Which variant a file is comes from `tiff_header.rs`. Knows
//! nothing of budgets.

mod chunks;
mod direct;
mod fax;
mod jpeg;
mod plain;
#[cfg(test)]
mod plain_tests;
mod straight;

use std::io::{BufRead, Seek};

use image::codecs::tiff::TiffDecoder;
use image::{ImageDecoder, ImageResult};

use crate::io::read::tiff_header::{Alpha, Variant};
use plain::{Finish, PlainDecoder};

/// A decoder for `variant` over `reader` with `limits` set, and the bytes it holds besides
/// its output while it decodes.
pub(in crate::io) fn open<'a, R: BufRead + Seek + 'a>(
    reader: R,
    variant: Variant,
    limits: &image::Limits,
) -> ImageResult<(Box<dyn ImageDecoder + 'a>, u64)> {
    Ok(match variant {
        Variant::Plain | Variant::Premultiplied => {
            let finish = Finish { premultiplied: variant == Variant::Premultiplied, ..Finish::default() };
            match PlainDecoder::open(reader, None, finish, plain::image_error)? {
                Ok(plain) => plain.with_limits(limits),
                Err(reader) => by_image(reader, limits, variant == Variant::Premultiplied)?,
            }
        }
        Variant::Gray { alpha, white_is_zero } => {
            let finish = Finish {
                gray_alpha: alpha != Alpha::None,
                invert_gray: white_is_zero.is_some(),
                premultiplied: alpha == Alpha::Premultiplied,
            };
            match PlainDecoder::open(reader, white_is_zero, finish, direct::tiff_error)? {
                Ok(plain) => plain.with_limits(limits),
                Err(reader) => direct::DirectDecoder::gray(reader, alpha, white_is_zero)?.with_limits(limits),
            }
        }
        Variant::Palette(patch) => direct::DirectDecoder::palette(reader, patch)?.with_limits(limits),
        Variant::Levels { patch, white_is_zero } => {
            direct::DirectDecoder::levels(reader, patch, white_is_zero)?.with_limits(limits)
        }
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

/// The `image` crate's TIFF decoder over `reader` (its colours made straight where
/// `premultiplied`), and the bytes it holds besides its output: a copy of the pixels, which it
/// decodes into a buffer of its own before copying them out.
fn by_image<'a, R: BufRead + Seek + 'a>(
    reader: R,
    limits: &image::Limits,
    premultiplied: bool,
) -> ImageResult<(Box<dyn ImageDecoder + 'a>, u64)> {
    let mut decoder = TiffDecoder::new(reader)?;
    decoder.set_limits(limits.clone())?;
    let copy_bytes = decoder.total_bytes();
    Ok(if premultiplied {
        (Box::new(straight::Straightened(decoder)), copy_bytes)
    } else {
        (Box::new(decoder), copy_bytes)
    })
}
