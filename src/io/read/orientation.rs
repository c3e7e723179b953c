//! The EXIF orientation read by graylab itself, where the decoders miss it: stored as a LONG
//! instead of a SHORT (the `image` crate reads SHORT only), or in a chunk the decoder skips.
//! Pillow and exiftool apply both. The EXIF resolution, which a JPEG without a JFIF density
//! (a camera's) keeps its density in. Where rows counted as stored lie once the orientation is
//! applied, for the messages of a truncated file. And the orientation applied, the quarter turns
//! on all cores.

use image::metadata::Orientation;
use image::{DynamicImage, ImageBuffer, Pixel};
use rayon::prelude::*;

use crate::io::exif::ifd0_value;
use crate::io::{DecodeWarning, Density, TruncatedAt, truncated_words};

/// The orientation tag of IFD0.
const ORIENTATION_TAG: u16 = 0x0112;
/// The resolution tags of IFD0: `XResolution`, `YResolution`, `ResolutionUnit`.
const RESOLUTION_TAGS: [u16; 3] = [282, 283, 296];
/// The TIFF types of an integer value: SHORT, LONG, and their signed kinds.
const INTEGERS: [u16; 4] = [3, 4, 8, 9];

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
    orientation_of(ifd0_value(exif, ORIENTATION_TAG, &INTEGERS)?[0])
}

/// The density in an EXIF block (as [`exif_orientation`] reads it): its `XResolution`,
/// `YResolution` and `ResolutionUnit`, as a TIFF's ([`Density::from_tiff`]).
pub(in crate::io) fn exif_density(exif: &[u8]) -> Option<Density> {
    let [x, y, unit] = RESOLUTION_TAGS;
    let rational = |tag| ifd0_value(exif, tag, &[5]).map(|[n, d]| (n, d));
    let unit = ifd0_value(exif, unit, &INTEGERS).map(|[v, _]| u64::from(v));
    Density::from_tiff(rational(x)?, rational(y), unit)
}

/// The orientation of a TIFF Orientation tag's value, `None` out of 1..=8.
pub(in crate::io) fn orientation_of(value: u32) -> Option<Orientation> {
    Orientation::from_exif(u8::try_from(value).ok()?)
}

/// The EXIF orientation to apply: the decoder's, else the one graylab's walk over the file found
/// (`walked`), else what the EXIF block says.
pub(in crate::io) fn decoders_orientation(
    decoder: &mut impl image::ImageDecoder,
    walked: Option<Orientation>,
) -> Orientation {
    match decoder.orientation() {
        Ok(found) if found != Orientation::NoTransforms => found,
        _ => walked
            .or_else(|| decoder.exif_metadata().ok().flatten().and_then(|exif| exif_orientation(&exif)))
            .unwrap_or(Orientation::NoTransforms),
    }
}

/// The side of a quarter turn's tile, in pixels: 64 x 64 pixels of 4 bytes are 16 KiB from each side.
const TILE: usize = 64;

/// Applies `orientation` to `image`, as `image.apply_orientation` does: the quarter turns (5 to 8:
/// every portrait photo from a phone) on all cores in square tiles that keep both sides in cache
/// (`image`'s own walked the copy a column at a time on one core: 3.5 times an 8K decode); flips
/// and the half turn `image`'s, in place.
pub(in crate::io) fn apply_orientation(image: &mut DynamicImage, orientation: Orientation) {
    if !turns(orientation) {
        image.apply_orientation(orientation);
        return;
    }
    let turned = match &*image {
        DynamicImage::ImageLuma8(b) => turned(b, orientation).map(DynamicImage::ImageLuma8),
        DynamicImage::ImageLumaA8(b) => turned(b, orientation).map(DynamicImage::ImageLumaA8),
        DynamicImage::ImageRgb8(b) => turned(b, orientation).map(DynamicImage::ImageRgb8),
        DynamicImage::ImageRgba8(b) => turned(b, orientation).map(DynamicImage::ImageRgba8),
        DynamicImage::ImageLuma16(b) => turned(b, orientation).map(DynamicImage::ImageLuma16),
        DynamicImage::ImageLumaA16(b) => turned(b, orientation).map(DynamicImage::ImageLumaA16),
        DynamicImage::ImageRgb16(b) => turned(b, orientation).map(DynamicImage::ImageRgb16),
        DynamicImage::ImageRgba16(b) => turned(b, orientation).map(DynamicImage::ImageRgba16),
        DynamicImage::ImageRgb32F(b) => turned(b, orientation).map(DynamicImage::ImageRgb32F),
        DynamicImage::ImageRgba32F(b) => turned(b, orientation).map(DynamicImage::ImageRgba32F),
        _ => None,
    };
    match turned {
        Some(t) => *image = t,
        None => image.apply_orientation(orientation),
    }
}

