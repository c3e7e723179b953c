//! JPEG-compressed TIFFs (compression 7), stripped or tiled, YCbCr, RGB or gray: each strip or
//! tile is an abbreviated JPEG whose tables the `JPEGTables` tag holds; the two are joined into
//! one whole JPEG and decoded by libjpeg ([`crate::io::read::libjpeg`]), as libtiff does, its
//! colour space by libjpeg's rule (the component ids libtiff writes: 1, 2, 3 for YCbCr, R, G, B
//! for RGB). The `tiff` crate reads the tags and finds the pieces. Damage libjpeg warns about
//! refuses the file: a TIFF decoder has no way to hand a warning on.

use std::io::{Read, Seek};

use image::metadata::Orientation;
use image::{ColorType, ImageDecoder, ImageResult};
use tiff::decoder::Decoder;
use tiff::tags::Tag;

use super::direct::{decoding, orientation, read_piece, tiff_error};
use crate::io::read::libjpeg::{JpegOut, LibjpegHeader, LibjpegRows};

/// A JPEG-compressed TIFF as an `image` decoder of 8-bit RGB (colour) or gray.
pub(super) struct JpegTiffDecoder<R: Read + Seek> {
    inner: Decoder<R>,
    dimensions: (u32, u32),
    out: JpegOut,
    /// A strip's or tile's width and height.
    piece: (usize, usize),
    /// Whether the pieces are tiles (else strips).
    tiled: bool,
}

impl<R: Read + Seek> JpegTiffDecoder<R> {
    /// Reads the directory; `gray`: one sample a pixel. The pieces are read in `read_image`.
    pub(super) fn new(reader: R, gray: bool) -> ImageResult<Self> {
        let mut inner = Decoder::new(reader).map_err(tiff_error)?;
        let dimensions = inner.dimensions().map_err(tiff_error)?;
        let (width, height) = (dimensions.0 as usize, dimensions.1 as usize);
        let tiled = inner.find_tag(Tag::TileWidth).map_err(tiff_error)?.is_some();
        let piece = if tiled {
            let w = inner.find_tag_unsigned::<u32>(Tag::TileWidth).map_err(tiff_error)?.unwrap_or(0);
            let h = inner.find_tag_unsigned::<u32>(Tag::TileLength).map_err(tiff_error)?.unwrap_or(0);
            (w as usize, h as usize)
        } else {
            let rows = inner.find_tag_unsigned::<u32>(Tag::RowsPerStrip).map_err(tiff_error)?;
            (width, rows.map_or(height, |r| r as usize).clamp(1, height.max(1)))
        };
        Ok(Self { inner, dimensions, out: if gray { JpegOut::Luma } else { JpegOut::Rgb }, piece, tiled })
    }

    /// The bytes it holds besides its output while it decodes: one piece's pixels and its JPEG.
    pub(super) fn scratch_bytes(&self) -> u64 {
        2 * (self.piece.0 as u64) * (self.piece.1 as u64) * self.out.samples() as u64
    }

    /// The whole JPEG of piece `n` (`data`, the strip's or tile's bytes) with the shared
    /// `tables`, decoded: its pixels and their width and height as libjpeg read them.
    fn piece(&self, n: usize, tables: Option<&[u8]>, data: &[u8]) -> ImageResult<(Vec<u8>, (u32, u32))> {
        let damaged = |why: &str| decoding(format!("its JPEG-compressed piece {} is damaged ({why})", n + 1));
        let whole;
        let jpeg = match tables {
            // The tables' stream without its end-of-image marker, then the piece's without its
            // start-of-image marker.
            Some(tables) if tables.len() >= 4 && data.starts_with(&[0xFF, 0xD8]) => {
                whole = [&tables[..tables.len() - 2], &data[2..]].concat();
                &whole[..]
            }
            _ => data,
        };
        let header = LibjpegHeader::read(jpeg).map_err(|e| damaged(&format!("libjpeg: {e}")))?;
        let (width, height) = header.size;
        let mut pixels = vec![0u8; width as usize * height as usize * self.out.samples()];
        let mut rows =
            LibjpegRows::start(jpeg, (width, height), self.out).map_err(|e| damaged(&e.to_string()))?;
        rows.read(&mut pixels).map_err(|e| damaged(&e.to_string()))?;
        let warnings = rows.finish().map_err(|e| damaged(&e.to_string()))?;
        if let Some(first) = warnings.first() {
            return Err(damaged(&format!("libjpeg: {}", first.message)));
        }
        Ok((pixels, (width, height)))
    }

