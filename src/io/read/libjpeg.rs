//! libjpeg-turbo's decoder (through the `mozjpeg` crate), the one decoder of every JPEG (whole or
//! truncated, gray, colour or CMYK), as `OpenCV`'s `imread` decodes it: its header (size, colour
//! space by libjpeg's own rule, EXIF, ICC), its rows, its fatal errors and its warnings.
//! `mozjpeg` silences libjpeg's warnings; here each one is kept, with the row the decode had
//! reached, so that damage djpeg warns about ("Corrupt JPEG data: …", "premature end of data
//! segment") reaches the user instead of passing in silence: as a truncation or damage in a
//! restart interval (each refused unless damaged data may be kept), or as a warning naming the
//! damage.

use std::cell::RefCell;
use std::os::raw::c_int;
use std::path::Path;

use mozjpeg_sys as ffi;

use crate::io::read::orientation::exif_density;
use crate::io::{DecodeWarning, Density, IoError, RestartDamage, TruncatedAt};

/// Warnings kept from one decode at most: a damaged file can warn once per block, and each kind
/// is told once with its count, so the count is exact up to here.
const MAX_WARNINGS: usize = 1000;

thread_local! {
    /// The warnings libjpeg emitted during the call into it now running on this thread, each with
    /// the address its source had reached: every call goes through [`libjpeg`], which empties
    /// this before and takes it after.
    static EMITTED: RefCell<Vec<(LibjpegWarning, usize)>> = const { RefCell::new(Vec::new()) };
}

/// A warning libjpeg emitted while decoding: the data is damaged, and libjpeg went on with what
/// it could (gray or repeated blocks where data was missing or wrong).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::io) struct LibjpegWarning {
    /// libjpeg's message code (`JWRN_*`).
    pub code: i32,
    /// libjpeg's own words, as djpeg prints them ("Corrupt JPEG data: premature end of data
    /// segment").
    pub message: String,
    /// The rows libjpeg had handed out when it warned, of how many (`None` while it reads the
    /// header or the whole of a multi-scan file before the first row).
    pub at_row: Option<(u32, u32)>,
    /// Where libjpeg's source stood in the bytes it decodes when it warned (`None` past their
    /// end): after the marker it read, or, inside coded data, where the block it was decoding
    /// began or a little after (its bit buffer reads ahead, up to the next marker).
    pub at_byte: Option<usize>,
    /// The row of MCUs (of 8 or 16 pixel rows) of its scan that libjpeg was decoding when it
    /// warned (`None` outside a decompression).
    pub imcu_row: Option<u32>,
    /// The rows, first and one past the last, of the restart interval whose data ended at a
    /// restart marker before its blocks did (set by [`super::jpeg_restarts::sort_out`]): damage
    /// in the middle of the data, not its end.
    pub interval_rows: Option<(u32, u32)>,
}

impl LibjpegWarning {
    /// Whether the image data ends before the image does: libjpeg's "premature end of data
    /// segment" (a marker, often the end-of-image marker, where coded data should be),
    /// "premature end of JPEG file", or the end-of-image marker where a restart marker should be
    /// ("found marker 0xd9 instead of RST6": a cut file with restart intervals, read with its end
    /// marker). What follows is not in the file: a truncation. Not a premature end at a restart
    /// marker ([`Self::interval_rows`]): the data goes on after it.
    #[must_use]
    pub(in crate::io) fn data_ends_early(&self) -> bool {
        self.code == ffi::JWRN_HIT_MARKER && self.interval_rows.is_none()
            || self.code == ffi::JWRN_JPEG_EOF
            || self.code == ffi::JWRN_MUST_RESYNC && self.message.contains("marker 0xd9 ")
    }
}

