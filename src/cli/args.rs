//! Argument types shared by the commands: clap `ValueEnum`s mapped onto engine values, typed
//! parsers with bounds, and the output-path checks every command runs before any work.

use std::path::Path;

use anyhow::bail;
use clap::ValueEnum;
use clap::builder::{EnumValueParser, TypedValueParser};

use crate::engine::{Backend, ExportFormat, Formula, WorkgroupSize};

/// `--backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The rayon CPU kernel.
    Cpu,
    /// The wgpu compute shader.
    Gpu,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Cpu => Self::Cpu,
            BackendArg::Gpu => Self::Gpu,
        }
    }
}

/// `--formula`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormulaArg {
    /// BT.601 luma, exactly `OpenCV`'s `cvtColor` `RGB2GRAY`.
    Bt601,
    /// BT.709 luma on encoded values.
    Bt709,
    /// Linear-light luminance (sRGB decoded, weighted, encoded).
    Linear,
}

impl From<FormulaArg> for Formula {
    fn from(f: FormulaArg) -> Self {
        match f {
            FormulaArg::Bt601 => Self::Bt601,
            FormulaArg::Bt709 => Self::Bt709,
            FormulaArg::Linear => Self::Linear,
        }
    }
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// PNG.
    Png,
    /// JPEG.
    #[value(alias = "jpg")]
    Jpeg,
    /// TIFF.
    #[value(alias = "tif")]
    Tiff,
    /// BMP.
    Bmp,
    /// WebP (lossless).
    Webp,
}

impl From<FormatArg> for ExportFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Png => Self::Png,
            FormatArg::Jpeg => Self::Jpeg,
            FormatArg::Tiff => Self::Tiff,
            FormatArg::Bmp => Self::Bmp,
            FormatArg::Webp => Self::Webp,
        }
    }
}

/// `--depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DepthArg {
    /// Always 8-bit samples.
    #[value(name = "8")]
    Eight,
    /// 16-bit inputs stay 16-bit where the format can (PNG, TIFF).
    #[value(name = "16")]
    Sixteen,
}

/// Parses `--backend cpu|gpu` into [`Backend`].
pub(super) fn backend() -> impl TypedValueParser<Value = Backend> {
    EnumValueParser::<BackendArg>::new().map(Backend::from)
}

/// Parses `--formula` into [`Formula`].
pub(super) fn formula() -> impl TypedValueParser<Value = Formula> {
    EnumValueParser::<FormulaArg>::new().map(Formula::from)
}

/// Parses `--format` into [`ExportFormat`].
pub(super) fn format() -> impl TypedValueParser<Value = ExportFormat> {
    EnumValueParser::<FormatArg>::new().map(ExportFormat::from)
}

/// Parses `--depth 8|16` into the bit count.
pub(super) fn depth() -> impl TypedValueParser<Value = u8> {
    EnumValueParser::<DepthArg>::new().map(|d| match d {
        DepthArg::Eight => 8,
        DepthArg::Sixteen => 16,
    })
}

/// Parses one workgroup size (`256`, `16x16`).
pub(super) fn workgroup(s: &str) -> Result<WorkgroupSize, String> {
    s.parse().map_err(|e: crate::gpu::ParseWorkgroupError| e.to_string())
}

/// Parses a positive, finite number of seconds.
pub(super) fn secs(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

/// The most CPU threads any command accepts (the engine then uses at most the cores it has).
pub const MAX_THREADS: usize = 1024;

/// Parses a thread count, 1..=[`MAX_THREADS`].
pub(super) fn threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!("{s:?} is not a thread count from 1 to {MAX_THREADS}")),
    }
}

/// Checks that `path` can be written as a file before any work: not a folder, in a folder that
/// exists and is writable, and not an existing file unless `overwrite`. `what` names the
/// argument for the message.
pub(super) fn check_output_file(path: &Path, overwrite: bool, what: &str) -> anyhow::Result<()> {
    if path.is_dir() {
        bail!("{what} names a folder, not a file: {}", path.display());
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!("{what}: the folder does not exist: {}", dir.display());
    }
    if !writable(dir) {
        bail!("{what}: cannot write in the folder {}", dir.display());
    }
    if !overwrite && path.symlink_metadata().is_ok() {
        bail!("{what}: the file exists (pass --overwrite to replace it): {}", path.display());
    }
    Ok(())
}

/// Checks that `dir` is a folder this process can write in.
pub(super) fn check_output_dir(dir: &Path, what: &str) -> anyhow::Result<()> {
    if !dir.is_dir() {
        bail!("{what}: not an existing folder: {}", dir.display());
    }
    if !writable(dir) {
        bail!("{what}: cannot write in the folder {}", dir.display());
    }
    Ok(())
}

#[cfg(unix)]
fn writable(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK).is_ok()
}

#[cfg(not(unix))]
fn writable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| !m.permissions().readonly())
}
