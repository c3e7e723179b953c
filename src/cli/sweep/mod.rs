//! `graylab sweep`: when is the GPU worth it on this machine? Over image sizes, with `--work`
//! over sizes x synthetic work levels, with `--radii` over sizes x the blur's radius (the grid,
//! printed by `grid.rs`, the table by `table.rs`); `--op` runs one op on every cell. Ctrl-C
//! stops it gently: the points finished are printed and written, the rest marked not run.

mod clocks;
mod grid;
mod table;

use crate::cli::out::{errln, outln};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use crate::cli::UsageError;
use crate::cli::arg_error::ArgError;
use crate::engine::sweep::{
    CellOps, DEFAULT_SIZES_MP, DEFAULT_WORK_SIZES_MP, SweepOptions, SweepResult, calibrate, size_for,
    sweep_planned, to_csv,
};
use crate::engine::{Engine, WorkgroupSize, sweep_bytes};
use crate::io::{DecodeOptions, WriteCause};
use crate::pixel::Formula;
use crate::system::memory_budget::budget;

/// The largest size `--sizes` accepts, in megapixels (the memory budget usually refuses less).
pub const MAX_SIZE_MP: f64 = 100_000.0;

/// Arguments of `graylab sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Image sizes in megapixels, comma separated (each above 0, at most 100000) [default:
    /// 0.25,0.5,1,2,4,8,16,33,64,128; with --work: 0.25,1,2].
    #[arg(long, value_delimiter = ',', value_parser = parse_megapixels)]
    pub sizes: Vec<f64>,
    /// Work levels, comma separated: synthetic rounds per pixel, each size measured at each level
    /// (`--work` alone: 0,16,256,4096).
    ///
    /// The work is synthetic, like mixbench's kernel: after the formula each pixel runs K rounds
    /// of a 3-operation integer hash (shift, xor, multiply), a knob on arithmetic intensity; the
    /// image stays the exact grayscale. The map printed is the GPU's speed-up over the best CPU
    /// series at each size and level, end to end (upload, kernel, download) and with the data
    /// kept on the GPU; the frontier is the level from which the GPU wins at each size (measured,
    /// and modelled from this machine's ceilings). Cells whose one run takes long get fewer warm
    /// runs, and above 0 rounds the one-thread CPU series is skipped; the estimate printed
    /// first says which.
    #[arg(long, value_name = "K,K,…", value_delimiter = ',', num_args = 0..=1,
          default_missing_values = ["0", "16", "256", "4096"], value_parser = parse_work_level)]
    pub work: Vec<u32>,
    /// The op after the grayscale on every cell: none, blur:R (R = 1..64) or dither, timed with
    /// the kernel (each CPU series is its kernel plus its op; the GPU end to end includes the op
    /// stage's copies).
    #[arg(long, default_value = "none", value_parser = crate::cli::args::op)]
    pub op: crate::pixel::Op,
    /// Blur radii, comma separated (each 1..64): the grid's second axis is the blur's radius
    /// instead of the work rounds, each cell running `--op blur:R` at 0 rounds [sizes default:
    /// 0.25,1,2].
    ///
    /// The map is then the GPU's speed-up over the best CPU at each size and radius, the
    /// frontier the radius from which the GPU wins, and the roofline has each radius at its own
    /// intensity (the blur does 4 (2R + 1) integer operations per pixel). Not with --work above
    /// 0, nor with --op.
    #[arg(long, value_name = "R,R,…", value_delimiter = ',', value_parser = parse_radius)]
    pub radii: Vec<u32>,
    /// With --work: run the rounds only for pixels whose gray value is odd (a branch that
    /// diverges within a GPU workgroup).
    #[arg(long)]
    pub divergent: bool,
    /// Resize this photo to each size instead of using synthetic images.
    #[arg(long, value_parser = crate::cli::args::input_file)]
    pub from_image: Option<PathBuf>,
    /// Warm runs per size and series (after one cold run).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub runs: u32,
    /// GPU workgroup size.
    #[arg(long, default_value = "256", value_parser = crate::cli::args::workgroup, conflicts_with = "cpu_only")]
    pub workgroup: WorkgroupSize,
    /// The gray formula: bt601 (the default), bt709 or linear; stored-luma (a JPEG's own luma
    /// plane) is refused, as the sweep's images are no JPEGs.
    #[arg(long, default_value = "bt601", value_parser = crate::cli::args::timed_formula())]
    pub formula: Formula,
    /// Measure the CPU only (no GPU series).
    #[arg(long)]
    pub cpu_only: bool,
    /// Write the whole result as JSON to this file (`-` for standard output).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write one CSV row per size and series to this file (`-` for standard output).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Also write each point's runs (each series' cold run and its last warm run) as a Chrome
    /// trace, a track per lane: open it in ui.perfetto.dev.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Replace existing JSON/CSV/trace files.
    #[arg(long)]
    pub overwrite: bool,
}