/// What libjpeg's warnings of one decode of `path` (`height` rows, shown turned by
/// `orientation`) mean for the user: a premature end is a truncation, and one at a restart
/// marker damage in that interval's rows, each refused unless `keep_truncated`, else a warning;
/// every other warning is named as damage (the image decoded on, and may be wrong from that
/// row).
pub(in crate::io) fn verdict(
    path: &Path,
    warnings: Vec<LibjpegWarning>,
    (height, orientation): (u32, image::metadata::Orientation),
    keep_truncated: bool,
) -> Result<Vec<DecodeWarning>, IoError> {
    let mut truncated = None;
    // Intervals cut short, those that touch joined.
    let mut cut: Vec<(u32, u32)> = Vec::new();
    // Each kind of damage once, in the order first seen, with how often it came again.
    let mut damage: Vec<(i32, DecodeWarning)> = Vec::new();
    for warning in warnings {
        if let Some(rows) = warning.interval_rows {
            if !keep_truncated {
                let detail = RestartDamage::DataCut.words(rows, height, true);
                return Err(IoError::DamagedData { path: path.to_path_buf(), detail, rows: Some(rows) });
            }
            match cut.iter_mut().find(|(first, end)| rows.0 <= *end && *first <= rows.1) {
                Some(joined) => *joined = (joined.0.min(rows.0), joined.1.max(rows.1)),
                None => cut.push(rows),
            }
        } else if warning.data_ends_early() {
            let at = TruncatedAt::EarlyEnd { rows: warning.at_row.map(|(row, _)| row), height };
            if !keep_truncated {
                return Err(IoError::Truncated { path: path.to_path_buf(), at, orientation });
            }
            truncated.get_or_insert(DecodeWarning::Truncated(at));
        } else if let Some((_, DecodeWarning::Damaged { repeats, .. })) =
            damage.iter_mut().find(|(code, _)| *code == warning.code)
        {
            *repeats += 1;
        } else {
            let told =
                DecodeWarning::Damaged { message: warning.message, at_row: warning.at_row, repeats: 0 };
            damage.push((warning.code, told));
        }
    }
    let cut = cut.into_iter().map(|rows| DecodeWarning::DamagedRestart {
        rows,
        height,
        cause: RestartDamage::DataCut,
    });
    Ok(truncated.into_iter().chain(cut).chain(damage.into_iter().map(|(_, told)| told)).collect())
}

/// An error manager whose fatal errors unwind with libjpeg's message (as `mozjpeg`'s own does)
/// and whose warnings are kept on this thread for [`libjpeg`] to collect.
fn error_mgr() -> ffi::jpeg_error_mgr {
    // SAFETY: `jpeg_error_mgr` is a plain C struct for which all zeroes is a valid value, and
    // `jpeg_std_error` fills in every field of the one it is given.
    let mut err: ffi::jpeg_error_mgr = unsafe { std::mem::zeroed() };
    // SAFETY: `err` is a valid, exclusively borrowed error manager.
    unsafe { ffi::jpeg_std_error(&mut err) };
    err.error_exit = Some(unwind_on_error);
    err.emit_message = Some(keep_warning);
    err
}

/// libjpeg's message for the error or warning `cinfo` holds now.
fn message_of(cinfo: &mut ffi::jpeg_common_struct) -> String {
    // SAFETY: libjpeg passes the `cinfo` whose error manager is set; `format_message` writes at
    // most 80 bytes (JMSG_LENGTH), zero-terminated, into the buffer.
    unsafe {
        let Some(err) = cinfo.err.as_ref() else { return "an error without a manager".to_owned() };
        let Some(format) = err.format_message else { return format!("code {}", err.msg_code) };
        let buffer = [0u8; 80];
        format(cinfo, &buffer);
        let text = buffer.split(|&c| c == 0).next().unwrap_or_default();
        String::from_utf8_lossy(text).into_owned()
    }
}

/// libjpeg's `error_exit`: unwinds with the message, caught by [`libjpeg`].
extern "C-unwind" fn unwind_on_error(cinfo: &mut ffi::jpeg_common_struct) {
    let message = message_of(cinfo);
    std::panic::resume_unwind(Box::new(message));
}

