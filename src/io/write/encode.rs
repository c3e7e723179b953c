//! Export: PNG, JPEG, TIFF, BMP, WebP encoders, written through [`crate::io::write::atomic`] so a failed
//! export leaves nothing and an existing file is only replaced when asked.
//!
//! PNG and JPEG use graylab's own parallel encoders ([`crate::io::codecs::png`], [`crate::io::codecs::jpeg`]),
//! TIFF its own writer ([`crate::io::write::tiff`]); BMP uses the `image` crate's (a 1-bit BMP,
//! the dither's, graylab's own: [`crate::io::write::bmp`]) and WebP `image-webp`'s, as `image`
//! wraps it. Each writes the input's pixel density, EXIF tags and XMP properties where the
//! format has a place for them ([`ExportOptions::density`], [`ExportOptions::metadata`]).

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

use image::codecs::bmp::BmpEncoder;
use image::{ColorType, DynamicImage, ExtendedColorType, ImageEncoder as _};

use crate::io::codecs::jpeg::{JPEG_MAX_SIDE, write_gray_jpeg};
use crate::io::codecs::png::write_png;
use crate::io::codecs::rows::{GrayLayout, RowSource, SliceRows};
use crate::io::write::bmp::{BmpDensity, write_bilevel_bmp};
use crate::io::write::progress::CountingWriter;
use crate::io::write::tiff::write_gray_tiff;
use crate::io::{Density, IoError, WriteCause};
use crate::system::clock::nanos_since;

/// The largest side a WebP image may have.
const WEBP_MAX_SIDE: u32 = 16383;

/// An export file format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// PNG: 8 or 16 bit, gray or gray + alpha, fast compression on all cores.
    #[default]
    Png,
    /// JPEG: 8-bit single-channel gray, baseline, lossy (quality 1-100), coded on all cores;
    /// no alpha; at most 65500 px a side (libjpeg's limit).
    Jpeg,
    /// TIFF: 8 or 16-bit gray, uncompressed; gray + alpha as two samples, the second marked as
    /// unassociated alpha (`ExtraSamples` = 2).
    Tiff,
    /// BMP: 8-bit gray; gray + alpha is written as 32-bit RGBA (equal R, G and B), the only
    /// BMP form with alpha.
    Bmp,
    /// WebP (lossless): 8-bit gray or gray + alpha, at most 16383 px a side.
    Webp,
}

impl ExportFormat {
    /// Every format, in menu order.
    pub const ALL: [Self; 5] = [Self::Png, Self::Jpeg, Self::Tiff, Self::Bmp, Self::Webp];

    /// The name on the command line and in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.words().0
    }

    /// Other names the command line accepts.
    #[must_use]
    pub fn aliases(self) -> &'static [&'static str] {
        self.words().2
    }

    /// A one-line description, for help text.
    #[must_use]
    pub fn description(self) -> &'static str {
        self.words().3
    }

    /// Its name, its name in messages ([`fmt::Display`]), its other names and its description.
    fn words(self) -> (&'static str, &'static str, &'static [&'static str], &'static str) {
        match self {
            Self::Png => ("png", "PNG", &[], "PNG: 8- or 16-bit gray, with alpha"),
            Self::Jpeg => ("jpeg", "JPEG", &["jpg"], "JPEG: 8-bit gray, lossy (--quality)"),
            Self::Tiff => ("tiff", "TIFF", &["tif"], "TIFF: 8- or 16-bit gray, with alpha"),
            Self::Bmp => ("bmp", "BMP", &[], "BMP: 8-bit gray, with alpha (as RGBA)"),
            Self::Webp => ("webp", "WebP", &[], "WebP (lossless): 8-bit gray, with alpha"),
        }
    }

    /// The usual file extension: the first alias where there is one (`jpg`, `tif`), else the name.
    #[must_use]
    pub fn extension(self) -> &'static str {
        self.aliases().first().copied().unwrap_or(self.name())
    }

    /// The format a file name asks for, by its extension.
    #[must_use]
    pub fn from_path(path: &Path) -> Option<Self> {
        path.extension()?.to_str()?.parse().ok()
    }

    /// Whether the format stores an alpha channel.
    #[must_use]
    pub fn has_alpha(self) -> bool {
        matches!(self, Self::Png | Self::Tiff | Self::Bmp | Self::Webp)
    }

    /// Whether the format stores 16-bit samples.
    #[must_use]
    pub fn has_16bit(self) -> bool {
        matches!(self, Self::Png | Self::Tiff)
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.words().1)
    }
}

