//! Decoding: format sniffing, refusing files that cannot hold what their header claims, the
//! memory reservation before allocation, truncated JPEGs, EXIF orientation.

use std::fmt;
use std::io::{BufRead, Read as _, Seek};
use std::path::Path;
use std::time::Instant;

use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder as _, ImageFormat, ImageReader};

use super::jpeg::{self, FrameKind, Layout, ScanError};
use super::{IoError, Reservation, TruncatedAt, budget, owned};

/// The best deflate can do: 258 bytes from one 1-bit length code and a 1-bit distance code.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// Settings for decoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// A cap for this one decode, below the process-wide budget ([`super::budget`]); `None` =
    /// the budget alone decides.
    pub memory_budget_bytes: Option<u64>,
    /// Keep what a truncated JPEG holds (the missing part gray) with a [`DecodeWarning`]
    /// instead of refusing it. Other formats' decoders return no partial image.
    pub allow_truncated: bool,
    /// More copies of the decoded image and its gray result that the caller holds while
    /// converting, reserved with it: 2 for a GPU conversion (staging buffers, and on a software
    /// adapter or unified memory the device buffers too, are host memory), else 0.
    pub working_copies: u32,
}

/// Something the caller should tell the user about a decoded image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeWarning {
    /// The file is truncated; what is missing was filled with gray.
    Truncated(TruncatedAt),
}

impl fmt::Display for DecodeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated(at @ TruncatedAt::Refinement) => write!(f, "the file is truncated: {at}"),
            Self::Truncated(at) => write!(f, "the file is truncated ({at}): the missing part is gray"),
        }
    }
}

/// A decoded image and what it cost.
#[derive(Debug)]
pub struct Decoded {
    /// The pixels, EXIF orientation applied.
    pub image: DynamicImage,
    /// The file's format.
    pub format: ImageFormat,
    /// Wall time of reading and decoding (CPU clock).
    pub decode_ns: u64,
    /// Whether an EXIF orientation other than "as stored" was applied.
    pub reoriented: bool,
    /// What the user should be told (a truncated file kept as asked).
    pub warnings: Vec<DecodeWarning>,
    /// The memory reserved for this image and its conversion and export; keep it while they run.
    pub memory: Reservation,
}

/// Decodes a file. Refuses, before allocating, files that cannot hold the pixels their header
/// claims and images that do not fit the memory budget (waiting while other images hold it).
pub fn decode_file(path: &Path, options: &DecodeOptions) -> Result<Decoded, IoError> {
    let started = Instant::now();
    let open = |cause| IoError::Open { path: owned(path), cause };
    let meta = std::fs::metadata(path).map_err(open)?;
    if meta.is_dir() {
        return Err(open(std::io::Error::other("it is a folder")));
    }
    if meta.len() == 0 {
        return Err(IoError::Empty { path: owned(path) });
    }
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path).and_then(|f| f.take(64).read_to_end(&mut head)).map_err(open)?;
    let (raw, reservation, format, truncated) = if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        let bytes = std::fs::read(path).map_err(open)?;
        let layout = check_jpeg(path, &bytes, options)?;
        // The file is held twice while the decoder starts (ours and the decoder's copy).
        let extra = 2 * bytes.len() as u64 + layout.decoder_scratch_bytes();
        let reader = ImageReader::with_format(std::io::Cursor::new(bytes), ImageFormat::Jpeg);
        let (image, orientation, reservation) = decode_with(path, reader, extra, options)?;
        let truncated = (!layout.complete).then(|| truncated_at(&image, &layout));
        ((image, orientation), reservation, ImageFormat::Jpeg, truncated)
    } else {
        check_png(path, &head, meta.len())?;
        let reader = ImageReader::open(path).map_err(open)?.with_guessed_format().map_err(open)?;
        let format = reader.format().ok_or_else(|| IoError::UnknownFormat { path: owned(path) })?;
        let (image, orientation, reservation) = decode_with(path, reader, 0, options)?;
        ((image, orientation), reservation, format, None)
    };
    let mut warnings = Vec::new();
    if let Some(at) = truncated {
        if !options.allow_truncated {
            return Err(IoError::Truncated { path: owned(path), at });
        }
        log::debug!("{}: the file is truncated ({at})", path.display());
        warnings.push(DecodeWarning::Truncated(at));
    }
    let (mut image, orientation) = raw;
    image.apply_orientation(orientation);
    let decode_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    Ok(Decoded {
        image,
        format,
        decode_ns,
        reoriented: orientation != Orientation::NoTransforms,
        warnings,
        memory: reservation,
    })
}

