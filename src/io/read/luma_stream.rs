//! A whole YCbCr JPEG's gray rows handed on while libjpeg decodes them: its stored luma, or its
//! RGB converted to gray chunk by chunk (by a conversion the caller gives) as soon as each chunk
//! is decoded. A file to file conversion encodes the first stripes while later ones are still
//! being decoded, so the decoder's core and the encoders' are busy at once, and the RGB image is
//! never held whole. A file with restart intervals at MCU-row starts is decoded in bands, one
//! libjpeg per core ([`super::restart_bands`]). A file with an EXIF orientation has each gray
//! chunk placed as shown in one gray image, read once the last is. Opened by
//! [`crate::io::decode_or_stream`] once every check a decode makes has passed.

use std::borrow::Cow;
use std::error::Error;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};

use image::metadata::Orientation;

use crate::io::codecs::rows::{RowSource, RowsFailed};
use crate::io::read::jpeg_restarts;
use crate::io::read::libjpeg::{self, JpegOut, LibjpegError, LibjpegRows, LibjpegWarning};
use crate::io::read::orientation::{place_band, turns};
use crate::io::read::restart_bands::Band;
use crate::io::{DecodeWarning, Density, IoError};
use crate::system::memory_budget::Reservation;

/// Rows decoded and handed on at a time: the JPEG encoder's stripe (16 block rows), so its
/// stripes are borrowed whole. Bands start at multiples of it.
pub(in crate::io) const CHUNK_ROWS: usize = 128;

/// How a gray chunk is made from a chunk of decoded RGB rows of band `band` (`rgb` three
/// samples a pixel, `gray` one; each band is decoded on a thread of its own); an error stops
/// the decode.
pub type ToGray<'a> =
    &'a (dyn Fn(usize, &[u8], &mut [u8]) -> Result<(), Box<dyn Error + Send + Sync>> + Sync);

/// Why a band was not decoded, worded after "libjpeg: " in the decode's reason.
#[derive(Debug, thiserror::Error)]
enum BandError {
    /// libjpeg failed.
    #[error(transparent)]
    Libjpeg(#[from] LibjpegError),
    /// The conversion to gray failed.
    #[error("{0}")]
    ToGray(Box<dyn Error + Send + Sync>),
    /// The stream has no band.
    #[error("no rows to decode")]
    NoRows,
    /// A chunk's rows lie beyond the RGB buffer.
    #[error("a chunk beyond its buffer")]
    ChunkBeyondBuffer,
    /// A band's rows lie beyond the image.
    #[error("a band beyond the image")]
    BandBeyondImage,
    /// A band's thread panicked.
    #[error("a decoding thread stopped")]
    ThreadStopped,
    /// A band's thread could not be started (the system's reason).
    #[error("cannot start a decoding thread: {0}")]
    ThreadNotStarted(std::io::Error),
}

/// How a stream's decode stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Decoding, or not started.
    Running,
    /// Every band decoded to its end-of-image marker, libjpeg's warnings accepted.
    Done,
    /// A band failed, or libjpeg's warnings refuse the file.
    Failed,
}

