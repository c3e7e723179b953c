//! Decoding: format sniffing, refusing files that cannot hold what their header claims, the
//! memory reservation before allocation, truncated JPEGs, EXIF orientation, the pixel density,
//! frames beyond the first, and files that change while they are read.

use std::path::Path;
use std::time::Instant;

use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

use crate::io::read::changes::check_unchanged;
use crate::io::read::claims::jpeg::{check_jpeg, truncated_at};
use crate::io::read::claims::{Facts, check_claims, inflated_metadata_size};
use crate::io::read::jpeg_layout::{FrameKind, Layout};
use crate::io::read::jpeg_restarts;
use crate::io::read::jpeg_variants;
use crate::io::read::libjpeg;
use crate::io::read::luma_stream::{CHUNK_ROWS, LumaStream};
use crate::io::read::messages::decode_error;
use crate::io::read::orientation::decoders_orientation;
use crate::io::read::pnm::ExactPnmDecoder;
use crate::io::read::restart_bands::{Band, restart_bands};
use crate::io::read::sniff::{describe_head, first_look, format_of, refuse_unread};
use crate::io::read::stored_luma::{
    JpegOut, LibjpegDecoder, LibjpegLog, ORIENTED_BAND_ROWS, StoredLuma, stores_ycbcr,
};
use crate::io::read::tiff;
use crate::io::read::tiff_header::check_tiff;
use crate::io::{DecodeWarning, FrameCount, IoError, TruncatedAt};
use crate::system::clock::nanos_since;
use crate::system::memory_budget::{Reservation, budget};

/// Settings for decoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// A cap for this one decode, below the process-wide budget ([`crate::system::memory_budget::budget`]); `None` =
    /// the budget alone decides.
    pub memory_budget_bytes: Option<u64>,
    /// Keep what a truncated JPEG holds (the missing part gray) with a [`DecodeWarning`]
    /// instead of refusing it. Other formats' decoders return no partial image.
    pub allow_truncated: bool,
    /// More copies of the decoded image and its gray result that the caller holds while
    /// converting, reserved with it: for a GPU conversion what its adapter puts in host memory
    /// (`engine::GpuHostMemory`: the staging, and on a software or integrated GPU the device
    /// buffers too), else 0.
    pub working_copies: u32,
    /// The most input bytes one working copy holds, where less than the image, its gray result
    /// in proportion: a GPU conversion holds one band at a time (a 30000x30000 photo in 21 bands
    /// peaked at 3.6 GiB where three whole copies reserved 10.1); `None`: the whole of them.
    pub working_copy_bytes: Option<u64>,
    /// Gray planes an operation after the grayscale holds while the image is open, reserved
    /// with it (`engine::op_copies`); none without an op.
    pub op_copies: crate::system::memory_budget::OpCopies,
    /// Decode only the luma a YCbCr JPEG stores (gray, no chroma): `--formula stored-luma`.
    /// Other files decode as usual, and [`Decoded::stored_luma`] says why.
    pub stored_luma: bool,
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
    /// Whether an orientation other than "as stored" was applied (`orientation` is not
    /// `NoTransforms`).
    pub reoriented: bool,
    /// The orientation applied: the file's EXIF orientation, or a TIFF's `Orientation` tag
    /// ([`Decoded::orientation_note`] says which). Rows the warnings count are rows as stored
    /// ([`DecodeWarning::shown`] says them in the image as shown).
    pub orientation: Orientation,
    /// What the user should be told (a truncated file kept as asked, frames left unread).
    pub warnings: Vec<DecodeWarning>,
    /// Frames or pages in the file when it holds more than one (the first was read).
    pub frames: Option<FrameCount>,
    /// The colour model the file stores when the decoder converted it ("CMYK", given as RGB;
    /// "4-bit gray", given as 8-bit gray).
    pub stored_as: Option<&'static str>,
    /// The pixel density the file gives (its print size), across and down the image as shown
    /// (a quarter turn swaps them); an export writes it ([`crate::io::ExportOptions::density`]).
    pub density: Option<crate::io::Density>,
    /// The EXIF tags and XMP properties an export keeps ([`crate::io::ExportOptions::metadata`]);
    /// `None` where none.
    pub metadata: Option<std::sync::Arc<crate::io::KeptMetadata>>,
    /// The memory reserved for this image and its conversion and export; keep it while they run.
    pub memory: Reservation,
    /// Where [`DecodeOptions::stored_luma`] was asked: whether the stored luma was decoded.
    pub stored_luma: Option<StoredLuma>,
}