/// Reads the header, reserves the memory, decodes (orientation not yet applied).
fn decode_with<R: BufRead + Seek>(
    path: &Path,
    mut reader: ImageReader<R>,
    extra_bytes: u64,
    options: &DecodeOptions,
) -> Result<(DynamicImage, Orientation, Reservation), IoError> {
    let mut limits = image::Limits::no_limits();
    // Our own check below is the real one; this stops decoders' internal allocations.
    limits.max_alloc = Some(options.memory_budget_bytes.unwrap_or(u64::MAX).min(budget().capacity().0));
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(|e| decode_error(path, e))?;
    let (width, height) = decoder.dimensions();
    if width == 0 || height == 0 {
        return Err(IoError::Decode {
            path: owned(path),
            reason: format!("the header claims {width}x{height} pixels"),
        });
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let pixels = u64::from(width) * u64::from(height);
    let color = decoder.color_type();
    let decoded_bytes = decoder.total_bytes();
    // The gray result: one sample per pixel, plus alpha when the input has it.
    let sample_bytes = u64::from(color.bytes_per_pixel() / color.channel_count().max(1));
    let gray = pixels * sample_bytes * (1 + u64::from(color.has_alpha()));
    let rotates = matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    );
    // The peak of each stage: decode (plus a rotated copy), convert, export (gray, the copy
    // fitted to the format, and an encoder's buffer).
    let working = decoded_bytes.saturating_add(gray).saturating_mul(u64::from(options.working_copies));
    let needed_bytes = [
        decoded_bytes.saturating_add(extra_bytes),
        decoded_bytes.saturating_mul(1 + u64::from(rotates)),
        decoded_bytes.saturating_add(gray).saturating_add(working),
        gray.saturating_mul(3),
    ]
    .into_iter()
    .max()
    .unwrap_or(u64::MAX);
    let reservation =
        budget().reserve_within(needed_bytes, options.memory_budget_bytes, true).map_err(|e| {
            IoError::TooLarge {
                path: owned(path),
                width,
                height,
                needed_bytes,
                budget_bytes: e.budget_bytes,
                limited_by: e.limited_by,
            }
        })?;
    let image = DynamicImage::from_decoder(decoder).map_err(|e| decode_error(path, e))?;
    Ok((image, orientation, reservation))
}

/// Reads a JPEG's structure: names unsupported variants, refuses files whose data cannot hold
/// the frame.
fn check_jpeg(path: &Path, bytes: &[u8], options: &DecodeOptions) -> Result<Layout, IoError> {
    let layout = jpeg::scan(bytes).map_err(|e| match e {
        ScanError::EndsInHeaders => IoError::Truncated { path: owned(path), at: TruncatedAt::Unknown },
        ScanError::Corrupt(reason) => IoError::Decode { path: owned(path), reason },
    })?;
    let unsupported = |reason: String| Err(IoError::Unsupported { path: owned(path), reason });
    if let FrameKind::Unsupported(n) = layout.kind {
        return unsupported(format!(
            "{}; graylab reads baseline, extended and progressive Huffman-coded JPEG",
            FrameKind::describe(n)
        ));
    }
    if layout.precision != 8 {
        return unsupported(format!("{}-bit JPEG; graylab reads 8-bit JPEG", layout.precision));
    }
    if layout.scans == 0 {
        return Err(IoError::Truncated { path: owned(path), at: TruncatedAt::Unknown });
    }
    let min_bytes = layout.min_coded_bytes();
    // A truncated file below the floor may still be kept in part when asked.
    if layout.coded_bytes < min_bytes && (layout.complete || !options.allow_truncated) {
        return Err(IoError::ImpossibleSize {
            path: owned(path),
            format: "JPEG",
            width: layout.width,
            height: layout.height,
            min_bytes,
            file_bytes: bytes.len() as u64,
        });
    }
    Ok(layout)
}

