//! Argument types shared by the commands: `graylab convert`'s arguments (its plan and its run
//! both read them), clap parsers over the engine's own enums, typed parsers with bounds, and the
//! output-path checks every command runs before any work.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};

use crate::cli::arg_error::ArgError;
use crate::engine::{Backend, WorkgroupSize};
use crate::io::{ExportFormat, read_only_mode, special_kind};
use crate::pixel::{Formula, Work};

/// Arguments of `graylab convert`.
#[derive(Debug, Args)]
#[expect(clippy::struct_excessive_bools, reason = "one field per command-line switch")]
pub struct ConvertArgs {
    /// Input images (JPEG, PNG, TIFF, WebP, BMP, GIF, PNM, TGA, ICO, QOI) or folders of them
    /// (folders need --out-dir; files in them that are not images are skipped with a note).
    #[arg(required = true, value_parser = input_file)]
    pub inputs: Vec<PathBuf>,
    /// Output file (one input only). Default: NAME.gray.png beside the input.
    #[arg(short, long, conflicts_with = "out_dir")]
    pub output: Option<PathBuf>,
    /// Folder for the outputs, named NAME.gray.EXT (a folder input's subfolders are mirrored).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Also convert the images in subfolders of folder inputs.
    #[arg(short, long)]
    pub recursive: bool,
    /// Files converted at the same time. Default: one per core; a file waits while the ones in
    /// flight would exceed the memory budget.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
    /// Where to convert: `cpu` (the default: file to file the kernel is about 2% of the time, and
    /// the CPU avoids the transfers) or `gpu`.
    #[arg(long, default_value = "cpu", value_parser = super::args::backend())]
    pub backend: Backend,
    /// `bt601` (exactly `OpenCV`'s `cvtColor` `RGB2GRAY`, the default), `bt709`, `linear`, or
    /// `stored-luma` (a JPEG's own luma plane, decoded alone).
    #[arg(long, default_value = "bt601", value_parser = super::args::formula())]
    pub formula: Formula,
    /// GPU workgroup size, with --backend gpu only: N invocations in a row (e.g. 256, the
    /// default) or a 2-D shape like 16x16, within the device's limits (`graylab info`
    /// lists the sizes offered).
    #[arg(long, value_parser = super::args::workgroup)]
    pub workgroup: Option<WorkgroupSize>,
    /// CPU threads per image. Default: all cores for one file at a time; with several files in
    /// flight, one thread each (the encoders still use all cores).
    #[arg(long, value_parser = super::args::threads)]
    pub threads: Option<usize>,
    /// Output format. Default: from -o's extension, else png.
    #[arg(long, value_parser = super::args::format())]
    pub format: Option<ExportFormat>,
    /// JPEG quality, 1-100 (default 90); JPEG output only.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub quality: Option<u8>,
    /// Sample depth of the output: 16 keeps 16-bit inputs 16-bit (PNG, TIFF), except with --op;
    /// 8 always writes 8-bit.
    #[arg(long, value_enum, default_value_t)]
    pub depth: super::args::DepthArg,
    /// The synthetic work per pixel.
    #[command(flatten)]
    pub work: super::args::WorkArgs,
    /// An operation on the gray plane after the grayscale, on the same backend: none, blur:R
    /// (an integer Gaussian of radius R = 1..64) or dither (Floyd–Steinberg to 1 bit, written
    /// as a 1-bit PNG, TIFF or BMP; WebP, lossless, holds it as 8-bit gray of 0s and 255s;
    /// JPEG, lossy, is refused). Runs on 8-bit gray: alpha is dropped and 16-bit samples narrowed for
    /// it.
    #[arg(long, default_value = "none", value_parser = super::args::op)]
    pub op: crate::pixel::Op,
    /// Drop the alpha channel instead of writing gray + alpha.
    #[arg(long)]
    pub drop_alpha: bool,
    /// Replace existing output files.
    #[arg(long)]
    pub overwrite: bool,
    /// Keep what a truncated or damaged JPEG holds (the missing rows gray, damaged ones as
    /// libjpeg decodes them), with a warning, instead of refusing it.
    #[arg(long)]
    pub allow_truncated: bool,
    /// Print one JSON report for all files instead of text (no progress, no summary). A path
    /// that is not valid UTF-8 is an object `{"bytes": [...], "lossy": "..."}`.
    #[arg(long)]
    pub json: bool,
    /// Also write each file's run (decode, conversion, encode) as a Chrome trace, a track per
    /// lane: open it in ui.perfetto.dev. Never over an input or an output.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

/// `convert --depth`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DepthArg {
    /// Always 8-bit samples.
    #[value(name = "8")]
    Eight,
    /// 16-bit inputs stay 16-bit where the format can (PNG, TIFF).
    #[default]
    #[value(name = "16")]
    Sixteen,
}

