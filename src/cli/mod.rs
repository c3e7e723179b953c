//! The headless command line: `graylab convert | bench | sweep | info | claims | compare`, and `graylab [PATH]` for the app.
//!
//! Arguments are parsed and validated here into typed engine settings, and every output path is
//! checked, before any work; this is the edge where errors become messages (with advice that
//! names the flags) and exit codes. Depends on [`crate::engine`].

mod arg_error;
mod args;
mod bench;
mod claims;
mod compare;
mod convert;
mod info;
mod out;
mod pace;
mod plan;
mod progress;
mod round_trip;
mod sweep;
mod trace;
mod workgroups;

use std::error::Error;
use std::io::Write as _;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use args::ConvertArgs;
pub use args::{DepthArg, MAX_THREADS};
pub use bench::BenchArgs;
pub use claims::ClaimsArgs;
pub use compare::CompareArgs;
pub use info::InfoArgs;
pub use sweep::SweepArgs;

use crate::engine::{EngineError, GpuError, causes};
use crate::io::{IoError, TruncatedAt};

/// Convert huge photos to grayscale on the GPU or the CPU, and see where the time goes.
#[derive(Debug, Parser)]
#[command(
    name = "graylab",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Logging: RUST_LOG=info (or debug, or wgpu_hal=warn,graylab=debug) shows more.\n\
                  Memory: images are refused before allocating when they would exceed the budget \
                  (3/4 of the smallest of available memory, the cgroup limit and RLIMIT_AS/RLIMIT_DATA); \
                  GRAYLAB_MEMORY_BUDGET=2GiB sets it."
)]
pub struct Cli {
    /// What to do; without a command the desktop app opens.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// An image to open in the desktop app.
    #[arg(value_parser = args::input_file)]
    pub path: Option<PathBuf>,
    /// Desktop app: start on this backend (cpu or gpu) instead of the saved one.
    #[arg(long, value_parser = args::backend())]
    pub backend: Option<crate::engine::Backend>,
    /// Desktop app: start with Continuous on (re-run the conversion as soon as a run ends).
    #[arg(long)]
    pub continuous: bool,
    /// Desktop app: write the interval between frames, in ms, one line per frame, to FILE.
    #[arg(long, value_name = "FILE")]
    pub frame_log: Option<PathBuf>,
    /// Desktop app: close the window after SECS seconds (for scripted runs).
    #[arg(long, value_name = "SECS", value_parser = args::secs)]
    pub quit_after: Option<f64>,
}

/// The headless commands.
/// Each command allows negative numbers, so that `--threads -1` reaches the value's own parser,
/// which says what range it takes (clap would take `-1` for a flag).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert image files to grayscale.
    #[command(allow_negative_numbers = true)]
    Convert(ConvertArgs),
    /// Measure each phase of a conversion over repeated runs.
    #[command(allow_negative_numbers = true)]
    Bench(BenchArgs),
    /// Measure CPU and GPU over a range of image sizes: where does the GPU start to win?
    ///
    /// With --work, over sizes x synthetic work levels too: the map of who wins, the frontier
    /// (the work level from which the GPU wins at each size) and the roofline data (--json).
    #[command(allow_negative_numbers = true)]
    Sweep(SweepArgs),
    /// Show the CPU, the build, the memory budget and every GPU adapter with the limits that matter here.
    Info(InfoArgs),
    /// Test the GPU tutorial's claims on this machine: measurements, a verdict and why, for each.
    #[command(allow_negative_numbers = true)]
    Claims(ClaimsArgs),
    /// Compare two results of one kind (bench, its round trips or workgroup race, sweep, claims
    /// or info JSON) figure by figure.
    ///
    /// Prints each figure that moved beyond the threshold with its ratio new/base and the range
    /// its intervals allow. Exit 0: nothing got slower; 3: something did; 1: an error, or no
    /// figure in common; 2: a usage error.
    #[command(allow_negative_numbers = true)]
    Compare(CompareArgs),
}

