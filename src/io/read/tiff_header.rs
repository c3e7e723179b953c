//! A TIFF's first image file directory (classic or `BigTIFF`), read before decoding: which
//! variant it is (the way it is decoded), and a sentence naming the variants graylab cannot read,
//! instead of the decoder's internals or, worse, noise (32-bit unsigned integers without a
//! `SampleFormat` tag are read as floating point by the `image` crate); camera raws (DNG, Canon's
//! CR2, and raws whose first image is a preview) refused, never converted from their thumbnail.

use std::path::Path;

use crate::io::IoError;
use crate::io::read::claims::Walk;
use crate::io::read::claims::tiff_ifd::Layout;
use crate::io::read::claims::tiff_ifd::tag::{
    BITS_PER_SAMPLE, COLOR_MAP, COMPRESSION, DNG_VERSION, EXTRA_SAMPLES, FILL_ORDER, IMAGE_LENGTH,
    IMAGE_WIDTH, NEW_SUBFILE_TYPE, PHOTOMETRIC, PLANAR_CONFIGURATION, SAMPLE_FORMAT, SAMPLES_PER_PIXEL,
    SUB_IFDS, T4_OPTIONS, TILE_WIDTH,
};

/// Values read per tag at most (the largest is listed; more say nothing new here).
const MAX_VALUES: u32 = 16;

/// `PhotometricInterpretation`: 0 is white, gray.
const WHITE_IS_ZERO: u16 = 0;
/// `PhotometricInterpretation`: 0 is black, gray.
const BLACK_IS_ZERO: u16 = 1;
const RGB: u16 = 2;
const PALETTE: u16 = 3;
const CMYK: u16 = 5;
/// `Compression`: CCITT modified Huffman (rows of Group 3 one-dimensional codes, byte-aligned).
const CCITT_HUFFMAN: u16 = 2;
/// `Compression`: CCITT Group 3 (T.4).
const CCITT_GROUP3: u16 = 3;
/// `Compression` 7: each strip or tile a JPEG, the tables shared in `JPEGTables`.
const JPEG: u16 = 7;
/// `PhotometricInterpretation` 6.
const YCBCR: u16 = 6;
/// `PhotometricInterpretation` of a camera's sensor data: 32803, its colour filter array (a
/// raw), and 34892, a DNG's linear raw (demosaiced, not yet developed).
const SENSOR_DATA: [u16; 2] = [32803, 34892];

/// Why a camera raw is refused, after what it is.
pub(in crate::io) const RAW_SENSOR_DATA: &str =
    "raw sensor data is not supported; develop it to TIFF or JPEG first";

/// What an extra sample holds (`ExtraSamples`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) enum Alpha {
    /// No alpha: no extra sample, or one of unspecified meaning.
    None,
    /// Straight (unassociated) alpha.
    Straight,
    /// Associated alpha: the colour samples are premultiplied by it.
    Premultiplied,
}

/// How a TIFF is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) enum Variant {
    /// 8 or 16-bit unsigned gray of one sample, or RGB (with straight or no alpha): read by the
    /// `tiff` crate straight into the output where the output's layout is the file's, else by
    /// the `image` crate.
    Plain,
    /// By the `image` crate, its colours then divided by its associated alpha.
    Premultiplied,
    /// Gray (1 sample) or gray + one extra sample, of 8, 16 or 32-bit (floating-point) samples,
    /// which the `image` crate refuses: read through the `tiff` crate.
    Gray {
        /// The extra sample, if any.
        alpha: Alpha,
        /// Where 0 is white: the tag to present as black-is-zero, and the gray then inverted.
        white_is_zero: Option<Patch>,
    },
    /// Palette indices of 1 to 8 bits and a `ColorMap`: read through the `tiff` crate, its
    /// `PhotometricInterpretation` presented as black-is-zero (the indices as gray).
    Palette(Patch),
    /// Gray of one 2 or 4-bit sample: read through the `tiff` crate as black-is-zero (through
    /// `patch`), each level made 8-bit as libtiff makes it.
    Levels {
        /// The `PhotometricInterpretation` value, to present as black-is-zero.
        patch: Patch,
        /// Whether 0 is white in the file.
        white_is_zero: bool,
    },
    /// CMYK of four 8 or 16-bit samples: read through the `tiff` crate and turned into RGB as
    /// libtiff turns it.
    Cmyk,
    /// JPEG-compressed (compression 7) 8-bit YCbCr, RGB or gray: each strip or tile joined with
    /// the `JPEGTables` and decoded by libjpeg.
    Jpeg {
        /// One sample a pixel.
        gray: bool,
    },
    /// One-bit gray coded by CCITT modified Huffman (compression 2) or one-dimensional Group 3
    /// (compression 3): read by graylab with the `fax` crate's code tables.
    Fax {
        /// Modified Huffman (rows byte-aligned, no end-of-line codes).
        huffman: bool,
        /// Whether 0 is black (a black run is then stored as white pixels, as libtiff reads it).
        black_is_zero: bool,
        /// `FillOrder` 2: the bits of each byte are stored lowest first.
        reversed_bits: bool,
    },
}