    /// The bytes of piece `n` at `offsets`/`counts`; an error if the file ends before them.
    fn read_piece(&mut self, n: usize, offsets: &[u64], counts: &[u64]) -> ImageResult<Vec<u8>> {
        let (data, count) = read_piece(&mut self.inner, n, (offsets, counts))?;
        if data.len() as u64 != count {
            return Err(decoding(format!("the file ends inside piece {} of its image data", n + 1)));
        }
        Ok(data)
    }
}

impl<R: Read + Seek> ImageDecoder for JpegTiffDecoder<R> {
    fn dimensions(&self) -> (u32, u32) {
        self.dimensions
    }

    fn color_type(&self) -> ColorType {
        if self.out == JpegOut::Rgb { ColorType::Rgb8 } else { ColorType::L8 }
    }

    fn orientation(&mut self) -> ImageResult<Orientation> {
        Ok(orientation(&mut self.inner))
    }

    fn read_image(mut self, buf: &mut [u8]) -> ImageResult<()> {
        let (width, height) = (self.dimensions.0 as usize, self.dimensions.1 as usize);
        let samples = self.out.samples();
        let tables = self
            .inner
            .find_tag(Tag::JPEGTables)
            .map_err(tiff_error)?
            .map(tiff::decoder::ifd::Value::into_u8_vec);
        let tables = tables.transpose().map_err(tiff_error)?;
        let tiled = self.tiled;
        let (offsets_tag, counts_tag) = if tiled {
            (Tag::TileOffsets, Tag::TileByteCounts)
        } else {
            (Tag::StripOffsets, Tag::StripByteCounts)
        };
        let offsets = self.inner.get_tag_u64_vec(offsets_tag).map_err(tiff_error)?;
        let counts = self.inner.get_tag_u64_vec(counts_tag).map_err(tiff_error)?;
        // Each piece's place: a strip spans the width, a tile is its own width and height.
        let (piece_w, piece_h) = self.piece;
        if piece_w == 0 || piece_h == 0 {
            return Err(decoding("its tiles have no size".to_owned()));
        }
        let across = width.div_ceil(piece_w);
        let pieces = across * height.div_ceil(piece_h);
        for n in 0..pieces {
            let data = self.read_piece(n, &offsets, &counts)?;
            let (pixels, (jpeg_w, jpeg_h)) = self.piece(n, tables.as_deref(), &data)?;
            let (x0, y0) = ((n % across) * piece_w, (n / across) * piece_h);
            // The part of the piece inside the image (a last tile or strip can be padded).
            let (w, h) = (piece_w.min(width - x0), piece_h.min(height - y0));
            if (jpeg_w as usize) < w || (jpeg_h as usize) < h {
                return Err(decoding(format!(
                    "its JPEG-compressed piece {} holds {jpeg_w}x{jpeg_h} pixels where {w}x{h} belong",
                    n + 1
                )));
            }
            for row in 0..h {
                let from = row * jpeg_w as usize * samples;
                let to = ((y0 + row) * width + x0) * samples;
                let (Some(src), Some(dst)) =
                    (pixels.get(from..from + w * samples), buf.get_mut(to..to + w * samples))
                else {
                    return Err(decoding("a piece beyond the image".to_owned()));
                };
                dst.copy_from_slice(src);
            }
        }
        Ok(())
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}
