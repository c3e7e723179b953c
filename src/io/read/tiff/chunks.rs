//! The LZW or Deflate strips or tiles of a plain TIFF decoded on all cores: each chunk's
//! compressed bytes read by its offset and byte count, then decompressed and its horizontal
//! predictor undone, as the `tiff` crate does it one chunk after another. A strip is decoded
//! straight into its rows of the output; a tile into a tile of scratch, then copied to its place,
//! clipped at the image's edges. The work is a band of rows (a strip, or a row of tiles) a task,
//! and the compressed bytes are read a batch of bands at a time ([`BATCH_BYTES`]), so that only
//! those are held besides the output. A file of one band, or a chunk the `tiff` crate reads
//! another way, is not planned.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use image::ColorType;
use rayon::prelude::*;
use tiff::decoder::{ChunkType, Decoder};
use tiff::tags::{ByteOrder, Tag};

/// `Compression` 5: LZW.
const LZW: u16 = 5;
/// `Compression` 8 (Adobe's) and 32946 (the older code): Deflate, each chunk a zlib stream.
const DEFLATE: [u16; 2] = [8, 32946];
/// `Predictor` 2: each sample stored as its difference from the one before in its row.
const HORIZONTAL: u16 = 2;
/// Compressed bytes read before they are decoded on all cores (more when one band is larger).
const BATCH_BYTES: u64 = 16 << 20;

/// Why the chunks were not decoded here (the `tiff` crate then decodes them and says why).
#[derive(Debug)]
pub(super) struct Fault;

/// How the chunks are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Codec {
    Lzw,
    Deflate,
}

/// A TIFF's LZW or Deflate strips or tiles, to decode on all cores.
#[derive(Debug)]
pub(super) struct Chunks {
    /// Their compression.
    codec: Codec,
    /// Where each chunk's compressed bytes lie in the file, and how many there are, in the
    /// file's order: left to right, then top to bottom.
    pieces: Vec<(u64, u64)>,
    /// The bytes of one row of the output.
    row_bytes: usize,
    /// A chunk's width and height in pixels (a strip's width is the image's; the last strip
    /// may have fewer rows, and tiles at the right and bottom edges are clipped).
    chunk: (usize, usize),
    /// Chunks across the image: 1 for strips.
    across: usize,
    /// Whether the chunks are tiles (decoded into scratch, then placed).
    tiled: bool,
    /// Samples per pixel, for the predictor.
    samples: usize,
    /// Bytes per sample: 1 or 2.
    sample_bytes: usize,
    /// Whether the predictor is horizontal (else there is none).
    horizontal: bool,
    /// Whether 16-bit samples are stored in the other byte order than this machine's.
    swapped: bool,
}

impl Chunks {
    /// The strips or tiles of the image `decoder` holds (of `dimensions`, read as `color`, one
    /// plane) where they can be decoded here: LZW or Deflate, a predictor of none or horizontal,
    /// more than one band of rows, each chunk at most `intermediate_bytes` compressed (the `tiff`
    /// crate's limit).
    pub(super) fn plan<R: Read + Seek>(
        decoder: &mut Decoder<R>,
        (width, height): (u32, u32),
        color: ColorType,
        intermediate_bytes: usize,
    ) -> Option<Self> {
        let tag = |decoder: &mut Decoder<R>, tag| decoder.find_tag_unsigned::<u16>(tag).ok().flatten();
        let horizontal = match tag(decoder, Tag::Predictor).unwrap_or(1) {
            1 => false,
            HORIZONTAL => true,
            _ => return None,
        };
        // White-is-zero gray the `tiff` crate inverts itself: left to it.
        if !matches!(tag(decoder, Tag::PhotometricInterpretation), Some(1 | 2)) {
            return None;
        }
        let codec = match tag(decoder, Tag::Compression) {
            Some(LZW) => Codec::Lzw,
            Some(c) if DEFLATE.contains(&c) => Codec::Deflate,
            _ => return None,
        };
        let (width, height) = (usize::try_from(width).ok()?, usize::try_from(height).ok()?);
        let tiled = decoder.get_chunk_type() == ChunkType::Tile;
        let (chunk, (offsets_tag, counts_tag)) = if tiled {
            let side = |decoder: &mut Decoder<R>, tag| {
                decoder.find_tag_unsigned::<u32>(tag).ok().flatten().and_then(|n| usize::try_from(n).ok())
            };
            let (w, h) = (side(decoder, Tag::TileWidth)?, side(decoder, Tag::TileLength)?);
            ((w, h), (Tag::TileOffsets, Tag::TileByteCounts))
        } else {
            let rows = decoder
                .find_tag_unsigned::<u32>(Tag::RowsPerStrip)
                .ok()?
                .and_then(|rows| usize::try_from(rows).ok())
                .unwrap_or(height)
                .clamp(1, height.max(1));
            ((width, rows), (Tag::StripOffsets, Tag::StripByteCounts))
        };
        let pixel_bytes = usize::from(color.bytes_per_pixel());
        // A tile of scratch no larger than the `tiff` crate's own buffer for one.
        let tile_bytes = chunk.0.checked_mul(chunk.1)?.checked_mul(pixel_bytes)?;
        if chunk.0 == 0 || chunk.1 == 0 || width == 0 || (tiled && tile_bytes > intermediate_bytes) {
            return None;
        }
        let (across, down) = (width.div_ceil(chunk.0), height.div_ceil(chunk.1));
        let count = across.checked_mul(down)?;
        let offsets = decoder.get_tag_u64_vec(offsets_tag).ok()?;
        let counts = decoder.get_tag_u64_vec(counts_tag).ok()?;
        let limit = u64::try_from(intermediate_bytes).unwrap_or(u64::MAX);
        if down < 2 || offsets.len() < count || counts.len() < count || counts.iter().any(|&c| c > limit) {
            return None;
        }
        // A count past the file's end reads only what the file holds.
        let file_bytes = decoder.inner().seek(SeekFrom::End(0)).ok()?;
        let pieces = offsets
            .into_iter()
            .zip(counts)
            .take(count)
            .map(|(at, n)| (at, n.min(file_bytes.saturating_sub(at))));
        let samples = usize::from(color.channel_count());
        let sample_bytes = usize::from(color.bytes_per_pixel()) / samples.max(1);
        let native =
            if cfg!(target_endian = "little") { ByteOrder::LittleEndian } else { ByteOrder::BigEndian };
        Some(Self {
            codec,
            pieces: pieces.collect(),
            row_bytes: width.checked_mul(pixel_bytes)?,
            chunk,
            across,
            tiled,
            samples,
            sample_bytes,
            horizontal,
            swapped: sample_bytes == 2 && decoder.byte_order() != native,
        })
    }