impl Decoded {
    /// What to tell of the orientation applied, by where the file keeps it: "orientation
    /// applied (TIFF tag)" for a TIFF's `Orientation` tag, else "EXIF orientation applied";
    /// `None` where none was.
    #[must_use]
    pub fn orientation_note(&self) -> Option<&'static str> {
        match (self.reoriented, self.format) {
            (false, _) => None,
            (true, ImageFormat::Tiff) => Some("orientation applied (TIFF tag)"),
            (true, _) => Some("EXIF orientation applied"),
        }
    }

    /// Whether the orientation applied moved the rows as stored off the top of the image as
    /// shown (a turn, a vertical flip; not a mirror): a truncated file's rows are then said as
    /// stored.
    #[must_use]
    pub fn rows_turned(&self) -> bool {
        crate::io::read::orientation::stored_rows_side(self.orientation).is_some()
    }
}

/// A file opened by [`decode_or_stream`]: decoded, or gray rows to be decoded as they are
/// read.
pub enum Opened {
    /// Decoded as [`decode_file`] decodes.
    Decoded(Decoded),
    /// A complete YCbCr JPEG, every check passed and its memory reserved: its stored luma, or its
    /// colour converted, as rows handed on as libjpeg decodes them (where an orientation turns
    /// it, once all are).
    LumaRows(LumaStream),
}

/// [`decode_file`], except that a complete YCbCr JPEG (its EXIF orientation applied as it is
/// decoded) is not decoded here but opened as a [`LumaStream`] (of its stored luma where
/// [`DecodeOptions::stored_luma`] is asked, else of its colour converted by the caller) for a
/// file to file conversion to decode and encode at once.
pub fn decode_or_stream(path: &Path, options: &DecodeOptions) -> Result<Opened, IoError> {
    open(path, options, true)
}

/// Decodes a file. Refuses, before allocating, files that cannot hold the pixels their header
/// claims and images that do not fit the memory budget (waiting while other images hold it).
pub fn decode_file(path: &Path, options: &DecodeOptions) -> Result<Decoded, IoError> {
    match open(path, options, false)? {
        Opened::Decoded(decoded) => Ok(decoded),
        Opened::LumaRows(_) => Err(IoError::Decode {
            path: path.into(),
            reason: "it was opened as a stream where a decode was asked (a bug in graylab)".to_owned(),
        }),
    }
}

/// What a JPEG streams as: its stored luma where it was asked for and is there, else the colour
/// of a YCbCr file (to convert as it is decoded); `None`: it is decoded whole.
fn streamed_as(stored_luma: Option<StoredLuma>, layout: &Layout, bytes: &[u8]) -> Option<JpegOut> {
    match stored_luma {
        Some(StoredLuma::Decoded) => Some(JpegOut::Luma),
        None if layout.components.len() == 3 && stores_ycbcr(bytes) => Some(JpegOut::Rgb),
        _ => None,
    }
}

/// The bands a streamed JPEG of `height` rows is decoded in: one per core where restart intervals
/// fall at MCU-row starts, else the file whole. A plane that libjpeg upsamples vertically is
/// never cut: its upsampling reads rows across a band's edge, so a band alone would decode its
/// edge rows differently. That is colour whose components differ vertically, and luma whose
/// rows are fewer than another component's (Y 1x1 beside chroma 1x2).
fn stream_bands(
    (bytes, resynced_at): (Vec<u8>, Vec<usize>),
    layout: &Layout,
    out: JpegOut,
    height: u32,
) -> Vec<Band> {
    let first = layout.components.first().map(|c| c.v);
    let most = layout.components.iter().map(|c| c.v).max();
    let upsampled = match out {
        JpegOut::Rgb | JpegOut::CmykAsRgb => layout.components.iter().any(|c| Some(c.v) != first),
        JpegOut::Luma => first != most,
    };
    let cores = if upsampled { 1 } else { std::thread::available_parallelism().map_or(1, usize::from) };
    restart_bands(&bytes, layout, cores, CHUNK_ROWS)
        .unwrap_or_else(|| vec![Band { rows: 0..height as usize, jpeg: bytes, resynced_at }])
}

