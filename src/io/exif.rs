//! The metadata an output keeps of its input's ([`KeptMetadata`]): its EXIF, read and written
//! here, and its XMP ([`crate::io::xmp`]). Of the EXIF, what a photographer sorts and credits by
//! (the camera, the lens, the exposure, the capture date, the artist and the copyright), read
//! from the input's EXIF block (a TIFF's own directories: `read/claims/tiff.rs`, by
//! [`kept_value_len`]) and written as a new one, in the input's byte order, with graylab's
//! `Software` tag (its mark in a WebP, see [`crate::io::mark`]); a TIFF output takes them as
//! tags of its own and an EXIF directory ([`KeptMetadata::text_tags`],
//! [`KeptMetadata::shot_in`]). Its reader of the block's TIFF structure also gives the
//! orientation and resolution readers their values ([`ifd0_value`]).
//!
//! Dropped on purpose: the location (the GPS directory: a shared photo should not say where it
//! was taken unless asked), maker notes (their offsets break once moved), the thumbnail (a
//! colour picture of the input), and every tag that describes the stored pixels (orientation,
//! size, colour space), which the output's own header says.

/// `IFD0` tags kept: `ImageDescription`, `Make`, `Model`, `DateTime`, `Artist`, `Copyright`.
const KEPT_IFD0: [u16; 6] = [0x010E, 0x010F, 0x0110, 0x0132, 0x013B, 0x8298];
/// EXIF directory tags kept: the exposure (time, f-number, program, ISO, shutter, aperture, bias,
/// maximum aperture, metering, flash, focal length, 35 mm focal length, exposure mode, white
/// balance, scene type), the EXIF version, the capture dates with their zones and sub-seconds,
/// and the camera's owner, serial number and lens (make, model, specification).
const KEPT_EXIF: [u16; 30] = [
    0x829A, 0x829D, 0x8822, 0x8827, 0x8830, 0x8832, 0x9000, 0x9003, 0x9004, 0x9010, 0x9011, 0x9012, 0x9201,
    0x9202, 0x9204, 0x9205, 0x9207, 0x9209, 0x920A, 0x9290, 0x9291, 0x9292, 0xA402, 0xA403, 0xA405, 0xA406,
    0xA430, 0xA431, 0xA432, 0xA434,
];
/// The tags graylab writes itself, as (tag, TIFF type): `Software` (its name, ASCII) and the
/// pointer to the EXIF directory (a LONG).
const SOFTWARE: (u16, u16) = (0x0131, 2);
const EXIF_POINTER: (u16, u16) = (0x8769, 4);
/// The tag of `IFD0`'s pointer to the EXIF directory (in a TIFF file too).
pub(in crate::io) const EXIF_POINTER_TAG: u16 = EXIF_POINTER.0;

/// A directory whose tags an export keeps: the first (`IFD0`), or the EXIF directory it points
/// to (the shot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) enum Directory {
    /// `IFD0`: the camera, the date, the credits.
    First,
    /// The EXIF directory: the exposure, the dates, the lens.
    Shot,
}

impl Directory {
    fn kept(self) -> &'static [u16] {
        match self {
            Self::First => &KEPT_IFD0,
            Self::Shot => &KEPT_EXIF,
        }
    }
}

/// What an output keeps of its input's metadata: the EXIF tags, each value as the input stored
/// it, and the properties of its XMP packet ([`KeptMetadata::xmp`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptMetadata {
    little: bool,
    ifd0: Vec<Entry>,
    /// The EXIF directory's: the shot (exposure, dates, lens).
    shot: Vec<Entry>,
    /// The kept XMP properties, where the input has some.
    xmp: Option<crate::io::Xmp>,
}

/// One tag: its type, its count of values and their bytes (in the block's byte order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::io) struct Entry {
    /// The tag.
    pub tag: u16,
    /// Its TIFF type (2 ASCII, 3 SHORT, 5 RATIONAL, …).
    pub kind: u16,
    /// Its count of values.
    pub count: u32,
    /// The values' bytes.
    pub value: Vec<u8>,
}

/// The bytes a value of TIFF type `kind` takes and the bytes of each number in it (a RATIONAL
/// is two LONGs), for the types an EXIF block holds; `None` for others.
fn sizes(kind: u16) -> Option<(usize, usize)> {
    match kind {
        1 | 2 | 6 | 7 => Some((1, 1)),
        3 | 8 => Some((2, 2)),
        4 | 9 | 11 => Some((4, 4)),
        5 | 10 => Some((8, 4)),
        12 => Some((8, 8)),
        _ => None,
    }
}