fn parse_megapixels(s: &str) -> Result<f64, ArgError> {
    match s.trim().parse::<f64>() {
        Ok(mp) if mp.is_finite() && mp > 0.0 && mp <= MAX_SIZE_MP => Ok(mp),
        _ => Err(ArgError::Megapixels { given: s.to_owned(), max_mp: MAX_SIZE_MP }),
    }
}

/// Parses one work level: rounds per pixel, as `convert --work` accepts them.
fn parse_work_level(s: &str) -> Result<u32, ArgError> {
    match s.trim().parse::<u32>() {
        Ok(k) if k <= crate::cli::args::MAX_WORK_ROUNDS => Ok(k),
        _ => Err(ArgError::WorkLevel { given: s.to_owned(), max: crate::cli::args::MAX_WORK_ROUNDS }),
    }
}

/// Parses one blur radius of `--radii`, as `--op blur:R` accepts it.
fn parse_radius(s: &str) -> Result<u32, ArgError> {
    let given = s.trim();
    // Only digits: "dither" or "none" would be ops, not radii.
    match given.bytes().all(|b| b.is_ascii_digit()).then(|| crate::cli::args::op(&format!("blur:{given}"))) {
        Some(Ok(crate::pixel::Op::Blur { radius })) => Ok(radius),
        _ => Err(ArgError::Radius { given: given.to_owned() }),
    }
}

impl SweepArgs {
    /// What each cell runs: the blur's radius as the second axis (`--radii`, refused beside
    /// work above 0 or an op), else `--op` on every cell; never stored luma, which no cell runs.
    fn cell_ops(&self) -> anyhow::Result<CellOps> {
        if self.formula == Formula::StoredLuma {
            // The cells would run bt601 under its name: refused, as `bench` refuses it.
            anyhow::bail!(UsageError(
                "nothing to time: a JPEG's stored luma is decoded alone, so no conversion runs on it, and the \
                 sweep's images (synthetic, or resized from --from-image) are no JPEGs (time `graylab convert \
                 --formula stored-luma` as a whole, or sweep a colour formula)"
                    .to_owned()
            ));
        }
        if self.divergent && !self.work.iter().any(|k| *k > 0) {
            anyhow::bail!(UsageError(crate::cli::args::DIVERGENT_WITHOUT_WORK.to_owned()));
        }
        if self.radii.is_empty() {
            return Ok(CellOps { op: self.op, blur_radii: Vec::new() });
        }
        let mut levels = self.work.clone();
        levels.sort_unstable();
        levels.dedup();
        if levels.len() > 1 || levels.first().is_some_and(|k| *k > 0) {
            anyhow::bail!(UsageError(format!(
                "--radii makes the blur's radius the grid's second axis (each cell at 0 work rounds), so it \
                 cannot go with --work {}: sweep the work rounds and the blur radius in two runs",
                levels.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
            )));
        }
        if !self.op.is_none() {
            anyhow::bail!(UsageError(format!(
                "--radii runs blur:R on every cell, so it cannot go with --op {}: drop one of them",
                self.op
            )));
        }
        Ok(CellOps::blur_radii(self.radii.clone()))
    }

    /// The sizes measured: those given, else the grid's or the plain sweep's defaults.
    fn sizes_mp(&self) -> Vec<f64> {
        let grid = self.work.iter().any(|k| *k > 0) || !self.radii.is_empty();
        match (self.sizes.is_empty(), grid) {
            (false, _) => self.sizes.clone(),
            (true, false) => DEFAULT_SIZES_MP.to_vec(),
            (true, true) => DEFAULT_WORK_SIZES_MP.to_vec(),
        }
    }
}

fn write_report(path: &Path, text: &str, overwrite: bool) -> anyhow::Result<()> {
    crate::io::write_atomically(path, overwrite, |out| {
        std::io::Write::write_all(out, text.as_bytes()).map_err(WriteCause::Os)
    })?;
    Ok(())
}

