//! Plain TIFFs read by the `tiff` crate straight into the output buffer, with no second copy of
//! the pixels (the `image` crate's TIFF decoder reads into a buffer of its own, then copies it
//! out): 8 or 16-bit unsigned gray, gray and alpha, RGB or RGBA, samples interleaved, in strips
//! or tiles of any compression the `tiff` crate decodes. LZW and Deflate strips and tiles are
//! decoded on all cores (`chunks.rs`). A layout the output buffer does not match exactly
//! (separate planes, extra samples, another sample type) is left to the decoder the variant had
//! before.

use std::io::{Read, Seek, SeekFrom};

use image::error::{ImageFormatHint, LimitError, LimitErrorKind, UnsupportedError, UnsupportedErrorKind};
use image::metadata::Orientation;
use image::{ColorType, ImageDecoder, ImageError, ImageFormat, ImageResult};
use tiff::decoder::Decoder;
use tiff::tags::Tag;

use super::chunks::Chunks;
use super::direct::{Patched, orientation, tiff_error, tiff_limits};
use super::straight::unpremultiply;
use crate::io::read::tiff_header::Patch;

/// What is done to the samples once they are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Finish {
    /// Two samples of gray are gray and alpha (else a two-sample gray is not plain).
    pub gray_alpha: bool,
    /// The gray sample is inverted (0 was white; the tag was presented as black-is-zero).
    pub invert_gray: bool,
    /// The colour samples are divided by the alpha (associated alpha made straight).
    pub premultiplied: bool,
}

/// A plain TIFF read through the `tiff` crate into the output buffer, as an `image` decoder.
pub(super) struct PlainDecoder<R: Read + Seek> {
    inner: Decoder<Patched<R>>,
    dimensions: (u32, u32),
    color: ColorType,
    finish: Finish,
    /// The `tiff` crate's errors in the words the decoder this one replaces gave them.
    errors: fn(tiff::TiffError) -> ImageError,
    /// LZW or Deflate strips or tiles decoded on all cores, when the file has several bands.
    chunks: Option<Chunks>,
}

impl<R: Read + Seek> PlainDecoder<R> {
    /// Opens `reader` (its `PhotometricInterpretation` shown through `patch`) as a plain TIFF,
    /// or gives it back, rewound, where it is not one (or the `tiff` crate cannot open it: the
    /// decoder given it then says why in its own words).
    pub(super) fn open(
        mut reader: R,
        patch: Option<Patch>,
        finish: Finish,
        errors: fn(tiff::TiffError) -> ImageError,
    ) -> ImageResult<Result<Self, R>> {
        let fits = Decoder::new(Patched::new(&mut reader, patch))
            .ok()
            .and_then(|mut probe| plain_color(&mut probe, finish.gray_alpha));
        reader.seek(SeekFrom::Start(0))?;
        let Some((dimensions, color)) = fits else { return Ok(Err(reader)) };
        let inner = Decoder::new(Patched::new(reader, patch)).map_err(errors)?;
        Ok(Ok(Self { inner, dimensions, color, finish, errors, chunks: None }))
    }

    /// The decoder, boxed, with the `tiff` crate's limits at `limits`' allocation (the strips
    /// are read into the output, not into a buffer of their own), and the bytes it holds besides
    /// its output: the compressed chunks in flight and tiles of scratch, if decoded on all cores,
    /// else none.
    pub(super) fn with_limits<'a>(mut self, limits: &image::Limits) -> (Box<dyn ImageDecoder + 'a>, u64)
    where
        R: 'a,
    {
        let (tiff_limits, max) = tiff_limits(limits);
        self.inner = self.inner.with_limits(tiff_limits);
        self.chunks = Chunks::plan(&mut self.inner, self.dimensions, self.color, max);
        let scratch_bytes = self.chunks.as_ref().map_or(0, Chunks::in_flight_bytes);
        (Box::new(self), scratch_bytes)
    }
}

