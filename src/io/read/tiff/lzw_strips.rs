//! The LZW strips of a plain TIFF decoded on all cores: each strip's compressed bytes read by
//! its offset and byte count, then decompressed and its horizontal predictor undone into its own
//! rows of the output, as the `tiff` crate does it one strip after another. The compressed bytes
//! are read a batch at a time ([`BATCH_BYTES`]), so that only those are held besides the output.
//! A file of one strip, tiles, or a strip the `tiff` crate reads another way is not planned.

use std::io::{Read, Seek, SeekFrom};

use image::ColorType;
use rayon::prelude::*;
use tiff::decoder::{ChunkType, Decoder};
use tiff::tags::{ByteOrder, Tag};

/// `Compression` 5: LZW.
const LZW: u16 = 5;
/// `Predictor` 2: each sample stored as its difference from the one before in its row.
const HORIZONTAL: u16 = 2;
/// Compressed bytes read before they are decoded on all cores (more when one strip is larger).
const BATCH_BYTES: u64 = 16 << 20;

/// Why the strips were not decoded here (the `tiff` crate then decodes them and says why).
#[derive(Debug)]
pub(super) struct Fault;

/// A TIFF's LZW strips, to decode on all cores.
#[derive(Debug)]
pub(super) struct LzwStrips {
    /// Where each strip's compressed bytes lie in the file, and how many there are.
    pieces: Vec<(u64, u64)>,
    /// The bytes of one row of the output.
    row_bytes: usize,
    /// Rows in each strip (the last may have fewer).
    rows_per_strip: usize,
    /// Samples per pixel, for the predictor.
    samples: usize,
    /// Bytes per sample: 1 or 2.
    sample_bytes: usize,
    /// Whether the predictor is horizontal (else there is none).
    horizontal: bool,
    /// Whether 16-bit samples are stored in the other byte order than this machine's.
    swapped: bool,
}

impl LzwStrips {
    /// The strips of the image `decoder` holds (of `dimensions`, read as `color`, one plane) where
    /// they can be decoded here: LZW, a predictor of none or horizontal, more than one strip,
    /// each strip at most `intermediate_bytes` compressed (the `tiff` crate's limit).
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
        let black_is_zero_or_rgb = matches!(tag(decoder, Tag::PhotometricInterpretation), Some(1 | 2));
        if tag(decoder, Tag::Compression) != Some(LZW)
            || !black_is_zero_or_rgb
            || decoder.get_chunk_type() != ChunkType::Strip
        {
            return None;
        }
        let offsets = decoder.get_tag_u64_vec(Tag::StripOffsets).ok()?;
        let counts = decoder.get_tag_u64_vec(Tag::StripByteCounts).ok()?;
        let height = usize::try_from(height).ok()?;
        let rows_per_strip = decoder
            .find_tag_unsigned::<u32>(Tag::RowsPerStrip)
            .ok()?
            .and_then(|rows| usize::try_from(rows).ok())
            .unwrap_or(height)
            .clamp(1, height.max(1));
        let strips = height.div_ceil(rows_per_strip);
        let limit = u64::try_from(intermediate_bytes).unwrap_or(u64::MAX);
        if strips < 2 || offsets.len() < strips || counts.len() < strips || counts.iter().any(|&c| c > limit)
        {
            return None;
        }
        // A count past the file's end reads only what the file holds.
        let file_bytes = decoder.inner().seek(SeekFrom::End(0)).ok()?;
        let pieces = offsets
            .into_iter()
            .zip(counts)
            .take(strips)
            .map(|(at, n)| (at, n.min(file_bytes.saturating_sub(at))));
        let samples = usize::from(color.channel_count());
        let sample_bytes = usize::from(color.bytes_per_pixel()) / samples.max(1);
        let native =
            if cfg!(target_endian = "little") { ByteOrder::LittleEndian } else { ByteOrder::BigEndian };
        Some(Self {
            pieces: pieces.collect(),
            row_bytes: usize::try_from(width).ok()?.checked_mul(usize::from(color.bytes_per_pixel()))?,
            rows_per_strip,
            samples,
            sample_bytes,
            horizontal,
            swapped: sample_bytes == 2 && decoder.byte_order() != native,
        })
    }

    /// The compressed bytes held at once while the strips are decoded.
    pub(super) fn in_flight_bytes(&self) -> u64 {
        let largest = self.pieces.iter().map(|&(_, count)| count).max().unwrap_or(0);
        let all = self.pieces.iter().fold(0u64, |sum, &(_, count)| sum.saturating_add(count));
        all.min(BATCH_BYTES.max(largest))
    }

    /// Decodes every strip into its rows of `buf` (the whole image), a batch of strips at a time,
    /// each batch's strips on all cores.
    pub(super) fn read<R: Read + Seek>(&self, decoder: &mut Decoder<R>, buf: &mut [u8]) -> Result<(), Fault> {
        let strip_bytes = self.rows_per_strip.checked_mul(self.row_bytes).ok_or(Fault)?;
        let mut rows: Vec<&mut [u8]> = buf.chunks_mut(strip_bytes.max(1)).collect();
        if rows.len() != self.pieces.len() {
            return Err(Fault);
        }
        let reader = decoder.inner();
        let mut compressed = Vec::new();
        let mut first = 0;
        while first < self.pieces.len() {
            // The strips of this batch: at least one, then as many as fit in `BATCH_BYTES`.
            let mut end = first + 1;
            let mut batch_bytes = self.pieces[first].1;
            while let Some(&(_, count)) = self.pieces.get(end)
                && batch_bytes.saturating_add(count) <= BATCH_BYTES
            {
                batch_bytes += count;
                end += 1;
            }
            compressed.clear();
            let mut ranges = Vec::with_capacity(end - first);
            for &(offset, count) in &self.pieces[first..end] {
                let start = compressed.len();
                reader.seek(SeekFrom::Start(offset)).map_err(|_| Fault)?;
                reader.by_ref().take(count).read_to_end(&mut compressed).map_err(|_| Fault)?;
                ranges.push(start..compressed.len());
            }
            rows[first..end].par_iter_mut().zip(ranges).try_for_each(|(out, range)| {
                let input = compressed.get(range).ok_or(Fault)?;
                decompress(input, out)?;
                self.undo_prediction(out);
                Ok(())
            })?;
            first = end;
        }
        Ok(())
    }

    /// The byte order made this machine's and the horizontal predictor undone, row by row, as the
    /// `tiff` crate does it.
    fn undo_prediction(&self, strip: &mut [u8]) {
        for row in strip.chunks_mut(self.row_bytes.max(1)) {
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

/// Decompresses one strip's LZW `input` into all of `out`, as the `tiff` crate reads it (codes
/// most significant bit first, the early size switch); an end before `out` is full is a fault.
fn decompress(input: &[u8], out: &mut [u8]) -> Result<(), Fault> {
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
