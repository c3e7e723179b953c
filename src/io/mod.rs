//! Images in and out: decoding with EXIF orientation and a memory budget checked before any
//! allocation, and atomic, never-clobbering export to PNG, JPEG, TIFF, BMP and WebP.
//!
//! Knows nothing of conversions, GPUs or the UI; depends only on `image` and `tempfile`.

mod atomic;
mod decode;
mod deflate;
mod encode;
mod huffman;
mod huge_pages;
mod jpeg;
mod jpeg_block;
mod jpeg_dct;
mod jpeg_tables;
mod memory;
mod png_parallel;
mod probe;
mod rows;
mod stripes;

use std::path::{Path, PathBuf};

pub use atomic::write_atomically;
pub use decode::{DecodeOptions, Decoded, decode_file};
pub use encode::{
    EncodeReport, ExportFormat, ExportOptions, encode_file, encode_file_with_progress, encode_rows_to_file,
    encode_to_vec, encodes_rows,
};
pub use jpeg::JPEG_MAX_SIDE;
pub use memory::available_memory_bytes;
pub use probe::{ImageProbe, probe_file, sniff_format};
pub use rows::{GrayLayout, RowSource};

/// Errors of reading and writing image files. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The file could not be opened or read.
    #[error("cannot read the file ({source}): {}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is empty.
    #[error("the file is empty: {}", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The content is not an image format graylab recognises.
    #[error(
        "not an image graylab can read (recognised: JPEG, PNG, TIFF, WebP, BMP): {}",
        path.display()
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
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
    #[error("the file is truncated (it ends before the image data does): {}", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
    },
    /// The image data is corrupt.
    #[error("cannot decode the image ({source}): {}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// The decoder's reason.
        source: image::ImageError,
    },
    /// The image would need more memory than is available; refused before allocating.
    #[error(
        "image too large: {width}x{height} needs {needed} but only {budget} may be used: {}",
        path.display(),
        needed = human_bytes(*needed_bytes),
        budget = human_bytes(*budget_bytes)
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
    },
    /// The output exists and overwriting was not asked for.
    #[error("the output file exists (pass --overwrite to replace it): {}", path.display())]
    Exists {
        /// The output file.
        path: PathBuf,
    },
    /// The output format cannot be told from the file name.
    #[error("unknown output format (use .png, .jpg, .tif, .bmp or .webp, or --format): {}", path.display())]
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
    /// Encoding or writing the output failed; nothing was left behind.
    #[error("cannot write the image ({reason}): {}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// `1.5 GiB`-style sizes for messages.
#[must_use]
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[unit]) }
}

fn owned(path: &Path) -> PathBuf {
    path.to_path_buf()
}
