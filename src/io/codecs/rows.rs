//! Gray rows on demand: the encoders ask for the rows of one stripe at a time, from any thread,
//! so a producer (the engine's CPU kernel) can convert each stripe just before it is encoded,
//! with no full-size gray image in between.

use std::borrow::Cow;
use std::ops::Range;
use std::path::PathBuf;

/// The shape of a gray image to encode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrayLayout {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Two channels (gray + alpha) instead of one.
    pub alpha: bool,
    /// 16-bit samples (native byte order) instead of 8-bit.
    pub sixteen_bit: bool,
}

impl GrayLayout {
    /// Bytes per pixel.
    #[must_use]
    pub fn bytes_per_pixel(self) -> usize {
        (1 + usize::from(self.alpha)) * (1 + usize::from(self.sixteen_bit))
    }

    /// Bits per sample: 16 or 8.
    #[must_use]
    pub fn bit_depth(self) -> u8 {
        if self.sixteen_bit { 16 } else { 8 }
    }

    /// Bytes per row.
    #[must_use]
    pub fn row_bytes(self) -> usize {
        self.width as usize * self.bytes_per_pixel()
    }
}

/// A row source whose producer failed after its last row was coded (a decode reading on to the
/// end of its file): the write is stopped, so that no file is left.
#[derive(Debug, thiserror::Error)]
#[error("the decode of {} failed after its last row", path.display())]
pub struct RowsFailed {
    /// The file the rows were decoded from.
    pub path: PathBuf,
}

/// Rows of a gray image, produced stripe by stripe.
pub trait RowSource: Sync {
    /// The packed bytes of rows `rows` (within the image), samples in native byte order.
    fn rows(&self, rows: Range<usize>) -> Cow<'_, [u8]>;

    /// Told by the encoder, on the thread that coded it, that the stripe of `rows` took from
    /// `started` (before it asked for the rows) until now: for a timeline of the stripes.
    fn coded(&self, rows: Range<usize>, started: std::time::Instant) {
        let _ = (rows, started);
    }

    /// Asked by the writer once every row is coded, before the file is committed: a source
    /// still producing (a decode reading on to its end) waits until it is done, and an error
    /// stops the write, so that no file is left.
    fn finished(&self) -> Result<(), RowsFailed> {
        Ok(())
    }
}

/// Rows borrowed from an image already in memory.
pub(in crate::io) struct SliceRows<'a> {
    pub(in crate::io) bytes: &'a [u8],
    pub(in crate::io) row_bytes: usize,
}

impl RowSource for SliceRows<'_> {
    fn rows(&self, rows: Range<usize>) -> Cow<'_, [u8]> {
        let range = rows.start * self.row_bytes..rows.end * self.row_bytes;
        Cow::Borrowed(self.bytes.get(range).unwrap_or(&[]))
    }
}