/// The `PhotometricInterpretation` value as black-is-zero (1), to lay over the file's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) struct Patch {
    /// The value's offset in the file.
    pub at: u64,
    /// The bytes of 1 in the file's byte order and the value's width (the first `len`).
    pub bytes: [u8; 4],
    /// The value's width in bytes: 2 (SHORT) or 4 (LONG).
    pub len: u8,
}

/// The facts of the first directory graylab decides on.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TiffHeader {
    /// `PhotometricInterpretation` (`None` when absent).
    photometric: Option<u16>,
    /// The `PhotometricInterpretation` value as black-is-zero, to present the file so.
    black_is_zero: Option<Patch>,
    /// `Compression` (1 when absent).
    compression: u16,
    /// `SamplesPerPixel` (1 when absent).
    samples: u16,
    /// `BitsPerSample`, the largest listed (1 when absent).
    bits: u16,
    /// `SampleFormat`: the first that is not 1 (1 when absent).
    sample_format: u16,
    /// `ExtraSamples`, the first (`None` when absent).
    extra_sample: Option<u16>,
    /// `T4Options` (0 when absent).
    t4_options: u32,
    /// `FillOrder` (1 when absent).
    fill_order: u16,
    /// Whether there is a `ColorMap`.
    has_color_map: bool,
    /// `PlanarConfiguration` (1, chunky, when absent).
    planar: u16,
    /// Whether it is tiled (a `TileWidth`).
    tiled: bool,
    /// `ImageWidth` and `ImageLength` (0 when absent).
    size: (u32, u32),
    /// What says it is a camera raw, or its first image a preview.
    raw: RawSigns,
}

/// What says a TIFF is a camera raw, or its first image a preview.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[expect(clippy::struct_excessive_bools, reason = "four signs, each found apart, any of them together")]
struct RawSigns {
    /// `NewSubfileType` bit 0: the image is a reduced-resolution version of another (a preview).
    reduced: bool,
    /// Whether there are `SubIFDs`, where a camera raw keeps its full image.
    sub_ifds: bool,
    /// Whether there is a `DNGVersion`: a Digital Negative, a camera raw.
    dng: bool,
    /// Whether the header says CR2 (a Canon raw, whose first image is a full-size JPEG preview).
    cr2: bool,
}

/// Whether `head` (a file's first bytes) is a Canon CR2's: a little-endian TIFF header, then "CR"
/// and major version 2 at bytes 8 to 10 (the raw's directory offset follows at 12).
fn is_cr2(head: &[u8]) -> bool {
    head.starts_with(b"II*\0") && head.get(8..11) == Some(b"CR\x02".as_slice())
}

/// The way to decode a TIFF, `None` where the `image` crate reads it as it is, or a sentence
/// naming the variant graylab cannot read (a camera raw first, as [`check_camera_raw`] says).
/// Other files, and TIFFs whose first directory cannot be read, are left to the `image` crate
/// (its decoder says why).
pub(in crate::io) fn check_tiff(path: &Path, head: &[u8]) -> Result<Option<Variant>, IoError> {
    let Some(header) = first_ifd(path, head) else {
        return unread_ifd(head).refuse_raw(path).map(|()| None);
    };
    header.refuse_raw(path)?;
    header
        .variant()
        .map_err(|what| IoError::Unsupported { path: path.into(), reason: format!("a TIFF with {what}") })
}