/// Opens a file: decodes it, or with `stream`, opens a JPEG as a [`LumaStream`] where
/// [`decode_or_stream`] says.
fn open(path: &Path, options: &DecodeOptions, stream: bool) -> Result<Opened, IoError> {
    let started = Instant::now();
    let (meta, head) = first_look(path)?;
    let mut warnings = Vec::new();
    let (raw, format, truncated, facts) = if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        match open_jpeg(path, &meta, options, stream, &mut warnings)? {
            Jpeg::Streamed(stream) => return Ok(Opened::LumaRows(stream)),
            Jpeg::Decoded(raw, truncated) => (raw, ImageFormat::Jpeg, truncated, Facts::default()),
        }
    } else {
        let (mut raw, format, facts) = decode_other(path, &head, options)?;
        raw.stored_luma = options.stored_luma.then_some(StoredLuma::Fallback("not a JPEG"));
        (raw, format, None, facts)
    };
    if let Some(at) = truncated {
        if !options.allow_truncated {
            return Err(IoError::Truncated { path: path.into(), at, orientation: raw.orientation });
        }
        log::debug!("{}: the file is truncated ({at})", path.display());
        warnings.push(DecodeWarning::Truncated(at));
    }
    check_unchanged(path, &meta)?;
    let Raw { mut image, orientation, oriented, reservation, stored_as, stored_luma, density, kept } = raw;
    // The GIF decoder gives RGBA for every file, the WebP decoder for every animation: alpha is
    // kept only where some pixel is not opaque.
    if format == ImageFormat::Gif || (format == ImageFormat::WebP && facts.frames.is_some()) {
        image = without_opaque_alpha(image);
    }
    if !oriented {
        super::orientation::apply_orientation(&mut image, orientation);
    }
    let frames = facts.frame_count(format == ImageFormat::Tiff);
    warnings.extend(frames.map(DecodeWarning::FirstFrameOnly).into_iter().chain(facts.size_warning()));
    let decode_ns = nanos_since(started);
    Ok(Opened::Decoded(Decoded {
        image,
        format,
        decode_ns,
        reoriented: orientation != Orientation::NoTransforms,
        orientation,
        warnings,
        frames,
        stored_as,
        density: density.map(|d| d.oriented(orientation)),
        metadata: kept,
        memory: reservation,
        stored_luma,
    }))
}

/// A JPEG opened by [`open_jpeg`].
enum Jpeg {
    /// Opened as a stream, to decode as it is encoded.
    Streamed(LumaStream),
    /// Decoded, with where it is truncated (kept as asked).
    Decoded(Raw, Option<TruncatedAt>),
}

