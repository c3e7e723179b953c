//! graylab's TIFF writer: uncompressed gray (`BlackIsZero`), 1, 8 or 16 bits (1: black and
//! white packed 8 pixels a byte, the dither's), gray + alpha as two samples with
//! `ExtraSamples` = 2 (unassociated alpha), in strips; written in one pass without
//! seeking (the directory before the pixels), classic TIFF, or `BigTIFF` past 4 GiB; the
//! `Software` tag says graylab ([`crate::io::mark`]); the resolution is the input's, or 72 dpi;
//! the input's EXIF text tags (make, model, date, description, artist, copyright) as its own,
//! and its exposure, capture dates and lens in an EXIF directory (`ExifIFD`) after the first.
//!
//! The `image` crate's encoder wrote gray + alpha as RGBA without `ExtraSamples` and a
//! `Predictor` tag on uncompressed data, both of which libtiff warns about. Depends on `std`,
//! [`crate::io::codecs::rows::GrayLayout`] and [`crate::io::Density`] only.

use std::io::Write;

use crate::io::codecs::rows::GrayLayout;
use crate::io::mark::SOFTWARE;
use crate::io::{Density, WriteCause};

/// Bytes per strip at most: small strips for readers that load one at a time, few enough that
/// the offset table stays small (libtiff's tools read any size).
const STRIP_BYTES: usize = 256 << 10;

/// Pixel bytes per write, so progress moves while a large image is written.
const WRITE_BYTES: usize = 1 << 20;

/// A field's type, as TIFF numbers it.
#[derive(Clone, Copy)]
enum Type {
    /// Bytes of text, the last a NUL.
    Ascii = 2,
    Short = 3,
    Long = 4,
    /// Two `Long`s: numerator, denominator.
    Rational = 5,
    Long8 = 16,
}

impl Type {
    /// Bytes per stored number (a rational is stored as two `Long`s).
    fn number_bytes(self) -> usize {
        match self {
            Self::Ascii => 1,
            Self::Short => 2,
            Self::Long | Self::Rational => 4,
            Self::Long8 => 8,
        }
    }
}

/// One directory entry: its tag, TIFF type, count of values and their bytes in the file's
/// (native) byte order.
struct Field {
    tag: u16,
    kind: u16,
    count: u64,
    bytes: Vec<u8>,
}

impl Field {
    /// The entry of `values` of type `kind` (a rational's as two numbers).
    fn new(tag: u16, kind: Type, values: &[u64]) -> Self {
        let mut bytes = Vec::with_capacity(values.len() * kind.number_bytes());
        for &v in values {
            match kind {
                Type::Ascii => bytes.push(v as u8),
                Type::Short => bytes.extend_from_slice(&(v as u16).to_ne_bytes()),
                Type::Long | Type::Rational => bytes.extend_from_slice(&(v as u32).to_ne_bytes()),
                Type::Long8 => bytes.extend_from_slice(&v.to_ne_bytes()),
            }
        }
        let count = if matches!(kind, Type::Rational) { values.len() / 2 } else { values.len() };
        Self { tag, kind: kind as u16, count: count as u64, bytes }
    }
}

/// Classic TIFF (32-bit offsets) or `BigTIFF` (64-bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Classic,
    Big,
}

impl Kind {
    fn header_bytes(self) -> usize {
        if self == Self::Big { 16 } else { 8 }
    }

    /// The bytes of an entry's value field: values that fit are stored in it.
    fn inline_bytes(self) -> usize {
        if self == Self::Big { 8 } else { 4 }
    }

    /// The bytes of the directory: its entry count, the entries, the next directory's offset.
    fn directory_bytes(self, entries: usize) -> usize {
        if self == Self::Big { 8 + 20 * entries + 8 } else { 2 + 12 * entries + 4 }
    }

    /// The type of a strip offset or byte count, and of the EXIF directory's offset.
    fn offset_type(self) -> Type {
        if self == Self::Big { Type::Long8 } else { Type::Long }
    }

    /// The bytes of the values of `fields` that do not fit their entries, each padded to even.
    fn outside_bytes(self, fields: &[Field]) -> usize {
        let outside = fields.iter().map(|f| f.bytes.len()).filter(|&n| n > self.inline_bytes());
        outside.map(|n| n.next_multiple_of(2)).sum()
    }
}

/// `ExifIFD`: the offset of the EXIF directory.
const EXIF_IFD: u16 = 34665;