/// Options that contradict each other or need another option: the command line is wrong, not
/// the files, so the exit code is 2, as for the errors the argument parser finds.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The exit code for an error: 2 for a [`UsageError`], 1 for any other.
#[must_use]
pub fn exit_code(err: &anyhow::Error) -> std::process::ExitCode {
    // A setting this machine or this input cannot take, found after parsing: a usage error too.
    let usage = err.is::<UsageError>()
        || err.chain().any(|e| {
            matches!(causes::gpu_error(e), Some(GpuError::WorkgroupUnsupported { .. }))
                || matches!(e.downcast_ref::<EngineError>(), Some(EngineError::NothingToTime(_)))
        });
    if usage { std::process::ExitCode::from(2) } else { std::process::ExitCode::FAILURE }
}

/// The usage error for a first argument that is neither a command nor a file: a mistyped
/// command must not open the desktop app on a file that is not there (or give the parser's
/// puzzling "the subcommand 'a.jpg' cannot be used with '\[PATH\]'").
#[must_use]
pub fn not_a_command(first: &std::ffi::OsStr) -> Option<String> {
    let word = first.to_str()?;
    let names: Vec<String> =
        <Cli as clap::CommandFactory>::command().get_subcommands().map(|c| c.get_name().to_owned()).collect();
    let known = names.iter().any(|n| n == word) || word == "help";
    if word.starts_with('-') || known || std::path::Path::new(word).exists() {
        return None;
    }
    // A word that looks like a path (`photo.jpg`, `dir/x`) is a file that is not there.
    let pathlike = word.contains(['.', '/', '\\']);
    let near = names.iter().filter(|_| !pathlike).find(|n| {
        edits(n, word) <= 2 || (word.len() >= 3 && n.starts_with(word)) || word.starts_with(n.as_str())
    });
    Some(match near {
        Some(name) => format!("no command or file named '{word}' (did you mean '{name}'?)"),
        None => format!(
            "no command or file named '{word}' (commands: {}; graylab --help says more)",
            names.join(", ")
        ),
    })
}

/// The fewest single-letter insertions, deletions and changes from `a` to `b`.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// With `convert --json`, an error the argument parser found is also a JSON document on stdout,
/// `{"error": "…"}`, as errors found later before any work are; the parser tells it on stderr.
pub fn print_parse_error_as_json(err: &clap::Error) {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let json = args.get(1).is_some_and(|a| a == "convert") && args.iter().any(|a| a == "--json");
    if !json || !err.use_stderr() {
        return;
    }
    let rendered = err.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first);
    let json = serde_json::json!({ "error": message });
    // Best effort: the parser's own message still reaches stderr.
    let _ = writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&json).unwrap_or_default());
}

/// Runs a headless command; returns the process exit code.
pub fn run(command: Command) -> anyhow::Result<std::process::ExitCode> {
    let result = match command {
        Command::Convert(args) => convert::run(&args),
        Command::Bench(args) if args.passes.is_some() => round_trip::run(&args),
        Command::Bench(args) if args.fastest_workgroup => workgroups::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Info(args) => info::run(&args),
        Command::Claims(args) => claims::run(&args),
        Command::Compare(args) => compare::run(&args),
    };
    if let Some(bytes) = crate::system::memory::peak_resident_bytes() {
        log::debug!("peak resident memory: {bytes} bytes ({})", crate::system::units::human_bytes(bytes));
    }
    // A failure writing stdout (a full disk) fails the command, after its own error if any.
    let flushed = out::finish();
    let code = result?;
    flushed?;
    Ok(code)
}

