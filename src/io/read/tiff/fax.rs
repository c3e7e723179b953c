//! One-bit TIFFs coded by CCITT modified Huffman (compression 2: each row a run of Group 3
//! one-dimensional codes, starting on a byte) or one-dimensional Group 3 (compression 3: each
//! row after an end-of-line code). The `tiff` crate reads the tags and finds the strips; the
//! runs are decoded with the `fax` crate's code tables. A black run is stored as 1 bits and a
//! white run as 0 bits, which `PhotometricInterpretation` then shows, as libtiff reads them.

use std::io::{Read, Seek};

use fax::{BitReader, ByteReader};
use image::metadata::Orientation;
use image::{ColorType, ImageDecoder, ImageError, ImageResult};
use tiff::decoder::Decoder;
use tiff::tags::Tag;

use super::direct::{decoding, orientation, read_piece, tiff_error};

/// Zero bits before an end-of-line code: 11 in the code, the rest fill.
const MAX_EOL_ZEROS: u32 = 64;
/// Zeros after a strip's data: the code tables look 8 to 13 bits ahead, also for a last code
/// that is shorter.
const PADDING: [u8; 2] = [0; 2];

/// A CCITT-coded TIFF as an `image` decoder of 8-bit gray (0 and 255).
pub(super) struct FaxDecoder<R: Read + Seek> {
    inner: Decoder<R>,
    dimensions: (u32, u32),
    huffman: bool,
    black_is_zero: bool,
    reversed_bits: bool,
}

impl<R: Read + Seek> FaxDecoder<R> {
    /// Reads the directory; the strips are read in `read_image`.
    pub(super) fn new(
        reader: R,
        huffman: bool,
        black_is_zero: bool,
        reversed_bits: bool,
    ) -> ImageResult<Self> {
        let mut inner = Decoder::new(reader).map_err(tiff_error)?;
        let dimensions = inner.dimensions().map_err(tiff_error)?;
        Ok(Self { inner, dimensions, huffman, black_is_zero, reversed_bits })
    }

    /// One strip's rows into `out` (one byte per pixel); `complete` when the file held all the
    /// strip's bytes. `data` ends in padding (see `PADDING`).
    fn strip(&self, data: &[u8], complete: bool, out: &mut [u8], first_row: u32) -> ImageResult<()> {
        let width = self.dimensions.0 as usize;
        let (white, black) = if self.black_is_zero { (0, u8::MAX) } else { (u8::MAX, 0) };
        let bytes = data.iter().map(|&b| if self.reversed_bits { b.reverse_bits() } else { b });
        let Ok(mut bits) = ByteReader::new(bytes.map(Ok::<u8, std::convert::Infallible>));
        for (r, row) in (first_row..).zip(out.chunks_exact_mut(width)) {
            let damaged = || decoding(format!("its CCITT-coded data is damaged in row {}", r + 1));
            if self.huffman {
                let skip = bits.bits_to_byte_boundary();
                consume(&mut bits, skip);
            } else {
                end_of_line(&mut bits);
            }
            let (mut x, mut is_white) = (0usize, true);
            while x < width {
                let Some(run) = run_length(&mut bits, is_white) else {
                    // Cut short: the strip ended early, or only the padding (zeros) is left.
                    let at_end = bits.peek(16).is_none_or(|ahead| ahead == 0);
                    return Err(if !complete || at_end { truncated() } else { damaged() });
                };
                let end = x.saturating_add(run);
                let Some(pixels) = row.get_mut(x..end) else { return Err(damaged()) };
                pixels.fill(if is_white { white } else { black });
                x = end;
                is_white = !is_white;
            }
        }
        Ok(())
    }
}

impl<R: Read + Seek> ImageDecoder for FaxDecoder<R> {
    fn dimensions(&self) -> (u32, u32) {
        self.dimensions
    }

    fn color_type(&self) -> ColorType {
        ColorType::L8
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        Ok(orientation(&mut self.inner))
    }

    fn read_image(mut self, buf: &mut [u8]) -> ImageResult<()> {
        if self.inner.find_tag(Tag::TileWidth).map_err(tiff_error)?.is_some() {
            return Err(decoding("graylab does not read tiled CCITT-coded data".to_owned()));
        }
        let (width, height) = self.dimensions;
        let offsets = self.inner.get_tag_u64_vec(Tag::StripOffsets).map_err(tiff_error)?;
        let counts = self.inner.get_tag_u64_vec(Tag::StripByteCounts).map_err(tiff_error)?;
        let rows_per_strip = self
            .inner
            .find_tag_unsigned::<u32>(Tag::RowsPerStrip)
            .map_err(tiff_error)?
            .unwrap_or(height)
            .clamp(1, height);
        let strip_bytes = width as usize * rows_per_strip as usize;
        for (s, out) in buf.chunks_mut(strip_bytes).enumerate() {
            let (mut data, count) = read_piece(&mut self.inner, s, (&offsets, &counts))?;
            let complete = data.len() as u64 == count;
            data.extend_from_slice(&PADDING);
            let first_row = u32::try_from(s).unwrap_or(u32::MAX).saturating_mul(rows_per_strip);
            self.strip(&data, complete, out, first_row)?;
        }
        Ok(())
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}

/// One run of `white` or black pixels: make-up codes (64 and more) until a terminating code.
fn run_length(bits: &mut impl BitReader, white: bool) -> Option<usize> {
    let mut sum = 0usize;
    loop {
        let n = if white { fax::maps::white::decode(bits)? } else { fax::maps::black::decode(bits)? };
        sum = sum.checked_add(usize::from(n))?;
        if n < 64 {
            return Some(sum);
        }
    }
}

/// Skips an end-of-line code (eleven or more zeros, then a one) where there is one.
fn end_of_line(bits: &mut impl BitReader) {
    // No run code starts with more than 7 zeros: 9 zeros are fill and an end-of-line code.
    if bits.peek(9) != Some(0) {
        return;
    }
    for _ in 0..MAX_EOL_ZEROS {
        match bits.peek(1) {
            Some(0) => consume(bits, 1),
            Some(_) => {
                consume(bits, 1);
                return;
            }
            None => return,
        }
    }
}

fn consume(bits: &mut impl BitReader, n: u8) {
    // The reader over bytes in memory cannot fail.
    let _ = bits.consume(n);
}

fn truncated() -> ImageError {
    ImageError::IoError(std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
}
