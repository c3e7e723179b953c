//! A BMP's pixel density: the `image` crate's encoder writes 0 pixels per metre across and down
//! (bytes 38 to 45 of the file, in the info header that every BMP version begins with), so
//! [`BmpDensity`] sets them as they pass on their way to the file. And the dither's black and
//! white as a 1-bit BMP ([`write_bilevel_bmp`]), which that encoder does not write. Depends on
//! `std` and [`crate::io::WriteCause`] only.

use std::io::Write;

/// Where the pixels per metre across (4 bytes, little-endian) and then down lie in a BMP file.
const PER_METRE_AT: std::ops::Range<u64> = 38..46;

/// A writer that passes a BMP on to `inner`, its pixels per metre set to the density given.
pub(in crate::io) struct BmpDensity<W> {
    inner: W,
    /// Bytes passed on so far.
    at: u64,
    /// The bytes of the two fields; `None`: the file passes as it is.
    fields: Option<[u8; 8]>,
}

impl<W> BmpDensity<W> {
    /// Passes a BMP on to `inner` with `per_metre` (across, down) pixels per metre, or as it is
    /// where `None`; a value over `i32::MAX` (BMP's field is signed) passes it as it is.
    pub(in crate::io) fn new(inner: W, per_metre: Option<(u32, u32)>) -> Self {
        let fields = per_metre.and_then(|(x, y)| {
            let (x, y) = (i32::try_from(x).ok()?, i32::try_from(y).ok()?);
            let mut fields = [0; 8];
            fields[..4].copy_from_slice(&x.to_le_bytes());
            fields[4..].copy_from_slice(&y.to_le_bytes());
            Some(fields)
        });
        Self { inner, at: 0, fields }
    }
}

impl<W: Write> Write for BmpDensity<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(fields) = self.fields.filter(|_| self.at < PER_METRE_AT.end) else {
            let n = self.inner.write(buf)?;
            self.at += n as u64;
            return Ok(n);
        };
        // Up to the fields' end only: what follows passes as it is.
        let head = usize::try_from(PER_METRE_AT.end - self.at).map_or(buf.len(), |left| left.min(buf.len()));
        let mut patched = buf[..head].to_vec();
        for (offset, byte) in (self.at..).zip(patched.iter_mut()) {
            let field =
                offset.checked_sub(PER_METRE_AT.start).and_then(|i| fields.get(usize::try_from(i).ok()?));
            if let Some(&field) = field {
                *byte = field;
            }
        }
        let n = self.inner.write(&patched)?;
        self.at += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Bytes before a 1-bit BMP's pixels: the file header (14), the info header (40), two colours.
const BILEVEL_HEAD_BYTES: usize = 14 + 40 + 2 * 4;

