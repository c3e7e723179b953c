//! TIFF variants the `image` crate refuses or misreads but the `tiff` crate decodes, read
//! through the `tiff` crate: gray with an extra sample (8, 16 or 32-bit floating point),
//! floating-point gray, palette images (their `PhotometricInterpretation` presented as
//! black-is-zero, so that the indices come out as gray, then looked up in the `ColorMap`), and
//! CMYK, turned into RGB by libtiff's integer formula (the `image` crate's floating-point one is a
//! level off in one pixel of seven).
//!
//! Floating-point samples become 16-bit as the `image` crate maps them (graylab converts
//! floating-point RGB the same way): round(clamp(v, 0, 1) * 65535).

use std::io::{Read, Seek, SeekFrom};

use image::error::{DecodingError, ImageFormatHint, LimitError, LimitErrorKind};
use image::metadata::Orientation;
use image::{ColorType, ExtendedColorType, ImageDecoder, ImageError, ImageFormat, ImageResult};
use tiff::decoder::{Decoder, DecodingResult};
use tiff::tags::Tag;

use super::straight::{straight_f32, unpremultiply};
use crate::io::read::tiff_header::{Alpha, Patch};

/// What a directly read TIFF holds.
enum Content {
    /// Gray, with its extra sample kept as alpha when it is one.
    Gray {
        /// What the extra sample is (`Alpha::None` also when there is none).
        alpha: Alpha,
        /// Samples per pixel in the file (1 or 2).
        samples: usize,
        /// 0 is white: the gray is inverted.
        white_is_zero: bool,
    },
    /// Palette indices of `bits` bits; the colour map as 8-bit RGB.
    Palette {
        /// Bits per index.
        bits: u8,
        /// One colour per index, all `1 << bits` of them.
        colours: Vec<[u8; 3]>,
    },
    /// Gray of 2 or 4-bit levels, packed as palette indices are; each level's 8-bit gray.
    Levels {
        /// Bits per level.
        bits: u8,
        /// The 8-bit gray of each level, all `1 << bits` of them.
        grays: Vec<u8>,
    },
    /// Four samples of ink, 8 or 16-bit, given as RGB ([`cmyk_to_rgb`]).
    Cmyk,
}

/// A TIFF read through the `tiff` crate, as an `image` decoder.
pub(super) struct DirectDecoder<R: Read + Seek> {
    inner: Decoder<Patched<R>>,
    content: Content,
    dimensions: (u32, u32),
    color: ColorType,
}

impl<R: Read + Seek> DirectDecoder<R> {
    /// Gray with up to one extra sample; `white_is_zero` gives the tag to present as black-is-zero.
    pub(super) fn gray(reader: R, alpha: Alpha, white_is_zero: Option<Patch>) -> ImageResult<Self> {
        let mut inner = Decoder::new(Patched::new(reader, white_is_zero)).map_err(tiff_error)?;
        let dimensions = inner.dimensions().map_err(tiff_error)?;
        let (bits, samples) = match inner.colortype().map_err(tiff_error)? {
            tiff::ColorType::Gray(bits) => (bits, 1),
            tiff::ColorType::Multiband { bit_depth, num_samples: 2 } => (bit_depth, 2),
            other => return Err(unsupported(&format!("gray data of colour type {other:?}"))),
        };
        let with_alpha = samples == 2 && alpha != Alpha::None;
        let color = match (bits, with_alpha) {
            (8, false) => ColorType::L8,
            (8, true) => ColorType::La8,
            (16 | 32, false) => ColorType::L16,
            (16 | 32, true) => ColorType::La16,
            _ => return Err(unsupported(&format!("gray data of {bits}-bit samples"))),
        };
        let content = Content::Gray { alpha, samples, white_is_zero: white_is_zero.is_some() };
        Ok(Self { inner, content, dimensions, color })
    }

