//! Images in and out: decoding with EXIF orientation, files that cannot hold what their header
//! claims refused, and a process-wide memory budget reserved before any allocation; atomic,
//! never-clobbering export to PNG, JPEG, TIFF, BMP and WebP that leaves nothing behind.
//!
//! `read` sniffs, checks and decodes; `write` exports atomically; `codecs` holds graylab's
//! own PNG and JPEG encoders. Knows nothing of conversions, GPUs or the UI; depends only on
//! `image` and [`crate::system`].

mod codecs;
mod density;
mod exif;
mod json;
mod kind;
mod mark;
mod read;
mod result_file;
mod write;
mod xmp;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::system::memory::BudgetSource;
use crate::system::memory_budget::OverBudget;
use crate::system::units::human_bytes;

pub use codecs::jpeg::JPEG_MAX_SIDE;
pub use codecs::rows::{GrayLayout, RowSource, RowsFailed};
pub use density::{Density, DensityUnit};
pub use exif::KeptMetadata;
pub use json::{JsonPath, read_json, serialize_path, write_json};
pub use kind::{
    EntryKey, entry_key, file_id, folder_of, looks_like, open_regular, read_capped, same_file, special_kind,
};
pub use mark::is_graylab_output;
pub use read::decode::{DecodeOptions, Decoded, Opened, decode_file, decode_or_stream};
pub use read::luma_stream::{LumaStream, ToGray};
pub use read::messages::RestartDamage;
pub use read::sniff::{FileKind, RECOGNISED_FORMATS, classify_file, header_dimensions, sniff_format};
pub use read::stored_luma::StoredLuma;
pub use result_file::{
    MAX_RESULT_BYTES, Provenance, ResultFile, ResultKind, SCHEMA, read_result, stamped_json, write_result,
};
pub use write::atomic::{
    NO_TMPFILE_ENV, check_output, read_only_mode, remove_temp_files_on_signals, write_atomically,
    written_through,
};
pub use write::encode::{
    EncodeReport, ExportFormat, ExportOptions, encode_file, encode_file_with_progress, encode_rows_to_file,
    encode_to_vec, encodes_rows, export_format,
};
pub use write::folders::{WritingIn, remove_empty_folders};
pub use xmp::Xmp;

/// Where a truncated file ends, as far as the decoder can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TruncatedAt {
    /// Before the image data does (no more detail).
    Unknown,
    /// After `rows` complete rows of `height`; the rest is missing.
    Row {
        /// Rows decoded from the file's data.
        rows: u32,
        /// Rows the header claims.
        height: u32,
    },
    /// In a refinement scan of a progressive JPEG: every row is there, at lower quality.
    Refinement,
    /// The file ends where it should, but its coded data ends early: libjpeg found a marker
    /// where data should be ("premature end of data segment") after about `rows` rows of
    /// `height` (`None`: before the first row was handed out, as in a multi-scan file).
    EarlyEnd {
        /// Rows decoded from the file's data, as far as libjpeg had handed out rows.
        rows: Option<u32>,
        /// Rows the header claims.
        height: u32,
    },
}

impl fmt::Display for TruncatedAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown => f.write_str("it ends before the image data does"),
            Self::Row { rows, height } => write!(f, "it ends after row {rows} of {height}"),
            Self::Refinement => {
                f.write_str("it ends in a refinement scan: every row is there, at lower quality")
            }
            Self::EarlyEnd { rows: Some(rows), height } => write!(
                f,
                "its image data ends early, after about row {rows} of {height} (libjpeg: premature end of data segment)"
            ),
            Self::EarlyEnd { rows: None, height } => write!(
                f,
                "its image data ends early, somewhere in its {height} rows (libjpeg: premature end of data segment)"
            ),
        }
    }
}

