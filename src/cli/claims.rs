//! `graylab claims`: the GPU tutorial's claims, each tested on this machine
//! ([`crate::engine::claims`]): one block per claim with its measurements, the verdict and why,
//! or one JSON document with `--json`. Progress goes to a terminal's stderr only.

use crate::engine::claims::claims_parts;
use crate::engine::estimate::Task;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;

use super::out::{err_part, errln, outln};
use crate::engine::Engine;
use crate::engine::claims::{ClaimsOptions, ClaimsReport, claims_bytes, run_claims};
use crate::system::memory_budget::budget;

/// `graylab claims`.
#[derive(Debug, Args)]
pub struct ClaimsArgs {
    /// Print one JSON document: every claim with its measurements, verdict and reason.
    #[arg(long)]
    pub json: bool,
    /// The same experiments with a smaller sampling budget: faster, more verdicts inconclusive.
    #[arg(long)]
    pub quick: bool,
    /// Also write each claim's last run of every side it runs whole as a Chrome trace (open it
    /// in ui.perfetto.dev): claim 6's cold run shows its device, pipeline and buffer setup.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,
    /// Replace the --trace file if it exists.
    #[arg(long, requires = "trace")]
    pub overwrite: bool,
}

pub(super) fn run(args: &ClaimsArgs) -> anyhow::Result<ExitCode> {
    let outputs: Vec<_> = super::trace::output(args.trace.as_deref()).into_iter().collect();
    super::args::check_outputs(&outputs, &[], &[], args.overwrite)?;
    let engine = Engine::new();
    // Every claim needs the GPU: without one, refused before anything is measured.
    let gpu = engine.gpu_host_memory().context("cannot test the claims, which need a GPU")?;
    let _memory = budget().try_reserve(claims_bytes(gpu)).context("cannot test the claims")?;
    let terminal = !args.json && std::io::stderr().is_terminal();
    let started = Instant::now();
    // Ctrl-C stops the run gently: the claims finished are printed (or written as JSON), the
    // rest marked not run, as the app's Stop does.
    let _gentle =
        crate::system::signals::stop_gently("stopping: the claims finished are kept, the rest not run");
    let cancel = Some(crate::system::signals::stop_asked());
    let options = ClaimsOptions { quick: args.quick, cancel, keep_runs: args.trace.is_some() };
    let task = if args.quick { Task::ClaimsQuick } else { Task::ClaimsAll };
    super::pace::measure_unknown_ceilings(&engine, true, !terminal);
    let pace = super::pace::JobPace::read(&engine, true, task, |_| claims_parts(args.quick));
    let estimate = pace.estimate();
    // On stderr whatever it is (as the sweep's), with the time so far against it on a terminal.
    errln!("estimate: {}", estimate.sentence());
    let mut progress = |done: usize, total: usize, what: &str| {
        if terminal {
            let (so_far, of) = (started.elapsed().as_secs_f64(), estimate.seconds);
            err_part!("\r\x1b[2K[{done}/{total}] {what}… ({so_far:.0} s of about {of:.0} s)");
        }
    };
    let report = run_claims(&engine, &options, &mut progress).context("cannot test the claims")?;
    // A stopped run is no pace to learn from.
    let took_s = pace.took_s();
    if !report.stopped {
        pace.finished(&engine);
    }
    if terminal {
        errln!("\r\x1b[2Kdone in {:.1} s", started.elapsed().as_secs_f64());
    }
    // A trace that cannot be written loses the trace, not the verdicts: they are printed first.
    let trace = args.trace.as_ref().map(|path| {
        let runs: Vec<(String, &crate::engine::RunReport)> =
            report.runs.iter().map(|(n, r)| (n.clone(), r)).collect();
        let title = format!("graylab claims{}", if args.quick { " --quick" } else { "" });
        super::trace::write(path, args.overwrite, &title, &runs)
    });
    if args.json {
        let timed = crate::engine::estimate::Timed::new(&report, estimate, None);
        outln!("{}", crate::io::stamped_json(crate::io::ResultKind::Claims, &engine.provenance(), &timed)?);
    } else {
        print_blocks(&report);
        let known = engine.cached_gpu_ceilings();
        outln!("\n{}", super::info::held_against_lines(&engine, known.as_ref()).join("\n"));
    }
    if report.stopped {
        let done =
            report.claims.iter().filter(|c| c.verdict != crate::engine::claims::Verdict::NotRun).count();
        errln!(
            "stopped after {took_s:.1} s: {done} of {} claims finished, the rest not run",
            report.claims.len()
        );
        if let Some(Err(e)) = &trace {
            errln!("error: {}", super::describe(e.as_ref()));
        }
        return Ok(ExitCode::from(crate::system::signals::stop_status().unwrap_or(130)));
    }
    trace.transpose()?;
    Ok(ExitCode::SUCCESS)
}

fn print_blocks(report: &ClaimsReport) {
    let kind = if report.software_adapter {
        "a software adapter: the \"GPU\" is this CPU's own cores"
    } else {
        "a GPU"
    };
    outln!(
        "graylab claims on {} ({kind}), {} CPU threads{}, {:.1} s",
        report.adapter,
        report.cpu_threads,
        if report.quick { ", quick set (the same experiments, a smaller sampling budget)" } else { "" },
        report.took_s
    );
    outln!(
        "Each verdict: the sides in turns until the 95% interval of the deciding ratio clears its threshold; within the noise it is \"inconclusive here\"."
    );
    for c in &report.claims {
        outln!();
        // A claim not run has no quote and no experiment: only its line.
        if c.experiment.is_empty() {
            outln!("{}. {}", c.id, c.claim);
        } else {
            outln!("{}. \"{}\"", c.id, c.claim);
            outln!("   experiment: {}", c.experiment);
        }
        let width = c.measurements.iter().map(|m| m.name.chars().count()).max().unwrap_or(0);
        for m in &c.measurements {
            // Sizes in KiB whole ("2452 KiB", not "2452.310 KiB"); times to the microsecond.
            let value = if m.unit == "KiB" {
                format!("{:.0}", m.value)
            } else if m.unit == "ms" || m.value.fract() != 0.0 {
                format!("{:.3}", m.value)
            } else {
                format!("{}", m.value)
            };
            let interval = match (m.ci_low, m.ci_high) {
                (Some(low), Some(high)) => format!("  95% CI {low:.3}\u{2013}{high:.3}"),
                _ => String::new(),
            };
            // A size or a count no clock measured says no clock.
            let clock = if m.clock == "none" { String::new() } else { format!(" ({})", m.clock) };
            outln!("   {:<width$}  {value:>10} {:<3}{clock}{interval}", m.name, m.unit);
        }
        outln!("   verdict: {}: {}", c.verdict, c.why);
        if let Some(busy) = c.busy.filter(crate::system::load::Busy::is_busy) {
            outln!("   busy: {} while this ran", busy.shares_text());
        }
    }
}