/// The length in bytes of the value of `tag`, of TIFF type `kind` and `count` values, where an
/// export keeps it in `directory`; `None` for a tag not kept, a type no EXIF block holds, or a
/// value longer than [`MAX_VALUE_BYTES`] (dropped, not cut).
pub(in crate::io) fn kept_value_len(directory: Directory, tag: u16, kind: u16, count: u64) -> Option<usize> {
    directory.kept().contains(&tag).then(|| value_len(kind, count)).flatten()
}

/// The length in bytes of a value of TIFF type `kind` and `count` values, where an EXIF block
/// may hold it and it is at most [`MAX_VALUE_BYTES`].
fn value_len(kind: u16, count: u64) -> Option<usize> {
    let len = usize::try_from(count).ok()?.checked_mul(sizes(kind)?.0)?;
    (len > 0 && len <= MAX_VALUE_BYTES).then_some(len)
}

impl KeptMetadata {
    /// The kept tags of an EXIF block (a TIFF structure, with or without the `Exif\0\0` of a
    /// JPEG's APP1 in front); `None` when it is no TIFF structure or keeps nothing. A damaged
    /// entry is skipped, never trusted.
    #[must_use]
    pub fn of_exif(block: &[u8]) -> Option<Self> {
        let (read, ifd0_at) = Reader::of(block)?;
        let ifd0 = read.entries(ifd0_at, Directory::First);
        let shot = read.pointer(ifd0_at, EXIF_POINTER.0).map(|at| read.entries(at, Directory::Shot));
        Self::of_entries(read.little, ifd0, shot.unwrap_or_default())
    }

    /// The tags of `ifd0` and `shot` (each read with [`kept_value_len`], in the byte order of
    /// `little`), in tag order, the first of a tag given twice; `None` when both are empty.
    pub(in crate::io) fn of_entries(
        little: bool,
        mut ifd0: Vec<Entry>,
        mut shot: Vec<Entry>,
    ) -> Option<Self> {
        for entries in [&mut ifd0, &mut shot] {
            entries.sort_by_key(|e| e.tag);
            entries.dedup_by_key(|e| e.tag);
        }
        (!ifd0.is_empty() || !shot.is_empty()).then_some(Self { little, ifd0, shot, xmp: None })
    }

    /// `exif`'s tags with the XMP properties `xmp`; `None` where both are.
    pub(in crate::io) fn with_xmp(exif: Option<Self>, xmp: Option<crate::io::Xmp>) -> Option<Self> {
        match exif {
            Some(exif) => Some(Self { xmp, ..exif }),
            None => xmp.map(|xmp| Self { little: true, ifd0: Vec::new(), shot: Vec::new(), xmp: Some(xmp) }),
        }
    }

    /// `first`'s tags, else `second`'s, with `first`'s XMP properties, else `second`'s: what
    /// two reads of one file found (a decoder's and the walk over the file's chunks).
    pub(in crate::io) fn merged(
        first: Option<std::sync::Arc<Self>>,
        second: Option<std::sync::Arc<Self>>,
    ) -> Option<std::sync::Arc<Self>> {
        let (Some(a), Some(b)) = (&first, &second) else { return first.or(second) };
        let tags = if a.tags() > 0 { a } else { b };
        let xmp = a.xmp.as_ref().or(b.xmp.as_ref()).cloned();
        Some(std::sync::Arc::new(Self { xmp, ..(**tags).clone() }))
    }

    /// The kept XMP properties, where the input has some.
    #[must_use]
    pub fn xmp(&self) -> Option<&crate::io::Xmp> {
        self.xmp.as_ref()
    }

    /// The XMP packet an output holds, where there are XMP properties to keep.
    pub(in crate::io) fn xmp_packet(&self) -> Option<Vec<u8>> {
        self.xmp.as_ref().map(crate::io::Xmp::packet)
    }

    /// The kept text tags of `IFD0` (make, model, date, description, artist, copyright) with
    /// their values, each ending in a NUL: what a TIFF output holds in its own directory.
    pub(crate) fn text_tags(&self) -> Vec<(u16, Vec<u8>)> {
        let ascii = self.ifd0.iter().filter(|e| e.kind == SOFTWARE.1);
        ascii
            .map(|e| (e.tag, [e.value.split(|&b| b == 0).next().unwrap_or_default(), b"\0"].concat()))
            .collect()
    }