/// libjpeg's `emit_message`: keeps each warning (level -1) with the row reached; trace messages
/// (levels 0 and up) are dropped, as djpeg drops them without `-verbose`.
extern "C-unwind" fn keep_warning(cinfo: &mut ffi::jpeg_common_struct, level: c_int) {
    if level >= 0 {
        return;
    }
    // SAFETY: `err` is the manager libjpeg is reporting through.
    let code = unsafe { cinfo.err.as_mut() }.map_or(0, |err| {
        err.num_warnings += 1;
        err.msg_code
    });
    let (at_row, imcu_row, source_at) = if cinfo.is_decompressor == 0 {
        (None, None, 0)
    } else {
        // SAFETY: a decompressor's common struct is the head of its `jpeg_decompress_struct`.
        let decompress = unsafe { &*std::ptr::from_mut(cinfo).cast::<ffi::jpeg_decompress_struct>() };
        // SAFETY: `src` is null or the source manager libjpeg is reading through.
        let source_at = unsafe { decompress.src.as_ref() }.map_or(0, |src| src.next_input_byte.addr());
        let at_row = (decompress.output_scanline > 0)
            .then_some((decompress.output_scanline, decompress.output_height));
        (at_row, Some(decompress.input_iMCU_row), source_at)
    };
    let message = message_of(cinfo);
    EMITTED.with_borrow_mut(|kept| {
        if kept.len() < MAX_WARNINGS {
            let warning =
                LibjpegWarning { code, message, at_row, at_byte: None, imcu_row, interval_rows: None };
            kept.push((warning, source_at));
        }
    });
}

/// Why libjpeg did not read a JPEG: its own message, or a size other than the header's.
#[derive(Debug, thiserror::Error)]
pub(in crate::io) enum LibjpegError {
    /// libjpeg's message, as it words it (a fatal error, or its read's).
    #[error("{0}")]
    Failed(String),
    /// libjpeg reads another size than the header claims.
    #[error("libjpeg reads {}x{}, the header says {}x{}", read.0, read.1, claimed.0, claimed.1)]
    OtherSize {
        /// The width and height libjpeg reads.
        read: (usize, usize),
        /// The width and height the header claims.
        claimed: (u32, u32),
    },
}

/// Runs one call into libjpeg decoding `source`: its error or unwinding as libjpeg's message, its
/// warnings appended to `warnings`, each with where in `source` it came.
fn libjpeg<T>(
    warnings: &mut Vec<LibjpegWarning>,
    source: &[u8],
    step: impl FnOnce() -> std::io::Result<T>,
) -> Result<T, LibjpegError> {
    EMITTED.with_borrow_mut(Vec::clear);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(step));
    let emitted = EMITTED.with_borrow_mut(std::mem::take);
    let room = MAX_WARNINGS.saturating_sub(warnings.len());
    // An address outside `source` (libjpeg's own end-of-image bytes past the file's end) is none.
    let base = source.as_ptr().addr();
    let offset = |at: usize| at.checked_sub(base).filter(|&offset| offset <= source.len());
    warnings.extend(
        emitted.into_iter().take(room).map(|(warning, at)| LibjpegWarning { at_byte: offset(at), ..warning }),
    );
    match result {
        Ok(done) => done.map_err(|e| LibjpegError::Failed(e.to_string())),
        Err(payload) => Err(LibjpegError::Failed(payload.downcast::<String>().map_or_else(
            |_| "it failed on this file".to_owned(),
            |message| message.strip_prefix("libjpeg fatal error: ").unwrap_or(&message).to_owned(),
        ))),
    }
}

/// A decompressor of `bytes` with graylab's error manager, its header read.
fn decompress<'a>(
    bytes: &'a [u8],
    markers: &[mozjpeg::Marker],
) -> std::io::Result<mozjpeg::Decompress<&'a [u8]>> {
    mozjpeg::decompress::DecompressBuilder::new().with_err(error_mgr()).with_markers(markers).from_mem(bytes)
}