/// Keeps GPU driver probing off stderr for a headless command: without a desktop session
/// (`XDG_RUNTIME_DIR` unset) Mesa's device-selection layer tries to reach a Wayland display and
/// prints "error: `XDG_RUNTIME_DIR` is invalid or not set" twice. graylab chooses its adapter
/// itself, so the layer is switched off (`NODEVICE_SELECT=1`) unless the user asked for a
/// device (`DRI_PRIME`, `MESA_VK_DEVICE_SELECT`) or set the switch.
///
/// # Safety
/// Sets an environment variable: call before any other thread exists.
pub unsafe fn quiet_driver_probing() {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let session = std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| PathBuf::from(d).is_dir());
    if !session && !set("NODEVICE_SELECT") && !set("DRI_PRIME") && !set("MESA_VK_DEVICE_SELECT") {
        // SAFETY: the caller guarantees that no other thread exists yet.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

/// The free space below which the GPU driver's shader cache is switched off.
const DRIVER_CACHE_LEAST_FREE_BYTES: u64 = 16 << 20;

/// Switches Mesa's shader cache off (`MESA_SHADER_CACHE_DISABLE=true`) where its folder's disk
/// is all but full: Mesa maps a sparse index file there and dies of SIGBUS when the disk cannot
/// back it (every GPU command and the app did, with no message). Left alone where the user set
/// the switch. Returns the warning to log once the logger is up, when it switched it off.
///
/// # Safety
/// Sets an environment variable: call before any other thread exists.
#[must_use]
pub unsafe fn driver_cache_off_on_a_full_disk() -> Option<String> {
    if std::env::var_os("MESA_SHADER_CACHE_DISABLE").is_some() {
        return None;
    }
    let var = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let folder = var("MESA_SHADER_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME"))
        .or_else(|| var("HOME").map(|h| h.join(".cache")))?;
    // The nearest folder that exists: Mesa creates the rest on the same disk.
    let existing = folder.ancestors().find(|p| p.is_dir())?;
    let free_bytes = free_bytes(existing)?;
    if free_bytes >= DRIVER_CACHE_LEAST_FREE_BYTES {
        return None;
    }
    // SAFETY: the caller guarantees that no other thread exists yet.
    unsafe { std::env::set_var("MESA_SHADER_CACHE_DISABLE", "true") };
    Some(format!(
        "the cache folder's disk has {} free: Mesa's GPU shader cache is off for this run \
         (free some space on it: {})",
        crate::system::units::human_bytes(free_bytes),
        existing.display()
    ))
}