    /// The bytes held at once besides the output while the chunks are decoded: the compressed
    /// bytes in flight, and a tile of scratch per band decoded at once.
    pub(super) fn in_flight_bytes(&self) -> u64 {
        let largest = self.pieces.chunks(self.across).map(compressed_bytes).max().unwrap_or(0);
        let at_once = rayon::current_num_threads().min(self.pieces.len() / self.across.max(1));
        let scratch = if self.tiled { self.tile_bytes().saturating_mul(at_once) } else { 0 };
        compressed_bytes(&self.pieces).min(BATCH_BYTES.max(largest)).saturating_add(scratch as u64)
    }

    /// The bytes of one whole tile.
    fn tile_bytes(&self) -> usize {
        self.chunk.0 * self.chunk.1 * self.samples * self.sample_bytes
    }

    /// Decodes every chunk into its place in `buf` (the whole image), a batch of bands at a
    /// time, each batch's bands on all cores.
    pub(super) fn read<R: Read + Seek>(&self, decoder: &mut Decoder<R>, buf: &mut [u8]) -> Result<(), Fault> {
        let band_bytes = self.chunk.1.checked_mul(self.row_bytes).ok_or(Fault)?;
        let mut bands: Vec<&mut [u8]> = buf.chunks_mut(band_bytes.max(1)).collect();
        let pieces: Vec<&[(u64, u64)]> = self.pieces.chunks(self.across).collect();
        if bands.len() != pieces.len() {
            return Err(Fault);
        }
        let reader = decoder.inner();
        let mut compressed = Vec::new();
        let mut first = 0;
        while first < pieces.len() {
            // The bands of this batch: at least one, then as many as fit in `BATCH_BYTES`.
            let mut end = first + 1;
            let mut batch_bytes = compressed_bytes(pieces[first]);
            while let Some(band) = pieces.get(end)
                && batch_bytes.saturating_add(compressed_bytes(band)) <= BATCH_BYTES
            {
                batch_bytes += compressed_bytes(band);
                end += 1;
            }
            compressed.clear();
            let mut ranges: Vec<Vec<Range<usize>>> = Vec::with_capacity(end - first);
            for band in &pieces[first..end] {
                let mut band_ranges = Vec::with_capacity(band.len());
                for &(offset, count) in *band {
                    let start = compressed.len();
                    reader.seek(SeekFrom::Start(offset)).map_err(|_| Fault)?;
                    reader.by_ref().take(count).read_to_end(&mut compressed).map_err(|_| Fault)?;
                    band_ranges.push(start..compressed.len());
                }
                ranges.push(band_ranges);
            }
            bands[first..end].par_iter_mut().zip(ranges).try_for_each(|(out, band)| {
                let inputs = band.into_iter().map(|range| compressed.get(range).ok_or(Fault));
                self.decode_band(inputs, out)
            })?;
            first = end;
        }
        Ok(())
    }