/// Something the caller should tell the user about a decoded image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeWarning {
    /// The file is truncated; what is missing was filled with gray.
    Truncated(TruncatedAt),
    /// Bytes between a JPEG's segments were skipped, as libjpeg skips them.
    ExtraneousBytes {
        /// How many.
        bytes: usize,
        /// The marker code found after them.
        marker: u8,
    },
    /// The file holds more than one frame (an animated GIF, PNG or WebP) or page (a TIFF); only
    /// the first was read.
    FirstFrameOnly(FrameCount),
    /// Restart intervals of a JPEG whose data libjpeg could not place (a marker missing or out of
    /// sequence) or found damaged; it resynchronised at the next marker, as `OpenCV`'s decode does,
    /// and the rows of those intervals (`rows.0..rows.1`, as stored) are lost (where chroma is
    /// subsampled vertically, libjpeg's smoothing moves the colour of the row either side).
    DamagedRestart {
        /// First and one past the last row lost.
        rows: (u32, u32),
        /// The image's height.
        height: u32,
        /// What libjpeg found.
        cause: RestartDamage,
    },
    /// A JPEG restart marker is numbered out of sequence (`found` where `expected` belongs) and
    /// libjpeg took it for the expected one, as its rule says for a number 3 to 5 ahead: no row
    /// is lost.
    RestartRenumbered {
        /// The marker's number (0-7).
        found: u8,
        /// The number its place calls for.
        expected: u8,
        /// The first row after it, as stored, counted from 0 (said from 1).
        row: u32,
        /// The image's height.
        height: u32,
    },
    /// A progressive JPEG's scans stop before every coefficient is coded (a file cut short and
    /// closed with an end-of-image marker, or an encoder that stopped early): every row is there,
    /// at lower quality, and libjpeg says nothing of it.
    ScansMissing,
    /// A sequential JPEG lacks its end-of-image marker, and nothing else: every row was decoded
    /// from the file's data (djpeg warns "premature end of JPEG file" all the same).
    EndMarkerMissing,
    /// A BMP file is longer than the size its header gives (`bfSize`, not 0): bytes inserted
    /// among its pixels would shift every row after them, and nothing in the format tells
    /// (`ImageMagick` refuses such a file; other readers say nothing).
    LongerThanHeader {
        /// The file's size.
        file_bytes: u64,
        /// The size its header gives.
        header_bytes: u64,
    },
    /// libjpeg warned that the coded data is damaged (its words, as djpeg prints them, and the
    /// row it had reached); it decoded on, so the image may be wrong from there.
    Damaged {
        /// libjpeg's message ("Corrupt JPEG data: bad Huffman code").
        message: String,
        /// The rows libjpeg had handed out when it warned, of how many.
        at_row: Option<(u32, u32)>,
        /// More warnings of the same kind that followed it.
        repeats: u32,
    },
}

/// The warning of a file truncated at `at`, its end said in `words`.
pub(in crate::io) fn truncated_words(at: &TruncatedAt, words: &str) -> String {
    match at {
        TruncatedAt::Refinement => format!("the file is truncated: {words}"),
        // libjpeg leaves the blocks it has no data for at zero: gray, or where a later scan of
        // a progressive file ran out, at that scan's lower quality.
        TruncatedAt::EarlyEnd { rows: Some(_), .. } => {
            format!("the file is truncated: {words}; the rows after it are gray")
        }
        TruncatedAt::EarlyEnd { rows: None, .. } => {
            format!("the file is truncated: {words}; what is missing is gray, or at lower quality")
        }
        _ => format!("the file is truncated ({words}): the missing part is gray"),
    }
}

/// How many frames (or pages) a file holds, and how many were read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FrameCount {
    /// Frames read: the first.
    pub converted: u32,
    /// Frames (or pages) in the file, counted up to a cap (65536 TIFF pages, 2^20 WebP frames).
    pub total: u32,
    /// Whether they are a TIFF's pages rather than an animation's frames.
    #[serde(skip)]
    pub pages: bool,
    /// Whether the image read is an APNG's still image, which its animation leaves out (the
    /// still image is counted in `total`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub still_apart: bool,
}

impl FrameCount {
    /// What one of them is called: "page" for a TIFF's, else "frame".
    #[must_use]
    pub fn unit(&self) -> &'static str {
        if self.pages { "page" } else { "frame" }
    }

    /// What was read of them, short: "frame 1 of 3", or "the still image, not its 2 frames".
    #[must_use]
    pub fn read(&self) -> String {
        if self.still_apart {
            format!(
                "the still image, not its {}",
                crate::system::units::count(self.total as usize - 1, "frame")
            )
        } else {
            format!("{} 1 of {}", self.unit(), self.total)
        }
    }
}