    /// Palette indices of 1 to 8 bits, presented as gray through `patch`.
    pub(super) fn palette(reader: R, patch: Patch) -> ImageResult<Self> {
        let mut inner = Decoder::new(Patched::new(reader, Some(patch))).map_err(tiff_error)?;
        let dimensions = inner.dimensions().map_err(tiff_error)?;
        let bits = match inner.colortype().map_err(tiff_error)? {
            tiff::ColorType::Gray(bits @ (1 | 2 | 4 | 8)) => bits,
            other => return Err(unsupported(&format!("palette data of colour type {other:?}"))),
        };
        let map = inner.get_tag_u16_vec(Tag::ColorMap).map_err(tiff_error)?;
        let entries = 1usize << bits;
        if map.len() != 3 * entries {
            return Err(decoding(format!(
                "its colour map (ColorMap) holds {} values where {}-bit indices need {}",
                map.len(),
                bits,
                3 * entries
            )));
        }
        // Colour maps of 16-bit values are cut to 8 bits; some writers store 8-bit values, which
        // libtiff takes as they are when none is above 255.
        let shift = if map.iter().all(|&v| v <= 255) { 0 } else { 8 };
        let channel = |c: usize, i: usize| map.get(c * entries + i).map_or(0, |&v| (v >> shift) as u8);
        let colours = (0..entries).map(|i| [channel(0, i), channel(1, i), channel(2, i)]).collect();
        Ok(Self { inner, content: Content::Palette { bits, colours }, dimensions, color: ColorType::Rgb8 })
    }

    /// Gray of 2 or 4-bit levels, presented as black-is-zero through `patch` (`white_is_zero`:
    /// the file's 0 is white), each level made 8-bit as libtiff makes it (level x 255 / top
    /// level, truncated: 4 bits 0, 17, 34 ... 255), as libtiff's `tiff2rgba` and Pillow read it
    /// (`OpenCV` 5.1 refuses it).
    pub(super) fn levels(reader: R, patch: Patch, white_is_zero: bool) -> ImageResult<Self> {
        let mut inner = Decoder::new(Patched::new(reader, Some(patch))).map_err(tiff_error)?;
        let dimensions = inner.dimensions().map_err(tiff_error)?;
        let bits = match inner.colortype().map_err(tiff_error)? {
            tiff::ColorType::Gray(bits @ (2 | 4)) => bits,
            other => return Err(unsupported(&format!("gray data of colour type {other:?}"))),
        };
        let top = (1u32 << bits) - 1;
        let gray = |level: u32| ((if white_is_zero { top - level } else { level }) * 255 / top) as u8;
        let content = Content::Levels { bits, grays: (0..=top).map(gray).collect() };
        Ok(Self { inner, content, dimensions, color: ColorType::L8 })
    }

    /// CMYK of four 8 or 16-bit samples, given as RGB of the same depth.
    pub(super) fn cmyk(reader: R) -> ImageResult<Self> {
        let mut inner = Decoder::new(Patched::new(reader, None)).map_err(tiff_error)?;
        let dimensions = inner.dimensions().map_err(tiff_error)?;
        let color = match inner.colortype().map_err(tiff_error)? {
            tiff::ColorType::CMYK(8) => ColorType::Rgb8,
            tiff::ColorType::CMYK(16) => ColorType::Rgb16,
            other => return Err(unsupported(&format!("CMYK data of colour type {other:?}"))),
        };
        Ok(Self { inner, content: Content::Cmyk, dimensions, color })
    }

    /// The decoder, boxed, with the `tiff` crate's limits set from the `image` crate's, and the
    /// bytes the `tiff` crate decodes into before they are converted.
    pub(super) fn with_limits<'a>(mut self, limits: &image::Limits) -> (Box<dyn ImageDecoder + 'a>, u64)
    where
        R: 'a,
    {
        let (tiff_limits, _) = tiff_limits(limits);
        self.inner = self.inner.with_limits(tiff_limits);
        let scratch_bytes = self.inner.image_buffer_layout().map_or(0, |l| l.complete_len as u64);
        (Box::new(self), scratch_bytes)
    }
}

impl<R: Read + Seek> ImageDecoder for DirectDecoder<R> {
    fn dimensions(&self) -> (u32, u32) {
        self.dimensions
    }