/// Writes `pixels` (rows of `layout`, samples in native byte order) as an uncompressed TIFF of
/// `depth` bits a sample (the layout's [`GrayLayout::bit_depth`], or 1 for gray without alpha
/// packed 8 pixels a byte, most significant bit first, each row padded to whole bytes, as
/// [`crate::io::codecs::png::pack_bits`] packs them), `density` (72 dpi where `None`) and the
/// text tags of `exif`.
pub(in crate::io) fn write_gray_tiff(
    pixels: &[u8],
    (layout, depth, density, exif): (GrayLayout, u8, Option<Density>, Option<&crate::io::KeptMetadata>),
    out: &mut impl Write,
) -> Result<(), WriteCause> {
    let (width, height) = (layout.width, layout.height);
    let row_bytes = tiff_row_bytes(layout, depth);
    if width == 0 || height == 0 || pixels.len() != row_bytes * height as usize {
        return Err(WriteCause::Encoder(format!("{} bytes for a {width}x{height} TIFF", pixels.len())));
    }
    let rows_per_strip = (STRIP_BYTES / row_bytes).clamp(1, height as usize);
    let strips = (height as usize).div_ceil(rows_per_strip);
    let head = match directory(Kind::Classic, (layout, depth, density, exif), rows_per_strip, strips) {
        Some(head) if u32::try_from(head.len() + pixels.len()).is_ok() => head,
        _ => directory(Kind::Big, (layout, depth, density, exif), rows_per_strip, strips)
            .ok_or_else(|| WriteCause::Encoder(format!("a {width}x{height} TIFF has too many strips")))?,
    };
    out.write_all(&head)?;
    for piece in pixels.chunks(WRITE_BYTES) {
        out.write_all(piece)?;
    }
    Ok(())
}

/// Bytes a row of `layout` takes at `depth` bits a sample (1: packed, padded to whole bytes).
fn tiff_row_bytes(layout: GrayLayout, depth: u8) -> usize {
    if depth == 1 { (layout.width as usize).div_ceil(8) } else { layout.row_bytes() }
}

/// The header, the one directory and its values, which the pixels follow: `None` when the
/// fields do not fit `kind`'s offsets.
fn directory(
    kind: Kind,
    (layout, depth, density, exif): (GrayLayout, u8, Option<Density>, Option<&crate::io::KeptMetadata>),
    rows_per_strip: usize,
    strips: usize,
) -> Option<Vec<u8>> {
    let samples = 1 + u64::from(layout.alpha);
    let bits = u64::from(depth);
    let row_bytes = tiff_row_bytes(layout, depth) as u64;
    let strip_bytes = rows_per_strip as u64 * row_bytes;
    let last_strip_bytes = u64::from(layout.height) * row_bytes - (strips as u64 - 1) * strip_bytes;
    let mut counts = vec![strip_bytes; strips];
    *counts.last_mut()? = last_strip_bytes;
    let offset_type = kind.offset_type();
    // The input's resolution; else 72 pixels per inch, as libtiff's tools assume when none is given.
    let ((x, x_per), (y, y_per), unit) = density.map_or(((72, 1), (72, 1), 2), Density::tiff_fields);
    let mut fields = vec![
        Field::new(256, Type::Long, &[u64::from(layout.width)]),
        Field::new(257, Type::Long, &[u64::from(layout.height)]),
        Field::new(258, Type::Short, &vec![bits; samples as usize]),
        // No compression, and so no predictor.
        Field::new(259, Type::Short, &[1]),
        // BlackIsZero (at 1 bit: a 1 is white).
        Field::new(262, Type::Short, &[1]),
        // The strip offsets, filled in below once the directory's size is known.
        Field::new(273, offset_type, &vec![0; strips]),
        Field::new(277, Type::Short, &[samples]),
        Field::new(278, Type::Long, &[rows_per_strip as u64]),
        Field::new(279, offset_type, &counts),
        Field::new(282, Type::Rational, &[u64::from(x), u64::from(x_per)]),
        Field::new(283, Type::Rational, &[u64::from(y), u64::from(y_per)]),
        // Samples interleaved (chunky).
        Field::new(284, Type::Short, &[1]),
        Field::new(296, Type::Short, &[u64::from(unit)]),
        // graylab's mark (see `crate::io::mark`).
        Field::new(305, Type::Ascii, &SOFTWARE.bytes().chain([0]).map(u64::from).collect::<Vec<_>>()),
    ];
    if layout.alpha {
        // Unassociated (straight) alpha.
        fields.push(Field::new(338, Type::Short, &[2]));
    }
    for (tag, text) in exif.map(crate::io::KeptMetadata::text_tags).unwrap_or_default() {
        fields.push(Field::new(tag, Type::Ascii, &text.into_iter().map(u64::from).collect::<Vec<_>>()));
    }
    // The XMP packet: tag 700, of bytes.
    if let Some(packet) = exif.and_then(crate::io::KeptMetadata::xmp_packet) {
        fields.push(Field { tag: 700, kind: 1, count: packet.len() as u64, bytes: packet });
    }
    // The input's exposure, dates and lens, in an EXIF directory after the first one's values.
    let shot = exif.map(|e| e.shot_in(cfg!(target_endian = "little"))).unwrap_or_default();
    let shot: Vec<Field> = shot
        .into_iter()
        .map(|e| Field { tag: e.tag, kind: e.kind, count: u64::from(e.count), bytes: e.value })
        .collect();
    if !shot.is_empty() {
        fields.push(Field::new(EXIF_IFD, offset_type, &[0]));
    }
    // A directory's entries ascend by tag.
    fields.sort_by_key(|f| f.tag);
    let shot_at = kind.header_bytes() + kind.directory_bytes(fields.len()) + kind.outside_bytes(&fields);
    let pixels_at = match shot.len() {
        0 => shot_at,
        n => shot_at + kind.directory_bytes(n) + kind.outside_bytes(&shot),
    } as u64;
    let offsets: Vec<u64> = (0..strips as u64).map(|s| pixels_at + s * strip_bytes).collect();
    if kind == Kind::Classic && u32::try_from(*offsets.last()?).is_err() {
        return None;
    }
    for field in &mut fields {
        match field.tag {
            273 => *field = Field::new(273, offset_type, &offsets),
            EXIF_IFD => *field = Field::new(EXIF_IFD, offset_type, &[shot_at as u64]),
            _ => {}
        }
    }
    let mut head = header(kind);
    serialise(kind, &fields, &mut head);
    if !shot.is_empty() {
        serialise(kind, &shot, &mut head);
    }
    Some(head)
}