/// Whether `orientation` turns the image a quarter (5 to 8), swapping width and height.
pub(in crate::io) fn turns(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// `source` turned by `orientation` (one of [`turns`]'), a tile at a time on rayon's threads;
/// `None` only where the buffer does not hold its pixels.
fn turned<P>(
    source: &ImageBuffer<P, Vec<P::Subpixel>>,
    orientation: Orientation,
) -> Option<ImageBuffer<P, Vec<P::Subpixel>>>
where
    P: Pixel + Send + Sync,
    P::Subpixel: Send + Sync + Default,
{
    let (w, h) = (source.width() as usize, source.height() as usize);
    let channels = usize::from(P::CHANNEL_COUNT);
    let src: &[P::Subpixel] = source.as_raw();
    let row_len = w.checked_mul(channels)?;
    if src.len() < row_len.checked_mul(h)? {
        return None;
    }
    // The turned image is `h` wide and `w` high; (x, y) in it comes from `from(x, y)` in the source.
    let (out_w, out_h) = (h, w);
    let from = move |x: usize, y: usize| -> (usize, usize) {
        match orientation {
            Orientation::Rotate90 => (y, h - 1 - x),
            Orientation::Rotate270 => (w - 1 - y, x),
            Orientation::Rotate90FlipH => (y, x),
            // Rotate270FlipH: the rest of `turns`.
            _ => (w - 1 - y, h - 1 - x),
        }
    };
    let out_row_len = out_w * channels;
    let mut out = vec![P::Subpixel::default(); out_row_len.checked_mul(out_h)?];
    if out.is_empty() {
        return ImageBuffer::from_raw(out_w as u32, out_h as u32, out);
    }
    out.par_chunks_mut(out_row_len * TILE).enumerate().for_each(|(band, rows)| {
        let y0 = band * TILE;
        for x0 in (0..out_w).step_by(TILE) {
            for (dy, row) in rows.chunks_exact_mut(out_row_len).enumerate() {
                let y = y0 + dy;
                for x in x0..(x0 + TILE).min(out_w) {
                    let (sx, sy) = from(x, y);
                    let s = sy * row_len + sx * channels;
                    row[x * channels..(x + 1) * channels].copy_from_slice(&src[s..s + channels]);
                }
            }
        }
    });
    ImageBuffer::from_raw(out_w as u32, out_h as u32, out)
}

/// Where the pixel at (`x`, `y`) of a `width` x `height` image as stored lies once `orientation`
/// is applied, as `image`'s `apply_orientation` moves it.
fn placed(
    orientation: Orientation,
    (x, y): (usize, usize),
    (width, height): (usize, usize),
) -> (usize, usize) {
    match orientation {
        Orientation::NoTransforms => (x, y),
        Orientation::FlipHorizontal => (width - 1 - x, y),
        Orientation::FlipVertical => (x, height - 1 - y),
        Orientation::Rotate180 => (width - 1 - x, height - 1 - y),
        // Turned clockwise, the top row is the right column.
        Orientation::Rotate90 => (height - 1 - y, x),
        Orientation::Rotate270 => (y, width - 1 - x),
        Orientation::Rotate90FlipH => (y, x),
        Orientation::Rotate270FlipH => (height - 1 - y, width - 1 - x),
    }
}

/// Puts `band`, the rows as stored from `first_row` on of a `width` x `height` image of
/// `channels` (1 or 3) 8-bit samples a pixel, where `orientation` moves them in `out`, the whole
/// image as shown (`height` x `width` for a quarter turn): a JPEG decoded a band at a time is
/// turned as it is decoded, never held twice. The same bytes as [`apply_orientation`] on the
/// whole image; with `on_all_cores`, on rayon's threads, a tile of [`TILE`] rows as shown each
/// (never from a thread that rayon's workers may be waiting for), else on the caller's. Rows
/// beyond the image, an `out` of another size, or a turn of other channels are left out.
pub(in crate::io) fn place_band(
    band: &[u8],
    first_row: usize,
    (width, height): (usize, usize),
    (channels, orientation): (usize, Orientation),
    out: &mut [u8],
    on_all_cores: bool,
) {
    let row_len = width * channels;
    let rows = band.len().checked_div(row_len).unwrap_or(0).min(height.saturating_sub(first_row));
    if rows == 0 || out.len() != row_len * height {
        return;
    }
    let size = (width, height);
    // Where the top-left pixel as stored goes says which way the rows and columns run.
    let (corner_x, corner_y) = placed(orientation, (0, 0), size);
    let (right_to_left, bottom_up) = (corner_x != 0, corner_y != 0);
    if !turns(orientation) {
        // A stored row stays a row, perhaps mirrored or moved.
        let shown = |y: usize| placed(orientation, (0, first_row + y), size).1;
        let (top, bottom) = (shown(0).min(shown(rows - 1)), shown(0).max(shown(rows - 1)));
        let rows_out = &mut out[top * row_len..(bottom + 1) * row_len];
        let place = |(k, row_out): (usize, &mut [u8])| {
            // The stored row shown at `top + k`.
            let y = if bottom_up { rows - 1 - k } else { k };
            let row = &band[y * row_len..(y + 1) * row_len];
            if right_to_left {
                for (to, from) in row_out.chunks_exact_mut(channels).zip(row.chunks_exact(channels).rev()) {
                    to.copy_from_slice(from);
                }
            } else {
                row_out.copy_from_slice(row);
            }
        };
        if on_all_cores {
            rows_out.par_chunks_mut(row_len).enumerate().for_each(place);
        } else {
            rows_out.chunks_mut(row_len).enumerate().for_each(place);
        }
        return;
    }
    // A stored column is a row as shown (`height` wide), each stored row one of its columns:
    // the band's rows fill `rows` columns of it, from the left or from the right.
    let band = &band[..rows * row_len];
    let shown_x = if right_to_left { height - first_row - rows } else { first_row };
    let runs = (right_to_left, bottom_up.then_some(width - 1));
    match channels {
        1 => place_columns::<1>(band, (width, height), shown_x, runs, (out, on_all_cores)),
        3 => place_columns::<3>(band, (width, height), shown_x, runs, (out, on_all_cores)),
        _ => {}
    }
}

/// [`place_band`]'s quarter turn of `band` (whole rows as stored of `C` samples a pixel) into
/// `out`: as shown, the band fills the columns from `shown_x` on, its first row leftmost unless
/// `right_to_left`; row `y` as shown is stored column `y`, or `last - y` where `bottom_up` is
/// `Some(last)`; on rayon's threads `on_all_cores`.
fn place_columns<const C: usize>(
    band: &[u8],
    (width, height): (usize, usize),
    shown_x: usize,
    (right_to_left, bottom_up): (bool, Option<usize>),
    (out, on_all_cores): (&mut [u8], bool),
) {
    let (row_len, out_row_len) = (width * C, height * C);
    let rows = band.len() / row_len;
    let place = |(tile, rows_out): (usize, &mut [u8])| {
        for (k, row_out) in rows_out.chunks_exact_mut(out_row_len).enumerate() {
            let shown_y = tile * TILE + k;
            let x = bottom_up.map_or(shown_y, |last| last - shown_y);
            let Some(to) = row_out.get_mut(shown_x * C..(shown_x + rows) * C) else { return };
            let from = band.chunks_exact(row_len).map(|row| &row[x * C..(x + 1) * C]);
            if right_to_left {
                for (to, from) in to.chunks_exact_mut(C).rev().zip(from) {
                    to.copy_from_slice(from);
                }
            } else {
                for (to, from) in to.chunks_exact_mut(C).zip(from) {
                    to.copy_from_slice(from);
                }
            }
        }
    };
    if on_all_cores {
        out.par_chunks_mut(out_row_len * TILE).enumerate().for_each(place);
    } else {
        out.chunks_mut(out_row_len * TILE).enumerate().for_each(place);
    }
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

    #[test]
    fn the_resolution_of_an_exif_block_in_both_byte_orders() {
        for little in [true, false] {
            let b16 = |v: u16| if little { v.to_le_bytes() } else { v.to_be_bytes() };
            let b32 = |v: u32| if little { v.to_le_bytes() } else { v.to_be_bytes() };
            // Three entries (12 bytes each, from 10), the next directory's offset, then the
            // rationals at 50 and 58.
            let mut e = if little { b"II*\0".to_vec() } else { b"MM\0*".to_vec() };
            e.extend_from_slice(&b32(8));
            e.extend_from_slice(&b16(3));
            for (tag, at) in [(282, 50), (283, 58)] {
                e.extend_from_slice(&b16(tag));
                e.extend_from_slice(&b16(5));
                e.extend_from_slice(&b32(1));
                e.extend_from_slice(&b32(at));
            }
            e.extend_from_slice(&b16(296));
            e.extend_from_slice(&b16(3));
            e.extend_from_slice(&b32(1));
            e.extend_from_slice(&b16(3));
            e.extend_from_slice(&[0, 0]);
            e.extend_from_slice(&[0; 4]);
            for v in [600, 2, 150, 1] {
                e.extend_from_slice(&b32(v));
            }
            let density = exif_density(&e).expect("a density");
            assert_eq!((density.x_per_unit, density.y_per_unit), ((600, 2), (150, 1)));
            assert_eq!(density.unit, crate::io::DensityUnit::Centimetre);
            assert_eq!(exif_density(&e[..54]), None, "a rational past the end");
        }
    }
}

/// The eight orientations, as stored first: every test of a turn goes through them all.
#[cfg(test)]
pub(in crate::io) const ALL_ORIENTATIONS: [Orientation; 8] = [
    Orientation::NoTransforms,
    Orientation::Rotate90,
    Orientation::Rotate180,
    Orientation::Rotate270,
    Orientation::FlipHorizontal,
    Orientation::FlipVertical,
    Orientation::Rotate90FlipH,
    Orientation::Rotate270FlipH,
];

#[cfg(test)]
mod turn_tests {
    use super::*;

    /// Every pixel distinct (within the sample's range), so a pixel moved wrongly shows.
    fn images(w: u32, h: u32) -> Vec<DynamicImage> {
        let v = |x: u32, y: u32, c: u32| (x * 7 + y * 131 + c * 29) as u16;
        vec![
            DynamicImage::ImageLuma8(ImageBuffer::from_fn(w, h, |x, y| image::Luma([v(x, y, 0) as u8]))),
            DynamicImage::ImageLumaA8(ImageBuffer::from_fn(w, h, |x, y| {
                image::LumaA([v(x, y, 0) as u8, v(x, y, 1) as u8])
            })),
            DynamicImage::ImageRgb8(ImageBuffer::from_fn(w, h, |x, y| {
                image::Rgb([v(x, y, 0) as u8, v(x, y, 1) as u8, v(x, y, 2) as u8])
            })),
            DynamicImage::ImageRgba8(ImageBuffer::from_fn(w, h, |x, y| {
                image::Rgba([v(x, y, 0) as u8, v(x, y, 1) as u8, v(x, y, 2) as u8, v(x, y, 3) as u8])
            })),
            DynamicImage::ImageLuma16(ImageBuffer::from_fn(w, h, |x, y| image::Luma([v(x, y, 0)]))),
            DynamicImage::ImageRgb16(ImageBuffer::from_fn(w, h, |x, y| {
                image::Rgb([v(x, y, 0), v(x, y, 1), v(x, y, 2)])
            })),
            DynamicImage::ImageRgba16(ImageBuffer::from_fn(w, h, |x, y| {
                image::Rgba([v(x, y, 0), v(x, y, 1), v(x, y, 2), v(x, y, 3)])
            })),
            DynamicImage::ImageRgb32F(ImageBuffer::from_fn(w, h, |x, y| {
                image::Rgb([f32::from(v(x, y, 0)), f32::from(v(x, y, 1)), 0.5])
            })),
        ]
    }

    #[test]
    fn every_orientation_is_images_own_byte_for_byte() {
        // Odd sizes, single rows and columns, and sizes across a tile's edge.
        for (w, h) in [(7, 5), (1, 9), (9, 1), (1, 1), (64, 3), (65, 129), (130, 64)] {
            for image in images(w, h) {
                for orientation in ALL_ORIENTATIONS {
                    let mut theirs = image.clone();
                    theirs.apply_orientation(orientation);
                    let mut ours = image.clone();
                    apply_orientation(&mut ours, orientation);
                    assert_eq!(
                        (ours.color(), ours.width(), ours.height()),
                        (theirs.color(), theirs.width(), theirs.height())
                    );
                    assert!(
                        ours.as_bytes() == theirs.as_bytes(),
                        "{orientation:?} of a {w}x{h} {:?} differs from image's",
                        image.color()
                    );
                }
            }
        }
    }

    #[test]
    fn a_quarter_turn_puts_the_top_left_pixel_where_exif_says() {
        // A 3x2 image; EXIF 6 (Rotate90, clockwise): the top-left pixel goes to the top right.
        let mut image =
            DynamicImage::ImageLuma8(ImageBuffer::from_raw(3, 2, vec![1, 2, 3, 4, 5, 6]).expect("3x2"));
        apply_orientation(&mut image, Orientation::Rotate90);
        assert_eq!((image.width(), image.height()), (2, 3));
        assert_eq!(image.as_bytes(), [4, 1, 5, 2, 6, 3]);
    }
}