/// Why `--divergent` is refused without `--work` above 0 (a usage error).
pub(super) const DIVERGENT_WITHOUT_WORK: &str =
    "--divergent runs the --work rounds only for odd grays, and does nothing without --work above 0";

/// Why `--workgroup` is refused beside `--backend cpu` (a usage error).
pub(super) const WORKGROUP_ON_CPU: &str =
    "--workgroup sets the GPU's workgroup size and does nothing with --backend cpu";

/// Why `--threads` is refused beside `--backend gpu` (a usage error).
pub(super) const THREADS_ON_GPU: &str =
    "--threads sets the CPU's thread count and does nothing with --backend gpu";

/// `bench --backend`: one backend (read by [`Backend`]'s own parser), or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchBackend {
    /// One backend only.
    One(Backend),
    /// Both, in turns.
    All,
}

impl std::str::FromStr for BenchBackend {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(Self::All);
        }
        s.parse().map(Self::One).map_err(|_| format!("unknown backend {s:?} (expected cpu, gpu or all)"))
    }
}

/// A parser over one of the engine's own enums: `--help` lists `values` (name, description,
/// aliases), and a value is parsed by the enum's own `FromStr`, so nothing is mirrored here.
fn engine_enum<T>(
    values: impl IntoIterator<Item = (&'static str, &'static str, &'static [&'static str])>,
) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    PossibleValuesParser::new(
        values.into_iter().map(|(name, help, aliases)| {
            PossibleValue::new(name).help(help).aliases(aliases.iter().copied())
        }),
    )
    .try_map(|s: String| s.parse::<T>().map_err(|e| e.to_string()))
}

/// Parses `--backend cpu|gpu` into [`Backend`].
pub(super) fn backend() -> impl TypedValueParser<Value = Backend> {
    engine_enum(Backend::ALL.map(|b| (b.name(), b.description(), &[][..])))
}

/// Parses `--formula` into [`Formula`].
pub(super) fn formula() -> impl TypedValueParser<Value = Formula> {
    engine_enum(Formula::ALL.map(|f| (f.name(), f.description(), &[][..])))
}

/// Parses `--formula` where a conversion is timed (`bench`, `sweep`): the same names, with
/// stored-luma said to be refused there (it has no kernel to time).
pub(super) fn timed_formula() -> impl TypedValueParser<Value = Formula> {
    engine_enum(Formula::ALL.map(|f| {
        let description = match f {
            Formula::StoredLuma => "refused here: a JPEG's own Y plane is decoded, not converted",
            _ => f.description(),
        };
        (f.name(), description, &[][..])
    }))
}

/// Parses `--format` into [`ExportFormat`].
pub(super) fn format() -> impl TypedValueParser<Value = ExportFormat> {
    engine_enum(ExportFormat::ALL.map(|f| (f.name(), f.description(), f.aliases())))
}

/// Parses `bench --backend cpu|gpu|all`: `all`, or one backend by [`Backend`]'s own parser.
pub(super) fn backends() -> impl TypedValueParser<Value = BenchBackend> {
    let one = Backend::ALL.map(|b| (b.name(), b.description(), &[][..]));
    engine_enum(one.into_iter().chain([("all", "both, in turns", &[][..])]))
}

