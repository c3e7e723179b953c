//! A JPEG's stored luma, and the `image` decoder of every complete JPEG of one or three
//! components: libjpeg-turbo ([`super::libjpeg`]) reads its header and decodes its stored luma or
//! its RGB, the very pixels `OpenCV`'s `imread` gets from the same library, so `bt601` on them is
//! exactly `cvtColor(imread(…))`. Asked for gray output, libjpeg decodes the Y plane and skips the
//! chroma's IDCT, upsampling and colour conversion (what `IMREAD_GRAYSCALE` asks of it). That luma
//! is the encoder's BT.601 luma of the original RGB, within a level or two of `bt601` on the
//! decoded RGB. A truncated file is decoded by zune-jpeg instead, which fills the missing rows
//! with the gray that tells where the data ended (libjpeg repeats the last block's level).

use std::sync::{Mutex, PoisonError};

use image::error::{DecodingError, ImageFormatHint};
use image::metadata::Orientation;
use image::{ColorType, ExtendedColorType, ImageDecoder, ImageError, ImageFormat, ImageResult};
use zune_core::bytestream::ZCursor;
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;

pub(in crate::io) use crate::io::read::libjpeg::JpegOut;
use crate::io::read::libjpeg::{LibjpegHeader, LibjpegRows, LibjpegWarning};

/// What became of a request for the luma a JPEG stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredLuma {
    /// The Y plane was decoded alone: the image is that gray plane.
    Decoded,
    /// The file was decoded as usual, for this reason ("the JPEG stores CMYK"): its pixels are
    /// converted with BT.601.
    Fallback(&'static str),
}

impl StoredLuma {
    /// What a JPEG of `components` components gives: its stored luma, unless it stores no luma
    /// or is a variant for the slower decoder (`other_decoder`), which zune-jpeg reads wrongly.
    #[must_use]
    pub(crate) fn of_jpeg(components: usize, other_decoder: bool, bytes: &[u8]) -> Self {
        match components {
            1 => Self::Decoded,
            4 => Self::Fallback("the JPEG stores CMYK or YCCK, not luma"),
            _ if other_decoder => Self::Fallback("a JPEG variant that only the slower decoder reads right"),
            _ if stores_ycbcr(bytes) => Self::Decoded,
            _ => Self::Fallback("the JPEG stores RGB, not luma"),
        }
    }

    /// The report's note: what was decoded, and what the conversion then did.
    #[must_use]
    pub fn note(self) -> String {
        match self {
            Self::Decoded => {
                "luma as stored in the JPEG: decoded alone (no chroma, no colour conversion), so no conversion \
                 was needed and nothing went to the GPU"
                    .to_owned()
            }
            Self::Fallback(why) => format!("stored luma: {why}, so its colour was converted with bt601"),
        }
    }
}

/// The options `image` gives zune-jpeg (lenient, no size limit of its own: graylab's memory
/// budget is the limit), with `out` as the output colour space.
fn options(out: ColorSpace) -> DecoderOptions {
    DecoderOptions::default()
        .set_strict_mode(false)
        .set_max_width(usize::MAX)
        .set_max_height(usize::MAX)
        .jpeg_set_out_colorspace(out)
}

/// Whether the JPEG in `bytes` stores YCbCr: three components that libjpeg takes as YCbCr by its
/// own rule (a JFIF marker first, then Adobe's transform flag, then the components' ids), as
/// `OpenCV` and Pillow decode them. Only there is the stored luma the gray result.
#[must_use]
pub(crate) fn stores_ycbcr(bytes: &[u8]) -> bool {
    LibjpegHeader::read(bytes).is_ok_and(|h| h.components == 3 && h.ycbcr)
}

/// zune-jpeg's colour space for `out`.
fn zune(out: JpegOut) -> ColorSpace {
    match out {
        JpegOut::Luma => ColorSpace::Luma,
        JpegOut::Rgb => ColorSpace::RGB,
    }
}

/// The warnings libjpeg gave while a [`LibjpegDecoder`] decoded, for its caller to read after
/// the decoder is consumed.
#[derive(Debug, Default)]
pub(in crate::io) struct LibjpegLog(Mutex<Vec<LibjpegWarning>>);

impl LibjpegLog {
    fn extend(&self, warnings: Vec<LibjpegWarning>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend(warnings);
    }