    /// Decodes one band's chunks (`inputs`, left to right) into its rows `out`: a strip straight
    /// into them, tiles through a tile of scratch each.
    fn decode_band<'a>(
        &self,
        inputs: impl Iterator<Item = Result<&'a [u8], Fault>>,
        out: &mut [u8],
    ) -> Result<(), Fault> {
        if !self.tiled {
            for input in inputs {
                self.decompress(input?, out)?;
                self.undo_prediction(out, self.row_bytes);
            }
            return Ok(());
        }
        let pixel_bytes = self.samples * self.sample_bytes;
        let tile_row_bytes = self.chunk.0 * pixel_bytes;
        let mut tile = vec![0u8; self.tile_bytes()];
        for (column, input) in inputs.enumerate() {
            self.decompress(input?, &mut tile)?;
            self.undo_prediction(&mut tile, tile_row_bytes);
            // The tile's rows and columns inside the image.
            let left = column * tile_row_bytes;
            let width = tile_row_bytes.min(self.row_bytes.saturating_sub(left));
            for (row, from) in out.chunks_mut(self.row_bytes).zip(tile.chunks(tile_row_bytes)) {
                row.get_mut(left..left + width).ok_or(Fault)?.copy_from_slice(&from[..width]);
            }
        }
        Ok(())
    }

    /// One chunk's compressed `input` into all of `out`.
    fn decompress(&self, input: &[u8], out: &mut [u8]) -> Result<(), Fault> {
        match self.codec {
            Codec::Lzw => unlzw(input, out),
            Codec::Deflate => inflate(input, out),
        }
    }

    /// The byte order made this machine's and the horizontal predictor undone, row by row (rows
    /// of `row_bytes`), as the `tiff` crate does it.
    fn undo_prediction(&self, chunk: &mut [u8], row_bytes: usize) {
        for row in chunk.chunks_mut(row_bytes.max(1)) {
            if self.swapped {
                for sample in row.chunks_exact_mut(2) {
                    sample.swap(0, 1);
                }
            }
            if !self.horizontal {
                continue;
            }
            let lag = self.samples * self.sample_bytes;
            if self.sample_bytes == 1 {
                for i in lag..row.len() {
                    row[i] = row[i].wrapping_add(row[i - lag]);
                }
            } else {
                for i in (lag..row.len().saturating_sub(1)).step_by(2) {
                    let v = u16::from_ne_bytes([row[i], row[i + 1]]);
                    let p = u16::from_ne_bytes([row[i - lag], row[i - lag + 1]]);
                    row[i..i + 2].copy_from_slice(&v.wrapping_add(p).to_ne_bytes());
                }
            }
        }
    }
}

/// The compressed bytes of `pieces` (offset and count each), all together.
fn compressed_bytes(pieces: &[(u64, u64)]) -> u64 {
    pieces.iter().fold(0u64, |sum, &(_, count)| sum.saturating_add(count))
}

/// Decompresses one chunk's LZW `input` into all of `out`, as the `tiff` crate reads it (codes
/// most significant bit first, the early size switch); an end before `out` is full is a fault.
fn unlzw(input: &[u8], out: &mut [u8]) -> Result<(), Fault> {
    let mut lzw = weezl::decode::Configuration::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        .with_yield_on_full_buffer(true)
        .build();
    let (mut read, mut written) = (0, 0);
    while written < out.len() {
        let (Some(rest_in), Some(rest_out)) = (input.get(read..), out.get_mut(written..)) else {
            return Err(Fault);
        };
        let result = lzw.decode_bytes(rest_in, rest_out);
        read += result.consumed_in;
        written += result.consumed_out;
        match result.status {
            Ok(weezl::LzwStatus::Ok) if result.consumed_in + result.consumed_out > 0 => {}
            Ok(_) | Err(_) => break,
        }
    }
    if written == out.len() { Ok(()) } else { Err(Fault) }
}

/// Decompresses one chunk's Deflate `input` (a zlib stream) into all of `out`; an end before
/// `out` is full, or a damaged stream, is a fault.
fn inflate(input: &[u8], out: &mut [u8]) -> Result<(), Fault> {
    let mut zlib = fdeflate::Decompressor::new();
    let (mut read, mut written) = (0, 0);
    while written < out.len() && !zlib.is_done() {
        let rest = input.get(read..).ok_or(Fault)?;
        let (consumed_in, consumed_out) = zlib.read(rest, out, written, true).map_err(|_| Fault)?;
        if consumed_in + consumed_out == 0 {
            break;
        }
        read += consumed_in;
        written += consumed_out;
    }
    if written == out.len() { Ok(()) } else { Err(Fault) }
}
