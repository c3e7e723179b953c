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
use crate::io::read::orientation::{place_band, turns};

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

/// Rows as stored that [`LibjpegDecoder::read_oriented`] decodes at a time in a decode: 3 MiB of
/// an 8K photo's RGB, little beside the image, and enough for each band placed on all cores.
pub(in crate::io) const ORIENTED_BAND_ROWS: usize = 128;

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

    /// Bytes of the band [`LibjpegDecoder::read_oriented`] decodes `band_rows` rows as stored
    /// into, beside the image.
    pub(in crate::io) fn band_bytes(&self, band_rows: usize) -> u64 {
        let (width, height) = self.header.size;
        (band_rows.min(height as usize) * width as usize * self.out.samples()) as u64
    }

    /// Decodes the image with `orientation` applied: `band_rows` rows as stored at a time, each
    /// band put where the orientation shows it in the one image as shown
    /// ([`crate::io::read::orientation::place_band`]), so the image as stored is never held whole
    /// beside it. The same pixels as [`ImageDecoder::read_image`] then `apply_orientation`.
    pub(in crate::io) fn read_oriented(
        self,
        orientation: Orientation,
        band_rows: usize,
    ) -> ImageResult<image::DynamicImage> {
        let (width, height) = self.header.size;
        let (w, h, samples) = (width as usize, height as usize, self.out.samples());
        let band_rows = band_rows.clamp(1, h.max(1));
        let mut shown = crate::system::huge_pages::zeroed_buffer::<u8>(w * h * samples);
        let mut band = vec![0u8; band_rows * w * samples];
        let mut rows = LibjpegRows::start(self.bytes, self.header.size, self.out).map_err(libjpeg_error)?;
        for first_row in (0..h).step_by(band_rows) {
            let band = band.get_mut(..band_rows.min(h - first_row) * w * samples).unwrap_or_default();
            rows.read(band).map_err(libjpeg_error)?;
            place_band(band, first_row, (w, h), (samples, orientation), &mut shown, true);
        }
        self.log.extend(rows.finish().map_err(libjpeg_error)?);
        let (shown_w, shown_h) = if turns(orientation) { (height, width) } else { (width, height) };
        let image = if samples == 1 {
            image::GrayImage::from_raw(shown_w, shown_h, shown).map(image::DynamicImage::ImageLuma8)
        } else {
            image::RgbImage::from_raw(shown_w, shown_h, shown).map(image::DynamicImage::ImageRgb8)
        };
        image.ok_or_else(|| libjpeg_error("the pixels' size does not match the header's"))
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

    fn xmp_metadata(&mut self) -> ImageResult<Option<Vec<u8>>> {
        Ok(self.header.xmp.clone())
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

#[cfg(test)]
mod tests {
    use super::tests_support::{colour_jpeg, libjpeg_pixels};
    use super::*;

    #[test]
    fn a_jpeg_turned_band_by_band_is_the_whole_decode_turned_by_image() {
        for (w, h) in [(7u32, 5u32), (1, 9), (9, 1), (37, 300)] {
            let colour = colour_jpeg((w, h), 90, |x, y| [(x * 7) as u8, (y * 3) as u8, (x * y) as u8]);
            let mut gray = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut gray, 90)
                .encode_image(&image::GrayImage::from_fn(w, h, |x, y| image::Luma([(x * 5 + y * 11) as u8])))
                .expect("gray jpeg");
            for (jpeg, out) in [(&colour, JpegOut::Rgb), (&colour, JpegOut::Luma), (&gray, JpegOut::Luma)] {
                let whole = libjpeg_pixels(jpeg, (w, h), out);
                let whole = if out == JpegOut::Luma {
                    image::DynamicImage::ImageLuma8(image::GrayImage::from_raw(w, h, whole).expect("gray"))
                } else {
                    image::DynamicImage::ImageRgb8(image::RgbImage::from_raw(w, h, whole).expect("rgb"))
                };
                // Bands of one row, of a few (the last one short), and of more rows than the image.
                for band_rows in [1, 3, 7, 128, ORIENTED_BAND_ROWS] {
                    for orientation in crate::io::read::orientation::ALL_ORIENTATIONS {
                        let mut theirs = whole.clone();
                        theirs.apply_orientation(orientation);
                        let log = LibjpegLog::default();
                        let decoder = LibjpegDecoder::new(jpeg, &log, out).expect("header");
                        let ours = decoder.read_oriented(orientation, band_rows).expect("decodes");
                        assert_eq!(
                            (ours.color(), ours.width(), ours.height()),
                            (theirs.color(), theirs.width(), theirs.height())
                        );
                        assert!(
                            ours.as_bytes() == theirs.as_bytes(),
                            "{orientation:?} of a {w}x{h} {out:?} in bands of {band_rows} differs from image's"
                        );
                    }
                }
            }
        }
    }
}
