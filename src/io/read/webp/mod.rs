//! Still lossy WebP images decoded by libwebp (`libwebp-sys`, built from its bundled sources):
//! the decoder `OpenCV` reads WebP with, and 2.4x faster than `image-webp` on an 8K photo here
//! (258 against 636 ms), with the same pixels. Lossless and animated files, and any file
//! libwebp refuses, stay with the `image` crate's decoder (`image-webp`), which also reads every
//! file's metadata (size, alpha, ICC profile, EXIF orientation): lossless decodes as fast there
//! (677 against 636 ms), and an animation is read frame by frame.

use std::io::Cursor;
use std::sync::Arc;

use image::codecs::webp::WebPDecoder as ImageWebPDecoder;
use image::metadata::Orientation;
use image::{ColorType, ExtendedColorType, ImageDecoder, ImageResult};

/// A WebP file's decoder: libwebp for a still lossy image, the `image` crate's otherwise.
pub(in crate::io) struct WebPDecoder {
    /// The file, whole.
    bytes: Arc<[u8]>,
    /// The `image` crate's decoder over the same bytes.
    inner: ImageWebPDecoder<Cursor<Arc<[u8]>>>,
    /// Whether libwebp decodes the pixels: a still image whose bitstream is lossy.
    lossy_still: bool,
}

impl WebPDecoder {
    /// The decoder of `bytes`, a WebP file whole, with the `image` crate's `limits`.
    pub(in crate::io) fn new(bytes: Vec<u8>, limits: image::Limits) -> ImageResult<Self> {
        let bytes: Arc<[u8]> = bytes.into();
        let mut inner = ImageWebPDecoder::new(Cursor::new(Arc::clone(&bytes)))?;
        inner.set_limits(limits)?;
        let lossy_still = features(&bytes).is_some_and(|f| f.format == LOSSY && f.has_animation == 0);
        Ok(Self { bytes, inner, lossy_still })
    }
}

/// Whether a WebP file's first bytes (`head`) say it is a simple lossless file (a `VP8L` chunk
/// first): left to the `image` crate's decoder, which reads it from the file as it decodes,
/// where [`WebPDecoder`] holds the file whole (8K: a 255 MB peak against 238 MB).
pub(in crate::io) fn simple_lossless(head: &[u8]) -> bool {
    head.get(12..16) == Some(b"VP8L".as_slice())
}

/// `WebPBitstreamFeatures::format` of a lossy bitstream.
const LOSSY: i32 = 1;

/// What libwebp reads of `bytes`' headers; `None` where it cannot read them.
fn features(bytes: &[u8]) -> Option<libwebp_sys::WebPBitstreamFeatures> {
    let mut features = std::mem::MaybeUninit::<libwebp_sys::WebPBitstreamFeatures>::zeroed();
    // SAFETY: libwebp reads at most `bytes.len()` bytes from `bytes` and writes only `features`,
    // a struct of integers for which all zeros is a valid value.
    let status = unsafe { libwebp_sys::WebPGetFeatures(bytes.as_ptr(), bytes.len(), features.as_mut_ptr()) };
    // SAFETY: zeroed, then perhaps filled in by libwebp: initialised either way.
    (status == libwebp_sys::VP8StatusCode::VP8_STATUS_OK).then(|| unsafe { features.assume_init() })
}

/// Decodes the WebP file `bytes` with libwebp into `buf`: `width` x `height` pixels of RGB, or
/// RGBA (straight alpha) with `alpha`, rows packed. `None` where libwebp refuses the file, or
/// `buf` is not that size.
fn decode_into(bytes: &[u8], (width, height): (u32, u32), alpha: bool, buf: &mut [u8]) -> Option<()> {
    use libwebp_sys::{VP8StatusCode, WEBP_CSP_MODE, WebPDecode, WebPDecoderConfig};
    let stride = usize::try_from(width).ok()?.checked_mul(if alpha { 4 } else { 3 })?;
    if buf.len() != stride.checked_mul(usize::try_from(height).ok()?)? {
        return None;
    }
    let mut config = WebPDecoderConfig::new().ok()?;
    config.output.colorspace = if alpha { WEBP_CSP_MODE::MODE_RGBA } else { WEBP_CSP_MODE::MODE_RGB };
    config.output.is_external_memory = 1;
    // `RGBA`: the union's member for the RGB modes set above.
    config.output.u.RGBA.rgba = buf.as_mut_ptr();
    config.output.u.RGBA.stride = i32::try_from(stride).ok()?;
    config.output.u.RGBA.size = buf.len();
    // SAFETY: libwebp reads at most `bytes.len()` bytes of `bytes`, and writes at most
    // `buf.len()` bytes into `buf` (the external memory above, checked against the image's size
    // before it writes); no pointer outlives the call.
    let status = unsafe { WebPDecode(bytes.as_ptr(), bytes.len(), &raw mut config) };
    if status != VP8StatusCode::VP8_STATUS_OK {
        log::debug!("libwebp refused the file ({status:?}): decoded by image-webp");
        return None;
    }
    (u32::try_from(config.input.width).ok() == Some(width)
        && u32::try_from(config.input.height).ok() == Some(height))
    .then_some(())
}

impl ImageDecoder for WebPDecoder {
    fn dimensions(&self) -> (u32, u32) {
        self.inner.dimensions()
    }

    fn color_type(&self) -> ColorType {
        self.inner.color_type()
    }

    fn original_color_type(&self) -> ExtendedColorType {
        self.inner.original_color_type()
    }

    fn icc_profile(&mut self) -> ImageResult<Option<Vec<u8>>> {
        self.inner.icc_profile()
    }

    fn exif_metadata(&mut self) -> ImageResult<Option<Vec<u8>>> {
        self.inner.exif_metadata()
    }

    fn xmp_metadata(&mut self) -> ImageResult<Option<Vec<u8>>> {
        self.inner.xmp_metadata()
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        self.inner.orientation()
    }

    fn read_image(self, buf: &mut [u8]) -> ImageResult<()> {
        let alpha = self.color_type() == ColorType::Rgba8;
        if self.lossy_still && decode_into(&self.bytes, self.dimensions(), alpha, buf).is_some() {
            return Ok(());
        }
        // Refused by libwebp, or not lossy: the `image` crate decodes it, or says why not.
        self.inner.read_image(buf)
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}

#[cfg(test)]
mod tests;