/// A JPEG's gray rows, decoded by [`LumaStream::decode`] on one thread and read as rows
/// ([`RowSource`]) by others, each read waiting until its rows are decoded.
pub struct LumaStream {
    path: PathBuf,
    /// What libjpeg decodes: the stored luma, or the RGB to convert.
    out: JpegOut,
    /// The JPEG, or its bands, each decoded by a libjpeg of its own.
    bands: Vec<Band>,
    /// The size as stored.
    width: u32,
    height: u32,
    /// The EXIF orientation applied to the rows handed on.
    orientation: Orientation,
    /// The file's pixel density and the EXIF tags its export keeps.
    density: Option<Density>,
    metadata: Option<std::sync::Arc<crate::io::KeptMetadata>>,
    /// Every `CHUNK_ROWS` rows, set once decoded; with an orientation, never set (the rows
    /// are read from `shown`).
    chunks: Vec<OnceLock<Vec<u8>>>,
    /// With an orientation, the gray image as shown, set once every band is decoded and placed.
    shown: OnceLock<Vec<u8>>,
    /// How the decode stands (readers stop waiting once it failed; the encoder commits its file
    /// only once it is done).
    state: Mutex<State>,
    decoded: Condvar,
    /// What the user is told: the checks' warnings, then libjpeg's once the decode is done.
    warnings: Mutex<Vec<DecodeWarning>>,
    /// Whether data that ends early is kept (with a warning) rather than refused.
    keep_truncated: bool,
    /// Readers that found their chunk missing and waited (tests wait for one instead of
    /// sleeping).
    #[cfg(test)]
    waited: std::sync::atomic::AtomicUsize,
    /// The memory reserved for the gray plane and its encoding, held while the stream lives.
    _memory: Reservation,
}

impl LumaStream {
    /// A stream of the JPEG `bands` (the file whole, or [`super::restart_bands`]'s bands of it)
    /// read from `path` (`width` x `height` as stored, complete, stored YCbCr, `orientation` to
    /// apply; of `density` as shown, with `exif`), with the checks' `warnings`; `keep_truncated`: data that
    /// ends early is kept with a warning instead of failing the decode.
    pub(in crate::io) fn new(
        path: &Path,
        (bands, out, orientation): (Vec<Band>, JpegOut, Orientation),
        ((width, height), density, exif): (
            (u32, u32),
            Option<Density>,
            Option<std::sync::Arc<crate::io::KeptMetadata>>,
        ),
        (warnings, keep_truncated): (Vec<DecodeWarning>, bool),
        memory: Reservation,
    ) -> Self {
        let chunks = if turns(orientation) { width } else { height } as usize;
        Self {
            path: path.to_path_buf(),
            out,
            bands,
            width,
            height,
            orientation,
            density,
            metadata: exif,
            chunks: (0..chunks.div_ceil(CHUNK_ROWS)).map(|_| OnceLock::new()).collect(),
            shown: OnceLock::new(),
            state: Mutex::new(State::Running),
            decoded: Condvar::new(),
            warnings: Mutex::new(warnings),
            keep_truncated,
            #[cfg(test)]
            waited: std::sync::atomic::AtomicUsize::new(0),
            _memory: memory,
        }
    }

    /// Width and height in pixels, as shown.
    #[must_use]
    pub fn dimensions(&self) -> (u32, u32) {
        if turns(self.orientation) { (self.height, self.width) } else { (self.width, self.height) }
    }

    /// The EXIF orientation applied: the rows handed on are the image as shown. Where it is one,
    /// the first row is read only once the last chunk is decoded.
    #[must_use]
    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// The file's pixel density, for the export to write
    /// ([`crate::io::ExportOptions::density`]).
    #[must_use]
    pub fn density(&self) -> Option<Density> {
        self.density
    }

    /// The EXIF tags and XMP properties the export keeps ([`crate::io::ExportOptions::metadata`]).
    #[must_use]
    pub fn metadata(&self) -> Option<std::sync::Arc<crate::io::KeptMetadata>> {
        self.metadata.clone()
    }