/// The bytes free to this user on the disk of `folder`.
#[cfg(unix)]
fn free_bytes(folder: &std::path::Path) -> Option<u64> {
    let s = rustix::fs::statvfs(folder).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// The bytes free on the disk of `folder`: not known here.
#[cfg(not(unix))]
fn free_bytes(_folder: &std::path::Path) -> Option<u64> {
    None
}

/// An error and its causes on one line, each cause once, then advice naming the flags that help
/// (`convert`'s, where the error was `convert`'s).
#[must_use]
pub fn describe(err: &(dyn Error + 'static)) -> String {
    describe_for(err, true)
}

/// [`describe`] for a command that takes `--allow-truncated` (`convert`) or not (`bench`,
/// `sweep --from-image`: their advice names `convert`'s flag).
#[must_use]
pub fn describe_for(err: &(dyn Error + 'static), takes_allow_truncated: bool) -> String {
    let text = causes::one_line(err);
    // A message that already names the flag (a lower layer's advice) needs no repeat.
    let flag = |hint: &str| hint.split_whitespace().find(|w| w.starts_with("--")).map(str::to_owned);
    match advice(err, takes_allow_truncated).filter(|h| flag(h).is_none_or(|f| !text.contains(&f))) {
        Some(hint) => format!("{text} ({hint})"),
        None => text,
    }
}

/// What the user can do about an error, in CLI terms.
fn advice(err: &(dyn Error + 'static), takes_allow_truncated: bool) -> Option<&'static str> {
    if causes::chain(err).any(|e| matches!(causes::gpu_error(e), Some(GpuError::NoAdapterNamed { .. }))) {
        return Some("unset WGPU_ADAPTER_NAME, or set it to a part of one of those names");
    }
    for e in causes::chain(err) {
        match causes::io_error(e) {
            Some(IoError::Exists { .. }) => return Some("pass --overwrite to replace it"),
            Some(IoError::ReadOnly { .. }) => return Some("make it writable first, e.g. chmod u+w"),
            Some(IoError::OutputIsFolder { .. }) => return Some("use --out-dir for a folder"),
            Some(IoError::UnknownExportFormat { .. }) => return Some("or choose one with --format"),
            Some(IoError::Truncated {
                at: TruncatedAt::Row { .. } | TruncatedAt::Refinement | TruncatedAt::EarlyEnd { .. },
                ..
            }) => {
                return Some(if takes_allow_truncated {
                    "pass --allow-truncated to keep what is there"
                } else {
                    "graylab convert --allow-truncated keeps what is there, as an image to measure"
                });
            }
            Some(IoError::DamagedData { rows: Some(_), .. }) => {
                return Some(if takes_allow_truncated {
                    "pass --allow-truncated to keep it as libjpeg decodes it, those rows lost"
                } else {
                    "graylab convert --allow-truncated keeps it as libjpeg decodes it, those rows lost, as an \
                     image to measure"
                });
            }
            Some(IoError::TooLarge { .. } | IoError::FileTooLarge { .. }) => {
                return Some("free memory, or set GRAYLAB_MEMORY_BUDGET if the budget is wrong");
            }
            _ => {}
        }
        if matches!(e.downcast_ref::<EngineError>(), Some(EngineError::OpNeedsGray8 { .. })) {
            return Some("graylab convert --depth 8 makes an 8-bit gray file to run the op on");
        }
        if causes::no_gpu(e) {
            return Some(
                "install a Vulkan driver (e.g. mesa-vulkan-drivers), or use --backend cpu where the command has it",
            );
        }
        if matches!(causes::gpu_error(e), Some(GpuError::OutOfMemory(_) | GpuError::RowTooLarge { .. })) {
            return Some("--backend cpu converts it without the GPU's limits");
        }
    }
    None
}

/// A warning line for figures from a debug build, which are meaningless.
fn build_warning() -> Option<&'static str> {
    cfg!(debug_assertions)
        .then_some("warning: this is a debug build; its timings mean nothing (use cargo run --release)")
}

/// Prints the warnings a table of GPU timings opens with: a software adapter's, then a debug
/// build's.
fn print_timing_warnings(software_adapter: bool) {
    print_software_warning(software_adapter);
    if let Some(w) = build_warning() {
        out::errln!("{w}");
    }
}

/// Prints a software adapter's warning (`convert` says its debug build's at its end).
fn print_software_warning(software_adapter: bool) {
    // Warnings go to stderr, where `convert`'s do: stdout keeps the table alone.
    if software_adapter {
        out::errln!(
            "warning: the GPU is a software rasteriser (runs on the CPU): its timings say nothing about GPUs"
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_folders_free_space_is_read_from_its_disk() {
        let dir = std::env::temp_dir();
        let free = super::free_bytes(&dir);
        assert!(cfg!(not(unix)) || free.is_some_and(|b| b > 0), "{free:?} free in {}", dir.display());
        assert_eq!(super::free_bytes(std::path::Path::new("/no/such/folder/here")), None);
    }

    #[test]
    fn a_gpu_named_by_the_variable_but_absent_is_advised_by_the_variable() {
        use std::sync::Arc;

        use crate::engine::{EngineError, GpuError};
        let named = GpuError::no_adapter_named("radeon", ["llvmpipe"].into_iter());
        let err = anyhow::Error::new(EngineError::GpuUnavailable(Arc::new(named)));
        assert_eq!(
            super::advice(err.as_ref(), false),
            Some("unset WGPU_ADAPTER_NAME, or set it to a part of one of those names")
        );
        let none = anyhow::Error::new(EngineError::GpuUnavailable(Arc::new(GpuError::NoAdapter)));
        assert!(
            super::advice(none.as_ref(), false).is_some_and(|a| a.starts_with("install a Vulkan driver"))
        );
    }
}