impl FromStr for ExportFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let named = |f: &Self| f.name() == lower || f.aliases().contains(&lower.as_str());
        Self::ALL
            .into_iter()
            .find(named)
            .ok_or_else(|| format!("unknown format {s:?} (expected png, jpeg, tiff, bmp or webp)"))
    }
}

/// Settings for one export.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExportOptions {
    /// The format; `None` = from the file's extension.
    pub format: Option<ExportFormat>,
    /// JPEG quality, 1-100.
    pub jpeg_quality: u8,
    /// Write 8-bit samples even when the image is 16-bit.
    pub force_8bit: bool,
    /// Replace an existing file.
    pub overwrite: bool,
    /// Write an 8-bit gray image of 0s and 255s (the dither's) as a 1-bit PNG, TIFF or BMP: a
    /// value of 128 or more is white. Other formats and layouts are written as they are.
    pub one_bit: bool,
    /// The pixel density to write: the input's ([`crate::io::Decoded::density`]), so that the
    /// output prints at the input's size. TIFF, PNG (`pHYs`), JPEG (JFIF) and BMP store it, WebP
    /// has no place for it. `None`: as the format writes none (TIFF 72 dpi, JFIF an aspect
    /// ratio of 1:1, BMP 0, PNG no `pHYs`). A fact of the input, not a setting: never saved.
    #[serde(skip)]
    pub density: Option<Density>,
    /// The input's EXIF tags to keep ([`crate::io::Decoded::metadata`]: camera, lens, exposure,
    /// capture date, artist, copyright) and XMP properties ([`crate::io::Xmp`]: title, keywords,
    /// rating, credits), written where the format has a place for them (all but BMP). A fact of
    /// the input, not a setting: never saved.
    #[serde(skip)]
    pub metadata: Option<std::sync::Arc<crate::io::KeptMetadata>>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        Self {
            format: None,
            jpeg_quality: 90,
            force_8bit: false,
            overwrite: false,
            one_bit: false,
            density: None,
            metadata: None,
        }
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
    encode_file_with_progress(image, path, options, &|_| ())
}