/// The file's header, in native byte order, pointing to the directory right after it.
fn header(kind: Kind) -> Vec<u8> {
    let mut head = Vec::with_capacity(kind.header_bytes());
    head.extend_from_slice(if cfg!(target_endian = "big") { b"MM" } else { b"II" });
    if kind == Kind::Big {
        for word in [43u16, 8, 0] {
            head.extend_from_slice(&word.to_ne_bytes());
        }
        head.extend_from_slice(&16u64.to_ne_bytes());
    } else {
        head.extend_from_slice(&42u16.to_ne_bytes());
        head.extend_from_slice(&8u32.to_ne_bytes());
    }
    head
}

/// Appends a directory of `fields` at the end of `head` (its offset in the file), without a
/// next one, then the values that do not fit their entries.
fn serialise(kind: Kind, fields: &[Field], head: &mut Vec<u8>) {
    let values_at = head.len() + kind.directory_bytes(fields.len());
    let mut values = Vec::new();
    // An offset or a count: 64-bit in a `BigTIFF`, else 32-bit.
    let offset = |head: &mut Vec<u8>, value: u64| match kind {
        Kind::Big => head.extend_from_slice(&value.to_ne_bytes()),
        Kind::Classic => head.extend_from_slice(&(value as u32).to_ne_bytes()),
    };
    match kind {
        Kind::Big => head.extend_from_slice(&(fields.len() as u64).to_ne_bytes()),
        Kind::Classic => head.extend_from_slice(&(fields.len() as u16).to_ne_bytes()),
    }
    for field in fields {
        head.extend_from_slice(&field.tag.to_ne_bytes());
        head.extend_from_slice(&field.kind.to_ne_bytes());
        offset(head, field.count);
        let inline = kind.inline_bytes();
        if field.bytes.len() <= inline {
            head.extend_from_slice(&field.bytes);
            head.resize(head.len() + inline - field.bytes.len(), 0);
        } else {
            offset(head, (values_at + values.len()) as u64);
            values.extend_from_slice(&field.bytes);
            if values.len() % 2 == 1 {
                values.push(0);
            }
        }
    }
    // No next directory.
    offset(head, 0);
    head.extend_from_slice(&values);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(width: u32, height: u32, alpha: bool, sixteen_bit: bool) -> GrayLayout {
        GrayLayout { width, height, alpha, sixteen_bit }
    }

    #[test]
    fn the_directory_ends_where_the_first_strip_begins() {
        for (l, rows) in [(layout(5, 3, true, true), 3), (layout(70_000, 10, false, false), 3)] {
            let strips = (l.height as usize).div_ceil(rows);
            for kind in [Kind::Classic, Kind::Big] {
                let head = directory(kind, (l, l.bit_depth(), None, None), rows, strips).expect("fits");
                let pixels = vec![7u8; l.row_bytes() * l.height as usize];
                let mut file = head.clone();
                file.extend_from_slice(&pixels);
                let mut decoder = tiff::decoder::Decoder::new(std::io::Cursor::new(file)).expect("a TIFF");
                assert_eq!(decoder.dimensions().expect("size"), (l.width, l.height));
                let read = match decoder.read_image().expect("pixels") {
                    tiff::decoder::DecodingResult::U8(v) => v,
                    tiff::decoder::DecodingResult::U16(v) => v.iter().flat_map(|s| s.to_ne_bytes()).collect(),
                    _ => panic!("8 or 16-bit"),
                };
                assert_eq!(read, pixels);
            }
        }
    }

    /// The EXIF tags the header walk of the TIFF at `path` (its bytes `file`) keeps.
    fn tiff_exif(path: &std::path::Path, file: &[u8]) -> Option<std::sync::Arc<crate::io::KeptMetadata>> {
        crate::io::read::claims::check_claims(path, file, image::ImageFormat::Tiff).ok()?.metadata
    }

    #[test]
    fn the_inputs_exif_and_xmp_are_written_in_its_own_directory_and_read_back_classic_and_big() {
        use crate::io::exif::{Entry, KeptMetadata};
        // A big-endian camera's tags: the make in IFD0; the exposure 1/250 s, ISO 400 and the
        // lens in the EXIF directory.
        let entry = |tag, kind, count, value: &[u8]| Entry { tag, kind, count, value: value.to_vec() };
        let ifd0 = vec![entry(0x010F, 2, 6, b"Canon\0")];
        let shot = vec![
            entry(0x829A, 5, 1, &[0, 0, 0, 1, 0, 0, 0, 250]),
            entry(0x8827, 3, 1, &[1, 144]),
            entry(0xA434, 2, 8, b"RF 50mm\0"),
        ];
        let packet = br#"<x xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Meadow</dc:title></x>"#;
        let xmp = crate::io::Xmp::kept(packet);
        let exif = KeptMetadata::with_xmp(KeptMetadata::of_entries(false, ifd0, shot), xmp).expect("tags");
        let dir = tempfile::tempdir().expect("temp dir");
        let l = layout(9, 4, false, false);
        let pixels: Vec<u8> = (0..36).collect();
        for kind in [Kind::Classic, Kind::Big] {
            let mut file = directory(kind, (l, 8, None, Some(&exif)), 3, 2).expect("fits");
            file.extend_from_slice(&pixels);
            let path = dir.path().join("out.tif");
            std::fs::write(&path, &file).expect("write");
            let read = tiff_exif(&path, &file).expect("the tags read back");
            assert_eq!(read.text_tags(), exif.text_tags());
            let native = cfg!(target_endian = "little");
            assert_eq!(read.shot_in(native), exif.shot_in(native));
            assert_eq!(read.shot_in(false), exif.shot_in(false), "swapped back to the camera's order");
            assert_eq!(read.shot_in(native)[1].value, 400u16.to_ne_bytes());
            assert_eq!(
                (read.xmp(), read.xmp().map(crate::io::Xmp::properties)),
                (exif.xmp(), Some(1)),
                "{kind:?}"
            );
            // The pixels are still where the strips say.
            let mut decoder = tiff::decoder::Decoder::new(std::io::Cursor::new(&file)).expect("a TIFF");
            let tiff::decoder::DecodingResult::U8(read) = decoder.read_image().expect("pixels") else {
                panic!("8-bit")
            };
            assert_eq!(read, pixels);
            // Any byte of the directories changed: no panic, and what is read is written and read
            // back as it is.
            let head = file.len() - pixels.len();
            for (at, flip) in (0..head).flat_map(|at| [(at, 0xFF), (at, 0x01), (at, 0x80)]) {
                let mut damaged = file.clone();
                damaged[at] ^= flip;
                std::fs::write(&path, &damaged).expect("write");
                if let Some(read) = tiff_exif(&path, &damaged) {
                    let block = crate::io::exif::block(Some(&read));
                    let tags = (read.tags() > 0).then(|| KeptMetadata::with_xmp(Some((*read).clone()), None));
                    assert_eq!(KeptMetadata::of_exif(&block), tags.flatten(), "byte {at} ^ {flip:#x}");
                    let again = read.xmp().and_then(|x| crate::io::Xmp::kept(&x.packet()));
                    assert_eq!(again.as_ref(), read.xmp(), "byte {at} ^ {flip:#x}");
                }
            }
        }
    }

    #[test]
    fn empty_or_short_pixels_are_refused() {
        let mut out = Vec::new();
        assert!(write_gray_tiff(&[], (layout(0, 0, false, false), 8, None, None), &mut out).is_err());
        assert!(write_gray_tiff(&[1, 2], (layout(3, 1, false, false), 8, None, None), &mut out).is_err());
        assert!(write_gray_tiff(&[1, 2], (layout(9, 2, false, false), 1, None, None), &mut out).is_err());
        assert!(out.is_empty());
    }
}
