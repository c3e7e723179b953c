//! The arguments of `graylab convert`, apart from the command so that its plan
//! (`src/cli/plan.rs`) and its run (`src/cli/convert.rs`) both read them.

use std::path::PathBuf;

use clap::Args;

use crate::engine::{Backend, WorkgroupSize};
use crate::io::ExportFormat;
use crate::pixel::Formula;

/// Arguments of `graylab convert`.
#[derive(Debug, Args)]
#[expect(clippy::struct_excessive_bools, reason = "one field per command-line switch")]
pub struct ConvertArgs {
    /// Input images (JPEG, PNG, TIFF, WebP, BMP, GIF, PNM, TGA, ICO, QOI) or folders of them
    /// (folders need --out-dir; files in them that are not images are skipped with a note).
    #[arg(required = true)]
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
    /// `bt601` (exactly `OpenCV`'s `cvtColor` `RGB2GRAY`, the default), `bt709` or `linear`.
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
    /// Sample depth of the output: 16 keeps 16-bit inputs 16-bit (PNG, TIFF); 8 always writes 8-bit.
    #[arg(long, value_enum, default_value_t)]
    pub depth: super::args::DepthArg,
    /// The synthetic work per pixel.
    #[command(flatten)]
    pub work: super::args::WorkArgs,
    /// Drop the alpha channel instead of writing gray + alpha.
    #[arg(long)]
    pub drop_alpha: bool,
    /// Replace existing output files.
    #[arg(long)]
    pub overwrite: bool,
    /// Keep what a truncated JPEG holds (the missing rows gray), with a warning, instead of
    /// refusing it.
    #[arg(long)]
    pub allow_truncated: bool,
    /// Print one JSON report for all files instead of text (no progress, no summary). A path
    /// that is not valid UTF-8 is an object `{"bytes": [...], "lossy": "..."}`.
    #[arg(long)]
    pub json: bool,
}