/// What libjpeg reads in a JPEG's header.
#[derive(Clone, Debug, Default)]
pub(in crate::io) struct LibjpegHeader {
    /// Width and height in pixels.
    pub size: (u32, u32),
    /// Components in the frame (1 gray, 3 colour, 4 CMYK or YCCK).
    pub components: usize,
    /// Whether libjpeg takes three components as YCbCr, by its rule: a JFIF marker first, then
    /// Adobe's transform flag, then the components' ids (`R`, `G`, `B` is RGB).
    pub ycbcr: bool,
    /// The EXIF block of the first `APP1` segment that holds one (after `Exif\0\0`).
    pub exif: Option<Vec<u8>>,
    /// The XMP packet of the first `APP1` segment that holds one (after its namespace).
    pub xmp: Option<Vec<u8>>,
    /// The ICC profile from the `APP2` segments, in their order.
    pub icc: Option<Vec<u8>>,
    /// The pixel density of the JFIF segment, else of the EXIF block (a camera's JPEG has no
    /// JFIF segment, or one of density 0).
    pub density: Option<Density>,
    /// Warnings libjpeg gave while reading the header.
    pub warnings: Vec<LibjpegWarning>,
}

impl LibjpegHeader {
    /// Reads the header of the JPEG in `bytes` as libjpeg reads it.
    pub(in crate::io) fn read(bytes: &[u8]) -> Result<Self, LibjpegError> {
        let mut warnings = Vec::new();
        let markers = [mozjpeg::Marker::APP(1), mozjpeg::Marker::APP(2)];
        let header = libjpeg(&mut warnings, bytes, || {
            let mut decompress = decompress(bytes, &markers)?;
            let (width, height) = decompress.size();
            let (mut exif, mut xmp) = (None, None);
            let mut icc_parts = Vec::new();
            for marker in decompress.markers() {
                match marker.marker {
                    mozjpeg::Marker::APP(1) => {
                        let data = marker.data;
                        exif = exif.or_else(|| data.strip_prefix(b"Exif\0\0").map(<[u8]>::to_vec));
                        xmp = xmp.or_else(|| {
                            data.strip_prefix(crate::io::xmp::JPEG_NAMESPACE).map(<[u8]>::to_vec)
                        });
                    }
                    mozjpeg::Marker::APP(2) => {
                        if let Some(part) = marker.data.strip_prefix(b"ICC_PROFILE\0")
                            && let [sequence, _count, data @ ..] = part
                        {
                            icc_parts.push((*sequence, data.to_vec()));
                        }
                    }
                    _ => {}
                }
            }
            icc_parts.sort_by_key(|(sequence, _)| *sequence);
            let icc = (!icc_parts.is_empty()).then(|| icc_parts.into_iter().flat_map(|(_, d)| d).collect());
            // libjpeg gives units 0 (an aspect ratio) where there is no JFIF segment.
            let jfif = decompress.pixel_density().and_then(|d| Density::from_jfif(d.unit as u8, d.x, d.y));
            let density = jfif.or_else(|| exif.as_deref().and_then(exif_density));
            Ok(Self {
                size: (u32::try_from(width).unwrap_or(0), u32::try_from(height).unwrap_or(0)),
                components: decompress.components().len(),
                ycbcr: decompress.color_space() == ffi::J_COLOR_SPACE::JCS_YCbCr,
                exif,
                xmp,
                icc,
                density,
                warnings: Vec::new(),
            })
        })?;
        Ok(Self { warnings, ..header })
    }
}

/// What a [`LibjpegRows`] decodes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) enum JpegOut {
    /// The stored luma alone (the gray plane of a gray file), as 8-bit gray.
    Luma,
    /// The colour, as 8-bit RGB.
    Rgb,
    /// The four components of a CMYK or YCCK file as libjpeg gives them (CMYK), turned into
    /// 8-bit RGB as `OpenCV`'s `imread` turns them ([`cmyk_to_rgb`]).
    CmykAsRgb,
}

impl JpegOut {
    /// Samples a pixel in the rows handed out: 1 (gray) or 3 (RGB).
    #[must_use]
    pub(in crate::io) fn samples(self) -> usize {
        if self == Self::Luma { 1 } else { 3 }
    }
}

