//! PNM (PBM, PGM, PPM) headers, and graylab's own decoder for PGM and PPM whose maxval is
//! neither 255 nor 65535: the `image` crate scales those with an `f32` factor, one level off at
//! exact halves; here every sample is rounded half up in integers (`v * 255 / maxval`, or
//! `v * 65535 / maxval` above 255).

use std::io::{BufRead, Seek, SeekFrom};

use image::error::{DecodingError, ImageFormatHint};
use image::{ColorType, ImageDecoder, ImageError, ImageFormat, ImageResult};

/// A PNM header: `P1` to `P6`, the size, the maxval and where the samples start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) struct Header {
    /// The digit after `P`: `b'1'` to `b'6'`.
    pub magic: u8,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The largest sample value (1 for a bitmap).
    pub maxval: u32,
    /// The offset of the first sample.
    pub data_offset: u64,
}

impl Header {
    fn channels(&self) -> u64 {
        if matches!(self.magic, b'3' | b'6') { 3 } else { 1 }
    }

    /// The fewest bytes of samples the pixels need: every binary sample, and for plain (ASCII)
    /// files a digit per sample with a separator between them (a bitmap's digits may touch).
    pub(in crate::io) fn min_data_bytes(&self) -> u64 {
        let pixels = u64::from(self.width) * u64::from(self.height);
        let samples = pixels.saturating_mul(self.channels());
        match self.magic {
            b'1' => pixels,
            b'4' => u64::from(self.width).div_ceil(8) * u64::from(self.height),
            b'2' | b'3' => samples.saturating_mul(2).saturating_sub(1),
            _ => samples.saturating_mul(if self.maxval > 255 { 2 } else { 1 }),
        }
    }

    /// Whether graylab decodes it itself: a graymap or pixmap whose maxval the `image` crate
    /// would scale with a float.
    pub(in crate::io) fn needs_exact_scaling(&self) -> bool {
        matches!(self.magic, b'2' | b'3' | b'5' | b'6')
            && !matches!(self.maxval, 255 | 65535)
            && self.maxval > 0
    }
}

/// The header of the PNM whose first bytes are `bytes`, or `None` when it is none (or longer
/// than `bytes`, or damaged: the decoder says how).
pub(in crate::io) fn header(bytes: &[u8]) -> Option<Header> {
    let magic = match bytes {
        [b'P', m @ b'1'..=b'6', ..] => *m,
        _ => return None,
    };
    let mut at = 2;
    let mut values = [1u32; 3];
    let count = if matches!(magic, b'1' | b'4') { 2 } else { 3 };
    for value in values.iter_mut().take(count) {
        // Whitespace and comments before each number.
        loop {
            match bytes.get(at)? {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => at += 1,
                b'#' => at += bytes.get(at..)?.iter().position(|&b| b == b'\n' || b == b'\r')?,
                _ => break,
            }
        }
        let digits = bytes.get(at..)?.iter().take_while(|b| b.is_ascii_digit()).count();
        *value = std::str::from_utf8(bytes.get(at..at + digits)?).ok()?.parse().ok()?;
        at += digits;
    }
    // One whitespace byte ends the header.
    if !bytes.get(at)?.is_ascii_whitespace() {
        return None;
    }
    let [width, height, maxval] = values;
    Some(Header { magic, width, height, maxval, data_offset: at as u64 + 1 })
}

/// Decodes a PGM or PPM with exact integer scaling (see the module's note).
pub(in crate::io) struct ExactPnmDecoder<R> {
    reader: R,
    header: Header,
}

impl<R: BufRead + Seek> ExactPnmDecoder<R> {
    /// A decoder for the file `reader` reads, whose header is `header`.
    pub(in crate::io) fn new(mut reader: R, header: Header) -> ImageResult<Self> {
        reader.seek(SeekFrom::Start(header.data_offset))?;
        Ok(Self { reader, header })
    }

    fn wide(&self) -> bool {
        self.header.maxval > 255
    }

    /// Every sample's output value, rounded half up; samples above maxval are taken as maxval.
    fn table(&self) -> Vec<u16> {
        let max = u64::from(self.header.maxval);
        let target: u64 = if self.wide() { 65535 } else { 255 };
        (0..=if self.wide() { 65535 } else { 255 })
            .map(|v: u64| u16::try_from((v.min(max) * target * 2 + max) / (2 * max)).unwrap_or(u16::MAX))
            .collect()
    }

    /// The next plain (ASCII) sample.
    fn ascii_sample(&mut self) -> ImageResult<u16> {
        let mut value: Option<u32> = None;
        loop {
            let byte = match self.reader.fill_buf()?.first() {
                Some(&b) => b,
                None if value.is_some() => break,
                None => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
            };
            match (byte, value) {
                (b'0'..=b'9', _) => {
                    let v = value.unwrap_or(0) * 10 + u32::from(byte - b'0');
                    if v > 65535 {
                        return Err(bad("a sample is larger than 65535"));
                    }
                    value = Some(v);
                }
                (b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c', None) => {}
                (b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c', Some(_)) => break,
                _ => return Err(bad("a plain sample holds something other than digits")),
            }
            self.reader.consume(1);
        }
        Ok(value.map_or(0, |v| u16::try_from(v).unwrap_or(u16::MAX)))
    }
}

fn bad(what: &'static str) -> ImageError {
    ImageError::Decoding(DecodingError::new(ImageFormatHint::Exact(ImageFormat::Pnm), what))
}

impl<R: BufRead + Seek> ImageDecoder for ExactPnmDecoder<R> {
    fn dimensions(&self) -> (u32, u32) {
        (self.header.width, self.header.height)
    }

    fn color_type(&self) -> ColorType {
        match (self.header.channels(), self.wide()) {
            (3, false) => ColorType::Rgb8,
            (3, true) => ColorType::Rgb16,
            (_, false) => ColorType::L8,
            (_, true) => ColorType::L16,
        }
    }

    fn read_image(mut self, buf: &mut [u8]) -> ImageResult<()> {
        let table = self.table();
        let plain = matches!(self.header.magic, b'2' | b'3');
        if self.wide() {
            for out in buf.chunks_exact_mut(2) {
                let v = if plain {
                    self.ascii_sample()?
                } else {
                    let mut be = [0u8; 2];
                    self.reader.read_exact(&mut be)?;
                    u16::from_be_bytes(be)
                };
                out.copy_from_slice(&table[usize::from(v)].to_ne_bytes());
            }
        } else if plain {
            for out in buf.iter_mut() {
                let v = self.ascii_sample()?;
                // Above 255 is above maxval too: the table's last entry is white.
                *out = u8::try_from(table[usize::from(v.min(255))]).unwrap_or(u8::MAX);
            }
        } else {
            self.reader.read_exact(buf)?;
            for v in buf.iter_mut() {
                *v = u8::try_from(table[usize::from(*v)]).unwrap_or(u8::MAX);
            }
        }
        Ok(())
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}