/// Refuses a camera raw (a DNG, a CR2, or a raw whose first image is a preview and whose full
/// image lies in a `SubIFD`, as a NEF) and a TIFF whose first image is a reduced-resolution
/// preview: graylab reads a TIFF's first image, and would convert a thumbnail in place of the
/// photo. A CR2 is known by its header, even where its first directory cannot be read.
pub(in crate::io) fn check_camera_raw(path: &Path, head: &[u8]) -> Result<(), IoError> {
    first_ifd(path, head).unwrap_or_else(|| unread_ifd(head)).refuse_raw(path)
}

/// What is known of a TIFF whose first directory cannot be read: whether its header says CR2.
fn unread_ifd(head: &[u8]) -> TiffHeader {
    TiffHeader { raw: RawSigns { cr2: is_cr2(head), ..RawSigns::default() }, ..TiffHeader::default() }
}

/// What a TIFF holds that graylab does not read, in words after "a TIFF with".
#[derive(Debug, thiserror::Error)]
enum Unread {
    /// A `PhotometricInterpretation` no decoder here reads (`u16::MAX`: no tag).
    #[error("{}", photometric_words(*.0))]
    Photometric(u16),
    /// The place of the `PhotometricInterpretation` value is not known.
    #[error("an unreadable PhotometricInterpretation")]
    PhotometricPlace,
    /// Gray of too many samples, or of one-bit samples with alpha.
    #[error(
        "gray data of {bits}-bit samples, {samples} per pixel (graylab reads gray, or gray and alpha, of 8, 16 or 32 bits)"
    )]
    Gray { bits: u16, samples: u16 },
    /// A palette without its colour map.
    #[error("palette data but no colour map (ColorMap tag)")]
    NoColorMap,
    /// A palette of indices not read here.
    #[error(
        "palette data of {bits}-bit indices and {samples} samples per pixel (graylab reads one index of 1 to 8 bits)"
    )]
    Palette { bits: u16, samples: u16 },
    /// Samples of a format or width not read here.
    #[error(
        "{}; graylab reads TIFF samples of 1, 8 or 16 bits (unsigned; gray of one sample also of 2 or 4) or 32-bit \
         floating point, and palette indices of 1 to 8 bits",
        samples_words(*format, *bits)
    )]
    Samples { format: u16, bits: u16 },
    /// JPEG compression of a layout not read here.
    #[error(
        "JPEG-compressed data of PhotometricInterpretation {photometric}, {samples} samples of {bits} bits a pixel \
         (graylab reads JPEG-compressed 8-bit YCbCr, RGB or gray)"
    )]
    Jpeg { photometric: u16, samples: u16, bits: u16 },
    /// CCITT coding of something else than one-bit gray (`huffman`: modified Huffman, else Group 3).
    #[error("{} that is not one-bit gray", fax_name(*.0))]
    FaxNotOneBit(bool),
    /// Group 3 in two-dimensional coding or uncompressed mode (`T4Options`).
    #[error(
        "{} in {} (T4Options {t4}), which graylab does not read",
        fax_name(false),
        if t4 & 1 == 0 { "uncompressed mode" } else { "two-dimensional coding" }
    )]
    FaxCoding { t4: u32 },
    /// A `FillOrder` other than 1 or 2.
    #[error("an invalid FillOrder ({0})")]
    FillOrder(u16),
    /// Tiles of separate colour planes.
    #[error(
        "tiles of separate colour planes (PlanarConfiguration 2), which graylab does not read (strips of them it \
         does: tiffcp -p contig makes one it reads)"
    )]
    PlanarTiles,
}

/// A photometric interpretation no decoder here reads, in words.
fn photometric_words(photometric: u16) -> String {
    match photometric {
        u16::MAX => "no PhotometricInterpretation tag (it is required)".to_owned(),
        4 => "a transparency mask (PhotometricInterpretation 4)".to_owned(),
        6 => "YCbCr data (PhotometricInterpretation 6)".to_owned(),
        8..=10 => format!("CIE L*a*b* data (PhotometricInterpretation {photometric})"),
        32844 | 32845 => format!("LogLuv data (PhotometricInterpretation {photometric})"),
        other => format!("an unknown PhotometricInterpretation ({other})"),
    }
}

