//! A TIFF's image file directories (IFDs), classic and `BigTIFF`, read tag by tag without the
//! decoder: integer values, inline or at an offset, and the chain of directories.

use crate::io::read::claims::Walk;

/// Directories with more entries than this are left to the decoder.
const MAX_ENTRIES: u64 = 4096;

/// The numbers of the tags graylab reads (TIFF 6.0), for every reader of a directory.
pub(in crate::io) mod tag {
    pub(in crate::io) const NEW_SUBFILE_TYPE: u16 = 254;
    pub(in crate::io) const IMAGE_WIDTH: u16 = 256;
    pub(in crate::io) const IMAGE_LENGTH: u16 = 257;
    pub(in crate::io) const BITS_PER_SAMPLE: u16 = 258;
    pub(in crate::io) const COMPRESSION: u16 = 259;
    pub(in crate::io) const PHOTOMETRIC: u16 = 262;
    pub(in crate::io) const FILL_ORDER: u16 = 266;
    pub(in crate::io) const STRIP_OFFSETS: u16 = 273;
    pub(in crate::io) const ORIENTATION: u16 = 274;
    pub(in crate::io) const SAMPLES_PER_PIXEL: u16 = 277;
    pub(in crate::io) const ROWS_PER_STRIP: u16 = 278;
    pub(in crate::io) const STRIP_BYTE_COUNTS: u16 = 279;
    pub(in crate::io) const X_RESOLUTION: u16 = 282;
    pub(in crate::io) const Y_RESOLUTION: u16 = 283;
    pub(in crate::io) const PLANAR_CONFIGURATION: u16 = 284;
    pub(in crate::io) const T4_OPTIONS: u16 = 292;
    pub(in crate::io) const RESOLUTION_UNIT: u16 = 296;
    pub(in crate::io) const COLOR_MAP: u16 = 320;
    pub(in crate::io) const XMP: u16 = 700;
    pub(in crate::io) const TILE_WIDTH: u16 = 322;
    pub(in crate::io) const TILE_LENGTH: u16 = 323;
    pub(in crate::io) const TILE_OFFSETS: u16 = 324;
    pub(in crate::io) const TILE_BYTE_COUNTS: u16 = 325;
    pub(in crate::io) const SUB_IFDS: u16 = 330;
    pub(in crate::io) const EXTRA_SAMPLES: u16 = 338;
    pub(in crate::io) const SAMPLE_FORMAT: u16 = 339;
    pub(in crate::io) const DNG_VERSION: u16 = 50706;
}

/// How a TIFF is laid out: byte order, and classic (32-bit offsets) or `BigTIFF` (64-bit).
#[derive(Clone, Copy)]
pub(in crate::io) struct Layout {
    little: bool,
    big: bool,
}

/// One directory entry.
pub(in crate::io) struct Entry {
    /// The tag.
    pub tag: u16,
    /// The values' type (3 SHORT, 4 LONG, 16 LONG8, …).
    pub kind: u16,
    /// The count of values.
    pub count: u64,
    /// The value field: the values when they fit, else their offset.
    field: [u8; 8],
}

/// One directory: its entries and the offset of the next (0 at the end).
pub(in crate::io) struct Ifd {
    /// The entries, in file order.
    pub entries: Vec<Entry>,
    /// The next directory's offset, 0 when this is the last.
    pub next: u64,
}

impl Layout {
    /// The layout and first directory's offset of a TIFF or `BigTIFF` whose first bytes are
    /// `head`, or `None` when it is neither.
    pub(in crate::io) fn of(head: &[u8]) -> Option<(Self, u64)> {
        let (little, big) = match head.get(..4)? {
            b"II*\0" => (true, false),
            b"MM\0*" => (false, false),
            b"II+\0" => (true, true),
            b"MM\0+" => (false, true),
            _ => return None,
        };
        let layout = Self { little, big };
        let offset = if big { layout.u64(head.get(8..16)?) } else { layout.u64(head.get(4..8)?) };
        Some((layout, offset))
    }

    /// Whether the file is little-endian.
    pub(in crate::io) fn little(self) -> bool {
        self.little
    }

    /// The offset of the value field of entry `index` of the directory at `offset`: past the
    /// entry count (2 bytes, or 8 in a `BigTIFF`) and the entries before it (12 or 20 bytes),
    /// after its tag, type and count (8 or 12 bytes).
    pub(in crate::io) fn value_field_at(self, offset: u64, index: usize) -> u64 {
        let index = index as u64;
        if self.big { offset + 8 + 20 * index + 12 } else { offset + 2 + 12 * index + 8 }
    }