/// One row of libjpeg's CMYK (`cmyk`, four samples a pixel) as RGB (`rgb`), as `OpenCV`'s
/// `icvCvt_CMYK2BGR_8u_C4C3R` does for `imread`: each of R, G, B is `k - ((255 - c) * k >> 8)`
/// of its ink and the black, with no division by 255, so `bt601` on it is `cvtColor(imread(…))`.
fn cmyk_to_rgb(cmyk: &[u8], rgb: &mut [u8]) {
    for (inks, out) in cmyk.chunks_exact(4).zip(rgb.chunks_exact_mut(3)) {
        let k = u32::from(inks[3]);
        for (ink, value) in inks[..3].iter().zip(out) {
            // At most 255: k - (255 - c) * k / 256 lies between 0 and k.
            *value = (k - (((255 - u32::from(*ink)) * k) >> 8)) as u8;
        }
    }
}

/// libjpeg decoding a complete JPEG row by row, to its stored luma or its RGB; each step's error
/// comes back as libjpeg's message, and its warnings are kept.
pub(in crate::io) struct LibjpegRows<'a> {
    bytes: &'a [u8],
    started: mozjpeg::decompress::DecompressStarted<&'a [u8]>,
    warnings: Vec<LibjpegWarning>,
    /// One row of CMYK where the rows are turned into RGB ([`JpegOut::CmykAsRgb`]), else `None`.
    cmyk_row: Option<Vec<u8>>,
}

impl<'a> LibjpegRows<'a> {
    /// Starts decoding the JPEG in `bytes` to `out`, after checking that libjpeg reads the size
    /// the header claims (`width` x `height`).
    pub(in crate::io) fn start(
        bytes: &'a [u8],
        (width, height): (u32, u32),
        out: JpegOut,
    ) -> Result<Self, LibjpegError> {
        let mut warnings = Vec::new();
        let started = libjpeg(&mut warnings, bytes, || {
            let decompress = decompress(bytes, &[])?;
            match out {
                JpegOut::Luma => decompress.grayscale(),
                JpegOut::Rgb => decompress.rgb(),
                JpegOut::CmykAsRgb => decompress.to_colorspace(ffi::J_COLOR_SPACE::JCS_CMYK),
            }
        })?;
        if (started.width(), started.height()) != (width as usize, height as usize) {
            return Err(LibjpegError::OtherSize {
                read: (started.width(), started.height()),
                claimed: (width, height),
            });
        }
        let cmyk_row = (out == JpegOut::CmykAsRgb).then(|| vec![0u8; 4 * width as usize]);
        Ok(Self { bytes, started, warnings, cmyk_row })
    }

    /// Decodes the next rows into `rows` (as many as it holds: `width` samples, or three for
    /// RGB, a row).
    pub(in crate::io) fn read(&mut self, rows: &mut [u8]) -> Result<(), LibjpegError> {
        let Self { bytes, started, warnings, cmyk_row } = self;
        let Some(cmyk_row) = cmyk_row else {
            return libjpeg(warnings, bytes, || started.read_scanlines_into(rows).map(|_| ()));
        };
        let rgb_row = cmyk_row.len() / 4 * 3;
        if rgb_row == 0 {
            return Ok(());
        }
        for row in rows.chunks_exact_mut(rgb_row) {
            libjpeg(warnings, bytes, || started.read_scanlines_into(&mut cmyk_row[..]).map(|_| ()))?;
            cmyk_to_rgb(cmyk_row, row);
        }
        Ok(())
    }