/// Parses one workgroup size (`256`, `16x16`).
pub(super) fn workgroup(s: &str) -> Result<WorkgroupSize, ArgError> {
    Ok(s.parse()?)
}

/// Parses an input file's path, refusing `-` (standard input) as `-o -` is refused.
pub(super) fn input_file(s: &str) -> Result<PathBuf, ArgError> {
    if s == "-" { Err(ArgError::Stdin) } else { Ok(PathBuf::from(s)) }
}

/// Parses `--op none|blur:R|dither`.
pub(super) fn op(s: &str) -> Result<crate::pixel::Op, ArgError> {
    Ok(s.parse()?)
}

/// Parses a positive, finite number of seconds.
pub(super) fn secs(s: &str) -> Result<f64, ArgError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(ArgError::Secs { given: s.to_owned() }),
    }
}

/// The most rounds `--work` accepts.
pub use crate::pixel::MAX_WORK_ROUNDS;

/// `--work K [--divergent]`: the synthetic work per pixel, shared by `convert` and `bench`.
#[derive(Clone, Copy, Debug, Args)]
pub struct WorkArgs {
    /// Synthetic work per pixel: K rounds of a 3-op integer hash on each gray value after the
    /// formula (like mixbench's kernel: a knob on arithmetic intensity). 0 is the plain grayscale;
    /// the image stays the exact grayscale at any K.
    #[arg(long = "work", value_name = "K", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_WORK_ROUNDS)))]
    pub rounds: u32,
    /// With --work: run the rounds only for pixels whose gray value is odd (a branch that
    /// diverges within a GPU workgroup; compare with half the rounds for every pixel).
    #[arg(long)]
    pub divergent: bool,
    /// XOR (hash AND MASK) into every gray value, so the output shows the work (tests: 0xff).
    #[arg(long, hide = true, value_name = "MASK", default_value = "0", value_parser = mask)]
    pub work_mask: u32,
}

impl WorkArgs {
    /// Refuses `--divergent` without rounds to split (a usage error).
    pub(super) fn check(&self) -> Result<(), super::UsageError> {
        if self.divergent && self.rounds == 0 {
            return Err(super::UsageError(DIVERGENT_WITHOUT_WORK.to_owned()));
        }
        Ok(())
    }

    /// The engine's [`Work`].
    #[must_use]
    pub fn work(&self) -> Work {
        Work { rounds: self.rounds, mask: self.work_mask, divergent: self.divergent }
    }
}

/// Parses a mask: decimal or `0x` hexadecimal.
fn mask(s: &str) -> Result<u32, ArgError> {
    let s = s.trim();
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| ArgError::Mask { given: s.to_owned() })
}

/// The most CPU threads any command accepts (the engine then uses at most the cores it has).
pub const MAX_THREADS: usize = 1024;

/// Parses a thread count, 1..=[`MAX_THREADS`].
pub(super) fn threads(s: &str) -> Result<usize, ArgError> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(ArgError::Threads { given: s.to_owned(), max: MAX_THREADS }),
    }
}

/// What an output file holds, for the messages that refuse it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Holds {
    /// A converted image (`-o`).
    Image,
    /// A Chrome trace (`--trace`).
    Trace,
    /// A JSON report (`--json FILE`).
    Json,
    /// A CSV report (`--csv FILE`).
    Csv,
}

impl Holds {
    /// The thing written, with its article: "a trace".
    fn noun(self) -> &'static str {
        match self {
            Self::Image => "an image",
            Self::Trace => "a trace",
            Self::Json => "a JSON report",
            Self::Csv => "a CSV report",
        }
    }

    /// A file name it could have: "run.trace.json".
    fn example(self) -> &'static str {
        match self {
            Self::Image => "out.png",
            Self::Trace => "run.trace.json",
            Self::Json => "report.json",
            Self::Csv => "report.csv",
        }
    }
}