    /// The kept tags of the EXIF directory, each value's numbers in the byte order of
    /// `little`: what a TIFF output holds in its own EXIF directory.
    pub(in crate::io) fn shot_in(&self, little: bool) -> Vec<Entry> {
        let mut shot = self.shot.clone();
        if little != self.little {
            for e in &mut shot {
                let unit = sizes(e.kind).map_or(1, |(_, unit)| unit);
                e.value.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
            }
        }
        shot
    }

    /// How many tags are kept.
    #[must_use]
    pub fn tags(&self) -> usize {
        self.ifd0.len() + self.shot.len()
    }
}

/// The one value of `tag` in the first directory of an EXIF block (as
/// [`KeptMetadata::of_exif`] reads it),
/// of a TIFF type in `kinds`: a SHORT or LONG (signed or not) as `[value, 0]`, a RATIONAL as
/// `[numerator, denominator]`; `None` where there is no such entry of one value.
pub(in crate::io) fn ifd0_value(block: &[u8], tag: u16, kinds: &[u16]) -> Option<[u32; 2]> {
    let (read, at) = Reader::of(block)?;
    let count = usize::from(read.u16(at)?).min(MAX_ENTRIES);
    let e = (0..count).find_map(|k| {
        read.entry(at + 2 + 12 * k, &[tag]).filter(|e| e.count == 1 && kinds.contains(&e.kind))
    })?;
    let value = Reader { tiff: &e.value, little: read.little };
    match e.kind {
        3 | 8 => Some([u32::from(value.u16(0)?), 0]),
        4 | 9 => Some([value.u32(0)?, 0]),
        _ => Some([value.u32(0)?, value.u32(4)?]),
    }
}

/// The kept tags of the EXIF block `decoder` reads, with the kept properties of its XMP
/// packet, shared by the exports of the image; what `known` (the walk over the file) already
/// holds is not read again.
pub(in crate::io) fn of_decoder(
    decoder: &mut impl image::ImageDecoder,
    known: Option<&KeptMetadata>,
) -> Option<std::sync::Arc<KeptMetadata>> {
    let exif = known.is_none_or(|k| k.tags() == 0).then(|| decoder.exif_metadata().ok().flatten());
    let exif = exif.flatten().and_then(|block| KeptMetadata::of_exif(&block));
    let xmp = known.is_none_or(|k| k.xmp.is_none()).then(|| decoder.xmp_metadata().ok().flatten());
    let xmp = xmp.flatten().and_then(|packet| crate::io::Xmp::kept(&packet));
    KeptMetadata::with_xmp(exif, xmp).map(std::sync::Arc::new)
}

/// The EXIF block graylab writes: `kept`'s tags (none for `None`), with `Software` = graylab,
/// as a TIFF structure without the `Exif\0\0` of a JPEG's APP1.
pub(crate) fn block(kept: Option<&KeptMetadata>) -> Vec<u8> {
    let little = kept.is_none_or(|k| k.little);
    let value = format!("{}\0", crate::io::mark::SOFTWARE).into_bytes();
    let software = Entry { tag: SOFTWARE.0, kind: SOFTWARE.1, count: value.len() as u32, value };
    let mut ifd0: Vec<Entry> = kept.map(|k| k.ifd0.clone()).unwrap_or_default();
    ifd0.push(software);
    let shot: &[Entry] = kept.map_or(&[], |k| &k.shot);
    if !shot.is_empty() {
        ifd0.push(Entry { tag: EXIF_POINTER.0, kind: EXIF_POINTER.1, count: 1, value: vec![0; 4] });
    }
    ifd0.sort_by_key(|e| e.tag);
    let shot_at = 8 + directory_bytes(&ifd0);
    let mut out = if little { b"II*\0".to_vec() } else { b"MM\0*".to_vec() };
    put(&mut out, 8, 4, little);
    for e in ifd0.iter_mut().filter(|e| e.tag == EXIF_POINTER.0) {
        e.value.clear();
        put(&mut e.value, shot_at, 4, little);
    }
    write_directory(&mut out, &ifd0, little);
    if !shot.is_empty() {
        write_directory(&mut out, shot, little);
    }
    out
}