    fn color_type(&self) -> ColorType {
        self.color
    }

    fn original_color_type(&self) -> ExtendedColorType {
        match (&self.content, self.color) {
            (Content::Cmyk, ColorType::Rgb8) => ExtendedColorType::Cmyk8,
            (Content::Cmyk, _) => ExtendedColorType::Cmyk16,
            (Content::Levels { bits: 2, .. }, _) => ExtendedColorType::L2,
            (Content::Levels { .. }, _) => ExtendedColorType::L4,
            _ => self.color.into(),
        }
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        Ok(orientation(&mut self.inner))
    }

    fn read_image(mut self, buf: &mut [u8]) -> ImageResult<()> {
        let mut decoded = DecodingResult::U8(Vec::new());
        let layout = self.inner.read_image_to_buffer(&mut decoded).map_err(tiff_error)?;
        if decoded.as_buffer(0).as_bytes().len() < layout.complete_len {
            return Err(ImageError::Limits(LimitError::from_kind(LimitErrorKind::InsufficientMemory)));
        }
        let pixels = self.dimensions.0 as usize * self.dimensions.1 as usize;
        match self.content {
            Content::Gray { alpha, samples, white_is_zero } => {
                let at =
                    |i: usize, s: usize| if layout.planes > 1 { s * pixels + i } else { i * samples + s };
                let keep_alpha = samples == 2 && alpha != Alpha::None;
                let out_samples = 1 + usize::from(keep_alpha);
                match decoded {
                    DecodingResult::U8(v) => {
                        for (i, out) in buf.chunks_exact_mut(out_samples).take(pixels).enumerate() {
                            let g = v.get(at(i, 0)).copied().unwrap_or(0);
                            out[0] = if white_is_zero { u8::MAX - g } else { g };
                            if keep_alpha {
                                out[1] = v.get(at(i, 1)).copied().unwrap_or(0);
                            }
                        }
                    }
                    DecodingResult::U16(v) => {
                        for (i, out) in buf.chunks_exact_mut(2 * out_samples).take(pixels).enumerate() {
                            let g = v.get(at(i, 0)).copied().unwrap_or(0);
                            out[..2].copy_from_slice(
                                &(if white_is_zero { u16::MAX - g } else { g }).to_ne_bytes(),
                            );
                            if keep_alpha {
                                out[2..]
                                    .copy_from_slice(&v.get(at(i, 1)).copied().unwrap_or(0).to_ne_bytes());
                            }
                        }
                    }
                    DecodingResult::F32(v) => {
                        for (i, out) in buf.chunks_exact_mut(2 * out_samples).take(pixels).enumerate() {
                            let mut g = v.get(at(i, 0)).copied().unwrap_or(0.0);
                            if white_is_zero {
                                g = 1.0 - g;
                            }
                            let a = v.get(at(i, 1)).copied().unwrap_or(0.0);
                            if keep_alpha && alpha == Alpha::Premultiplied {
                                g = straight_f32(g, a);
                            }
                            out[..2].copy_from_slice(&float_to_u16(g).to_ne_bytes());
                            if keep_alpha {
                                out[2..].copy_from_slice(&float_to_u16(a).to_ne_bytes());
                            }
                        }
                        return Ok(());
                    }
                    _ => return Err(unsupported("gray data of this sample type")),
                }
                if keep_alpha && alpha == Alpha::Premultiplied {
                    unpremultiply(self.color, buf);
                }
            }
            Content::Cmyk => cmyk_into(&decoded, (pixels, layout.planes), buf)?,
            Content::Palette { bits, colours } => {
                let DecodingResult::U8(v) = decoded else {
                    return Err(unsupported("palette data of this sample type"));
                };
                unpack(&v, (self.dimensions.0 as usize, bits, 3), buf, |index, rgb| {
                    rgb.copy_from_slice(colours.get(index).unwrap_or(&[0; 3]));
                });
            }
            Content::Levels { bits, grays } => {
                let DecodingResult::U8(v) = decoded else {
                    return Err(unsupported("gray data of this sample type"));
                };
                unpack(&v, (self.dimensions.0 as usize, bits, 1), buf, |level, gray| {
                    gray[0] = grays.get(level).copied().unwrap_or(0);
                });
            }
        }
        Ok(())
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}

/// Hands each pixel's index (or level) of `bits` bits, from rows of them packed high bits first
/// in `packed`, `width` a row, to `put` with its output pixel: `channels` bytes of `buf`.
fn unpack(
    packed: &[u8],
    (width, bits, channels): (usize, u8, usize),
    buf: &mut [u8],
    put: impl Fn(usize, &mut [u8]),
) {
    let row_bytes = (width * usize::from(bits)).div_ceil(8);
    let mask = (1u16 << bits) - 1;
    for (row, out) in packed.chunks(row_bytes.max(1)).zip(buf.chunks_exact_mut(channels * width)) {
        for (x, pixel) in out.chunks_exact_mut(channels).enumerate() {
            let bit = x * usize::from(bits);
            let byte = row.get(bit / 8).copied().unwrap_or(0);
            let shift = 8 - usize::from(bits) - bit % 8;
            put(usize::from((u16::from(byte) >> shift) & mask), pixel);
        }
    }
}

/// The `tiff` crate's limits set from the `image` crate's allocation limit, and that limit in
/// bytes: every buffer the `tiff` crate makes at most what `image` would allow.
pub(super) fn tiff_limits(limits: &image::Limits) -> (tiff::decoder::Limits, usize) {
    let max = usize::try_from(limits.max_alloc.unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
    let mut tiff_limits = tiff::decoder::Limits::default();
    tiff_limits.decoding_buffer_size = max;
    tiff_limits.ifd_value_size = max;
    tiff_limits.intermediate_buffer_size = max;
    (tiff_limits, max)
}

/// Each pixel of `decoded` (CMYK, its samples interleaved, or in `planes` > 1 planes of
/// `pixels` each) into `buf` as RGB of the same depth ([`cmyk_to_rgb`]).
fn cmyk_into(decoded: &DecodingResult, (pixels, planes): (usize, usize), buf: &mut [u8]) -> ImageResult<()> {
    let at = |i: usize, s: usize| if planes > 1 { s * pixels + i } else { i * 4 + s };
    match decoded {
        DecodingResult::U8(v) => {
            for (i, rgb) in buf.chunks_exact_mut(3).take(pixels).enumerate() {
                let ink = |s: usize| u32::from(v.get(at(i, s)).copied().unwrap_or(0));
                for (s, out) in rgb.iter_mut().enumerate() {
                    *out = cmyk_to_rgb(ink(s), ink(3), 255) as u8;
                }
            }
        }
        DecodingResult::U16(v) => {
            for (i, rgb) in buf.chunks_exact_mut(6).take(pixels).enumerate() {
                let ink = |s: usize| u32::from(v.get(at(i, s)).copied().unwrap_or(0));
                for (s, out) in rgb.chunks_exact_mut(2).enumerate() {
                    out.copy_from_slice(&(cmyk_to_rgb(ink(s), ink(3), 65535) as u16).to_ne_bytes());
                }
            }
        }
        _ => return Err(unsupported("CMYK data of this sample type")),
    }
    Ok(())
}

/// One channel of RGB from its ink and the black (`max` the samples' largest value), as
/// libtiff's `TIFFReadRGBAImage` gives it (and with it `OpenCV`'s `imread`):
/// `(max - ink) * (max - k) / max`, the division truncated.
fn cmyk_to_rgb(ink: u32, k: u32, max: u32) -> u32 {
    // At most max * max / max: 65535 * 65535 fits in 32 bits.
    (max - ink.min(max)) * (max - k.min(max)) / max
}

/// A floating-point sample as 16 bits, as the `image` crate converts `Rgb32F` to `Rgb16`.
pub(super) fn float_to_u16(v: f32) -> u16 {
    // NaN stays NaN through clamp and round, and becomes 0 in the cast, as in `image`.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "the value is within 0..=65535 or NaN"
    )]
    let out = (v.clamp(0.0, 1.0) * f32::from(u16::MAX)).round() as u16;
    out
}