/// The image's size and the colour type the output holds, where `read_image_bytes` fills a
/// buffer of that type exactly: one plane of 8 or 16-bit unsigned samples, as many per pixel as
/// the colour type has.
fn plain_color<R: Read + Seek>(
    decoder: &mut Decoder<R>,
    gray_alpha: bool,
) -> Option<((u32, u32), ColorType)> {
    let color = match decoder.colortype().ok()? {
        tiff::ColorType::Gray(8) => ColorType::L8,
        tiff::ColorType::Gray(16) => ColorType::L16,
        tiff::ColorType::Multiband { bit_depth: 8, num_samples: 2 } if gray_alpha => ColorType::La8,
        tiff::ColorType::Multiband { bit_depth: 16, num_samples: 2 } if gray_alpha => ColorType::La16,
        tiff::ColorType::RGB(8) => ColorType::Rgb8,
        tiff::ColorType::RGB(16) => ColorType::Rgb16,
        tiff::ColorType::RGBA(8) => ColorType::Rgba8,
        tiff::ColorType::RGBA(16) => ColorType::Rgba16,
        _ => return None,
    };
    let samples = decoder.find_tag_unsigned::<u16>(Tag::SamplesPerPixel).ok()?.unwrap_or(1);
    let formats = decoder.find_tag_unsigned_vec::<u16>(Tag::SampleFormat).ok()?.unwrap_or_default();
    if samples != u16::from(color.channel_count()) || formats.iter().any(|&f| f != 1) {
        return None;
    }
    let (width, height) = decoder.dimensions().ok()?;
    let layout = decoder.image_buffer_layout().ok()?;
    let bytes = u64::from(width) * u64::from(height) * u64::from(color.bytes_per_pixel());
    (layout.planes == 1 && layout.complete_len as u64 == bytes).then_some(((width, height), color))
}

impl<R: Read + Seek> ImageDecoder for PlainDecoder<R> {
    fn dimensions(&self) -> (u32, u32) {
        self.dimensions
    }

    fn color_type(&self) -> ColorType {
        self.color
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        Ok(orientation(&mut self.inner))
    }

    fn read_image(mut self, buf: &mut [u8]) -> ImageResult<()> {
        if u64::try_from(buf.len()).ok() != Some(self.total_bytes()) {
            return Err(ImageError::Limits(LimitError::from_kind(LimitErrorKind::InsufficientMemory)));
        }
        // Chunks decoded on all cores; any fault there is left to the `tiff` crate, which reads
        // the whole image again and gives the result (or the error) it always gave.
        let done = self.chunks.take().is_some_and(|chunks| chunks.read(&mut self.inner, buf).is_ok());
        if !done {
            self.inner.read_image_bytes(buf).map_err(self.errors)?;
        }
        if self.finish.invert_gray {
            invert_gray(self.color, buf);
        }
        if self.finish.premultiplied {
            unpremultiply(self.color, buf);
        }
        Ok(())
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}

/// The first sample of each pixel (gray) inverted, its alpha kept.
fn invert_gray(color: ColorType, buf: &mut [u8]) {
    let pixel_bytes = usize::from(color.bytes_per_pixel());
    match color {
        ColorType::L8 | ColorType::La8 => {
            for pixel in buf.chunks_exact_mut(pixel_bytes) {
                pixel[0] = u8::MAX - pixel[0];
            }
        }
        ColorType::L16 | ColorType::La16 => {
            for pixel in buf.chunks_exact_mut(pixel_bytes) {
                let g = u16::from_ne_bytes([pixel[0], pixel[1]]);
                pixel[..2].copy_from_slice(&(u16::MAX - g).to_ne_bytes());
            }
        }
        _ => {}
    }
}

/// The `tiff` crate's error as the `image` crate's TIFF decoder maps it: as
/// [`super::direct::tiff_error`] does, an unsupported feature apart.
pub(super) fn image_error(e: tiff::TiffError) -> ImageError {
    match e {
        tiff::TiffError::UnsupportedError(what) => {
            ImageError::Unsupported(UnsupportedError::from_format_and_kind(
                ImageFormatHint::Exact(ImageFormat::Tiff),
                UnsupportedErrorKind::GenericFeature(what.to_string()),
            ))
        }
        other => tiff_error(other),
    }
}