/// The bytes of a directory of `entries` with its values stored after it.
fn directory_bytes(entries: &[Entry]) -> usize {
    2 + 12 * entries.len()
        + 4
        + entries.iter().filter(|e| e.value.len() > 4).map(|e| even(e.value.len())).sum::<usize>()
}

/// Appends a directory of `entries` (sorted by tag) and then the values longer than 4 bytes,
/// `Software`'s first (where the mark's reader looks, within its first bytes); no next directory.
fn write_directory(out: &mut Vec<u8>, entries: &[Entry], little: bool) {
    let start = out.len();
    let mut values_at = start + 2 + 12 * entries.len() + 4;
    let mut order: Vec<&Entry> = entries.iter().filter(|e| e.value.len() > 4).collect();
    order.sort_by_key(|e| e.tag != SOFTWARE.0);
    let mut offsets = Vec::with_capacity(order.len());
    for e in &order {
        offsets.push((e.tag, values_at));
        values_at += even(e.value.len());
    }
    put(out, entries.len(), 2, little);
    for e in entries {
        put(out, usize::from(e.tag), 2, little);
        put(out, usize::from(e.kind), 2, little);
        put(out, e.count as usize, 4, little);
        if let Some(&(_, at)) = offsets.iter().find(|(tag, _)| *tag == e.tag) {
            put(out, at, 4, little);
        } else {
            out.extend_from_slice(&e.value);
            out.resize(out.len() + 4 - e.value.len(), 0);
        }
    }
    put(out, 0, 4, little);
    for e in order {
        out.extend_from_slice(&e.value);
        out.resize(out.len() + (e.value.len() & 1), 0);
    }
}

/// `n` rounded up to an even number: a value starts on a word boundary.
fn even(n: usize) -> usize {
    n + (n & 1)
}

/// Appends the low `bytes` bytes of `value` in the block's byte order.
fn put(out: &mut Vec<u8>, value: usize, bytes: usize, little: bool) {
    let all = (value as u64).to_le_bytes();
    let low = &all[..bytes];
    if little {
        out.extend_from_slice(low);
    } else {
        out.extend(low.iter().rev());
    }
}

/// Entries read of a directory at most.
const MAX_ENTRIES: usize = 1024;
/// The longest value kept (a longer description or copyright is dropped, not cut): the block
/// stays far below a JPEG segment's 64 KiB.
const MAX_VALUE_BYTES: usize = 1024;

/// Reads a TIFF structure's numbers in its byte order; every read past its end is `None`.
struct Reader<'a> {
    tiff: &'a [u8],
    little: bool,
}

impl<'a> Reader<'a> {
    /// The reader of an EXIF block (with or without the `Exif\0\0` of a JPEG's APP1 in front)
    /// and the offset of its first directory; `None` when it is no TIFF structure.
    fn of(block: &'a [u8]) -> Option<(Self, usize)> {
        let tiff = block.strip_prefix(b"Exif\0\0").unwrap_or(block);
        let little = match tiff.get(..4)? {
            b"II*\0" => true,
            b"MM\0*" => false,
            _ => return None,
        };
        let read = Self { tiff, little };
        let ifd0_at = read.u32(4)? as usize;
        Some((read, ifd0_at))
    }

    fn bytes<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let mut b: [u8; N] = self.tiff.get(at..at.checked_add(N)?)?.try_into().ok()?;
        if !self.little {
            b.reverse();
        }
        Some(b)
    }

    fn u16(&self, at: usize) -> Option<u16> {
        self.bytes::<2>(at).map(u16::from_le_bytes)
    }

    fn u32(&self, at: usize) -> Option<u32> {
        self.bytes::<4>(at).map(u32::from_le_bytes)
    }

    /// The offset that the LONG `tag` of the directory at `at` points to.
    fn pointer(&self, at: usize, tag: u16) -> Option<usize> {
        let count = usize::from(self.u16(at)?).min(MAX_ENTRIES);
        (0..count).map(|k| at + 2 + 12 * k).find_map(|entry| {
            let one_long = self.u16(entry)? == tag
                && self.u16(entry + 2)? == EXIF_POINTER.1
                && self.u32(entry + 4)? == 1;
            one_long.then(|| self.u32(entry + 8)).flatten().map(|v| v as usize)
        })
    }

    /// The entries of the tags kept in `directory`, at `at`, each with its value's bytes.
    fn entries(&self, at: usize, directory: Directory) -> Vec<Entry> {
        let count = self.u16(at).map_or(0, |n| usize::from(n).min(MAX_ENTRIES));
        (0..count).filter_map(|k| self.entry(at + 2 + 12 * k, directory.kept())).collect()
    }

    /// The entry at `entry` where its tag is one of `kept`.
    fn entry(&self, entry: usize, kept: &[u16]) -> Option<Entry> {
        let tag = self.u16(entry)?;
        if !kept.contains(&tag) {
            return None;
        }
        let kind = self.u16(entry + 2)?;
        let count = self.u32(entry + 4)?;
        let len = value_len(kind, u64::from(count))?;
        let at = if len <= 4 { entry + 8 } else { self.u32(entry + 8)? as usize };
        let value = self.tiff.get(at..at.checked_add(len)?)?.to_vec();
        Some(Entry { tag, kind, count, value })
    }
}