    /// The warnings kept.
    pub(in crate::io) fn into_warnings(self) -> Vec<LibjpegWarning> {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where a [`LibjpegDecoder`]'s header and pixels come from.
enum Source<'a> {
    /// A complete file: libjpeg's header, and libjpeg decodes the pixels.
    Libjpeg { bytes: &'a [u8], header: LibjpegHeader, log: &'a LibjpegLog },
    /// A truncated file: zune-jpeg's header and pixels.
    Zune(Box<zune_jpeg::JpegDecoder<ZCursor<&'a [u8]>>>),
}

/// The decoder of a JPEG's stored luma as 8-bit gray, or its colour as 8-bit RGB, over the
/// file's bytes (borrowed, not copied as `image`'s decoder copies them): libjpeg's header and
/// pixels where the file is complete (its warnings kept in a [`LibjpegLog`]), zune-jpeg's where it
/// is truncated; orientation and metadata from that header, as `image` reads them.
pub(crate) struct LibjpegDecoder<'a> {
    source: Source<'a>,
    dimensions: (u32, u32),
    out: JpegOut,
    /// Components in the frame.
    components: usize,
}

impl<'a> LibjpegDecoder<'a> {
    /// Reads the header of the JPEG in `bytes`, to give `out`. A complete file (`log` given: the
    /// file ends where it should) is read and decoded by libjpeg, which keeps its warnings in
    /// `log`; a truncated one by zune-jpeg.
    pub(in crate::io) fn new(
        bytes: &'a [u8],
        log: Option<&'a LibjpegLog>,
        out: JpegOut,
    ) -> ImageResult<Self> {
        if let Some(log) = log {
            let header = LibjpegHeader::read(bytes).map_err(libjpeg_error)?;
            let (dimensions, components) = (header.size, header.components);
            log.extend(header.warnings.clone());
            return Ok(Self { source: Source::Libjpeg { bytes, header, log }, dimensions, out, components });
        }
        let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options(zune(out)));
        decoder.decode_headers().map_err(decoding)?;
        let (width, height) = decoder.dimensions().unwrap_or_default();
        let components = decoder.info().map_or(3, |i| usize::from(i.components));
        Ok(Self {
            source: Source::Zune(Box::new(decoder)),
            dimensions: (u32::try_from(width).unwrap_or(0), u32::try_from(height).unwrap_or(0)),
            out,
            components,
        })
    }

    /// The EXIF block the header holds.
    fn exif(&self) -> Option<&[u8]> {
        match &self.source {
            Source::Libjpeg { header, .. } => header.exif.as_deref(),
            Source::Zune(decoder) => decoder.exif().map(Vec::as_slice),
        }
    }
}

/// A zune-jpeg error as `image` reports a JPEG's decoding error.
fn decoding(e: zune_jpeg::errors::DecodeErrors) -> ImageError {
    ImageError::Decoding(DecodingError::new(ImageFormatHint::Exact(ImageFormat::Jpeg), e))
}

/// A libjpeg error as `image` reports a JPEG's decoding error.
fn libjpeg_error(e: impl std::fmt::Display) -> ImageError {
    decoding(zune_jpeg::errors::DecodeErrors::Format(format!("libjpeg: {e}")))
}

impl ImageDecoder for LibjpegDecoder<'_> {
    fn dimensions(&self) -> (u32, u32) {
        self.dimensions
    }

    fn color_type(&self) -> ColorType {
        match self.out {
            JpegOut::Luma => ColorType::L8,
            JpegOut::Rgb => ColorType::Rgb8,
        }
    }

    fn original_color_type(&self) -> ExtendedColorType {
        // A YCbCr or RGB JPEG, which `image` reads as RGB; a gray one as gray.
        if self.components == 1 { ExtendedColorType::L8 } else { ExtendedColorType::Rgb8 }
    }

    fn icc_profile(&mut self) -> ImageResult<Option<Vec<u8>>> {
        Ok(match &self.source {
            Source::Libjpeg { header, .. } => header.icc.clone(),
            Source::Zune(decoder) => decoder.icc_profile(),
        })
    }

    fn exif_metadata(&mut self) -> ImageResult<Option<Vec<u8>>> {
        Ok(self.exif().map(<[u8]>::to_vec))
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        Ok(self.exif().and_then(Orientation::from_exif_chunk).unwrap_or(Orientation::NoTransforms))
    }

    fn read_image(self, buf: &mut [u8]) -> ImageResult<()> {
        let samples = if self.out == JpegOut::Rgb { 3 } else { 1 };
        let expected = self.dimensions.0 as usize * self.dimensions.1 as usize * samples;
        if buf.len() != expected {
            return Err(decoding(zune_jpeg::errors::DecodeErrors::FormatStatic(
                "the pixels' size does not match the header's",
            )));
        }
        match self.source {
            Source::Zune(mut decoder) => decoder.decode_into(buf).map_err(decoding),
            Source::Libjpeg { bytes, log, .. } => {
                let mut rows = LibjpegRows::start(bytes, self.dimensions, self.out).map_err(libjpeg_error)?;
                rows.read(buf).map_err(libjpeg_error)?;
                log.extend(rows.finish().map_err(libjpeg_error)?);
                Ok(())
            }
        }
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}

/// What the stream's tests compare with: a JPEG's luma decoded whole by libjpeg.
#[cfg(test)]
pub(in crate::io) mod tests_support {
    /// The gray plane libjpeg decodes from `jpeg`.
    pub(in crate::io) fn libjpeg_plane(jpeg: &[u8], (width, height): (u32, u32)) -> Vec<u8> {
        libjpeg_pixels(jpeg, (width, height), super::JpegOut::Luma)
    }

    /// The gray plane, or the RGB pixels, libjpeg decodes from `jpeg`.
    pub(in crate::io) fn libjpeg_pixels(
        jpeg: &[u8],
        (width, height): (u32, u32),
        out: super::JpegOut,
    ) -> Vec<u8> {
        let samples = if out == super::JpegOut::Rgb { 3 } else { 1 };
        let mut plane = vec![0u8; width as usize * height as usize * samples];
        let mut luma = super::LibjpegRows::start(jpeg, (width, height), out).expect("start");
        luma.read(&mut plane).expect("rows");
        luma.finish().expect("finish");
        plane
    }
}
