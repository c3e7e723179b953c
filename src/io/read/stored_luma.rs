//! A complete YCbCr JPEG decoded by libjpeg-turbo (through the `mozjpeg` crate): its RGB, the
//! very pixels `OpenCV`'s `imread` gets from the same library, so `bt601` on them is exactly
//! `cvtColor(imread(…))`; or its stored luma alone: asked for gray output, libjpeg decodes the Y
//! plane and skips the chroma's IDCT, upsampling and colour conversion (what `IMREAD_GRAYSCALE`
//! asks of it). That luma is the encoder's BT.601 luma of the original RGB, within a level or two
//! of `bt601` on the decoded RGB. A truncated file is decoded by zune-jpeg instead, which fills
//! the missing rows with the gray that tells where the data ended (libjpeg repeats the last
//! block's level).

use image::error::{DecodingError, ImageFormatHint};
use image::metadata::Orientation;
use image::{ColorType, ExtendedColorType, ImageDecoder, ImageError, ImageFormat, ImageResult};
use zune_core::bytestream::ZCursor;
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;

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

/// Whether the JPEG in `bytes` stores YCbCr: three components that are neither RGB (Adobe's
/// transform 0, or components named R, G, B) nor CMYK/YCCK. Only there is the stored luma the
/// gray result, and only there does libjpeg decode the colour.
#[must_use]
pub(crate) fn stores_ycbcr(bytes: &[u8]) -> bool {
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options(ColorSpace::RGB));
    decoder.decode_headers().is_ok()
        && decoder.input_colorspace() == Some(ColorSpace::YCbCr)
        && decoder.info().is_some_and(|i| i.components == 3)
}

/// What a [`LibjpegDecoder`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) enum JpegOut {
    /// The stored luma alone, as 8-bit gray.
    Luma,
    /// The colour, as 8-bit RGB.
    Rgb,
}

impl JpegOut {
    fn zune(self) -> ColorSpace {
        match self {
            Self::Luma => ColorSpace::Luma,
            Self::Rgb => ColorSpace::RGB,
        }
    }
}

/// A decoder giving a YCbCr JPEG's stored luma as 8-bit gray, or its colour as 8-bit RGB: one
/// zune-jpeg decoder over the file's bytes (borrowed, not copied as `image`'s decoder copies
/// them), its header read once; orientation and metadata from that header, as `image` reads
/// them; the pixels by libjpeg where the file is complete.
pub(crate) struct LibjpegDecoder<'a> {
    decoder: zune_jpeg::JpegDecoder<ZCursor<&'a [u8]>>,
    dimensions: (u32, u32),
    out: JpegOut,
    /// The file, for libjpeg; `None` when zune-jpeg decodes the pixels (a truncated file).
    whole: Option<&'a [u8]>,
}

impl<'a> LibjpegDecoder<'a> {
    /// Reads the header of the JPEG in `bytes`, to give `out`; `complete`: the file ends where it
    /// should, so libjpeg decodes it.
    pub(in crate::io) fn new(bytes: &'a [u8], complete: bool, out: JpegOut) -> ImageResult<Self> {
        let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options(out.zune()));
        decoder.decode_headers().map_err(decoding)?;
        let (width, height) = decoder.dimensions().unwrap_or_default();
        Ok(Self {
            decoder,
            dimensions: (u32::try_from(width).unwrap_or(0), u32::try_from(height).unwrap_or(0)),
            out,
            whole: complete.then_some(bytes),
        })
    }
}

/// libjpeg-turbo's decoder (the `mozjpeg` crate) giving a complete JPEG's stored luma or its
/// RGB, row by row. Each step's error comes back as a message: `mozjpeg` leaves libjpeg's errors
/// by unwinding (without the panic hook, a `String` payload), caught here around every call into
/// it.
pub(in crate::io) struct LibjpegRows<'a> {
    started: mozjpeg::decompress::DecompressStarted<&'a [u8]>,
}

/// Runs one call into libjpeg, its error or unwinding as a message.
fn libjpeg<T>(step: impl FnOnce() -> std::io::Result<T>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)) {
        Ok(done) => done.map_err(|e| e.to_string()),
        Err(payload) => Err(payload.downcast::<String>().map_or_else(
            |_| "it failed on this file".to_owned(),
            |message| message.strip_prefix("libjpeg fatal error: ").unwrap_or(&message).to_owned(),
        )),
    }
}

impl<'a> LibjpegRows<'a> {
    /// Starts decoding the JPEG in `bytes` to `out`, after checking that libjpeg reads the size
    /// the header claims (`width` x `height`).
    pub(in crate::io) fn start(
        bytes: &'a [u8],
        (width, height): (u32, u32),
        out: JpegOut,
    ) -> Result<Self, String> {
        let started = libjpeg(|| {
            let decompress = mozjpeg::Decompress::new_mem(bytes)?;
            match out {
                JpegOut::Luma => decompress.grayscale(),
                JpegOut::Rgb => decompress.rgb(),
            }
        })?;
        if (started.width(), started.height()) != (width as usize, height as usize) {
            return Err(format!(
                "libjpeg reads {}x{}, the header says {width}x{height}",
                started.width(),
                started.height()
            ));
        }
        Ok(Self { started })
    }

    /// Decodes the next rows into `rows` (as many as it holds: `width` samples, or three for
    /// RGB, a row).
    pub(in crate::io) fn read(&mut self, rows: &mut [u8]) -> Result<(), String> {
        let started = &mut self.started;
        libjpeg(|| started.read_scanlines_into(rows).map(|_| ()))
    }

    /// Ends the decode (libjpeg reads to the end-of-image marker).
    pub(in crate::io) fn finish(self) -> Result<(), String> {
        let started = self.started;
        libjpeg(|| started.finish())
    }
}

/// A zune-jpeg error as `image` reports a JPEG's decoding error.
fn decoding(e: zune_jpeg::errors::DecodeErrors) -> ImageError {
    ImageError::Decoding(DecodingError::new(ImageFormatHint::Exact(ImageFormat::Jpeg), e))
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
        // A YCbCr JPEG, which `image` reads as RGB.
        ExtendedColorType::Rgb8
    }

    fn icc_profile(&mut self) -> ImageResult<Option<Vec<u8>>> {
        Ok(self.decoder.icc_profile())
    }

    fn exif_metadata(&mut self) -> ImageResult<Option<Vec<u8>>> {
        Ok(self.decoder.exif().cloned())
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        Ok(self
            .decoder
            .exif()
            .and_then(|exif| Orientation::from_exif_chunk(exif))
            .unwrap_or(Orientation::NoTransforms))
    }

    fn read_image(mut self, buf: &mut [u8]) -> ImageResult<()> {
        if self.decoder.output_buffer_size() != Some(buf.len()) {
            return Err(decoding(zune_jpeg::errors::DecodeErrors::FormatStatic(
                "the pixels' size does not match the header's",
            )));
        }
        let Some(bytes) = self.whole else { return self.decoder.decode_into(buf).map_err(decoding) };
        let libjpeg_error =
            |e: String| decoding(zune_jpeg::errors::DecodeErrors::Format(format!("libjpeg: {e}")));
        let mut rows = LibjpegRows::start(bytes, self.dimensions, self.out).map_err(libjpeg_error)?;
        rows.read(buf).map_err(libjpeg_error)?;
        rows.finish().map_err(libjpeg_error)
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