    /// What the user should be told about the file: stray bytes skipped, and once
    /// [`LumaStream::decode`] is done, the damage libjpeg warned about.
    #[must_use]
    pub fn warnings(&self) -> Vec<DecodeWarning> {
        self.warnings.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether the rows are the stored luma (not RGB converted by [`LumaStream::decode`]'s
    /// conversion).
    #[must_use]
    pub fn stored_luma(&self) -> bool {
        self.out == JpegOut::Luma
    }

    /// Bands decoded in parallel (1: the file is decoded whole).
    #[must_use]
    pub fn bands(&self) -> usize {
        self.bands.len()
    }

    /// Decodes every row, handing each chunk on as it is done (RGB through `to_gray` first),
    /// each band on a thread of its own (the last on this one); run it beside the readers (a
    /// reader waits for it). On an error (a band's, or data that ends early where it is not
    /// kept), readers get no rows, the encoder's [`RowSource::finished`] fails so that nothing is
    /// committed, and the error names the file. Done, libjpeg's warnings join
    /// [`LumaStream::warnings`].
    pub fn decode(&self, to_gray: ToGray<'_>) -> Result<(), IoError> {
        // With an orientation, the gray image as shown, each band's chunks placed in it.
        let pixels = self.width as usize * self.height as usize;
        let shown = (self.orientation != Orientation::NoTransforms)
            .then(|| Mutex::new(crate::system::huge_pages::zeroed_buffer::<u8>(pixels)));
        let shown = shown.as_ref();
        let decoded = std::thread::scope(|scope| {
            let (last, others) = self.bands.split_last().ok_or(BandError::NoRows)?;
            let others: Vec<_> = others
                .iter()
                .enumerate()
                .map(|(n, band)| {
                    std::thread::Builder::new()
                        .name(format!("graylab-jpeg-band-{n}"))
                        .spawn_scoped(scope, move || self.decode_band((n, band), to_gray, shown))
                })
                .collect();
            let mut result = self.decode_band((others.len(), last), to_gray, shown);
            for band in others {
                let decoded = match band {
                    Ok(thread) => thread.join().unwrap_or(Err(BandError::ThreadStopped)),
                    Err(e) => Err(BandError::ThreadNotStarted(e)),
                };
                // The first error is kept.
                result = result.and_then(|mut kept| {
                    kept.extend(decoded?);
                    Ok(kept)
                });
            }
            result
        });
        let fail = |error: IoError| {
            self.settle(State::Failed);
            error
        };
        let libjpeg_warnings = decoded.map_err(|e| {
            fail(IoError::Decode { path: self.path.clone(), reason: format!("libjpeg: {e}") })
        })?;
        let told = libjpeg::verdict(
            &self.path,
            libjpeg_warnings,
            (self.height, self.orientation),
            self.keep_truncated,
        )
        .map_err(fail)?;
        self.warnings.lock().unwrap_or_else(PoisonError::into_inner).extend(told);
        if let Some(shown) = shown {
            // Set once: it is only set here, and settling wakes the readers waiting for it.
            let _ =
                self.shown.set(std::mem::take(&mut *shown.lock().unwrap_or_else(PoisonError::into_inner)));
        }
        self.settle(State::Done);
        Ok(())
    }

    /// Ends the decode as `state`, waking every reader.
    fn settle(&self, state: State) {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = state;
        self.decoded.notify_all();
    }

    /// Decodes one band into its chunks (RGB through `to_gray`), publishing each, or placing it
    /// as shown in `shown` where an orientation is applied; libjpeg's warnings.
    fn decode_band(
        &self,
        (nth, band): (usize, &Band),
        to_gray: ToGray<'_>,
        shown: Option<&Mutex<Vec<u8>>>,
    ) -> Result<Vec<LibjpegWarning>, BandError> {
        let width = self.width as usize;
        let rows = (band.rows.end - band.rows.start) as u32;
        let mut decoder = LibjpegRows::start(&band.jpeg, (self.width, rows), self.out)?;
        let mut rgb = if self.out == JpegOut::Luma { Vec::new() } else { vec![0u8; CHUNK_ROWS * width * 3] };
        for k in band.rows.start / CHUNK_ROWS..band.rows.end.div_ceil(CHUNK_ROWS) {
            let chunk_rows = band.rows.end.min((k + 1) * CHUNK_ROWS) - k * CHUNK_ROWS;
            let mut buf = vec![0u8; chunk_rows * width];
            if self.out == JpegOut::Luma {
                decoder.read(&mut buf)?;
            } else {
                let rgb = rgb.get_mut(..chunk_rows * width * 3).ok_or(BandError::ChunkBeyondBuffer)?;
                decoder.read(rgb)?;
                to_gray(nth, rgb, &mut buf).map_err(BandError::ToGray)?;
            }
            if let Some(shown) = shown {
                let size = (width, self.height as usize);
                let mut shown = shown.lock().unwrap_or_else(PoisonError::into_inner);
                // On this thread: the encoder's stripes may hold every rayon worker, waiting.
                place_band(&buf, k * CHUNK_ROWS, size, (1, self.orientation), &mut shown, false);
                continue;
            }
            // Set once: each chunk belongs to one band.
            let _ = self.chunks.get(k).ok_or(BandError::BandBeyondImage)?.set(buf);
            // Taking the lock orders the set before a waiting reader's next check, so the
            // notification cannot fall between its check and its wait.
            drop(self.state.lock().unwrap_or_else(PoisonError::into_inner));
            self.decoded.notify_all();
        }
        // libjpeg counted the band's rows: the image's are told.
        let mut warnings = decoder.finish()?;
        let start = u32::try_from(band.rows.start).map_err(|_| BandError::BandBeyondImage)?;
        // What graylab told of restart markers out of sequence already; a premature end at a
        // restart marker is damage in that interval's rows of the image.
        jpeg_restarts::sort_out(&mut warnings, &band.jpeg, start, &band.resynced_at);
        for w in &mut warnings {
            w.at_row = w.at_row.map(|(row, _)| (start + row, self.height));
        }
        Ok(warnings)
    }

    /// Waits until chunk `k` (rows as shown) is decoded; `None` when the decode failed first.
    fn chunk(&self, k: usize) -> Option<&[u8]> {
        let slot = self.chunks.get(k)?;
        let ready = || slot.get().is_some() || self.shown.get().is_some();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        #[cfg(test)]
        if !ready() {
            self.waited.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        while !ready() && *state != State::Failed {
            state = self.decoded.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        let failed = *state == State::Failed;
        drop(state);
        if failed {
            return None;
        }
        let (width, height) = self.dimensions();
        let rows = k * CHUNK_ROWS..(height as usize).min((k + 1) * CHUNK_ROWS);
        slot.get()
            .map(Vec::as_slice)
            .or_else(|| self.shown.get()?.get(rows.start * width as usize..rows.end * width as usize))
    }
}

impl RowSource for LumaStream {
    fn rows(&self, rows: Range<usize>) -> Cow<'_, [u8]> {
        let (width, height) = self.dimensions();
        let width = width as usize;
        let (first, last) = (rows.start / CHUNK_ROWS, rows.end.saturating_sub(1) / CHUNK_ROWS);
        if rows.is_empty() || rows.end > height as usize {
            return Cow::Borrowed(&[]);
        }
        let within = |k: usize| {
            let start = rows.start.max(k * CHUNK_ROWS) - k * CHUNK_ROWS;
            let end = rows.end.min((k + 1) * CHUNK_ROWS) - k * CHUNK_ROWS;
            start * width..end * width
        };
        if first == last {
            // A short answer (the decode failed) makes the encoder stop with an error.
            return Cow::Borrowed(self.chunk(first).and_then(|c| c.get(within(first))).unwrap_or(&[]));
        }
        let mut out = Vec::with_capacity(rows.len() * width);
        for k in first..=last {
            match self.chunk(k).and_then(|c| c.get(within(k))) {
                Some(part) => out.extend_from_slice(part),
                None => return Cow::Borrowed(&[]),
            }
        }
        Cow::Owned(out)
    }

    fn finished(&self) -> Result<(), RowsFailed> {
        // Every row was coded; libjpeg may still fail reading on to the end-of-image marker.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while *state == State::Running {
            state = self.decoded.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        match *state {
            State::Done => Ok(()),
            _ => Err(RowsFailed { path: self.path.clone() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::io::read::luma_stream::*;
    use crate::io::read::stored_luma::tests_support::{colour_jpeg, libjpeg_pixels};
    use crate::system::memory_budget::budget;

    fn stream_of(bytes: Vec<u8>, size: (u32, u32), out: JpegOut) -> LumaStream {
        let memory = budget().try_reserve(0).expect("nothing reserved");
        let band = Band { rows: 0..size.1 as usize, jpeg: bytes, resynced_at: Vec::new() };
        LumaStream::new(
            Path::new("in.jpg"),
            (vec![band], out, Orientation::NoTransforms),
            (size, None, None),
            (Vec::new(), false),
            memory,
        )
    }

    #[test]
    fn rows_wait_for_the_decode_and_match_the_whole_plane() {
        // 300 rows: three chunks, the last one short.
        let (width, height) = (37u32, 300u32);
        let jpeg = colour_jpeg((width, height), 90, |x, y| [(x * 7) as u8, (y * 3) as u8, 90]);
        let whole = libjpeg_pixels(&jpeg, (width, height), JpegOut::Luma);
        let stream = stream_of(jpeg, (width, height), JpegOut::Luma);
        let w = width as usize;
        std::thread::scope(|scope| {
            // The reader asks before the decode starts: it must wait, not read zeros.
            let reader = scope.spawn(|| {
                let across = stream.rows(100..260).into_owned();
                let inside = stream.rows(130..140).into_owned();
                (across, inside, stream.rows(299..300).into_owned())
            });
            // Decoded only once the reader waits: it asked before any row was there.
            while stream.waited.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            stream.decode(&|_, _, _| Ok(())).expect("decoded");
            let (across, inside, last) = reader.join().expect("reader");
            assert_eq!(across, whole[100 * w..260 * w], "rows across chunks");
            assert_eq!(inside, whole[130 * w..140 * w], "rows inside one chunk");
            assert_eq!(last, whole[299 * w..], "the last row");
        });
        assert!(stream.rows(290..301).is_empty(), "rows beyond the image are none");
    }

    #[test]
    fn an_oriented_stream_hands_on_the_rows_as_shown() {
        // 300 rows as stored: three chunks, each placed as shown once converted.
        let (width, height) = (37u32, 300u32);
        let jpeg = colour_jpeg((width, height), 90, |x, y| [(x * 7) as u8, (y * 3) as u8, (x * y) as u8]);
        let rgb = libjpeg_pixels(&jpeg, (width, height), JpegOut::Rgb);
        let green: Vec<u8> = rgb.chunks_exact(3).map(|px| px[1]).collect();
        let luma = libjpeg_pixels(&jpeg, (width, height), JpegOut::Luma);
        // Every orientation but "as stored".
        for orientation in crate::io::read::orientation::ALL_ORIENTATIONS.into_iter().skip(1) {
            for (out, plane) in [(JpegOut::Rgb, &green), (JpegOut::Luma, &luma)] {
                let mut want = image::DynamicImage::ImageLuma8(
                    image::GrayImage::from_raw(width, height, plane.clone()).expect("gray"),
                );
                want.apply_orientation(orientation);
                let memory = budget().try_reserve(0).expect("nothing reserved");
                let band = Band { rows: 0..height as usize, jpeg: jpeg.clone(), resynced_at: Vec::new() };
                let stream = LumaStream::new(
                    Path::new("in.jpg"),
                    (vec![band], out, orientation),
                    ((width, height), None, None),
                    (Vec::new(), false),
                    memory,
                );
                assert_eq!(stream.dimensions(), (want.width(), want.height()), "{orientation:?}");
                stream
                    .decode(&|_, rgb, gray| {
                        for (g, px) in gray.iter_mut().zip(rgb.chunks_exact(3)) {
                            *g = px[1];
                        }
                        Ok(())
                    })
                    .expect("decoded");
                let rows = want.height() as usize;
                assert!(stream.rows(0..rows).as_ref() == want.as_bytes(), "{orientation:?} {out:?}");
                // Rows within the image as shown, across its chunks where it has several.
                let (w, part) = (want.width() as usize, rows / 3..rows - 1);
                let within = &want.as_bytes()[part.start * w..part.end * w];
                assert!(stream.rows(part).as_ref() == within, "{orientation:?} {out:?}");
            }
        }
    }

    #[test]
    fn colour_rows_are_libjpegs_rgb_converted_chunk_by_chunk() {
        // 300 rows: three chunks, the last one short; each converted as it is decoded.
        let (width, height) = (29u32, 300u32);
        let jpeg = colour_jpeg((width, height), 85, |x, y| [(x * 9) as u8, (y * 5) as u8, (x + y) as u8]);
        let rgb = libjpeg_pixels(&jpeg, (width, height), JpegOut::Rgb);
        let stream = stream_of(jpeg.clone(), (width, height), JpegOut::Rgb);
        assert!(!stream.stored_luma());
        // A conversion that keeps each pixel's green, counting the chunks it is given.
        let chunks = std::sync::atomic::AtomicUsize::new(0);
        let green = |_band: usize, rgb: &[u8], gray: &mut [u8]| {
            chunks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for (g, px) in gray.iter_mut().zip(rgb.chunks_exact(3)) {
                *g = px[1];
            }
            Ok(())
        };
        stream.decode(&green).expect("decoded");
        let expected: Vec<u8> = rgb.chunks_exact(3).map(|px| px[1]).collect();
        assert_eq!(stream.rows(0..300).into_owned(), expected);
        assert_eq!(chunks.into_inner(), 3);
        // A conversion that fails stops the decode, naming the file, and its readers get no rows.
        let stream = stream_of(jpeg, (width, height), JpegOut::Rgb);
        let error = stream.decode(&|_, _, _| Err("a conversion failed".into())).expect_err("failed");
        assert!(
            error.to_string().contains("in.jpg") && error.to_string().contains("a conversion failed"),
            "{error}"
        );
        assert!(stream.rows(0..10).is_empty());
    }

    #[test]
    fn a_band_tells_its_damage_at_the_images_row() {
        // Two bands of 128 rows, the second cut short: the end is told at a row of the image's
        // 256, past the first band, not at the second band's own row.
        let (width, rows) = (48u32, CHUNK_ROWS as u32);
        let jpeg = colour_jpeg((width, rows), 90, |x, y| [(x * 5) as u8, (y * 2) as u8, 40]);
        let cut = jpeg[..jpeg.len() * 6 / 10].to_vec();
        let bands = vec![
            Band { rows: 0..CHUNK_ROWS, jpeg, resynced_at: Vec::new() },
            Band { rows: CHUNK_ROWS..2 * CHUNK_ROWS, jpeg: cut, resynced_at: Vec::new() },
        ];
        let memory = budget().try_reserve(0).expect("nothing reserved");
        let size = (width, 2 * rows);
        let stream = LumaStream::new(
            Path::new("in.jpg"),
            (bands, JpegOut::Luma, Orientation::NoTransforms),
            (size, None, None),
            (Vec::new(), false),
            memory,
        );
        let error = stream.decode(&|_, _, _| Ok(())).expect_err("truncated");
        let IoError::Truncated { at: crate::io::TruncatedAt::EarlyEnd { rows: Some(at), height }, .. } =
            error
        else {
            panic!("{error:?}")
        };
        assert_eq!(height, 256);
        assert!((129..256).contains(&at), "row {at} of the image");
    }

    #[test]
    fn a_failed_decode_names_the_file_and_releases_every_reader() {
        let stream = stream_of(b"\xFF\xD8\xFF\xE0 not a JPEG at all".to_vec(), (16, 400), JpegOut::Luma);
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| stream.rows(300..400).len());
            let error = stream.decode(&|_, _, _| Ok(())).expect_err("not a JPEG").to_string();
            assert!(error.contains("in.jpg") && error.contains("libjpeg"), "{error}");
            assert_eq!(reader.join().expect("reader"), 0, "a reader gets no rows, and does not hang");
        });
    }
}