/// Samples of `SampleFormat` `format` and `bits`, in words.
fn samples_words(format: u16, bits: u16) -> String {
    match format {
        1 => format!("{bits}-bit unsigned-integer samples"),
        2 => format!("{bits}-bit signed-integer samples"),
        3 => format!("{bits}-bit floating-point samples"),
        4 => "samples of undefined format (SampleFormat 4)".to_owned(),
        other => format!("an invalid sample format ({other})"),
    }
}

/// CCITT modified Huffman (`huffman`) or Group 3 data, in words.
fn fax_name(huffman: bool) -> &'static str {
    if huffman { "CCITT modified Huffman data (compression 2)" } else { "CCITT Group 3 data (compression 3)" }
}

impl TiffHeader {
    /// Refuses it where it is a camera raw or its first image a preview ([`check_camera_raw`]).
    fn refuse_raw(&self, path: &Path) -> Result<(), IoError> {
        let (width, height) = self.size;
        let preview = format!("{width}x{height} preview");
        let raw = RAW_SENSOR_DATA;
        let RawSigns { dng, reduced, sub_ifds, cr2 } = self.raw;
        if cr2 {
            // Its first image is a full-size preview, JPEG-compressed (old-style, compression 6).
            let preview = if width > 0 && height > 0 {
                format!("{width}x{height} JPEG preview")
            } else {
                "JPEG preview".to_owned()
            };
            let reason =
                format!("a camera raw (Canon CR2) file: graylab would read only its {preview}, and {raw}");
            return Err(IoError::Unsupported { path: path.into(), reason });
        }
        let reason = match (dng, reduced, sub_ifds) {
            (true, true, _) => {
                format!("a camera raw (DNG) file: graylab would read only its {preview}, and {raw}")
            }
            (true, false, _) => format!("a camera raw (DNG) file: {raw}"),
            (false, true, true) => format!(
                "a camera raw file (its full image in a SubIFD): graylab would read only its {preview}, and {raw}"
            ),
            (false, true, false) => format!(
                "a TIFF whose first image is a {preview} of reduced resolution (NewSubfileType 1): graylab reads \
                 the first image only, and would convert the preview in place of the full image"
            ),
            // A first image of sensor data (a colour filter array, or linear raw), as a PEF's.
            (false, false, _) if self.photometric.is_some_and(|p| SENSOR_DATA.contains(&p)) => format!(
                "a camera raw file (its first image is sensor data, PhotometricInterpretation {}): {raw}",
                self.photometric.unwrap_or_default()
            ),
            (false, false, _) => return Ok(()),
        };
        Err(IoError::Unsupported { path: path.into(), reason })
    }

