//! A JPEG's stored luma, and the `image` decoder of every complete JPEG of one or three
//! components: libjpeg-turbo ([`super::libjpeg`]) reads its header and decodes its stored luma or
//! its RGB, the very pixels `OpenCV`'s `imread` gets from the same library, so `bt601` on them is
//! exactly `cvtColor(imread(…))`. Asked for gray output, libjpeg decodes the Y plane and skips the
//! chroma's IDCT, upsampling and colour conversion (what `IMREAD_GRAYSCALE` asks of it). That luma
//! is the encoder's BT.601 luma of the original RGB, within a level or two of `bt601` on the
//! decoded RGB. In a truncated file libjpeg leaves every block past the data gray (128), which
//! tells where the data ended.

use std::sync::{Mutex, PoisonError};

use image::error::{DecodingError, ImageFormatHint};
use image::metadata::Orientation;
use image::{ColorType, ExtendedColorType, ImageDecoder, ImageError, ImageFormat, ImageResult};

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
    /// What a JPEG of `components` components gives: its stored luma, unless it stores none.
    #[must_use]
    pub(crate) fn of_jpeg(components: usize, bytes: &[u8]) -> Self {
        match components {
            1 => Self::Decoded,
            4 => Self::Fallback("the JPEG stores CMYK or YCCK, not luma"),
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
                 ran on either backend"
                    .to_owned()
            }
            Self::Fallback(why) => format!("stored luma: {why}, so its colour was converted with bt601"),
        }
    }
}

/// Whether the JPEG in `bytes` stores YCbCr: three components that libjpeg takes as YCbCr by its
/// own rule (a JFIF marker first, then Adobe's transform flag, then the components' ids), as
/// `OpenCV` and Pillow decode them. Only there is the stored luma the gray result.
#[must_use]
pub(crate) fn stores_ycbcr(bytes: &[u8]) -> bool {
    LibjpegHeader::read(bytes).is_ok_and(|h| h.components == 3 && h.ycbcr)
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

/// The decoder of a JPEG's stored luma as 8-bit gray, or its colour as 8-bit RGB, over the
/// file's bytes (borrowed, not copied as `image`'s decoder copies them): libjpeg's header and
/// pixels, its warnings kept in a [`LibjpegLog`]; orientation and metadata from that header, as
/// `image` reads them.
pub(crate) struct LibjpegDecoder<'a> {
    bytes: &'a [u8],
    header: LibjpegHeader,
    log: &'a LibjpegLog,
    out: JpegOut,
}

impl<'a> LibjpegDecoder<'a> {
    /// Reads the header of the JPEG in `bytes`, to give `out`; libjpeg keeps its warnings, of the
    /// header now and of the pixels when they are read, in `log`.
    pub(in crate::io) fn new(bytes: &'a [u8], log: &'a LibjpegLog, out: JpegOut) -> ImageResult<Self> {
        let header = LibjpegHeader::read(bytes).map_err(libjpeg_error)?;
        log.extend(header.warnings.clone());
        Ok(Self { bytes, header, log, out })
    }

    /// The file's pixel density, as its header gives it (`LibjpegHeader::density`).
    pub(in crate::io) fn density(&self) -> Option<crate::io::Density> {
        self.header.density
    }
}

/// A libjpeg error as `image` reports a JPEG's decoding error.
fn libjpeg_error(e: impl std::fmt::Display) -> ImageError {
    ImageError::Decoding(DecodingError::new(
        ImageFormatHint::Exact(ImageFormat::Jpeg),
        format!("libjpeg: {e}"),
    ))
}

impl ImageDecoder for LibjpegDecoder<'_> {
    fn dimensions(&self) -> (u32, u32) {
        self.header.size
    }

    fn color_type(&self) -> ColorType {
        if self.out == JpegOut::Luma { ColorType::L8 } else { ColorType::Rgb8 }
    }

    fn original_color_type(&self) -> ExtendedColorType {
        // A YCbCr or RGB JPEG, which `image` reads as RGB; a gray one as gray.
        match self.header.components {
            1 => ExtendedColorType::L8,
            4 => ExtendedColorType::Cmyk8,
            _ => ExtendedColorType::Rgb8,
        }
    }

    fn icc_profile(&mut self) -> ImageResult<Option<Vec<u8>>> {
        Ok(self.header.icc.clone())
    }

    fn exif_metadata(&mut self) -> ImageResult<Option<Vec<u8>>> {
        Ok(self.header.exif.clone())
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        let exif = self.header.exif.as_deref();
        Ok(exif.and_then(Orientation::from_exif_chunk).unwrap_or(Orientation::NoTransforms))
    }

    fn read_image(self, buf: &mut [u8]) -> ImageResult<()> {
        let (width, height) = self.header.size;
        if buf.len() != width as usize * height as usize * self.out.samples() {
            return Err(libjpeg_error("the pixels' size does not match the header's"));
        }
        let mut rows = LibjpegRows::start(self.bytes, self.header.size, self.out).map_err(libjpeg_error)?;
        rows.read(buf).map_err(libjpeg_error)?;
        self.log.extend(rows.finish().map_err(libjpeg_error)?);
        Ok(())
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}

/// What the stream's tests compare with: a JPEG's luma or RGB decoded whole by libjpeg.
#[cfg(test)]
pub(in crate::io) mod tests_support {
    /// A colour JPEG of `width` x `height` at `quality`, each pixel's RGB from `pixel(x, y)`.
    pub(in crate::io) fn colour_jpeg(
        (width, height): (u32, u32),
        quality: u8,
        pixel: impl Fn(u32, u32) -> [u8; 3],
    ) -> Vec<u8> {
        let colour = image::RgbImage::from_fn(width, height, |x, y| image::Rgb(pixel(x, y)));
        let mut jpeg = Vec::new();
        let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, quality);
        encoder.encode_image(&colour).expect("jpeg");
        jpeg
    }

    /// The gray plane, or the RGB pixels, libjpeg decodes from `jpeg`.
    pub(in crate::io) fn libjpeg_pixels(
        jpeg: &[u8],
        (width, height): (u32, u32),
        out: super::JpegOut,
    ) -> Vec<u8> {
        let mut plane = vec![0u8; width as usize * height as usize * out.samples()];
        let mut luma = super::LibjpegRows::start(jpeg, (width, height), out).expect("start");
        luma.read(&mut plane).expect("rows");
        luma.finish().expect("finish");
        plane
    }
}