/// Errors of reading and writing image files. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The file could not be opened or read.
    #[error("cannot read the file ({cause}): {}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The operating system's reason (in the message, not a `source()`: printed once).
        cause: std::io::Error,
    },
    /// The file is empty.
    #[error("the file is empty: {}", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The path is not a regular file (a FIFO, a device, a socket, a file of `/proc`): never
    /// read as an image.
    #[error("not an image file: it is {kind}: {}", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is, in words ("a FIFO (named pipe)").
        kind: &'static str,
    },
    /// The content is no image at all, and looks like something else.
    #[error("not an image: the file looks like {looks_like}: {}", path.display())]
    NotAnImage {
        /// The file.
        path: PathBuf,
        /// What it looks like ("text", "a PDF document").
        looks_like: &'static str,
    },
    /// The content is not an image format graylab recognises.
    #[error(
        "not an image graylab can read ({looks_like}; graylab reads {formats}): {}",
        path.display(),
        formats = RECOGNISED_FORMATS
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What the content looks like instead ("it looks like text").
        looks_like: &'static str,
    },
    /// The content is an image format graylab does not read.
    #[error(
        "{format} images are not supported (graylab reads {formats}): {}",
        path.display(),
        formats = RECOGNISED_FORMATS
    )]
    UnsupportedFormat {
        /// The file.
        path: PathBuf,
        /// The format's name.
        format: String,
    },
    /// The format is recognised but not supported (or this variant of it is not).
    #[error("unsupported image ({reason}): {}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What is unsupported.
        reason: String,
    },
    /// The file ends before the image data does.
    #[error("the file is truncated ({}): {}", at.shown(*orientation), path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Where it ends, in rows as stored.
        at: TruncatedAt,
        /// The file's orientation, which the image as shown would have applied: the message
        /// says where it ends in that image ([`TruncatedAt::shown`]).
        orientation: image::metadata::Orientation,
    },
    /// The header claims more pixels than the file's data could possibly hold.
    #[error(
        "the file cannot hold the image its header claims: {width}x{height} pixels need at least {min} of {format} image data, the file has {data} ({file} in all): {}",
        path.display(),
        min = human_bytes(*min_bytes),
        data = human_bytes(*data_bytes),
        file = human_bytes(*file_bytes)
    )]
    ImpossibleSize {
        /// The file.
        path: PathBuf,
        /// The format's name.
        format: &'static str,
        /// Width the header claims.
        width: u32,
        /// Height the header claims.
        height: u32,
        /// The fewest bytes of image data that could hold that many pixels.
        min_bytes: u64,
        /// Bytes of image data in the file (a JPEG's scans, a PNG's IDAT chunks).
        data_bytes: u64,
        /// The file's size.
        file_bytes: u64,
    },
    /// A GIF's screen or a WebP's canvas is far larger than its frames could cover (each
    /// counted no larger than its data can fill): the rest would be empty pixels the file does
    /// not hold.
    #[error(
        "the file cannot hold the image its header claims: its {width}x{height} {format} canvas is more than {slack} times what its frames can cover ({covered_pixels} pixels): {}",
        path.display(),
        slack = read::claims::CANVAS_SLACK
    )]
    ImpossibleCanvas {
        /// The file.
        path: PathBuf,
        /// The format's name.
        format: &'static str,
        /// Width the header claims.
        width: u32,
        /// Height the header claims.
        height: u32,
        /// The most pixels the frames can cover.
        covered_pixels: u64,
    },
    /// The coded data is damaged in a way graylab can tell (a restart marker lost or out of
    /// sequence, an interval's data cut short); kept, with the damaged rows lost, only when
    /// damaged data may be kept ([`DecodeOptions::allow_truncated`]).
    #[error("the image data is damaged ({detail}): {}", path.display())]
    DamagedData {
        /// The file.
        path: PathBuf,
        /// What is damaged, and what it costs.
        detail: String,
        /// The rows it costs, first and one past the last, where the file may be kept with them
        /// lost; `None`: it is never read.
        rows: Option<(u32, u32)>,
    },
    /// The file's size, modification or change time, or identity (device and inode) moved
    /// while it was read: the pixels may mix two versions of it.
    #[error("the file changed while it was read: {}", path.display())]
    ChangedWhileRead {
        /// The file.
        path: PathBuf,
    },
    /// The image data is corrupt.
    #[error("cannot decode the image ({reason}): {}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// The decoder's reason.
        reason: String,
    },
    /// The image would need more memory than the budget allows; refused before allocating.
    #[error(
        "image too large: {width}x{height} {}: {}",
        OverBudget {
            needed_bytes: *needed_bytes,
            budget_bytes: *budget_bytes,
            held_bytes: *held_bytes,
            limited_by: *limited_by,
        },
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Width the header claims.
        width: u32,
        /// Height the header claims.
        height: u32,
        /// Bytes needed for the decoded image and its gray result.
        needed_bytes: u64,
        /// Bytes this process may use.
        budget_bytes: u64,
        /// Bytes other work under way holds of the budget, where it made the refusal.
        held_bytes: u64,
        /// Which limit decided the budget.
        limited_by: BudgetSource,
    },
    /// The file would have to be read whole (JPEG) and is larger than the memory budget.
    #[error(
        "the file is too large to read: it has {file} but only {budget} may be used (limited by {limited_by}): {}",
        path.display(),
        file = crate::system::human_byte_pair(*file_bytes, *budget_bytes).0,
        budget = crate::system::human_byte_pair(*file_bytes, *budget_bytes).1
    )]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        file_bytes: u64,
        /// Bytes this process may use.
        budget_bytes: u64,
        /// Which limit decided the budget.
        limited_by: BudgetSource,
    },
    /// One of graylab's own JSON files (a cache, a kept pace) holds no such JSON.
    #[error("not a graylab JSON file ({reason}): {}", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Why not (too large, or what the parser said).
        reason: String,
    },
    /// A file read as one kind of graylab result is not one: another kind, not JSON, a newer
    /// schema, or not there.
    #[error("not a saved {expected} ({reason}): {}", path.display())]
    NotAResult {
        /// The file.
        path: PathBuf,
        /// The kind wanted ("bench", "sweep", "graylab result").
        expected: &'static str,
        /// What it is instead, or what is missing.
        reason: String,
    },
    /// The output exists and overwriting was not asked for.
    #[error("the output file exists: {}", path.display())]
    Exists {
        /// The output file.
        path: PathBuf,
    },
    /// The output format cannot be told from the file name.
    #[error("unknown output format (use .png, .jpg, .tif, .bmp or .webp): {}", path.display())]
    UnknownExportFormat {
        /// The output file.
        path: PathBuf,
    },
    /// The chosen format cannot store this image.
    #[error("cannot export as {format} ({reason}): {}", path.display())]
    ExportUnsupported {
        /// The output file.
        path: PathBuf,
        /// The format's name.
        format: &'static str,
        /// Why not.
        reason: String,
    },
    /// The output path names something that is not a regular file (a device, a FIFO): it is
    /// never replaced.
    #[error("the output is {kind}, which is never replaced by an image file: {}", path.display())]
    OutputNotAFile {
        /// The output path.
        path: PathBuf,
        /// What it is, in words ("a character device").
        kind: &'static str,
    },
    /// The output is a symbolic link that is not written through: to a process's open file
    /// (`/dev/stdout`), or to nothing.
    #[error("the output is a symbolic link to {}, {why}: {}", to.display(), path.display())]
    OutputLink {
        /// The output path.
        path: PathBuf,
        /// Where it leads.
        to: PathBuf,
        /// Why nothing is written through it, in words.
        why: &'static str,
    },
    /// The output is a file its mode keeps from being written (`0444`): never replaced, as
    /// `cp` refuses it to its owner.
    #[error("the output file is read-only (mode {mode:04o}), so it is not replaced: {}", path.display())]
    ReadOnly {
        /// The output file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The output path names a folder.
    #[error("the output is a folder, not a file: {}", path.display())]
    OutputIsFolder {
        /// The output path.
        path: PathBuf,
    },
    /// Encoding or writing the output failed; nothing was left behind.
    #[error("cannot write the file ({cause}): {}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// What failed (in the message, not a `source()`: printed once).
        cause: WriteCause,
    },
}