    /// Ends the decode (libjpeg reads on to the end-of-image marker, where a damaged file can
    /// still fail); the warnings of the whole decode.
    pub(in crate::io) fn finish(self) -> Result<Vec<LibjpegWarning>, LibjpegError> {
        let Self { bytes, started, mut warnings, .. } = self;
        libjpeg(&mut warnings, bytes, || started.finish())?;
        Ok(warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg_of(width: u32, height: u32) -> Vec<u8> {
        let pixel = |x: u32, y: u32| [(x * 5) as u8, (y * 3) as u8, ((x ^ y) * 7) as u8];
        crate::io::read::stored_luma::tests_support::colour_jpeg((width, height), 90, pixel)
    }

    fn decode(jpeg: &[u8], size: (u32, u32)) -> Result<(Vec<u8>, Vec<LibjpegWarning>), LibjpegError> {
        let mut rows = LibjpegRows::start(jpeg, size, JpegOut::Rgb)?;
        let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
        rows.read(&mut pixels)?;
        Ok((pixels, rows.finish()?))
    }

    #[test]
    fn a_whole_file_decodes_without_a_warning() {
        let jpeg = jpeg_of(64, 48);
        let header = LibjpegHeader::read(&jpeg).expect("header");
        assert_eq!((header.size, header.components, header.ycbcr), ((64, 48), 3, true));
        let (_, warnings) = decode(&jpeg, (64, 48)).expect("decoded");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn the_header_joins_icc_parts_in_order_and_finds_the_exif_block() {
        let jpeg = jpeg_of(16, 16);
        let segment = |marker: u8, body: &[u8]| {
            let len = u16::try_from(body.len() + 2).expect("short").to_be_bytes();
            [&[0xFF, marker][..], &len, body].concat()
        };
        let icc = |n: u8, data: &[u8]| segment(0xE2, &[&b"ICC_PROFILE\0"[..], &[n, 2], data].concat());
        let exif = segment(0xE1, b"Exif\0\0II*\0");
        let with = [&jpeg[..2], &icc(2, b"world"), &exif, &icc(1, b"hello "), &jpeg[2..]].concat();
        let header = LibjpegHeader::read(&with).expect("header");
        assert_eq!(header.icc.as_deref(), Some(&b"hello world"[..]));
        assert_eq!(header.exif.as_deref(), Some(&b"II*\0"[..]));
        assert!(header.warnings.is_empty(), "{:?}", header.warnings);
    }

    #[test]
    fn data_cut_short_before_an_end_marker_is_a_premature_end_with_its_row() {
        // Half the file, then an end-of-image marker: djpeg's "premature end of data segment".
        let jpeg = jpeg_of(64, 256);
        let mut cut = jpeg[..jpeg.len() / 2].to_vec();
        cut.extend_from_slice(&[0xFF, 0xD9]);
        let (_, warnings) = decode(&cut, (64, 256)).expect("libjpeg goes on");
        let first = warnings.first().expect("a warning");
        assert!(first.data_ends_early(), "{first:?}");
        assert!(first.message.contains("premature end"), "{}", first.message);
        let (row, height) = first.at_row.expect("the row reached");
        assert_eq!(height, 256);
        assert!(row > 0 && row < 256, "the data ended inside the image: row {row}");
    }

    #[test]
    fn cmyk_turns_into_rgb_as_opencv_turns_it() {
        // OpenCV's integer formula, not c * k / 255: 255 and 0 give 1, not 0, and 200 gives 201.
        let cmyk = [0, 0, 0, 255, 255, 255, 255, 0, 255, 0, 0, 128, 10, 200, 30, 255];
        let mut rgb = [0u8; 12];
        cmyk_to_rgb(&cmyk, &mut rgb);
        assert_eq!(rgb, [1, 1, 1, 0, 0, 0, 128, 1, 1, 11, 201, 31]);
    }

    #[test]
    fn a_fatal_error_after_the_last_row_fails_the_finish() {
        // A second frame header after the image's data: libjpeg reads on to the end in finish().
        let jpeg = jpeg_of(32, 32);
        let mut bad = jpeg[..jpeg.len() - 2].to_vec();
        bad.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x03, 0x00, 0xFF, 0xD9]);
        let mut rows = LibjpegRows::start(&bad, (32, 32), JpegOut::Rgb).expect("start");
        let mut pixels = vec![0u8; 32 * 32 * 3];
        rows.read(&mut pixels).expect("every row");
        assert!(rows.finish().is_err(), "the error after the last row is reported");
    }
}
