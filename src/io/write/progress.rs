//! Progress for the encoders that report none (graylab's TIFF writer, the `image` crate's BMP):
//! the bytes they have written, over the bytes of pixels they are writing, as rows are written.
//! Depends on nothing but `std`.

use std::io::Write;

/// The most a counted encoder reports before it returns: the file is done only once written.
const BEFORE_DONE: f32 = 0.99;

/// A writer that tells `progress` the share of `expected_bytes` written so far, at most every
/// 1/256 of them and never 1.0 (the caller reports that, once the file is complete).
pub(in crate::io) struct CountingWriter<'a, W> {
    inner: W,
    written: u64,
    expected_bytes: u64,
    reported: u64,
    progress: &'a (dyn Fn(f32) + Sync),
}

impl<'a, W> CountingWriter<'a, W> {
    /// Counts what goes into `inner`, against `expected_bytes` (the pixel bytes, about the file).
    pub(in crate::io) fn new(inner: W, expected_bytes: u64, progress: &'a (dyn Fn(f32) + Sync)) -> Self {
        Self { inner, written: 0, expected_bytes: expected_bytes.max(1), reported: 0, progress }
    }
}

impl<W: Write> Write for CountingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        if self.written - self.reported >= self.expected_bytes / 256 {
            self.reported = self.written;
            (self.progress)(
                (self.written as f64 / self.expected_bytes as f64).min(f64::from(BEFORE_DONE)) as f32
            );
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn progress_follows_the_bytes_and_stops_short_of_done() {
        let seen = Mutex::new(Vec::new());
        let record = |f: f32| seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(f);
        let mut w = CountingWriter::new(Vec::new(), 1000, &record);
        for _ in 0..10 {
            w.write_all(&[7; 100]).expect("write to memory");
        }
        w.write_all(&[7; 100]).expect("write to memory");
        assert_eq!(w.inner.len(), 1100);
        let seen = seen.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        assert_eq!(seen.len(), 11, "{seen:?}");
        assert!((seen[4] - 0.5).abs() < 1e-6, "half the bytes: half done: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0] <= w[1]) && seen.iter().all(|f| *f <= BEFORE_DONE));
    }
}