/// Checks the report paths before anything is measured: none over another, nor over the photo
/// measured (also through a link).
fn check_outputs<'a>(args: &'a SweepArgs) -> anyhow::Result<()> {
    use crate::cli::args::{Holds, OutputFile};
    if stdout(args.json.as_deref()) && stdout(args.csv.as_deref()) {
        anyhow::bail!(UsageError(
            "--json - and --csv - both name standard output: send one of them to a file".to_owned()
        ));
    }
    let file = |p: Option<&'a Path>| p.filter(|p| !stdout(Some(p)));
    let outputs: Vec<OutputFile<'_>> = [
        OutputFile::of("--json", file(args.json.as_deref()), Holds::Json),
        OutputFile::of("--csv", file(args.csv.as_deref()), Holds::Csv),
        crate::cli::trace::output(args.trace.as_deref()),
    ]
    .into_iter()
    .flatten()
    .collect();
    let inputs: Vec<&Path> = args.from_image.as_deref().into_iter().collect();
    crate::cli::args::check_outputs(&outputs, &inputs, &[], args.overwrite)
}

/// Whether a report's path is `-`, standard output.
fn stdout(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.as_os_str() == "-")
}

pub(super) fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let ops = args.cell_ops()?;
    check_outputs(args)?;
    let engine = Engine::new();
    let gpu = !args.cpu_only
        && match engine.gpu() {
            Ok(g) => g.check_workgroup(args.workgroup).map(|()| true)?,
            Err(e) => {
                errln!("note: no GPU adapter, measuring the CPU only ({e})");
                false
            }
        };
    let gpu_memory = if gpu { Some(engine.gpu_host_memory()?) } else { None };
    // The input, then every size against the memory budget (the largest decides), before the
    // ceilings are measured (seconds, where they are not cached): what cannot run is refused at
    // once. The sweep's own memory is reserved after them, and held to the end.
    let decode = |p: &PathBuf| {
        let decoded = crate::io::decode_file(p, &DecodeOptions::default())?;
        anyhow::Ok((p.display().to_string(), decoded.image, decoded.memory))
    };
    let source = args.from_image.as_ref().map(decode).transpose()?;
    let sizes_mp = args.sizes_mp();
    let largest = sizes_mp.iter().copied().fold(0.0, f64::max);
    let (w, h) = size_for(largest);
    let source_pixels = source.as_ref().map(|(_, i, _)| u64::from(i.width()) * u64::from(i.height()));
    let sweep_memory = || {
        budget()
            .try_reserve(sweep_bytes(u64::from(w) * u64::from(h), source_pixels, gpu_memory))
            .with_context(|| format!("cannot sweep up to {largest} MP ({w}x{h})"))
    };
    drop(sweep_memory()?);
    let known = if gpu { super::info::ceilings_for(&engine) } else { None };
    let _memory = sweep_memory()?;
    let options = SweepOptions {
        sizes_mp,
        runs: args.runs as usize,
        workgroup: args.workgroup,
        formula: args.formula,
        gpu,
        work_levels: if args.work.is_empty() { vec![0] } else { args.work.clone() },
        divergent: args.divergent,
        keep_runs: args.trace.is_some(),
        ops,
    };
    // A report on standard output is all that goes there.
    let quiet = stdout(args.json.as_deref()) || stdout(args.csv.as_deref());
    let grid = options.is_grid();
    crate::cli::pace::measure_unknown_ceilings(&engine, gpu, quiet);
    let mut pace =
        crate::cli::pace::JobPace::read(&engine, gpu, options.task(), |pace| options.parts_at(pace));
    // A grid is planned from a calibration measured first, and the plan said before it starts.
    if grid && !quiet {
        errln!("calibrating the grid's estimate…");
    }
    let calibration = grid.then(|| calibrate(&engine, &options)).transpose()?;
    // The plan prices its cells with this machine's pace: what it saw, its ceilings and the ops'
    // rates measured with them.
    let plan = options.plan(calibration.as_ref(), pace.pace());
    // The one estimator: a grid from its calibration (the whole job, the time the calibration
    // took included) until a grid ran to its end here, then (and a plain sweep always) from this
    // machine's pace kept in the cache folder, which has learned how long the comparisons take to
    // decide. The text says the figure the JSON keeps.
    let spent_s = pace.took_s();
    let estimate = plan.whole(spent_s).filter(|_| !pace.seen_before()).unwrap_or_else(|| pace.estimate());
    // From its estimate on, Ctrl-C stops the sweep gently: the points finished are printed and
    // written, the rest marked not run, as the app's Stop does (the claims stop so too).
    let _gentle =
        crate::system::signals::stop_gently("stopping: the points finished are kept, the rest not run");
    let stop = crate::system::signals::stop_asked();
    if !quiet {
        say_estimate(grid.then_some(&plan), pace.seen_before(), &estimate, spent_s);
        if let Some(op) = plan.op_sentence().filter(|_| !grid) {
            errln!("{op}");
        }
    }
    let mut progress = |i: usize, n: usize, mp: f64| {
        if i > 0 {
            crate::system::signals::hold_step_for_tests();
        }
        if stop.load(std::sync::atomic::Ordering::Acquire) {
            return false;
        }
        if !quiet {
            errln!("measuring {mp} MP{} ({} of {n})…", cell_text(plan.cells.get(i).filter(|_| grid)), i + 1);
        }
        true
    };
    let source_ref = source.as_ref().map(|(n, i, _)| (n.as_str(), i));
    let result = sweep_planned(&engine, &options, &plan, source_ref, &mut progress, Some(stop))?;
    let took_s = pace.took_s();
    // A stopped sweep is no pace to learn from.
    if !result.stopped {
        pace.learn_sweep(&result);
        pace.finished(&engine);
    }
    let mut failures = write_outputs(args, &engine, &result, (estimate, took_s))?.into_iter();
    if !quiet {
        table::print_table(&result);
        outln!("\n{}", super::info::held_against_lines(&engine, known.as_ref()).join("\n"));
    }
    if result.stopped {
        // Stopped: the exit status says so, and each output that could not be written is told.
        let (done, all) = (result.points.len(), result.points.len() + result.not_run.len());
        errln!("stopped after {took_s:.1} s: {done} of {all} points finished, the rest not run");
        for e in failures {
            errln!("error: {}", crate::cli::describe(e.as_ref()));
        }
        return Ok(ExitCode::from(crate::system::signals::stop_status().unwrap_or(130)));
    }
    let first = failures.next();
    for e in failures {
        errln!("error: {}", crate::cli::describe(e.as_ref()));
    }
    first.map_or(Ok(ExitCode::SUCCESS), Err)
}

