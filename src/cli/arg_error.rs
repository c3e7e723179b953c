//! `ArgError`: why one argument's value was refused, for clap to print after the flag it names.
//! Depends on the engine's workgroup parser only.

use crate::engine::ParseWorkgroupError;

/// A command-line value that does not parse, or lies outside what its flag accepts; `given` is
/// the value as typed.
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    /// Not a workgroup size.
    #[error(transparent)]
    Workgroup(#[from] ParseWorkgroupError),
    /// Not an op on the gray plane.
    #[error(transparent)]
    Op(#[from] crate::pixel::ParseOpError),
    /// Not a positive, finite number of seconds.
    #[error("{given:?} is not a positive number of seconds")]
    Secs {
        /// The value given.
        given: String,
    },
    /// Not a blur radius (`sweep --radii`).
    #[error("{given:?} is not a blur radius from 1 to 64")]
    Radius {
        /// The value given, trimmed.
        given: String,
    },
    /// Not a 32-bit mask.
    #[error("{given:?} is not a 32-bit mask (decimal or 0x hexadecimal)")]
    Mask {
        /// The value given, trimmed.
        given: String,
    },
    /// Not a thread count from 1 to `max`.
    #[error("{given:?} is not a thread count from 1 to {max}")]
    Threads {
        /// The value given.
        given: String,
        /// The most threads accepted.
        max: usize,
    },
    /// Not a named size or `WxH`.
    #[error("invalid size {given:?} (expected 4k, 8k, 16k or WxH, e.g. 6000x4000)")]
    Size {
        /// The value given.
        given: String,
    },
    /// Not a size in megapixels above 0 and at most `max_mp`.
    #[error("{given:?} is not a size in megapixels above 0 and at most {max_mp}")]
    Megapixels {
        /// The value given.
        given: String,
        /// The largest size accepted, in megapixels.
        max_mp: f64,
    },
    /// Not a whole number of rounds per pixel from 0 to `max`.
    #[error("{given:?} is not a work level: a whole number of rounds per pixel from 0 to {max}")]
    WorkLevel {
        /// The value given.
        given: String,
        /// The most rounds accepted.
        max: u32,
    },
    /// Not a count of operations from 1 to `max`.
    #[error("{given:?} is not a count of operations from 1 to {max}")]
    Passes {
        /// The value given (one of the list).
        given: String,
        /// The most operations accepted.
        max: u32,
    },
    /// `-`, which names standard input: graylab reads files only (a file's size, kind and
    /// identity are checked before it is decoded, and checked again after).
    #[error("graylab reads a file, not standard input (name one; a file named - is ./-)")]
    Stdin,
}