impl IoError {
    /// The file the error names: the input read, or the output written.
    #[must_use]
    pub fn path(&self) -> &Path {
        match self {
            Self::Open { path, .. }
            | Self::Empty { path }
            | Self::NotAFile { path, .. }
            | Self::NotAnImage { path, .. }
            | Self::UnknownFormat { path, .. }
            | Self::UnsupportedFormat { path, .. }
            | Self::Unsupported { path, .. }
            | Self::Truncated { path, .. }
            | Self::ImpossibleSize { path, .. }
            | Self::ImpossibleCanvas { path, .. }
            | Self::DamagedData { path, .. }
            | Self::ChangedWhileRead { path }
            | Self::Decode { path, .. }
            | Self::TooLarge { path, .. }
            | Self::FileTooLarge { path, .. }
            | Self::NotJson { path, .. }
            | Self::NotAResult { path, .. }
            | Self::Exists { path }
            | Self::UnknownExportFormat { path }
            | Self::ExportUnsupported { path, .. }
            | Self::OutputNotAFile { path, .. }
            | Self::OutputLink { path, .. }
            | Self::ReadOnly { path, .. }
            | Self::OutputIsFolder { path }
            | Self::Write { path, .. } => path,
        }
    }
}

/// Why writing an image failed: the operating system's error, kept whole so that a full disk or
/// a read-only folder can be told apart ([`std::io::Error::kind`]), or the encoder's refusal.
#[derive(Debug, thiserror::Error)]
pub enum WriteCause {
    /// A write, sync, link or rename failed.
    #[error(transparent)]
    Os(#[from] std::io::Error),
    /// The encoder cannot store this image (its reason).
    #[error("{0}")]
    Encoder(String),
    /// The rows' producer failed after the last row was coded.
    #[error(transparent)]
    Rows(#[from] RowsFailed),
}
