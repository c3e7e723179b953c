//! The decoders' errors in graylab's words: truncation told apart from corruption, known
//! refusals of libjpeg, png, tiff and image-webp turned into a sentence that names the
//! variant, with the decoder's own words at most as a detail, and what libjpeg finds in a
//! JPEG's restart intervals ([`RestartDamage`]); the decoders' warnings told
//! ([`crate::io::DecodeWarning`]).

use std::path::Path;

use image::ImageFormat;
use image::error::ImageFormatHint;

use crate::io::{DecodeWarning, IoError, TruncatedAt, truncated_words};

/// The decoder's error as graylab's: a truncated file, a limit, or a sentence naming what is
/// wrong, with the decoder's words at most as a detail.
pub(super) fn decode_error(path: &Path, e: image::ImageError) -> IoError {
    use image::error::LimitErrorKind;
    let truncated = || IoError::Truncated {
        path: path.into(),
        at: TruncatedAt::Unknown,
        orientation: image::metadata::Orientation::NoTransforms,
    };
    match e {
        image::ImageError::Unsupported(u) => {
            IoError::Unsupported { path: path.into(), reason: u.to_string() }
        }
        image::ImageError::IoError(cause) if cause.kind() == std::io::ErrorKind::UnexpectedEof => truncated(),
        image::ImageError::IoError(cause) => IoError::Open { path: path.into(), cause },
        image::ImageError::Limits(l) => IoError::Decode {
            path: path.into(),
            reason: match l.kind() {
                LimitErrorKind::DimensionError => "the header's dimensions are invalid".to_owned(),
                LimitErrorKind::InsufficientMemory => {
                    "the decoder needs more memory than the budget allows".to_owned()
                }
                _ => l.to_string(),
            },
        },
        image::ImageError::Decoding(d) => {
            let format = match d.format_hint() {
                ImageFormatHint::Exact(f) => Some(f),
                _ => None,
            };
            // The decoder's words, without "Format error decoding Jpeg:" in front.
            let words = std::error::Error::source(&d).map_or_else(|| d.to_string(), ToString::to_string);
            decoded_wrong(path, readable(&words), |words| sentence(format, &words))
        }
        other => decoded_wrong(path, readable(&other.to_string()), |words| words),
    }
}

/// A decoder's `words` as a truncation where they say the data ended, else `reason` of them.
fn decoded_wrong(path: &Path, words: String, reason: impl FnOnce(String) -> String) -> IoError {
    if words.contains("does not have enough data") || words.contains("unexpected EOF") {
        return IoError::Truncated {
            path: path.into(),
            at: TruncatedAt::Unknown,
            orientation: image::metadata::Orientation::NoTransforms,
        };
    }
    IoError::Decode { path: path.into(), reason: reason(words) }
}