    /// An unsigned integer of 1, 2, 4 or 8 bytes in the file's byte order.
    fn u64(self, bytes: &[u8]) -> u64 {
        let fold = |v: u64, &b: &u8| (v << 8) | u64::from(b);
        if self.little { bytes.iter().rev().fold(0, fold) } else { bytes.iter().fold(0, fold) }
    }

    /// Reads the directory at `offset`.
    pub(in crate::io) fn ifd(self, walk: &mut Walk, offset: u64) -> Option<Ifd> {
        walk.seek(offset)?;
        let (count, entry_len, field_len) = if self.big {
            (self.u64(&walk.read::<8>()?), 20, 8)
        } else {
            (self.u64(&walk.read::<2>()?), 12, 4)
        };
        if count > MAX_ENTRIES {
            return None;
        }
        let raw = walk.bytes(usize::try_from(count * entry_len).ok()?)?;
        let entries = raw
            .chunks_exact(entry_len as usize)
            .map(|e| {
                let count_len = if self.big { 8 } else { 4 };
                let mut field = [0u8; 8];
                field[..field_len].copy_from_slice(&e[4 + count_len..4 + count_len + field_len]);
                Entry {
                    tag: u16::try_from(self.u64(&e[..2])).unwrap_or(0),
                    kind: u16::try_from(self.u64(&e[2..4])).unwrap_or(0),
                    count: self.u64(&e[4..4 + count_len]),
                    field,
                }
            })
            .collect();
        let next = if self.big { self.u64(&walk.read::<8>()?) } else { self.u64(&walk.read::<4>()?) };
        Some(Ifd { entries, next })
    }

    /// The offset of the directory after the one at `offset`, without reading its entries; 0
    /// at the end.
    pub(super) fn next_ifd(self, walk: &mut Walk, offset: u64) -> Option<u64> {
        walk.seek(offset)?;
        let count = if self.big { self.u64(&walk.read::<8>()?) } else { self.u64(&walk.read::<2>()?) };
        walk.skip(count.checked_mul(if self.big { 20 } else { 12 })?)?;
        Some(if self.big { self.u64(&walk.read::<8>()?) } else { self.u64(&walk.read::<4>()?) })
    }

    /// The integer values of `entry` (BYTE, SHORT, LONG, LONG8 or their signed and IFD forms),
    /// at most `max` of them; `None` for another type, more values, or a read past the end.
    pub(in crate::io) fn values(self, walk: &mut Walk, entry: &Entry, max: u64) -> Option<Vec<u64>> {
        let size: usize = match entry.kind {
            1 | 6 => 1,
            3 | 8 => 2,
            4 | 9 | 13 => 4,
            16..=18 => 8,
            _ => return None,
        };
        if entry.count > max {
            return None;
        }
        let bytes = self.value_bytes(walk, entry, usize::try_from(entry.count).ok()?.checked_mul(size)?)?;
        Some(bytes.chunks_exact(size).map(|v| self.u64(v)).collect())
    }

    /// The `len` bytes of `entry`'s values as stored: in its value field where they fit, else
    /// at its offset; `None` for a read past the end.
    pub(in crate::io) fn value_bytes(self, walk: &mut Walk, entry: &Entry, len: usize) -> Option<Vec<u8>> {
        let inline = if self.big { 8 } else { 4 };
        if len <= inline {
            return Some(entry.field[..len].to_vec());
        }
        walk.seek(self.u64(&entry.field[..inline]))?;
        walk.bytes(len)
    }

    /// The value of the entry with `tag` in `ifd` as a fraction: a RATIONAL's numerator and
    /// denominator, or an integer over 1; `None` where there is none, or more than one value.
    pub(super) fn rational(self, walk: &mut Walk, ifd: &Ifd, tag: u16) -> Option<(u32, u32)> {
        let entry = ifd.entries.iter().find(|e| e.tag == tag)?;
        if entry.kind != 5 {
            let value = *self.values(walk, entry, 1)?.first()?;
            return Some((u32::try_from(value).ok()?, 1));
        }
        if entry.count != 1 {
            return None;
        }
        // Eight bytes: in the value field of a `BigTIFF`, at its offset in a classic TIFF.
        let bytes = if self.big {
            entry.field.to_vec()
        } else {
            walk.seek(self.u64(&entry.field[..4]))?;
            walk.bytes(8)?
        };
        let half = |b: &[u8]| u32::try_from(self.u64(b)).ok();
        Some((half(bytes.get(..4)?)?, half(bytes.get(4..8)?)?))
    }

    /// The first value of the entry with `tag` in `ifd`, if it has one.
    pub(super) fn first(self, walk: &mut Walk, ifd: &Ifd, tag: u16) -> Option<u64> {
        let entry = ifd.entries.iter().find(|e| e.tag == tag)?;
        self.values(walk, entry, 1 << 16)?.first().copied()
    }
}