/// A reader that shows `patch` over the bytes it covers (the file is not changed).
pub(super) struct Patched<R> {
    inner: R,
    position: u64,
    patch: Option<Patch>,
}

impl<R> Patched<R> {
    pub(super) fn new(inner: R, patch: Option<Patch>) -> Self {
        Self { inner, position: 0, patch }
    }
}

impl<R: Read> Read for Patched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(patch) = self.patch {
            for (k, &byte) in patch.bytes.iter().take(usize::from(patch.len)).enumerate() {
                let at = patch.at + k as u64;
                if let Some(i) = at.checked_sub(self.position).and_then(|i| usize::try_from(i).ok())
                    && let Some(slot) = buf.get_mut(..n).and_then(|b| b.get_mut(i))
                {
                    *slot = byte;
                }
            }
        }
        self.position += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for Patched<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.position = self.inner.seek(to)?;
        Ok(self.position)
    }
}

/// The orientation tag of a TIFF the `tiff` crate reads (none when it is absent or invalid).
pub(super) fn orientation<R: Read + Seek>(inner: &mut Decoder<R>) -> Orientation {
    inner
        .find_tag_unsigned::<u16>(Tag::Orientation)
        .ok()
        .flatten()
        .and_then(|v| Orientation::from_exif(u8::try_from(v).ok()?))
        .unwrap_or(Orientation::NoTransforms)
}