/// A decoder's message without debug dumps: `ChunkType { type: IDAT, critical: … }` -> `IDAT`.
fn readable(message: &str) -> String {
    const DUMP: &str = "ChunkType { type: ";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(DUMP) {
        out.push_str(&rest[..start]);
        let after = &rest[start + DUMP.len()..];
        let name_end = after.find(',').unwrap_or(after.len());
        out.push_str(&after[..name_end]);
        rest = after.find('}').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// What a known decoder message means, in a sentence; unknown ones are kept, with the format.
fn sentence(format: Option<ImageFormat>, words: &str) -> String {
    let name = format.map_or("image", |f| match f {
        ImageFormat::Jpeg => "JPEG",
        ImageFormat::Png => "PNG",
        ImageFormat::WebP => "WebP",
        ImageFormat::Tiff => "TIFF",
        ImageFormat::Gif => "GIF",
        ImageFormat::Bmp => "BMP",
        _ => "image",
    });
    let known: &[(&str, &str)] = &[
        // libjpeg's words for damage in a JPEG's header, and for damage it finds after the last row.
        ("Bogus DQT index", "its quantisation table (DQT segment) is damaged"),
        ("Quantization table 0x", "a quantisation table (DQT segment) it uses is missing"),
        ("Bogus Huffman table definition", "its Huffman table (DHT segment) is damaged"),
        ("Huffman table 0x", "a Huffman table (DHT segment) it uses is missing"),
        ("Bogus marker length", "a segment's length is damaged"),
        ("Didn't expect more than one scan", "it holds a second scan after its image"),
        ("two SOF markers", "it holds a second frame header (SOF segment)"),
        ("Unsupported marker type", "it holds a marker that no JPEG may hold"),
        (
            "width or height is set to zero",
            "its frame header gives a height of 0 (the height may follow the data in a DNL marker, which graylab does not read)",
        ),
        ("Corrupt bitstream", "its compressed data is damaged or cut short"),
        ("Invalid Huffman code", "its compressed data is damaged (an invalid Huffman code)"),
        ("CRC error", "a chunk is damaged: its checksum (CRC) does not match"),
        ("Invalid PNG signature", "its signature is damaged"),
        ("invalid color type", "its header names an invalid colour type"),
    ];
    match known.iter().find(|(needle, _)| words.contains(needle)) {
        Some((_, what)) => format!("{name}: {what} (the decoder said: {words})"),
        None => format!("the {name} decoder refused it: {words}"),
    }
}

/// What libjpeg found in a JPEG's restart intervals ([`crate::io::DecodeWarning::DamagedRestart`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartDamage {
    /// Markers are missing: libjpeg decoded each interval from the data before the next marker
    /// it found, and filled the intervals whose data went with the lost markers with gray.
    MarkerMissing,
    /// A marker is numbered `found` where `expected` belongs, 1 or 2 ahead or behind: libjpeg
    /// skipped data to the next marker, or filled intervals with gray, until the numbers agreed
    /// again, so that some rows are gray or hold another part of the image.
    OutOfSequence {
        /// The marker's number (0-7).
        found: u8,
        /// The number its place calls for.
        expected: u8,
    },
    /// An interval's coded data is damaged: libjpeg reached the next restart marker before the
    /// interval's blocks were all decoded ("premature end of data segment").
    DataCut,
    /// A marker is missing or out of sequence in a scan of a progressive JPEG: libjpeg lost that
    /// scan's data of those rows, which the other scans still refine.
    InProgressiveScan,
}

impl RestartDamage {
    /// The damage and what it leaves in `rows` of `height` (the first and one past the last, as
    /// stored, counted from 0; said from 1, the last included, as the other messages count rows);
    /// `would`: as a refusal says it, of a decode not done.
    #[must_use]
    pub(in crate::io) fn words(self, (first, end): (u32, u32), height: u32, would: bool) -> String {
        let be = if would { "would be" } else { "are" };
        let rows = if end <= first + 1 {
            format!("row {end} of {height}")
        } else {
            format!("rows {} to {end} of {height}", first + 1)
        };
        match self {
            Self::MarkerMissing => {
                format!("a restart marker is missing: {rows} {be} lost, filled with gray by libjpeg")
            }
            Self::OutOfSequence { found, expected } => format!(
                "restart marker RST{found} stands where RST{expected} belongs: {rows} {be} lost, filled by \
                 libjpeg with gray or with another part of the image"
            ),
            Self::DataCut => format!(
                "libjpeg met the next restart marker before an interval's blocks were decoded, a premature \
                 end of data segment: {rows} {be} wrong, gray where the data ran out"
            ),
            Self::InProgressiveScan => format!(
                "a restart marker is missing or out of sequence in a progressive scan: {rows} {be} wrong, \
                 missing that scan's data"
            ),
        }
    }
}

impl std::fmt::Display for DecodeWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Truncated(at) => f.write_str(&truncated_words(at, &at.to_string())),
            Self::EndMarkerMissing => {
                f.write_str("the JPEG has no end-of-image marker, but the data of every row is there")
            }
            Self::FirstFrameOnly(count) if count.still_apart => {
                let frames = crate::system::units::count(count.total as usize - 1, "frame");
                write!(f, "the file holds a still image and an animation of {frames}: the still image converted")
            }
            Self::FirstFrameOnly(count) => {
                let (total, unit) = (count.total, count.unit());
                write!(f, "the file holds {total} {unit}s: {unit} 1 of {total} converted")
            }
            Self::ExtraneousBytes { bytes, marker } => write!(
                f,
                "the JPEG data is corrupt: {bytes} extraneous bytes before marker FF{marker:02X} were skipped"
            ),
            Self::DamagedRestart { rows, height, cause } => {
                write!(f, "the JPEG data is damaged ({})", cause.words(*rows, *height, false))
            }
            Self::RestartRenumbered { found, expected, row, height } => write!(
                f,
                "the JPEG data is damaged (restart marker RST{found} stands where RST{expected} belongs, before row \
                 {} of {height}): libjpeg took it for RST{expected}, and no row is lost",
                row + 1
            ),
            Self::LongerThanHeader { file_bytes, header_bytes } => write!(
                f,
                "the file is {} longer than its header says ({}): if they were inserted among its pixels, \
                 the rows after them are shifted",
                crate::system::units::count((file_bytes - header_bytes) as usize, "byte"),
                crate::system::units::count(*header_bytes as usize, "byte"),
            ),
            Self::ScansMissing => f.write_str(
                "the JPEG's progressive scans stop before every coefficient is coded (cut short and closed, or an \
                 encoder that stopped early): every row is there, at lower quality, and decoders differ on it",
            ),
            Self::Damaged { message, at_row, repeats } => {
                write!(f, "the JPEG data is damaged (libjpeg: {message}")?;
                match repeats {
                    0 => {}
                    1 => f.write_str(", and once more")?,
                    n => write!(f, ", and {n} times more")?,
                }
                match at_row {
                    Some((row, height)) => {
                        write!(f, ") at about row {row} of {height}: the image may be wrong from there")
                    }
                    None => f.write_str("): the image may be wrong"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::io::read::messages::{readable, sentence};

    #[test]
    fn debug_dumps_are_made_readable() {
        let m = "CRC error: expected 0x1 have 0x2 while decoding ChunkType { type: IDAT, critical: true, private: false, reserved: false, safecopy: false } chunk.";
        assert_eq!(readable(m), "CRC error: expected 0x1 have 0x2 while decoding IDAT chunk.");
        assert_eq!(readable("plain"), "plain");
    }

    #[test]
    fn known_refusals_become_sentences() {
        let s = sentence(Some(image::ImageFormat::Jpeg), "libjpeg: Bogus Huffman table definition");
        assert!(s.starts_with("JPEG: its Huffman table (DHT segment) is damaged"), "{s}");
        let s = sentence(Some(image::ImageFormat::WebP), "Corrupt bitstream");
        assert_eq!(
            s,
            "WebP: its compressed data is damaged or cut short (the decoder said: Corrupt bitstream)"
        );
        assert_eq!(sentence(None, "odd"), "the image decoder refused it: odd");
    }
}
