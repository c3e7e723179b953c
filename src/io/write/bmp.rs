//! A BMP's pixel density: the `image` crate's encoder writes 0 pixels per metre across and down
//! (bytes 38 to 45 of the file, in the info header that every BMP version begins with), so
//! [`BmpDensity`] sets them as they pass on their way to the file. Depends on `std` only.

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
}
