//! A baseline JPEG encoder for 8-bit gray images that codes in parallel: the image is cut into
//! stripes of whole block rows, each one restart interval, coded on all cores and joined with
//! RST markers into one standard single-component file (libjpeg's quality scaling and
//! Annex K Huffman tables, so sizes compare with libjpeg's and `OpenCV`'s at the same quality).
//!
//! A gray JPEG has one component and so no chroma: the 4:4:4 / 4:2:0 choice of a colour JPEG
//! does not arise, and the file is single-channel. A `COM` segment `graylab` marks the file as
//! graylab's ([`crate::io::mark`]); the JFIF segment gives the pixel density where there is one,
//! and an APP1 segment after the comment the input's EXIF tags ([`crate::io::KeptMetadata`]).

mod block;
mod dct;
mod tables;

use crate::io::mark::SOFTWARE;
use crate::io::{Density, WriteCause};
use std::io::Write;

use crate::io::codecs::rows::RowSource;
use crate::io::codecs::stripes::code_in_parallel_write_in_order;
use block::{BlockCoder, GrayPlane};
use tables::{AC_LENGTHS, AC_VALUES, DC_LENGTHS, DC_VALUES, ZIGZAG};

/// The largest width or height graylab writes in a JPEG: libjpeg's `JPEG_MAX_DIMENSION`. The
/// frame header's 16-bit fields hold 65535, but libjpeg (and with it Pillow, `OpenCV` and
/// `ImageMagick`) refuses every file with a side above 65500.
pub const JPEG_MAX_SIDE: u32 = 65_500;

/// Block rows per stripe at most: 128 pixel rows, enough stripes for many cores on large images
/// while the restart markers cost well under 0.1% of the file.
const MAX_BLOCK_ROWS_PER_STRIPE: usize = 16;

/// Encodes the rows of an 8-bit gray image as a baseline JPEG of `quality` (1-100) and
/// `density` (in its JFIF segment; an aspect ratio of 1:1 where `None`) and `exif` (an APP1
/// segment after graylab's comment, where there is one) into `out`; `progress`
/// is called with the fraction of stripes done.
pub(in crate::io) fn write_gray_jpeg(
    source: &dyn RowSource,
    (width, height): (u32, u32),
    (quality, density, exif): (u8, Option<Density>, Option<&crate::io::KeptMetadata>),
    out: &mut (impl Write + Send),
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(), WriteCause> {
    if width == 0 || height == 0 || width > JPEG_MAX_SIDE || height > JPEG_MAX_SIDE {
        return Err(WriteCause::Encoder(format!(
            "{width}x{height} is outside JPEG's 1..={JPEG_MAX_SIDE} px per side"
        )));
    }
    let (width_px, height_px) = (width as usize, height as usize);
    let coder = BlockCoder::new(quality);
    let blocks_across = width_px.div_ceil(8);
    let block_rows = height_px.div_ceil(8);
    // A restart interval counts blocks and must fit 16 bits.
    let rows_per_stripe = (usize::from(u16::MAX) / blocks_across).clamp(1, MAX_BLOCK_ROWS_PER_STRIPE);
    let stripes = block_rows.div_ceil(rows_per_stripe);
    let restart_interval = u16::try_from(rows_per_stripe * blocks_across).unwrap_or(u16::MAX);
    let io = WriteCause::Os;
    let size = (width as u16, height as u16);
    write_headers(out, &coder.quant, (size, density, exif), restart_interval).map_err(io)?;
    code_in_parallel_write_in_order(
        stripes,
        |s| {
            let started = std::time::Instant::now();
            let block_range = s * rows_per_stripe..((s + 1) * rows_per_stripe).min(block_rows);
            let pixel_rows = block_range.start * 8..(block_range.end * 8).min(height_px);
            let pixels = source.rows(pixel_rows.clone());
            if pixels.len() != pixel_rows.len() * width_px {
                return Err(WriteCause::Encoder(format!(
                    "{} bytes for rows {pixel_rows:?} of {width}",
                    pixels.len()
                )));
            }
            // The stripe's own rows; its last block row repeats the image's last row.
            let plane = GrayPlane { pixels: &pixels, width: width_px, height: pixel_rows.len() };
            let segment = coder.encode_stripe(plane, 0..block_range.len());
            source.coded(pixel_rows, started);
            Ok(segment)
        },
        |i, segment| {
            if i > 0 {
                // Restart markers RST0..RST7 in turn between the intervals.
                out.write_all(&[0xFF, 0xD0 + ((i - 1) % 8) as u8]).map_err(io)?;
            }
            out.write_all(&segment).map_err(io)
        },
        progress,
    )?;
    out.write_all(&[0xFF, 0xD9]).map_err(io)
}

fn segment(out: &mut impl Write, marker: u8, body: &[&[u8]]) -> std::io::Result<()> {
    let len: usize = 2 + body.iter().map(|b| b.len()).sum::<usize>();
    let len = u16::try_from(len).map_err(|_| std::io::Error::other(format!("a {len}-byte JPEG segment")))?;
    out.write_all(&[0xFF, marker])?;
    out.write_all(&len.to_be_bytes())?;
    for part in body {
        out.write_all(part)?;
    }
    Ok(())
}

fn write_headers(
    out: &mut impl Write,
    quant: &[u8; 64],
    ((width, height), density, exif): ((u16, u16), Option<Density>, Option<&crate::io::KeptMetadata>),
    restart_interval: u16,
) -> std::io::Result<()> {
    out.write_all(&[0xFF, 0xD8])?;
    // JFIF 1.01, the density (else no unit and a 1:1 aspect), no thumbnail.
    let (units, x, y) = density.and_then(Density::jfif).unwrap_or((0, 1, 1));
    let [x1, x0] = x.to_be_bytes();
    let [y1, y0] = y.to_be_bytes();
    segment(out, 0xE0, &[b"JFIF\0", &[1, 1, units, x1, x0, y1, y0, 0, 0]])?;
    // graylab's mark (see `crate::io::mark`): a comment.
    segment(out, 0xFE, &[SOFTWARE.as_bytes()])?;
    if exif.is_some_and(|e| e.tags() > 0) {
        segment(out, 0xE1, &[b"Exif\0\0", &crate::io::exif::block(exif)])?;
    }
    // The XMP packet (its text is bounded to fit a segment: `crate::io::xmp`).
    if let Some(packet) = exif.and_then(crate::io::KeptMetadata::xmp_packet) {
        segment(out, 0xE1, &[crate::io::xmp::JPEG_NAMESPACE, &packet])?;
    }
    let zigzag_quant = ZIGZAG.map(|n| quant[usize::from(n)]);
    segment(out, 0xDB, &[&[0x00], &zigzag_quant])?;
    let [h1, h0] = height.to_be_bytes();
    let [w1, w0] = width.to_be_bytes();
    // Baseline, 8-bit, one component (id 1, 1x1 sampling, quantisation table 0).
    segment(out, 0xC0, &[&[8, h1, h0, w1, w0, 1, 1, 0x11, 0]])?;
    segment(out, 0xC4, &[&[0x00], &DC_LENGTHS, &DC_VALUES, &[0x10], &AC_LENGTHS, &AC_VALUES])?;
    segment(out, 0xDD, &[&restart_interval.to_be_bytes()])?;
    // One component with tables 0/0, spectral selection 0..=63, no successive approximation.
    segment(out, 0xDA, &[&[1, 1, 0x00, 0, 63, 0]])
}