/// [`encode_file`], calling `progress` with the fraction encoded so far (0.0 to 1.0, from any
/// thread): PNG and JPEG as their stripes of rows are coded, TIFF and BMP as their bytes are
/// written, WebP (whose encoder tells nothing until it is done) only at the end.
pub fn encode_file_with_progress(
    image: &DynamicImage,
    path: &Path,
    options: &ExportOptions,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<EncodeReport, IoError> {
    let started = Instant::now();
    let format = check_target(path, options, (image.width(), image.height()))?;
    let (fitted, notes) = fit_to_format(image, format, options.force_8bit);
    let bytes = crate::io::write::atomic::write_atomically(path, options.overwrite, |out| {
        write_encoded(
            &fitted,
            format,
            (options.jpeg_quality, options.one_bit, options.density, options.metadata.as_deref()),
            out,
            progress,
        )
    })?;
    progress(1.0);
    let encode_ns = nanos_since(started);
    Ok(EncodeReport { format, bytes, encode_ns, notes })
}

/// Whether [`encode_rows_to_file`] can write an image of `layout` to `path` as is: PNG stores
/// every gray layout (unless 8-bit is forced on a 16-bit one), JPEG only 8-bit gray.
#[must_use]
pub fn encodes_rows(layout: GrayLayout, path: &Path, options: &ExportOptions) -> bool {
    match options.format.or_else(|| ExportFormat::from_path(path)) {
        Some(ExportFormat::Png) => !(layout.sixteen_bit && options.force_8bit),
        Some(ExportFormat::Jpeg) => !layout.sixteen_bit && !layout.alpha,
        _ => false,
    }
}

/// Encodes rows produced stripe by stripe (see [`RowSource`]) into `path` atomically, for the
/// layouts [`encodes_rows`] accepts; the stripes are produced and encoded in parallel.
pub fn encode_rows_to_file(
    layout: GrayLayout,
    source: &dyn RowSource,
    path: &Path,
    options: &ExportOptions,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<EncodeReport, IoError> {
    let started = Instant::now();
    let format = check_target(path, options, (layout.width, layout.height))?;
    if !encodes_rows(layout, path, options) {
        return Err(IoError::ExportUnsupported {
            path: path.into(),
            format: if format == ExportFormat::Jpeg { "JPEG" } else { "this format" },
            reason: "rows of this layout need converting first".to_owned(),
        });
    }
    let bytes = crate::io::write::atomic::write_atomically(path, options.overwrite, |out| {
        match format {
            ExportFormat::Jpeg => write_gray_jpeg(
                source,
                (layout.width, layout.height),
                (options.jpeg_quality.clamp(1, 100), options.density, options.metadata.as_deref()),
                out,
                progress,
            ),
            _ => write_png(
                source,
                (layout, layout.bit_depth(), options.density, options.metadata.as_deref()),
                out,
                progress,
            ),
        }?;
        // Nothing is committed before the rows' producer has finished without an error.
        Ok(source.finished()?)
    })?;
    progress(1.0);
    let encode_ns = nanos_since(started);
    Ok(EncodeReport { format, bytes, encode_ns, notes: Vec::new() })
}

/// [`export_format`], after checking that the file may be written.
fn check_target(path: &Path, options: &ExportOptions, size: (u32, u32)) -> Result<ExportFormat, IoError> {
    let format = export_format(path, options, size)?;
    if !options.overwrite && path.exists() {
        return Err(IoError::Exists { path: path.into() });
    }
    Ok(format)
}

/// The format `path` is written in (`options.format`, else its extension), after checking that
/// it can store a `width` x `height` image: the export's own check, for callers that know the
/// size before decoding (the input's header) and would refuse before any work.
pub fn export_format(
    path: &Path,
    options: &ExportOptions,
    (width, height): (u32, u32),
) -> Result<ExportFormat, IoError> {
    let format = options
        .format
        .or_else(|| ExportFormat::from_path(path))
        .ok_or_else(|| IoError::UnknownExportFormat { path: path.into() })?;
    let limit = match format {
        ExportFormat::Webp => Some(("WebP", WEBP_MAX_SIDE)),
        ExportFormat::Jpeg => Some(("JPEG", JPEG_MAX_SIDE)),
        _ => None,
    };
    if let Some((name, max_side)) = limit
        && (width > max_side || height > max_side)
    {
        return Err(IoError::ExportUnsupported {
            path: path.into(),
            format: name,
            reason: format!("{width}x{height} exceeds its {max_side} px limit per side"),
        });
    }
    Ok(format)
}

/// Encodes a gray image into memory as `format` (fitted to it as [`encode_file`] does), for
/// benchmarks and callers that write elsewhere.
pub fn encode_to_vec(
    image: &DynamicImage,
    format: ExportFormat,
    jpeg_quality: u8,
) -> std::io::Result<Vec<u8>> {
    let (fitted, _notes) = fit_to_format(image, format, false);
    let mut out = Vec::new();
    write_encoded(&fitted, format, (jpeg_quality, false, None, None), &mut out, &|_| ())
        .map_err(std::io::Error::other)?;
    Ok(out)
}

/// Converts the image to what `format` can store, saying what changed; an image the format
/// stores as it is is borrowed, not copied (a 96 MP gray plane is 96 MB).
fn fit_to_format(
    image: &DynamicImage,
    format: ExportFormat,
    force_8bit: bool,
) -> (Cow<'_, DynamicImage>, Vec<String>) {
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
    // BMP keeps alpha only beside colour.
    let as_rgba = keep_alpha && format == ExportFormat::Bmp;
    if as_rgba {
        notes.push(format!(
            "{format} keeps alpha only in colour images: written as RGBA with equal R, G and B"
        ));
    }
    let (wanted, convert): (ColorType, fn(&DynamicImage) -> DynamicImage) = match (keep_16, keep_alpha) {
        (true, true) if as_rgba => (ColorType::Rgba16, |i| DynamicImage::ImageRgba16(i.to_rgba16())),
        (false, true) if as_rgba => (ColorType::Rgba8, |i| DynamicImage::ImageRgba8(i.to_rgba8())),
        (true, true) => (ColorType::La16, |i| DynamicImage::ImageLumaA16(i.to_luma_alpha16())),
        (true, false) => (ColorType::L16, |i| DynamicImage::ImageLuma16(i.to_luma16())),
        (false, true) => (ColorType::La8, |i| DynamicImage::ImageLumaA8(i.to_luma_alpha8())),
        (false, false) => (ColorType::L8, |i| DynamicImage::ImageLuma8(i.to_luma8())),
    };
    let fitted = if image.color() == wanted { Cow::Borrowed(image) } else { Cow::Owned(convert(image)) };
    (fitted, notes)
}

fn write_encoded(
    image: &DynamicImage,
    format: ExportFormat,
    (jpeg_quality, one_bit, density, exif): (u8, bool, Option<Density>, Option<&crate::io::KeptMetadata>),
    out: &mut (impl std::io::Write + Send),
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(), WriteCause> {
    let (w, h) = (image.width(), image.height());
    let color: ExtendedColorType = image.color().into();
    let bytes = image.as_bytes();
    let image_err = |e: image::ImageError| WriteCause::Encoder(e.to_string());
    // The gray layouts (PNG and TIFF): BMP's RGBA is written by the `image` crate.
    let layout = GrayLayout {
        width: w,
        height: h,
        alpha: image.color().has_alpha(),
        sixteen_bit: image.color().bytes_per_pixel() / image.color().channel_count() == 2,
    };
    match format {
        ExportFormat::Png if one_bit && image.color() == ColorType::L8 => {
            let packed = crate::io::codecs::png::pack_bits(bytes, w as usize);
            let rows = SliceRows { bytes: &packed, row_bytes: (w as usize).div_ceil(8) };
            let gray = GrayLayout { width: w, height: h, alpha: false, sixteen_bit: false };
            write_png(&rows, (gray, 1, density, exif), out, progress)
        }
        ExportFormat::Png => {
            let rows = SliceRows { bytes, row_bytes: layout.row_bytes() };
            if bytes.len() != layout.row_bytes() * h as usize {
                return Err(WriteCause::Encoder(format!("{} bytes for a {w}x{h} image", bytes.len())));
            }
            write_png(&rows, (layout, layout.bit_depth(), density, exif), out, progress)
        }
        ExportFormat::Jpeg => {
            if bytes.len() != w as usize * h as usize {
                return Err(WriteCause::Encoder(format!("{} bytes for a {w}x{h} gray image", bytes.len())));
            }
            let rows = SliceRows { bytes, row_bytes: w as usize };
            write_gray_jpeg(&rows, (w, h), (jpeg_quality.clamp(1, 100), density, exif), out, progress)
        }
        ExportFormat::Tiff if one_bit && image.color() == ColorType::L8 => {
            let packed = crate::io::codecs::png::pack_bits(bytes, w as usize);
            let counted = &mut CountingWriter::new(out, packed.len() as u64, progress);
            write_gray_tiff(&packed, (layout, 1, density, exif), counted)
        }
        ExportFormat::Tiff => write_gray_tiff(
            bytes,
            (layout, layout.bit_depth(), density, exif),
            &mut CountingWriter::new(out, bytes.len() as u64, progress),
        ),
        // A BMP has no place for text: graylab's BMP outputs are unmarked (`crate::io::mark`).
        ExportFormat::Bmp if one_bit && image.color() == ColorType::L8 => {
            let packed = crate::io::codecs::png::pack_bits(bytes, w as usize);
            let counted = &mut CountingWriter::new(out, packed.len() as u64, progress);
            write_bilevel_bmp(&packed, (w, h), density.and_then(Density::per_metre), counted)
        }
        // Its encoder writes 0 pixels per metre: the density is set in its header as it passes.
        ExportFormat::Bmp => {
            let mut counted = CountingWriter::new(out, bytes.len() as u64, progress);
            let per_metre = density.and_then(Density::per_metre);
            BmpEncoder::new(&mut BmpDensity::new(&mut counted, per_metre))
                .write_image(bytes, w, h, color)
                .map_err(image_err)
        }
        ExportFormat::Webp => {
            let mut encoder = image_webp::WebPEncoder::new(out);
            // graylab's mark (see `crate::io::mark`): the `Software` tag in an `EXIF` chunk,
            // beside the input's kept tags; the kept XMP properties in an `XMP ` chunk.
            encoder.set_exif_metadata(crate::io::exif::block(exif));
            if let Some(packet) = exif.and_then(crate::io::KeptMetadata::xmp_packet) {
                encoder.set_xmp_metadata(packet);
            }
            let color = match image.color() {
                ColorType::L8 => image_webp::ColorType::L8,
                ColorType::La8 => image_webp::ColorType::La8,
                other => return Err(WriteCause::Encoder(format!("WebP holds no {other:?} pixels"))),
            };
            encoder.encode(bytes, w, h, color).map_err(|e| WriteCause::Encoder(e.to_string()))
        }
    }
}
