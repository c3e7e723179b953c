//! An error's causes as the front ends describe them: the whole chain on one line, each cause
//! once, and the I/O or GPU error inside it, whichever layer wrapped it. The CLI and the app add
//! their own advice on top (flags there, controls here).

use std::error::Error;

use super::{EngineError, GpuError, IoError};

/// An error and its causes on one line, each cause once: a transparent wrapper, which repeats its
/// inner error's text, adds nothing.
#[must_use]
pub fn one_line(err: &(dyn Error + 'static)) -> String {
    let mut text = err.to_string();
    for cause in std::iter::successors(err.source(), |&c| c.source()) {
        let line = cause.to_string();
        if !text.ends_with(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
    }
    text
}

/// The error and each of its causes, outermost first.
pub fn chain<'a>(err: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(err), |&e| e.source())
}

/// `e` as an I/O error, bare or wrapped by the engine.
#[must_use]
pub fn io_error<'a>(e: &'a (dyn Error + 'static)) -> Option<&'a IoError> {
    e.downcast_ref::<IoError>().or_else(|| match e.downcast_ref::<EngineError>() {
        Some(EngineError::Io(io)) => Some(io),
        _ => None,
    })
}

/// `e` as a GPU error, bare or wrapped by the engine.
#[must_use]
pub fn gpu_error<'a>(e: &'a (dyn Error + 'static)) -> Option<&'a GpuError> {
    e.downcast_ref::<GpuError>().or_else(|| match e.downcast_ref::<EngineError>() {
        Some(EngineError::Gpu(gpu)) => Some(gpu),
        // Its source is the `Arc` itself, which no downcast to `GpuError` sees.
        Some(EngineError::GpuUnavailable(gpu)) => Some(gpu),
        _ => None,
    })
}

/// Whether `e` says that there is no GPU to use.
#[must_use]
pub fn no_gpu(e: &(dyn Error + 'static)) -> bool {
    matches!(e.downcast_ref::<EngineError>(), Some(EngineError::GpuUnavailable(_)))
        || matches!(gpu_error(e), Some(GpuError::NoAdapter))
}
