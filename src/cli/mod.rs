//! The headless command line: `graylab convert | bench | sweep | info`, and `graylab [PATH]` for the app.
//!
//! Arguments are parsed and validated here into engine settings, then handed to the engine;
//! this is the edge where errors become messages and exit codes. Depends on [`crate::engine`].

mod bench;
mod convert;
mod info;
mod sweep;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use bench::BenchArgs;
pub use convert::ConvertArgs;
pub use info::InfoArgs;
pub use sweep::SweepArgs;

use crate::engine::{Backend, Formula, WorkgroupSize};

/// Convert huge photos to grayscale on the GPU or the CPU, and see where the time goes.
#[derive(Debug, Parser)]
#[command(name = "graylab", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do; without a command the desktop app opens.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// An image to open in the desktop app.
    pub path: Option<PathBuf>,
    /// Desktop app: start on this backend (cpu or gpu) instead of the saved one.
    #[arg(long, value_parser = parse_backend)]
    pub backend: Option<Backend>,
    /// Desktop app: start with Continuous on (re-run the conversion as soon as a run ends).
    #[arg(long)]
    pub continuous: bool,
    /// Desktop app: write the interval between frames, in ms, one line per frame, to FILE.
    #[arg(long, value_name = "FILE")]
    pub frame_log: Option<PathBuf>,
    /// Desktop app: close the window after SECS seconds (for scripted runs).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub quit_after: Option<f64>,
}

/// The headless commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert image files to grayscale.
    Convert(ConvertArgs),
    /// Measure each phase of a conversion over repeated runs.
    Bench(BenchArgs),
    /// Measure CPU and GPU over a range of image sizes: where does the GPU start to win?
    Sweep(SweepArgs),
    /// Show the CPU, the build and every GPU adapter with the limits that matter here.
    Info(InfoArgs),
}

/// Runs a headless command; returns the process exit code.
pub fn run(command: Command) -> anyhow::Result<std::process::ExitCode> {
    match command {
        Command::Convert(args) => convert::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Info(args) => info::run(&args),
    }
}

fn parse_backend(s: &str) -> Result<Backend, String> {
    match s.to_ascii_lowercase().as_str() {
        "cpu" => Ok(Backend::Cpu),
        "gpu" => Ok(Backend::Gpu),
        _ => Err(format!("unknown backend {s:?} (expected cpu or gpu)")),
    }
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

fn parse_formula(s: &str) -> Result<Formula, String> {
    s.parse().map_err(|e: crate::pixel::ParseFormulaError| e.to_string())
}

fn parse_workgroup(s: &str) -> Result<WorkgroupSize, String> {
    s.parse().map_err(|e: crate::gpu::ParseWorkgroupError| e.to_string())
}

/// A warning line for figures from a debug build, which are meaningless.
fn build_warning() -> Option<&'static str> {
    cfg!(debug_assertions)
        .then_some("warning: this is a debug build; its timings mean nothing (use cargo run --release)")
}