#[cfg(test)]
mod tests {
    //! The kept tags of a camera's EXIF block in both byte orders, and the block graylab writes.

    use super::*;

    /// A number of `bytes` bytes in the byte order of `little`.
    fn number(value: u32, bytes: usize, little: bool) -> Vec<u8> {
        let all = value.to_le_bytes();
        if little { all[..bytes].to_vec() } else { all[..bytes].iter().rev().copied().collect() }
    }

    /// A directory entry as laid out: tag, type, count, the value or its offset.
    type Raw = (u16, u16, u32, u32);

    /// A camera's block: IFD0 (make, model, orientation 6, software, date, the EXIF and GPS
    /// pointers) with a thumbnail directory after it, the EXIF directory (exposure time, ISO,
    /// capture date, a maker note, the pixel width) and a GPS directory. Laid out by hand: IFD0 at
    /// 8 (7 entries, to 98), its values to 142, the EXIF directory at 160 (5 entries, to 226), its
    /// values to 270, GPS at 270 (to 288), its value to 312, IFD1 at 312.
    fn camera(little: bool) -> Vec<u8> {
        // Each directory at its offset, with the offset of the next.
        let directories: [(usize, &[Raw], u32); 4] = [
            (
                8,
                &[
                    (0x010F, 2, 6, 98),
                    (0x0110, 2, 7, 104),
                    (0x0112, 3, 1, 6),
                    (0x0131, 2, 10, 112),
                    (0x0132, 2, 20, 122),
                    (0x8769, 4, 1, 160),
                    (0x8825, 4, 1, 270),
                ],
                312,
            ),
            (
                160,
                &[
                    (0x829A, 5, 1, 262),
                    (0x8827, 3, 1, 400),
                    (0x9003, 2, 20, 226),
                    (0x927C, 7, 16, 246),
                    (0xA002, 4, 1, 8192),
                ],
                0,
            ),
            (270, &[(0x0002, 5, 3, 288)], 0),
            (312, &[(0x0201, 4, 1, 400), (0x0202, 4, 1, 100)], 0),
        ];
        let date = b"2026:12:01 10:00:00\0";
        let exposure = [number(1, 4, little), number(250, 4, little)].concat();
        let values: [(usize, &[u8]); 6] = [
            (98, b"Canon\0EOS R5\0\0Camera FW\0"),
            (122, date),
            (226, date),
            (246, &[0xAB; 16]),
            (262, &exposure),
            (288, &[0x11; 24]),
        ];
        let mut out = vec![0; 342];
        out[..4].copy_from_slice(if little { b"II*\0" } else { b"MM\0*" });
        out[4..8].copy_from_slice(&number(8, 4, little));
        for (at, entries, next) in directories {
            let mut d = number(entries.len() as u32, 2, little);
            for &(tag, kind, count, value) in entries {
                d.extend(
                    [
                        number(u32::from(tag), 2, little),
                        number(u32::from(kind), 2, little),
                        number(count, 4, little),
                    ]
                    .concat(),
                );
                // A SHORT sits in the first two bytes of the value field.
                d.extend(if kind == 3 {
                    [number(value, 2, little), vec![0, 0]].concat()
                } else {
                    number(value, 4, little)
                });
            }
            d.extend(number(next, 4, little));
            out[at..at + d.len()].copy_from_slice(&d);
        }
        for (at, bytes) in values {
            out[at..at + bytes.len()].copy_from_slice(bytes);
        }
        out
    }