/// Opens a JPEG: reads it whole, walks and checks it (adding the repairs' and libjpeg's warnings
/// to `warnings`), and decodes it, or with `stream` opens it as a [`LumaStream`] where
/// [`decode_or_stream`] says.
fn open_jpeg(
    path: &Path,
    meta: &std::fs::Metadata,
    options: &DecodeOptions,
    stream: bool,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<Jpeg, IoError> {
    let open = |cause| IoError::Open { path: path.into(), cause };
    // The decoder reads a JPEG whole: its bytes are reserved before they are read.
    let file_memory =
        budget().reserve_within(meta.len(), options.memory_budget_bytes, true).map_err(|e| {
            IoError::FileTooLarge {
                path: path.into(),
                file_bytes: meta.len(),
                budget_bytes: e.budget_bytes,
                limited_by: e.limited_by,
            }
        })?;
    let bytes = std::fs::read(path).map_err(open)?;
    let layout = check_jpeg(path, &bytes, options.allow_truncated)?;
    if layout.complete && layout.scans_missing() {
        warnings.push(DecodeWarning::ScansMissing);
    }
    let mut plan = jpeg_variants::plan(path, bytes, &layout, options.allow_truncated)?;
    warnings.extend(plan.warnings);
    // A file without its end marker is read with one, as a whole file is: libjpeg then warns
    // only where data is missing (at the end of the file it warns at any look-ahead). A
    // progressive one only where every coefficient has its scan: else it is cut between scans.
    let end_marker_cut = !layout.complete
        && (layout.kind == FrameKind::Sequential
            || layout.kind == FrameKind::Progressive && !layout.scans_missing());
    if end_marker_cut {
        plan.bytes.extend_from_slice(&[0xFF, 0xD9]);
    }
    // The image's reservation below counts the file's bytes again.
    drop(file_memory);
    // The file is held twice while the decoder starts (ours and libjpeg's source), and libjpeg
    // keeps the coefficients of a file of several scans whole.
    let extra = 2 * plan.bytes.len() as u64 + layout.decoder_scratch_bytes();
    let stored_luma = options.stored_luma.then(|| StoredLuma::of_jpeg(layout.components.len(), &plan.bytes));
    let streamed = streamed_as(stored_luma, &layout, &plan.bytes);
    if let (true, true, Some(out)) = (stream, layout.complete, streamed) {
        // The header as gray: the stream holds the gray plane (and an RGB chunk per band).
        let header_log = LibjpegLog::default();
        let mut header = guarded(path, || LibjpegDecoder::new(&plan.bytes, &header_log, JpegOut::Luma))?;
        let orientation = decoders_orientation(&mut header, None);
        let (width, height) = header.dimensions();
        let (density, exif) = (header.density(), crate::io::exif::of_decoder(&mut header, None));
        if layout.components.len() == 3 && width > 0 && height > 0 {
            let reservation = reserve(path, &header, orientation, extra, options)?;
            drop(header);
            warnings.extend(libjpeg::verdict(
                path,
                header_log.into_warnings(),
                (height, orientation),
                options.allow_truncated,
            )?);
            check_unchanged(path, meta)?;
            let bands = stream_bands((plan.bytes, plan.resynced_at), &layout, out, height);
            let stream = LumaStream::new(
                path,
                (bands, out, orientation),
                ((width, height), density.map(|d| d.oriented(orientation)), exif),
                (std::mem::take(warnings), options.allow_truncated),
                reservation,
            );
            return Ok(Jpeg::Streamed(stream));
        }
    }
    // libjpeg decodes every JPEG, as `OpenCV` does: its stored luma where that is what streams
    // (and of a gray file), CMYK and YCCK turned into RGB as `imread` turns them, else RGB.
    let out = match layout.components.len() {
        1 => JpegOut::Luma,
        4 => JpegOut::CmykAsRgb,
        _ if streamed == Some(JpegOut::Luma) => JpegOut::Luma,
        _ => JpegOut::Rgb,
    };
    let log = LibjpegLog::default();
    let mut decoder = guarded(path, || LibjpegDecoder::new(&plan.bytes, &log, out))?;
    let facts = Facts { density: decoder.density(), ..Facts::default() };
    let (width, height) = decoder.dimensions();
    let orientation = decoders_orientation(&mut decoder, facts.orientation);
    let kept = crate::io::exif::of_decoder(&mut decoder, None);
    // A complete file is turned as it is decoded, a band at a time (a truncated one is turned
    // once its gray rows have told where it ends).
    let mut raw = if layout.complete && orientation != Orientation::NoTransforms && width > 0 && height > 0 {
        let band_bytes = decoder.band_bytes(ORIENTED_BAND_ROWS);
        let stored_as = (decoder.original_color_type() == image::ExtendedColorType::Cmyk8).then_some("CMYK");
        // No copy as stored: the image as shown and one band.
        let reservation =
            reserve(path, &decoder, Orientation::NoTransforms, extra.saturating_add(band_bytes), options)?;
        let image = guarded(path, || decoder.read_oriented(orientation, ORIENTED_BAND_ROWS))?;
        let (density, stored_luma) = (facts.density, None);
        Raw { image, orientation, oriented: true, reservation, stored_as, stored_luma, density, kept }
    } else {
        decode_with(path, decoder, extra, options, &facts)?
    };
    let mut libjpeg_said = log.into_warnings();
    jpeg_restarts::sort_out(&mut libjpeg_said, &plan.bytes, 0, &plan.resynced_at);
    // Only the end marker is missing: the image is whole.
    let whole = end_marker_cut && !libjpeg_said.iter().any(libjpeg::LibjpegWarning::data_ends_early);
    if whole {
        warnings.push(DecodeWarning::EndMarkerMissing);
    } else if !layout.complete {
        // The file ends early: the walk's truncation, with the rows that hold data, tells it.
        libjpeg_said.retain(|w| !w.data_ends_early());
    }
    warnings.extend(libjpeg::verdict(
        path,
        libjpeg_said,
        (height, raw.orientation),
        options.allow_truncated,
    )?);
    raw.stored_luma = stored_luma;
    let truncated = (!layout.complete && !whole).then(|| truncated_at(&raw.image, &layout));
    Ok(Jpeg::Decoded(raw, truncated))
}

/// Decodes a file that is not a JPEG: the format from its content, its header's claims checked,
/// TIFF variants and PNM of other maxvals through decoders of their own.
fn decode_other(
    path: &Path,
    head: &[u8],
    options: &DecodeOptions,
) -> Result<(Raw, ImageFormat, Facts), IoError> {
    let open = |cause| IoError::Open { path: path.into(), cause };
    // The content decides, never the name alone (a text file named .jpg is no JPEG), except for
    // TGA, which has no signature. `head` was read by `decode_file`: the file is not reopened.
    refuse_unread(path, head)?;
    let format = format_of(path, head)
        .ok_or_else(|| IoError::UnknownFormat { path: path.into(), looks_like: describe_head(head) })?;
    let facts = check_claims(path, head, format)?;
    let tiff_variant = check_tiff(path, head)?;
    let file = std::io::BufReader::new(std::fs::File::open(path).map_err(open)?);
    let exact_pnm = facts.pnm.filter(crate::io::read::pnm::Header::needs_exact_scaling);
    let limits = limits(options, inflated_metadata_size(head, format));
    let mut raw = if let Some(variant) = tiff_variant {
        // Plain TIFFs, and variants the `image` crate refuses or misreads, have decoders of their own.
        let (decoder, scratch_bytes) = guarded(path, || tiff::open(file, variant, &limits))?;
        decode_with(path, decoder, scratch_bytes, options, &facts)?
    } else if let Some(header) = exact_pnm {
        let decoder = guarded(path, || ExactPnmDecoder::new(file, header))?;
        decode_with(path, decoder, 0, options, &facts)?
    } else if format == ImageFormat::WebP && facts.frames.is_none() && !super::webp::simple_lossless(head) {
        // Read whole through the file opened above, for libwebp: held besides the pixels.
        let mut bytes = Vec::new();
        let file_bytes = std::io::Read::read_to_end(&mut { file }, &mut bytes).map_err(open)? as u64;
        let decoder = guarded(path, || super::webp::WebPDecoder::new(bytes, limits))?;
        decode_with(path, decoder, file_bytes, options, &facts)?
    } else {
        let mut reader = ImageReader::with_format(file, format);
        reader.limits(limits);
        let decoder = guarded(path, || reader.into_decoder())?;
        // `image`'s TIFF decoder (for 1-bit gray, floating-point RGB) reads the pixels into a
        // buffer of its own, then copies them out: twice the pixels at its peak.
        let scratch_bytes = if format == ImageFormat::Tiff { decoder.total_bytes() } else { 0 };
        decode_with(path, decoder, scratch_bytes, options, &facts)?
    };
    // What the decoders miss: a TIFF's own directories, a PNG's chunks after the image data.
    raw.kept = crate::io::KeptMetadata::merged(raw.kept.take(), facts.metadata.clone());
    Ok((raw, format, facts))
}

/// An RGBA image whose every alpha is 255 as RGB, compacted in place (a GIF decodes to RGBA
/// whether or not it has transparent pixels).
fn without_opaque_alpha(image: DynamicImage) -> DynamicImage {
    let DynamicImage::ImageRgba8(rgba) = image else { return image };
    if !rgba.as_raw().chunks_exact(4).all(|p| p[3] == 255) {
        return DynamicImage::ImageRgba8(rgba);
    }
    let (width, height) = rgba.dimensions();
    let mut bytes = rgba.into_raw();
    let pixels = bytes.len() / 4;
    for i in 1..pixels {
        bytes.copy_within(4 * i..4 * i + 3, 3 * i);
    }
    bytes.truncate(3 * pixels);
    match image::RgbImage::from_raw(width, height, bytes) {
        Some(rgb) => DynamicImage::ImageRgb8(rgb),
        None => DynamicImage::new_rgb8(0, 0),
    }
}

/// Bytes a decoder may allocate beside what its image's pixels need: metadata (an ICC profile,
/// EXIF, text) and row buffers. A PNG's iCCP chunk of 1 MB inflated to 1 GiB took it all.
const DECODER_SLACK_BYTES: u64 = 64 << 20;

/// The decoders' own limits: our own check in `decode_with` is the real one; this stops
/// decoders' internal allocations, at the budget and, where the header read already says how
/// large the image is (`claimed`, a PNG's), at twice its pixels at 16 bytes each and
/// [`DECODER_SLACK_BYTES`].
fn limits(options: &DecodeOptions, claimed: Option<(u32, u32)>) -> image::Limits {
    let mut limits = image::Limits::no_limits();
    let budget = options.memory_budget_bytes.unwrap_or(u64::MAX).min(budget().capacity().0);
    let needs = claimed.map_or(u64::MAX, |(w, h)| {
        (u64::from(w) * u64::from(h)).saturating_mul(32).saturating_add(DECODER_SLACK_BYTES)
    });
    limits.max_alloc = Some(budget.min(needs));
    limits
}

/// Reads the header, reserves the memory, decodes (orientation not yet applied). The
/// orientation is the decoder's, else one graylab read itself (a LONG value, a late chunk).
fn decode_with(
    path: &Path,
    mut decoder: impl ImageDecoder,
    extra_bytes: u64,
    options: &DecodeOptions,
    facts: &Facts,
) -> Result<Raw, IoError> {
    let (width, height) = decoder.dimensions();
    let stored_as = match decoder.original_color_type() {
        image::ExtendedColorType::Cmyk8 | image::ExtendedColorType::Cmyk16 => Some("CMYK"),
        image::ExtendedColorType::L2 => Some("2-bit gray"),
        image::ExtendedColorType::L4 => Some("4-bit gray"),
        _ => facts.stored_as,
    };
    if width == 0 || height == 0 {
        return Err(IoError::Decode {
            path: path.into(),
            reason: format!("the header claims {width}x{height} pixels"),
        });
    }
    let orientation = decoders_orientation(&mut decoder, facts.orientation);
    let kept = crate::io::exif::of_decoder(&mut decoder, facts.metadata.as_deref());
    let reservation = reserve(path, &decoder, orientation, extra_bytes, options)?;
    let image = guarded(path, || read_image(decoder))?;
    Ok(Raw {
        image,
        orientation,
        oriented: false,
        reservation,
        stored_as,
        stored_luma: None,
        density: facts.density,
        kept,
    })
}

/// Reserves the memory of the decode, conversion and export of the image `decoder` describes
/// (plus `extra_bytes` the decoder holds besides its output), or refuses it before anything is
/// allocated.
fn reserve(
    path: &Path,
    decoder: &impl ImageDecoder,
    orientation: Orientation,
    extra_bytes: u64,
    options: &DecodeOptions,
) -> Result<Reservation, IoError> {
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    let color = decoder.color_type();
    let decoded_bytes = decoder.total_bytes();
    // The gray result: one sample per pixel, plus alpha when the input has it.
    let sample_bytes = u64::from(color.bytes_per_pixel() / color.channel_count().max(1));
    let gray = pixels * sample_bytes * (1 + u64::from(color.has_alpha()));
    let rotates = super::orientation::turns(orientation);
    // The peak of each stage: decode (plus a rotated copy), convert, export (gray, the copy
    // fitted to the format, and an encoder's buffer).
    let working = crate::system::memory_budget::working_copies_bytes(
        decoded_bytes,
        gray,
        options.working_copies,
        options.working_copy_bytes,
    );
    // An op runs on the 8-bit gray plane, the image and its gray result still held.
    let op = options.op_copies.bytes(pixels);
    let needed_bytes = [
        decoded_bytes.saturating_add(extra_bytes),
        decoded_bytes.saturating_mul(1 + u64::from(rotates)),
        decoded_bytes.saturating_add(gray).saturating_add(working).saturating_add(op),
        gray.saturating_mul(3),
    ]
    .into_iter()
    .max()
    .unwrap_or(u64::MAX);
    budget().reserve_within(needed_bytes, options.memory_budget_bytes, true).map_err(|e| IoError::TooLarge {
        path: path.into(),
        width,
        height,
        needed_bytes,
        budget_bytes: e.budget_bytes,
        held_bytes: e.held_bytes,
        limited_by: e.limited_by,
    })
}

/// What a decoder gave: the pixels, the orientation (applied or still to apply), their memory, the colour
/// model the file stored when the pixels were converted from it, the density as stored, and
/// the metadata an export keeps (`kept`).
struct Raw {
    image: DynamicImage,
    orientation: Orientation,
    /// Whether `image` is already as shown (a complete JPEG turned as it was decoded).
    oriented: bool,
    reservation: Reservation,
    stored_as: Option<&'static str>,
    stored_luma: Option<StoredLuma>,
    density: Option<crate::io::Density>,
    kept: Option<std::sync::Arc<crate::io::KeptMetadata>>,
}

/// Runs a third-party decoder step; a panic inside it (a decoder bug a hostile file found)
/// becomes an error naming the file instead of ending the process.
fn guarded<T>(path: &Path, step: impl FnOnce() -> image::ImageResult<T>) -> Result<T, IoError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)) {
        Ok(result) => result.map_err(|e| decode_error(path, e)),
        Err(_) => Err(IoError::Decode {
            path: path.into(),
            reason: "the decoder failed on this file (an internal error in the decoder)".to_owned(),
        }),
    }
}