/// Writes `packed` (rows of `width` pixels, 8 a byte, most significant bit first, each row padded
/// to whole bytes, a 1 white: [`crate::io::codecs::png::pack_bits`]) as a 1-bit BMP of two
/// colours, black and white, with `per_metre` (across, down) pixels per metre (0 where `None`).
pub(in crate::io) fn write_bilevel_bmp(
    packed: &[u8],
    (width, height): (u32, u32),
    per_metre: Option<(u32, u32)>,
    out: &mut impl Write,
) -> Result<(), crate::io::WriteCause> {
    let too_large =
        || crate::io::WriteCause::Encoder(format!("a {width}x{height} image is too large for a BMP"));
    let packed_row = (width as usize).div_ceil(8);
    if width == 0 || height == 0 || packed.len() != packed_row * height as usize {
        return Err(crate::io::WriteCause::Encoder(format!(
            "{} bytes for a {width}x{height} 1-bit BMP",
            packed.len()
        )));
    }
    // Rows are stored bottom up, each padded to 4 bytes.
    let row_bytes = packed_row.next_multiple_of(4);
    let pixel_bytes = u32::try_from(row_bytes * height as usize).map_err(|_| too_large())?;
    let file_bytes = pixel_bytes.checked_add(BILEVEL_HEAD_BYTES as u32).ok_or_else(too_large)?;
    let (x, y) =
        per_metre.and_then(|(x, y)| Some((i32::try_from(x).ok()?, i32::try_from(y).ok()?))).unwrap_or((0, 0));
    let signed = |v: u32| i32::try_from(v).map_err(|_| too_large());
    let mut head = Vec::with_capacity(BILEVEL_HEAD_BYTES);
    head.extend_from_slice(b"BM");
    for word in [file_bytes, 0, BILEVEL_HEAD_BYTES as u32, 40] {
        head.extend_from_slice(&word.to_le_bytes());
    }
    for value in [signed(width)?, signed(height)?] {
        head.extend_from_slice(&value.to_le_bytes());
    }
    // One plane, 1 bit a pixel, no compression.
    head.extend_from_slice(&1u16.to_le_bytes());
    head.extend_from_slice(&1u16.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    head.extend_from_slice(&pixel_bytes.to_le_bytes());
    head.extend_from_slice(&x.to_le_bytes());
    head.extend_from_slice(&y.to_le_bytes());
    // Two colours, both used: 0 black, 1 white (blue, green, red, 0).
    head.extend_from_slice(&2u32.to_le_bytes());
    head.extend_from_slice(&2u32.to_le_bytes());
    head.extend_from_slice(&[0, 0, 0, 0, 255, 255, 255, 0]);
    out.write_all(&head)?;
    let mut row = vec![0u8; row_bytes];
    for packed_row_bytes in packed.chunks(packed_row).rev() {
        row[..packed_row].copy_from_slice(packed_row_bytes);
        out.write_all(&row)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::ImageEncoder as _;

    fn bmp(per_metre: Option<(u32, u32)>) -> Vec<u8> {
        let mut out = Vec::new();
        let pixels = [0, 40, 80, 120, 160, 200];
        image::codecs::bmp::BmpEncoder::new(&mut BmpDensity::new(&mut out, per_metre))
            .write_image(&pixels, 3, 2, image::ExtendedColorType::L8)
            .expect("encode");
        out
    }

    #[test]
    fn the_pixels_per_metre_are_set_and_nothing_else_changes() {
        let plain = bmp(None);
        assert_eq!(plain[38..46], [0; 8], "the encoder's own");
        let dense = bmp(Some((11811, 5906)));
        assert_eq!(dense[38..42], 11811i32.to_le_bytes());
        assert_eq!(dense[42..46], 5906i32.to_le_bytes());
        assert_eq!(
            (dense[..38].to_vec(), dense[46..].to_vec()),
            (plain[..38].to_vec(), plain[46..].to_vec())
        );
        let decoded = image::load_from_memory(&dense).expect("a BMP").to_luma8();
        assert_eq!(decoded.as_raw(), &[0, 40, 80, 120, 160, 200]);
        assert_eq!(bmp(Some((u32::MAX, 1))), plain, "past BMP's field: as it is");
    }
    #[test]
    fn a_bilevel_bmp_reads_back_as_its_black_and_white() {
        // 10x3: rows of two bytes, padded to four; the image crate reads it as a palette.
        let gray: Vec<u8> = (0..30).map(|i| if (i * 7) % 3 == 0 { 255 } else { 0 }).collect();
        let packed = crate::io::codecs::png::pack_bits(&gray, 10);
        let mut out = Vec::new();
        write_bilevel_bmp(&packed, (10, 3), Some((11811, 11811)), &mut out).expect("written");
        assert_eq!(out.len(), BILEVEL_HEAD_BYTES + 4 * 3);
        assert_eq!((out[28], out[38..42].to_vec()), (1, 11811i32.to_le_bytes().to_vec()), "1 bit, 300 dpi");
        let decoded = image::load_from_memory(&out).expect("a BMP").to_luma8();
        assert_eq!(decoded.as_raw(), &gray);
        assert!(write_bilevel_bmp(&packed[1..], (10, 3), None, &mut Vec::new()).is_err(), "short");
    }
}