/// Refuses a PNG whose file is too small for its pixels even at deflate's best ratio.
fn check_png(path: &Path, head: &[u8], file_bytes: u64) -> Result<(), IoError> {
    if !head.starts_with(b"\x89PNG\r\n\x1a\n") || head.get(12..16) != Some(b"IHDR") {
        return Ok(());
    }
    let be32 = |i: usize| head.get(i..i + 4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
    let (Some(width), Some(height), Some(&depth), Some(&color)) =
        (be32(16), be32(20), head.get(24), head.get(25))
    else {
        return Ok(());
    };
    let channels: u64 = match color {
        0 | 3 => 1,
        4 => 2,
        2 => 3,
        6 => 4,
        _ => return Ok(()), // The decoder names the bad colour type.
    };
    let row_bytes = (u64::from(width) * channels * u64::from(depth)).div_ceil(8) + 1;
    let min_bytes = (u64::from(height) * row_bytes) / DEFLATE_MAX_RATIO;
    if file_bytes < min_bytes {
        return Err(IoError::ImpossibleSize {
            path: owned(path),
            format: "PNG",
            width,
            height,
            min_bytes,
            file_bytes,
        });
    }
    Ok(())
}

/// Where a JPEG without its end marker stopped: the decoder fills what it did not get with
/// gray (128 in every sample) from the start of a row of MCUs, and the MCU row before that may
/// have been decoded from padding; the rows before it are whole.
fn truncated_at(image: &DynamicImage, layout: &Layout) -> TruncatedAt {
    let height = image.height();
    let row_bytes = image.width() as usize * usize::from(image.color().bytes_per_pixel());
    let bytes = image.as_bytes();
    let gray_rows = if row_bytes == 0 {
        0
    } else {
        bytes.rchunks_exact(row_bytes).take_while(|row| row.iter().all(|&b| b == 128)).count() as u32
    };
    let with_data = height.saturating_sub(gray_rows);
    if layout.kind == FrameKind::Progressive && gray_rows == 0 {
        return TruncatedAt::Refinement;
    }
    let mcu = layout.mcu_rows().max(1);
    TruncatedAt::Row { rows: (with_data.div_ceil(mcu).saturating_sub(1) * mcu).min(height), height }
}

fn decode_error(path: &Path, e: image::ImageError) -> IoError {
    use image::error::LimitErrorKind;
    let truncated = || IoError::Truncated { path: owned(path), at: TruncatedAt::Unknown };
    match e {
        image::ImageError::Unsupported(u) => {
            IoError::Unsupported { path: owned(path), reason: u.to_string() }
        }
        image::ImageError::IoError(cause) if cause.kind() == std::io::ErrorKind::UnexpectedEof => truncated(),
        image::ImageError::IoError(cause) => IoError::Open { path: owned(path), cause },
        image::ImageError::Limits(l) => IoError::Decode {
            path: owned(path),
            reason: match l.kind() {
                LimitErrorKind::DimensionError => "the header's dimensions are invalid".to_owned(),
                LimitErrorKind::InsufficientMemory => {
                    "the decoder needs more memory than the budget allows".to_owned()
                }
                _ => l.to_string(),
            },
        },
        other => {
            let reason = readable(&other.to_string());
            if reason.contains("does not have enough data") || reason.contains("unexpected EOF") {
                return truncated();
            }
            IoError::Decode { path: owned(path), reason }
        }
    }
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

#[cfg(test)]
mod tests {
    #[test]
    fn debug_dumps_are_made_readable() {
        let m = "CRC error: expected 0x1 have 0x2 while decoding ChunkType { type: IDAT, critical: true, private: false, reserved: false, safecopy: false } chunk.";
        assert_eq!(super::readable(m), "CRC error: expected 0x1 have 0x2 while decoding IDAT chunk.");
        assert_eq!(super::readable("plain"), "plain");
    }
}