    /// The way to decode it (`None`: the `image` crate as it is), or what it is in words (after
    /// "a TIFF with").
    fn variant(&self) -> Result<Option<Variant>, Unread> {
        let (bits, format, samples) = (self.bits, self.sample_format, self.samples);
        let alpha = match self.extra_sample {
            Some(1) => Alpha::Premultiplied,
            Some(2) => Alpha::Straight,
            _ => Alpha::None,
        };
        let photometric = self.photometric.unwrap_or(u16::MAX);
        // The `tiff` crate's tiles of separate planes fail an assertion (0.11.3): named, not a
        // decoder panic. Strips of separate planes are read.
        if self.planar == 2 && self.tiled && samples > 1 {
            return Err(Unread::PlanarTiles);
        }
        if self.compression == JPEG {
            return self.jpeg_variant(photometric).map(Some);
        }
        if !matches!(photometric, WHITE_IS_ZERO | BLACK_IS_ZERO | RGB | PALETTE | CMYK) {
            return Err(Unread::Photometric(photometric));
        }
        if matches!(self.compression, CCITT_HUFFMAN | CCITT_GROUP3) {
            return self.fax_variant();
        }
        match (photometric, format, bits) {
            (WHITE_IS_ZERO | BLACK_IS_ZERO, 1, 8 | 16) | (WHITE_IS_ZERO | BLACK_IS_ZERO, 3, 32)
                if samples <= 2 =>
            {
                // One 8 or 16-bit sample is plain; the rest goes through `tiff` as a variant.
                if samples == 1 && format == 1 {
                    return Ok(Some(Variant::Plain));
                }
                let alpha = if samples == 2 { alpha } else { Alpha::None };
                let white_is_zero = if photometric == WHITE_IS_ZERO { Some(self.patch()?) } else { None };
                Ok(Some(Variant::Gray { alpha, white_is_zero }))
            }
            (WHITE_IS_ZERO | BLACK_IS_ZERO, 1, 1) if samples == 1 => Ok(None),
            (WHITE_IS_ZERO | BLACK_IS_ZERO, 1, 2 | 4) if samples == 1 => Ok(Some(Variant::Levels {
                patch: self.patch()?,
                white_is_zero: photometric == WHITE_IS_ZERO,
            })),
            (WHITE_IS_ZERO | BLACK_IS_ZERO, 1 | 3, 1 | 8 | 16 | 32) if samples > 2 || bits == 1 => {
                Err(Unread::Gray { bits, samples })
            }
            (PALETTE, 1, 1 | 2 | 4 | 8) if samples == 1 && self.has_color_map => {
                Ok(Some(Variant::Palette(self.patch()?)))
            }
            (PALETTE, _, _) if !self.has_color_map => Err(Unread::NoColorMap),
            (PALETTE, 1, _) => Err(Unread::Palette { bits, samples }),
            (CMYK, 1, 8 | 16) if samples == 4 => Ok(Some(Variant::Cmyk)),
            (RGB, 1, 8 | 16) if alpha == Alpha::Premultiplied => Ok(Some(Variant::Premultiplied)),
            (RGB, 1, 8 | 16) => Ok(Some(Variant::Plain)),
            (CMYK, 1, 8 | 16) | (RGB, 3, 32) => {
                Ok((alpha == Alpha::Premultiplied && photometric == RGB).then_some(Variant::Premultiplied))
            }
            (_, format, bits) => Err(Unread::Samples { format, bits }),
        }
    }

    /// JPEG compression: 8-bit YCbCr or RGB of three samples, or gray of one, is read.
    fn jpeg_variant(&self, photometric: u16) -> Result<Variant, Unread> {
        match (photometric, self.samples, self.bits, self.extra_sample) {
            (YCBCR | RGB, 3, 8, None) => Ok(Variant::Jpeg { gray: false }),
            (BLACK_IS_ZERO, 1, 8, None) => Ok(Variant::Jpeg { gray: true }),
            (photometric, samples, bits, _) => Err(Unread::Jpeg { photometric, samples, bits }),
        }
    }

    /// CCITT modified Huffman or Group 3: one-dimensional coding of one-bit gray is read.
    fn fax_variant(&self) -> Result<Option<Variant>, Unread> {
        if self.bits != 1
            || self.samples != 1
            || !matches!(self.photometric, Some(WHITE_IS_ZERO | BLACK_IS_ZERO))
        {
            return Err(Unread::FaxNotOneBit(self.compression == CCITT_HUFFMAN));
        }
        if self.compression == CCITT_GROUP3 && self.t4_options & 0b11 != 0 {
            return Err(Unread::FaxCoding { t4: self.t4_options });
        }
        if self.fill_order != 1 && self.fill_order != 2 {
            return Err(Unread::FillOrder(self.fill_order));
        }
        Ok(Some(Variant::Fax {
            huffman: self.compression == CCITT_HUFFMAN,
            black_is_zero: self.photometric == Some(BLACK_IS_ZERO),
            reversed_bits: self.fill_order == 2,
        }))
    }

    /// Where the `PhotometricInterpretation` value lies (it was read, so it is known).
    fn patch(&self) -> Result<Patch, Unread> {
        self.black_is_zero.ok_or(Unread::PhotometricPlace)
    }
}

/// The tags [`TiffHeader`] holds (with `ColorMap`, `TileWidth`, `SubIFDs` and `DNGVersion`, only
/// noted).
const WANTED: [u16; 12] = [
    NEW_SUBFILE_TYPE,
    IMAGE_WIDTH,
    IMAGE_LENGTH,
    BITS_PER_SAMPLE,
    COMPRESSION,
    PHOTOMETRIC,
    FILL_ORDER,
    SAMPLES_PER_PIXEL,
    PLANAR_CONFIGURATION,
    T4_OPTIONS,
    EXTRA_SAMPLES,
    SAMPLE_FORMAT,
];

