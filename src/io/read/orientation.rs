//! The EXIF orientation read by graylab itself, where the decoders miss it: stored as a LONG
//! instead of a SHORT (the `image` crate reads SHORT only), or in a chunk the decoder skips.
//! Pillow and exiftool apply both. And where rows counted as stored lie once it is applied, for
//! the messages of a truncated file.

use image::metadata::Orientation;

use crate::io::{DecodeWarning, TruncatedAt, truncated_words};

/// The orientation tag of IFD0.
const ORIENTATION_TAG: u16 = 0x0112;
/// IFD0 entries read at most.
const MAX_ENTRIES: usize = 1024;

impl TruncatedAt {
    /// Where it ends in the image as shown, once `orientation` (the file's, applied) turns or
    /// flips it: [`TruncatedAt::Row`] and [`TruncatedAt::EarlyEnd`] count the rows as stored,
    /// which a rotation makes columns ("it ends after row 432 of 800 as stored: the image as
    /// shown is whole in its right 432 of 800 columns"). As `Display` where the rows as stored
    /// are the top rows as shown.
    #[must_use]
    pub fn shown(&self, orientation: Orientation) -> String {
        let (Self::Row { rows, height } | Self::EarlyEnd { rows: Some(rows), height }) = *self else {
            return self.to_string();
        };
        let Some(part) = stored_rows_shown(orientation, rows, height) else { return self.to_string() };
        if matches!(self, Self::Row { .. }) {
            format!("it ends after row {rows} of {height} as stored: the image as shown is whole in {part}")
        } else {
            format!(
                "its image data ends early, after about row {rows} of {height} as stored: the image as shown is \
                 whole in about {part} (libjpeg: premature end of data segment)"
            )
        }
    }
}

impl DecodeWarning {
    /// As `Display`, a truncated file's end said in the image as shown once `orientation` (the
    /// file's, applied: [`crate::io::Decoded::orientation`]) turns it ([`TruncatedAt::shown`]).
    #[must_use]
    pub fn shown(&self, orientation: Orientation) -> String {
        match self {
            Self::Truncated(at) => truncated_words(at, &at.shown(orientation)),
            other => other.to_string(),
        }
    }
}

/// Where the first `rows` of `height` rows as stored lie in the image as shown once
/// `orientation` is applied ("its right 432 of 800 columns"), or `None` where they are still its
/// top rows.
pub(in crate::io) fn stored_rows_shown(orientation: Orientation, rows: u32, height: u32) -> Option<String> {
    let (side, lines) = stored_rows_side(orientation)?;
    Some(format!("its {side} {rows} of {height} {lines}"))
}

/// The side of the image as shown where the top rows as stored lie once `orientation` is
/// applied, and what they are there ("right", "columns"); `None` where they are still its top
/// rows (as stored, or mirrored).
pub(in crate::io) fn stored_rows_side(orientation: Orientation) -> Option<(&'static str, &'static str)> {
    match orientation {
        Orientation::NoTransforms | Orientation::FlipHorizontal => None,
        Orientation::Rotate180 | Orientation::FlipVertical => Some(("bottom", "rows")),
        // Turned clockwise, the top row is the right column.
        Orientation::Rotate90 | Orientation::Rotate270FlipH => Some(("right", "columns")),
        Orientation::Rotate270 | Orientation::Rotate90FlipH => Some(("left", "columns")),
    }
}

/// The orientation in an EXIF block (a TIFF structure, with or without the `Exif\0\0` of a
/// JPEG's APP1 in front), its value stored as SHORT or LONG (signed or not); `None` when there
/// is none or it is out of range.
pub(in crate::io) fn exif_orientation(exif: &[u8]) -> Option<Orientation> {
    let tiff = exif.strip_prefix(b"Exif\0\0").unwrap_or(exif);
    let little = match tiff.get(..4)? {
        b"II*\0" => true,
        b"MM\0*" => false,
        _ => return None,
    };
    let (u16_at, u32_at) = (|i| uint_at::<2>(tiff, i, little), |i| uint_at::<4>(tiff, i, little));
    let ifd = usize::try_from(u32_at(4)?).ok()?;
    let entries = usize::try_from(u16_at(ifd)?).ok()?.min(MAX_ENTRIES);
    (0..entries).find_map(|k| {
        let entry = ifd + 2 + 12 * k;
        if u16_at(entry)? != u32::from(ORIENTATION_TAG) || u32_at(entry + 4)? != 1 {
            return None;
        }
        let value = match u16_at(entry + 2)? {
            3 | 8 => u16_at(entry + 8)?,
            4 | 9 => u32_at(entry + 8)?,
            _ => return None,
        };
        orientation_of(value)
    })
}

/// The unsigned integer of `N` (2 or 4) bytes at `at` in a TIFF structure's `bytes`, in its
/// byte order (`little`-endian or big).
fn uint_at<const N: usize>(bytes: &[u8], at: usize, little: bool) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(N)?)?;
    let fold = |v: u32, &x: &u8| (v << 8) | u32::from(x);
    Some(if little { b.iter().rev().fold(0, fold) } else { b.iter().fold(0, fold) })
}

/// The orientation of a TIFF Orientation tag's value, `None` out of 1..=8.
pub(in crate::io) fn orientation_of(value: u32) -> Option<Orientation> {
    Orientation::from_exif(u8::try_from(value).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exif(little: bool, kind: u16, value: u32) -> Vec<u8> {
        let b16 = |v: u16| if little { v.to_le_bytes() } else { v.to_be_bytes() };
        let b32 = |v: u32| if little { v.to_le_bytes() } else { v.to_be_bytes() };
        let mut e = if little { b"II*\0".to_vec() } else { b"MM\0*".to_vec() };
        e.extend_from_slice(&b32(8));
        e.extend_from_slice(&b16(1));
        e.extend_from_slice(&b16(ORIENTATION_TAG));
        e.extend_from_slice(&b16(kind));
        e.extend_from_slice(&b32(1));
        if kind == 3 {
            e.extend_from_slice(&b16(value as u16));
            e.extend_from_slice(&[0, 0]);
        } else {
            e.extend_from_slice(&b32(value));
        }
        e.extend_from_slice(&[0; 4]);
        e
    }

    #[test]
    fn short_and_long_values_in_both_byte_orders() {
        for little in [true, false] {
            assert_eq!(exif_orientation(&exif(little, 3, 6)), Some(Orientation::Rotate90));
            assert_eq!(exif_orientation(&exif(little, 4, 8)), Some(Orientation::Rotate270));
            let mut app1 = b"Exif\0\0".to_vec();
            app1.extend_from_slice(&exif(little, 4, 3));
            assert_eq!(exif_orientation(&app1), Some(Orientation::Rotate180));
            assert_eq!(exif_orientation(&exif(little, 4, 9)), None, "out of range");
            assert_eq!(exif_orientation(&exif(little, 2, 6)), None, "ASCII is no orientation");
        }
        assert_eq!(exif_orientation(b"II*\0\xff\xff\xff\xff"), None);
    }
}