/// Writes every output `args` asks for (the JSON, timed by `estimate` and `took_s`, and the CSV,
/// to a file or standard output; the trace), each even when another could not be (a full disk):
/// the measured sweep is kept wherever it can be. The failures, in order: the first fails the
/// command, the others are told.
fn write_outputs(
    args: &SweepArgs,
    engine: &Engine,
    result: &SweepResult,
    (estimate, took_s): (crate::engine::estimate::Estimate, f64),
) -> anyhow::Result<Vec<anyhow::Error>> {
    let mut written = Vec::new();
    if let Some(path) = &args.json {
        let timed = crate::engine::estimate::Timed::new(result, estimate, Some(took_s));
        let json = crate::io::stamped_json(crate::io::ResultKind::Sweep, &engine.provenance(), &timed)?;
        if stdout(Some(path)) {
            outln!("{json}");
        } else {
            written.push(write_report(path, &json, args.overwrite));
        }
    }
    if let Some(path) = &args.csv {
        if stdout(Some(path)) {
            outln!("{}", to_csv(result).trim_end());
        } else {
            written.push(write_report(path, &to_csv(result), args.overwrite));
        }
    }
    if let Some(path) = &args.trace {
        written.push(crate::cli::trace::write_sweep(path, args.overwrite, result));
    }
    Ok(written.into_iter().filter_map(Result::err).collect())
}

/// What a grid's cell runs, for its progress line: " at 16 rounds per pixel", with its op.
fn cell_text(cell: Option<&crate::engine::sweep::CellPlan>) -> String {
    match cell {
        Some(c) if c.op.is_none() => format!(" at {} rounds per pixel", c.work_rounds),
        Some(c) => format!(" at {} rounds per pixel, {}", c.work_rounds, c.op),
        None => String::new(),
    }
}

/// Says the job's estimate on stderr: a grid's from its calibration's plan (the whole job, the
/// `spent_s` seconds the calibration took included) until a grid ran here (`seen`), then the
/// pace's, which has learnt how long the comparisons take to decide, with the plan's warm runs.
fn say_estimate(
    grid: Option<&crate::engine::sweep::GridEstimate>,
    seen: bool,
    estimate: &crate::engine::estimate::Estimate,
    spent_s: f64,
) {
    match grid {
        Some(plan) if !seen => errln!("estimate: {}", plan.sentence(spent_s)),
        Some(plan) => {
            errln!("estimate: {}", estimate.sentence());
            if let Some(op) = plan.op_sentence() {
                errln!("{op}");
            }
            errln!("{}", plan.runs_sentence());
        }
        None => errln!("estimate: {}", estimate.sentence()),
    }
}
