//! Export: PNG, JPEG, TIFF, BMP, WebP encoders, written through [`super::atomic`] so a failed
//! export leaves nothing and an existing file is only replaced when asked.

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

use image::codecs::{bmp::BmpEncoder, jpeg::JpegEncoder, png, tiff::TiffEncoder, webp::WebPEncoder};
use image::{DynamicImage, ExtendedColorType, ImageEncoder as _};

use super::{IoError, owned};

/// The largest side a WebP image may have.
const WEBP_MAX_SIDE: u32 = 16383;

/// An export file format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// PNG: 8 or 16 bit, gray or gray + alpha, fast compression.
    #[default]
    Png,
    /// JPEG: 8-bit gray, lossy (quality 1-100); no alpha.
    Jpeg,
    /// TIFF: 8 or 16-bit gray; no alpha.
    Tiff,
    /// BMP: 8-bit gray or gray + alpha.
    Bmp,
    /// WebP (lossless): 8-bit gray or gray + alpha, at most 16383 px a side.
    Webp,
}

impl ExportFormat {
    /// Every format, in menu order.
    pub const ALL: [Self; 5] = [Self::Png, Self::Jpeg, Self::Tiff, Self::Bmp, Self::Webp];

    /// The usual file extension.
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
            Self::Tiff => "tif",
            Self::Bmp => "bmp",
            Self::Webp => "webp",
        }
    }

    /// The format a file name asks for, by its extension.
    #[must_use]
    pub fn from_path(path: &Path) -> Option<Self> {
        path.extension()?.to_str()?.parse().ok()
    }

    /// Whether the format stores an alpha channel.
    #[must_use]
    pub fn has_alpha(self) -> bool {
        matches!(self, Self::Png | Self::Bmp | Self::Webp)
    }

    /// Whether the format stores 16-bit samples.
    #[must_use]
    pub fn has_16bit(self) -> bool {
        matches!(self, Self::Png | Self::Tiff)
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
            Self::Tiff => "TIFF",
            Self::Bmp => "BMP",
            Self::Webp => "WebP",
        })
    }
}

impl FromStr for ExportFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "png" => Ok(Self::Png),
            "jpg" | "jpeg" => Ok(Self::Jpeg),
            "tif" | "tiff" => Ok(Self::Tiff),
            "bmp" => Ok(Self::Bmp),
            "webp" => Ok(Self::Webp),
            _ => Err(format!("unknown format {s:?} (expected png, jpeg, tiff, bmp or webp)")),
        }
    }
}

/// Settings for one export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExportOptions {
    /// The format; `None` = from the file's extension.
    pub format: Option<ExportFormat>,
    /// JPEG quality, 1-100.
    pub jpeg_quality: u8,
    /// Write 8-bit samples even when the image is 16-bit.
    pub force_8bit: bool,
    /// Replace an existing file.
    pub overwrite: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        Self { format: None, jpeg_quality: 90, force_8bit: false, overwrite: false }
    }
}

/// What an export did.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EncodeReport {
    /// The format written.
    pub format: ExportFormat,
    /// Bytes in the written file.
    pub bytes: u64,
    /// Wall time of encoding and writing (CPU clock).
    pub encode_ns: u64,
    /// What was changed to fit the format (alpha dropped, 16 -> 8 bit).
    pub notes: Vec<String>,
}

/// Encodes a gray image (L8, LA8, L16 or LA16) into `path` atomically.
pub fn encode_file(
    image: &DynamicImage,
    path: &Path,
    options: &ExportOptions,
) -> Result<EncodeReport, IoError> {
    let started = Instant::now();
    let format = match options.format {
        Some(f) => f,
        None => {
            ExportFormat::from_path(path).ok_or_else(|| IoError::UnknownExportFormat { path: owned(path) })?
        }
    };
    if !options.overwrite && path.exists() {
        return Err(IoError::Exists { path: owned(path) });
    }
    let (fitted, notes) = fit_to_format(image, format, options.force_8bit);
    if format == ExportFormat::Webp && (fitted.width() > WEBP_MAX_SIDE || fitted.height() > WEBP_MAX_SIDE) {
        return Err(IoError::ExportUnsupported {
            path: owned(path),
            format: "WebP",
            reason: format!(
                "{}x{} exceeds its {WEBP_MAX_SIDE} px limit per side",
                fitted.width(),
                fitted.height()
            ),
        });
    }
    let bytes = super::atomic::write_atomically(path, options.overwrite, |out| {
        write_encoded(&fitted, format, options.jpeg_quality, out).map_err(|e| e.to_string())
    })?;
    let encode_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    Ok(EncodeReport { format, bytes, encode_ns, notes })
}

/// Converts the image to what `format` can store, saying what changed.
fn fit_to_format(
    image: &DynamicImage,
    format: ExportFormat,
    force_8bit: bool,
) -> (DynamicImage, Vec<String>) {
    let mut notes = Vec::new();
    let has_alpha = image.color().has_alpha();
    let is_16 = image.color().bytes_per_pixel() / image.color().channel_count() == 2;
    let keep_alpha = has_alpha && format.has_alpha();
    let keep_16 = is_16 && format.has_16bit() && !force_8bit;
    if has_alpha && !keep_alpha {
        notes.push(format!("{format} has no alpha channel: alpha dropped"));
    }
    if is_16 && !keep_16 {
        notes.push(if force_8bit {
            "written as 8-bit as asked".to_owned()
        } else {
            format!("{format} stores 8-bit samples: 16-bit gray reduced to 8-bit")
        });
    }
    let fitted = match (keep_16, keep_alpha) {
        (true, true) => DynamicImage::ImageLumaA16(image.to_luma_alpha16()),
        (true, false) => DynamicImage::ImageLuma16(image.to_luma16()),
        (false, true) => DynamicImage::ImageLumaA8(image.to_luma_alpha8()),
        (false, false) => DynamicImage::ImageLuma8(image.to_luma8()),
    };
    (fitted, notes)
}

fn write_encoded(
    image: &DynamicImage,
    format: ExportFormat,
    jpeg_quality: u8,
    out: &mut impl std::io::Write,
) -> image::ImageResult<()> {
    let (w, h) = (image.width(), image.height());
    let color: ExtendedColorType = image.color().into();
    let bytes = image.as_bytes();
    match format {
        ExportFormat::Png => {
            png::PngEncoder::new_with_quality(out, png::CompressionType::Fast, png::FilterType::Adaptive)
                .write_image(bytes, w, h, color)
        }
        ExportFormat::Jpeg => {
            JpegEncoder::new_with_quality(out, jpeg_quality.clamp(1, 100)).write_image(bytes, w, h, color)
        }
        ExportFormat::Tiff => {
            // The TIFF encoder needs to seek; encode into memory first.
            let mut buf = std::io::Cursor::new(Vec::new());
            TiffEncoder::new(&mut buf).write_image(bytes, w, h, color)?;
            out.write_all(buf.get_ref()).map_err(image::ImageError::IoError)
        }
        ExportFormat::Bmp => BmpEncoder::new(out).write_image(bytes, w, h, color),
        ExportFormat::Webp => WebPEncoder::new_lossless(out).write_image(bytes, w, h, color),
    }
}