/// The `tiff` crate's error as the `image` crate's (as `image` maps it).
pub(super) fn tiff_error(e: tiff::TiffError) -> ImageError {
    match e {
        tiff::TiffError::IoError(e) => ImageError::IoError(e),
        tiff::TiffError::LimitsExceeded => {
            ImageError::Limits(LimitError::from_kind(LimitErrorKind::InsufficientMemory))
        }
        other => ImageError::Decoding(DecodingError::new(ImageFormatHint::Exact(ImageFormat::Tiff), other)),
    }
}

/// A decoding error in graylab's words.
pub(super) fn decoding(words: String) -> ImageError {
    ImageError::Decoding(DecodingError::new(ImageFormatHint::Exact(ImageFormat::Tiff), words))
}

fn unsupported(what: &str) -> ImageError {
    decoding(format!("graylab does not read {what}"))
}

/// The bytes of piece `n` (a strip or a tile, counted from 0) at `offsets` and `counts` in
/// `decoder`'s file, as many as the file holds (fewer when it ends inside the piece).
pub(super) fn read_piece<R: Read + Seek>(
    decoder: &mut Decoder<R>,
    n: usize,
    (offsets, counts): (&[u64], &[u64]),
) -> ImageResult<(Vec<u8>, u64)> {
    let (Some(&offset), Some(&count)) = (offsets.get(n), counts.get(n)) else {
        return Err(decoding(format!("piece {} of its image data is missing", n + 1)));
    };
    let reader = decoder.inner();
    reader.seek(SeekFrom::Start(offset))?;
    let mut data = Vec::new();
    reader.take(count).read_to_end(&mut data)?;
    Ok((data, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmyk_turns_into_rgb_as_libtiff_turns_it() {
        // 255 * (1 - 51 / 255) in f32 (the `image` crate's way) is 203.99999, cut to 203.
        assert_eq!(cmyk_to_rgb(0, 51, 255), 204);
        assert_eq!(
            [cmyk_to_rgb(0, 0, 255), cmyk_to_rgb(255, 0, 255), cmyk_to_rgb(1, 128, 255)],
            [255, 0, 126]
        );
        assert_eq!(cmyk_to_rgb(0, 13107, 65535), 52428);
        let mut rgb = [0u8; 6];
        let planes = DecodingResult::U8(vec![0, 10, 1, 20, 2, 30, 51, 40]);
        cmyk_into(&planes, (2, 4), &mut rgb).expect("8-bit");
        assert_eq!(rgb, [204, 203, 202, 206, 198, 189]);
    }
}