/// One file a command writes: the flag that names it, its path, and what it holds.
#[derive(Clone, Copy, Debug)]
pub(super) struct OutputFile<'a> {
    /// The flag, for the messages (`--trace`).
    pub flag: &'static str,
    /// Where it goes.
    pub path: &'a Path,
    /// What it holds.
    pub holds: Holds,
}

impl<'a> OutputFile<'a> {
    /// `flag`'s file of `holds`, when the flag was given.
    pub(super) fn of(flag: &'static str, path: Option<&'a Path>, holds: Holds) -> Option<Self> {
        path.map(|path| Self { flag, path, holds })
    }
}

/// The one check of what a command writes, before any work (every command with an output file
/// goes through it): each output can be written ([`check_output_file`]), none is one of the
/// command's `inputs` or of the images it writes (`images`, checked by the conversion's plan),
/// and no two name the same file: the same path, or the same file through a symlink or a hard
/// link. Two outputs in one file is a command line asking the impossible, a usage error (exit 2)
/// found first, whatever is on disk ([`check_distinct`]).
pub(super) fn check_outputs(
    outputs: &[OutputFile<'_>],
    inputs: &[&Path],
    images: &[&Path],
    overwrite: bool,
) -> anyhow::Result<()> {
    check_distinct(outputs, images)?;
    for output in outputs {
        let path = output.path;
        // First, as no --overwrite makes it possible.
        if inputs.iter().any(|input| same_file(input, path)) {
            bail!("{} would replace its own input: {}", output.flag, path.display());
        }
        check_output_file(output, overwrite)?;
    }
    Ok(())
}

/// Refuses two outputs in one file, whatever is on disk: two of `outputs`, or one of them and
/// one of the `images` a conversion writes (a usage error, exit 2).
pub(super) fn check_distinct(outputs: &[OutputFile<'_>], images: &[&Path]) -> anyhow::Result<()> {
    for (i, output) in outputs.iter().enumerate() {
        let path = output.path;
        if let Some(other) = outputs.get(..i).into_iter().flatten().find(|o| same_file(o.path, path)) {
            bail!(super::UsageError(format!(
                "{} names the same file as {}: {} (give each its own file)",
                output.flag,
                other.flag,
                path.display()
            )));
        }
        if images.iter().any(|image| same_file(image, path)) {
            bail!(super::UsageError(format!(
                "{} would replace an image this conversion writes: {} (give each its own file)",
                output.flag,
                path.display()
            )));
        }
    }
    Ok(())
}

/// Checks that `output` can be written as a file before any work: not a folder, a device or a
/// FIFO, nor a link that is not written through ([`crate::io::written_through`]), in a folder
/// that exists and is writable, and not an existing file unless `overwrite`, and then not a
/// read-only one.
pub(super) fn check_output_file(output: &OutputFile<'_>, overwrite: bool) -> anyhow::Result<()> {
    let OutputFile { flag: what, path, holds } = *output;
    if path.as_os_str() == "-" {
        bail!(super::UsageError(format!(
            "{what} -: {} is written only to a file, not to stdout (name one, e.g. {} {})",
            holds.noun(),
            what.split('/').next().unwrap_or(what),
            holds.example()
        )));
    }
    if path.is_dir() || path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        bail!(super::UsageError(format!(
            "{what} names a folder, not a file: {} (name a file in it, e.g. {})",
            path.display(),
            path.join(holds.example()).display()
        )));
    }
    let existing = std::fs::metadata(path).ok();
    if let Some(kind) = existing.as_ref().and_then(special_kind) {
        if holds == Holds::Image {
            bail!("{what} is {kind}, which is never replaced by an image file: {}", path.display());
        }
        bail!("{what} names {kind}; {} is written only to a regular file: {}", holds.noun(), path.display());
    }
    // A link is written through: the file it leads to is what is replaced, in its folder.
    let target = crate::io::written_through(path).map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
    let dir = folder_of(&target);
    if !dir.is_dir() {
        if let Some(above) = not_a_folder(dir) {
            bail!(super::UsageError(format!(
                "{what}: {} is not a folder, so it cannot hold {}",
                above.display(),
                path.display()
            )));
        }
        bail!("{what}: the folder does not exist: {}", dir.display());
    }
    if !writable(dir) {
        bail!("{what}: cannot write in the folder {}", dir.display());
    }
    if !overwrite && path.symlink_metadata().is_ok() {
        bail!("{what}: the file exists (pass --overwrite to replace it): {}", path.display());
    }
    if let Some(mode) = existing.as_ref().and_then(read_only_mode) {
        bail!(
            "{what}: the file is read-only (mode {mode:04o}), so --overwrite does not replace it \
             (make it writable first, e.g. chmod u+w): {}",
            path.display()
        );
    }
    Ok(())
}

pub(super) use crate::io::{EntryKey, entry_key, file_id, folder_of, same_file};

/// Checks that `dir` is a folder this process can write in, or one it can create (its nearest
/// existing ancestor a writable folder): a missing folder is created with the outputs, as
/// `cp -r` creates its target.
pub(super) fn check_output_dir(dir: &Path, what: &str) -> anyhow::Result<()> {
    if dir.is_dir() {
        if !writable(dir) {
            bail!("{what}: cannot write in the folder {}", dir.display());
        }
        return Ok(());
    }
    if std::fs::symlink_metadata(dir).is_ok() {
        bail!(super::UsageError(format!(
            "{what} names a file, not a folder: {} (name a folder, or use -o/--output for one file)",
            dir.display()
        )));
    }
    if let Some(above) = not_a_folder(dir) {
        bail!(super::UsageError(format!(
            "{what}: cannot create the folder, {} is not a folder: {}",
            above.display(),
            dir.display()
        )));
    }
    let Some(existing) = nearest_existing(dir) else {
        bail!("{what}: cannot create the folder {}", dir.display());
    };
    if !writable(existing) {
        bail!("{what}: cannot create the folder, {} is not writable: {}", existing.display(), dir.display());
    }
    Ok(())
}

/// The nearest of `dir` and the paths above it that exists (`.` for a bare name), or `None`.
fn nearest_existing(dir: &Path) -> Option<&Path> {
    let existing = dir.ancestors().find(|d| d.as_os_str().is_empty() || d.exists())?;
    Some(if existing.as_os_str().is_empty() { Path::new(".") } else { existing })
}

/// Where `dir` is no folder, `dir` or the nearest path above it that exists when that is no
/// folder either (a file named as a folder in the path: a usage error, not a missing folder).
fn not_a_folder(dir: &Path) -> Option<&Path> {
    nearest_existing(dir).filter(|d| !d.is_dir())
}

#[cfg(unix)]
fn writable(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK).is_ok()
}

#[cfg(not(unix))]
fn writable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| !m.permissions().readonly())
}

/// Parses `4k`, `8k`, `16k` or `WxH` into a width and height.
pub fn parse_size(s: &str) -> Result<(u32, u32), ArgError> {
    match s.to_ascii_lowercase().as_str() {
        "hd" | "1080p" => Ok((1920, 1080)),
        "4k" => Ok((3840, 2160)),
        "8k" => Ok((7680, 4320)),
        "16k" => Ok((15360, 8640)),
        other => {
            let bad = || ArgError::Size { given: s.to_owned() };
            let (w, h) = other.split_once('x').ok_or_else(bad)?;
            let w: u32 = w.trim().parse().map_err(|_| bad())?;
            let h: u32 = h.trim().parse().map_err(|_| bad())?;
            if w == 0 || h == 0 { Err(bad()) } else { Ok((w, h)) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("8K").ok(), Some((7680, 4320)));
        assert_eq!(parse_size("6000x4000").ok(), Some((6000, 4000)));
        assert!(parse_size("0x5").is_err());
        assert!(parse_size("big").is_err());
    }
}