    #[test]
    fn a_cameras_block_keeps_the_camera_the_exposure_and_the_date_in_both_byte_orders() {
        for little in [true, false] {
            let input = camera(little);
            assert_eq!(
                crate::io::read::orientation::exif_orientation(&input),
                Some(image::metadata::Orientation::Rotate90)
            );
            let kept = KeptMetadata::of_exif(&input).expect("kept tags");
            let tags = |e: &[Entry]| e.iter().map(|e| e.tag).collect::<Vec<_>>();
            // Make, Model, DateTime; not the orientation, the software, the pointers.
            assert_eq!(tags(&kept.ifd0), [0x010F, 0x0110, 0x0132], "little {little}");
            // Exposure time, ISO, capture date; not the maker note, the pixel width.
            assert_eq!(tags(&kept.shot), [0x829A, 0x8827, 0x9003], "little {little}");
            assert_eq!(kept.ifd0[0].value, b"Canon\0");
            assert_eq!(kept.shot[2].value, b"2026:12:01 10:00:00\0");
            assert_eq!(kept.tags(), 6);

            let written = block(Some(&kept));
            assert_eq!(&written[..4], &input[..4], "the input's byte order");
            // Read back: the same tags, graylab's software, no orientation, nothing after IFD0.
            assert_eq!(KeptMetadata::of_exif(&written), Some(kept.clone()), "little {little}");
            assert_eq!(crate::io::mark::tiff_software(&written), Some(&b"graylab"[..]));
            assert_eq!(crate::io::read::orientation::exif_orientation(&written), None);
            let read = Reader { tiff: &written, little };
            let ifd0 = read.u32(4).expect("IFD0") as usize;
            let entries = usize::from(read.u16(ifd0).expect("count"));
            assert_eq!(entries, 5, "make, model, software, date, EXIF pointer");
            assert_eq!(read.u32(ifd0 + 2 + 12 * entries), Some(0), "no thumbnail directory");
            assert_eq!(read.pointer(ifd0, 0x8825), None, "no GPS directory");
            assert!(!written.windows(16).any(|w| w == [0xAB; 16]), "no maker note");
            assert!(!written.windows(24).any(|w| w == [0x11; 24]), "no location");
        }
    }

    #[test]
    fn graylabs_own_block_is_the_mark_alone() {
        let mark = block(None);
        assert_eq!(mark.len(), 34);
        assert_eq!(crate::io::mark::tiff_software(&mark), Some(&b"graylab"[..]));
        assert_eq!(
            KeptMetadata::of_exif(&mark),
            None,
            "the software tag is not kept: graylab writes its own"
        );
        let mut other = mark.clone();
        other[26] = b'G';
        assert_eq!(
            crate::io::mark::tiff_software(&other),
            Some(&b"Graylab"[..]),
            "the mark's reader reads the value"
        );
    }

    #[test]
    fn damaged_blocks_keep_what_is_whole_and_never_read_past_the_end() {
        let input = camera(true);
        assert_eq!(KeptMetadata::of_exif(b"Exif\0\0"), None);
        assert_eq!(KeptMetadata::of_exif(b"II*\0\xFF\xFF\xFF\xFF"), None, "IFD0 past the end");
        for len in 0..input.len() {
            // Cut anywhere: no panic, and a tag is kept only with its whole value.
            if let Some(kept) = KeptMetadata::of_exif(&input[..len]) {
                assert!(
                    kept.ifd0
                        .iter()
                        .chain(&kept.shot)
                        .all(|e| input.windows(e.value.len()).any(|w| w == e.value))
                );
            }
        }
        // Any byte changed, in both byte orders: no panic, and what is kept is written and read
        // back as it is (a damaged type, count or offset never makes a block that reads otherwise).
        for little in [true, false] {
            let input = camera(little);
            for (at, flip) in (0..input.len()).flat_map(|at| [(at, 0xFF), (at, 0x01), (at, 0x80)]) {
                let mut damaged = input.clone();
                damaged[at] ^= flip;
                if let Some(kept) = KeptMetadata::of_exif(&damaged) {
                    assert_eq!(
                        KeptMetadata::of_exif(&block(Some(&kept))),
                        Some(kept),
                        "byte {at} ^ {flip:#x}"
                    );
                }
            }
        }
        let mut huge = input.clone();
        huge[8 + 2 + 4..8 + 2 + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        let kept = KeptMetadata::of_exif(&huge).expect("the rest");
        assert!(!kept.ifd0.iter().any(|e| e.tag == 0x010F), "a make longer than 1 KiB is dropped");
    }
}
