//! Decoding: format sniffing, the memory check before allocation, EXIF orientation.

use std::path::Path;
use std::time::Instant;

use image::{DynamicImage, ImageDecoder as _, ImageFormat, ImageReader};

use super::{IoError, available_memory_bytes, owned};

/// Budget when the available memory cannot be read.
const FALLBACK_BUDGET_BYTES: u64 = 8 << 30;

/// Settings for decoding.
#[derive(Clone, Copy, Debug, Default)]
pub struct DecodeOptions {
    /// Most bytes the decoded image and its gray result may take together; `None` = three
    /// quarters of the memory available now.
    pub memory_budget_bytes: Option<u64>,
}

impl DecodeOptions {
    /// The budget in force.
    #[must_use]
    pub fn budget_bytes(&self) -> u64 {
        self.memory_budget_bytes
            .unwrap_or_else(|| available_memory_bytes().map_or(FALLBACK_BUDGET_BYTES, |b| b / 4 * 3))
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
}

fn open_decoder(path: &Path, budget: u64) -> Result<(ImageFormat, impl image::ImageDecoder), IoError> {
    let open = |source| IoError::Open { path: owned(path), source };
    let meta = std::fs::metadata(path).map_err(open)?;
    if meta.is_dir() {
        return Err(IoError::Open { path: owned(path), source: std::io::Error::other("it is a folder") });
    }
    if meta.len() == 0 {
        return Err(IoError::Empty { path: owned(path) });
    }
    let reader = ImageReader::open(path).map_err(open)?.with_guessed_format().map_err(open)?;
    let format = reader.format().ok_or_else(|| IoError::UnknownFormat { path: owned(path) })?;
    let mut reader = reader;
    let mut limits = image::Limits::no_limits();
    // image's default refuses above 512 MiB; real 100-200 MP photos need more.
    limits.max_alloc = Some(budget);
    reader.limits(limits);
    let decoder = reader.into_decoder().map_err(|e| decode_error(path, e))?;
    Ok((format, decoder))
}

fn decode_error(path: &Path, e: image::ImageError) -> IoError {
    match e {
        image::ImageError::Unsupported(u) => {
            IoError::Unsupported { path: owned(path), reason: u.to_string() }
        }
        image::ImageError::IoError(source) if source.kind() == std::io::ErrorKind::UnexpectedEof => {
            IoError::Truncated { path: owned(path) }
        }
        image::ImageError::IoError(source) => IoError::Open { path: owned(path), source },
        image::ImageError::Limits(_) => IoError::Unsupported {
            path: owned(path),
            reason: format!("{e} (the image is larger than the memory budget)"),
        },
        other => IoError::Decode { path: owned(path), source: other },
    }
}

/// Decodes a file, refusing (before allocating) images that would not fit the memory budget.
pub fn decode_file(path: &Path, options: &DecodeOptions) -> Result<Decoded, IoError> {
    let started = Instant::now();
    let budget = options.budget_bytes();
    let (format, mut decoder) = open_decoder(path, budget)?;
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    let color = decoder.color_type();
    // The gray result: one sample per pixel, plus alpha when the input has it.
    let sample_bytes = u64::from(color.bytes_per_pixel() / color.channel_count().max(1));
    let gray_bytes = pixels * sample_bytes * (1 + u64::from(color.has_alpha()));
    let needed_bytes = decoder.total_bytes().saturating_add(gray_bytes);
    if needed_bytes > budget || width == 0 || height == 0 {
        if width == 0 || height == 0 {
            return Err(IoError::Unsupported {
                path: owned(path),
                reason: format!("{width}x{height} has no pixels"),
            });
        }
        return Err(IoError::TooLarge {
            path: owned(path),
            width,
            height,
            needed_bytes,
            budget_bytes: budget,
        });
    }
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut image = super::huge_pages::read_image(decoder).map_err(|e| decode_error(path, e))?;
    let reoriented = orientation != image::metadata::Orientation::NoTransforms;
    image.apply_orientation(orientation);
    let decode_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    Ok(Decoded { image, format, decode_ns, reoriented })
}