/// The first directory's facts, classic or `BigTIFF` (as graylab writes past 4 GiB), read by
/// the claims' directory reader; `None` when it cannot be read (the decoder then says why).
fn first_ifd(path: &Path, head: &[u8]) -> Option<TiffHeader> {
    let (layout, offset) = Layout::of(head)?;
    let mut walk = Walk::open(path)?;
    let ifd = layout.ifd(&mut walk, offset)?;
    let mut header = TiffHeader::default();
    header.raw.cr2 = is_cr2(head);
    for (index, entry) in ifd.entries.iter().enumerate() {
        header.has_color_map |= entry.tag == COLOR_MAP;
        header.tiled |= entry.tag == TILE_WIDTH;
        header.raw.sub_ifds |= entry.tag == SUB_IFDS;
        header.raw.dng |= entry.tag == DNG_VERSION;
        if !WANTED.contains(&entry.tag) {
            continue;
        }
        // SHORT or LONG values.
        let width: u8 = match entry.kind {
            3 => 2,
            4 => 4,
            _ => return None,
        };
        let values = layout.values(&mut walk, entry, 1 << 16)?;
        let values: Vec<u32> =
            values.iter().take(MAX_VALUES as usize).map(|&v| u32::try_from(v).ok()).collect::<Option<_>>()?;
        let value_at = layout.value_field_at(offset, index);
        header.take(entry.tag, &values, Patch::one(value_at, width, layout.little()))?;
    }
    Some(header)
}

impl Patch {
    /// The patch that presents a SHORT or LONG (`width` 2 or 4) value at `at` as 1.
    fn one(at: u64, width: u8, little: bool) -> Self {
        let bytes = match (little, width) {
            (true, 2) => [1, 0, 0, 0],
            (false, 2) => [0, 1, 0, 0],
            (true, _) => 1u32.to_le_bytes(),
            (false, _) => 1u32.to_be_bytes(),
        };
        Self { at, bytes, len: width }
    }
}

impl TiffHeader {
    /// Takes the `values` of `tag` (one of [`WANTED`]; at most [`MAX_VALUES`]), whose value
    /// field `photometric_one` would present as 1; `None` for a value out of range, or none.
    fn take(&mut self, tag: u16, values: &[u32], photometric_one: Patch) -> Option<()> {
        let first = *values.first()?;
        let short = |v: u32| u16::try_from(v).ok();
        match tag {
            BITS_PER_SAMPLE => self.bits = short(values.iter().copied().max()?)?,
            COMPRESSION => self.compression = short(first)?,
            PHOTOMETRIC => {
                self.photometric = Some(short(first)?);
                self.black_is_zero = Some(photometric_one);
            }
            NEW_SUBFILE_TYPE => self.raw.reduced = first & 1 == 1,
            IMAGE_WIDTH => self.size.0 = first,
            IMAGE_LENGTH => self.size.1 = first,
            FILL_ORDER => self.fill_order = short(first)?,
            SAMPLES_PER_PIXEL => self.samples = short(first)?,
            PLANAR_CONFIGURATION => self.planar = short(first)?,
            T4_OPTIONS => self.t4_options = first,
            EXTRA_SAMPLES => self.extra_sample = Some(short(first)?),
            SAMPLE_FORMAT => {
                self.sample_format = short(values.iter().copied().find(|&f| f != 1).unwrap_or(1))?;
            }
            _ => {}
        }
        Some(())
    }
}

impl Default for TiffHeader {
    /// What the TIFF specification says of absent tags.
    fn default() -> Self {
        Self {
            photometric: None,
            black_is_zero: None,
            compression: 1,
            samples: 1,
            bits: 1,
            sample_format: 1,
            extra_sample: None,
            t4_options: 0,
            fill_order: 1,
            has_color_map: false,
            planar: 1,
            tiled: false,
            size: (0, 0),
            raw: RawSigns::default(),
        }
    }
}