/// Decodes 8-bit images into a huge-page buffer; other sample types go through `image` as usual.
pub(crate) fn read_image(decoder: impl image::ImageDecoder) -> image::ImageResult<image::DynamicImage> {
    use image::{ColorType, DynamicImage, ImageBuffer};
    let (width, height) = decoder.dimensions();
    let color = decoder.color_type();
    if !matches!(color, ColorType::L8 | ColorType::La8 | ColorType::Rgb8 | ColorType::Rgba8) {
        return DynamicImage::from_decoder(decoder);
    }
    let Ok(len) = usize::try_from(decoder.total_bytes()) else {
        return DynamicImage::from_decoder(decoder);
    };
    let mut buf = crate::system::huge_pages::zeroed_buffer::<u8>(len);
    decoder.read_image(&mut buf)?;
    let too_short = || {
        image::ImageError::Parameter(image::error::ParameterError::from_kind(
            image::error::ParameterErrorKind::DimensionMismatch,
        ))
    };
    let image = match color {
        ColorType::L8 => ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageLuma8),
        ColorType::La8 => ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageLumaA8),
        ColorType::Rgb8 => ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageRgb8),
        _ => ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageRgba8),
    };
    image.ok_or_else(too_short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decoder_may_allocate_what_its_pixels_need_and_some_metadata() {
        let options = DecodeOptions { memory_budget_bytes: Some(1 << 30), ..DecodeOptions::default() };
        // An 8x8 PNG whose iCCP chunk inflates to 256 MiB: capped near 64 MiB, not the budget.
        assert_eq!(limits(&options, Some((8, 8))).max_alloc, Some(64 * 32 + DECODER_SLACK_BYTES));
        assert_eq!(limits(&options, Some((100_000, 100_000))).max_alloc, Some(1 << 30), "the budget");
        assert_eq!(limits(&options, None).max_alloc, Some(1 << 30), "no header: the budget");
    }
}
