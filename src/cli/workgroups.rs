//! `graylab bench --fastest-workgroup`: every workgroup shape the adapter allows raced on one
//! image in turns until the fastest is decided (or the budget is spent); a table of each shape's
//! median kernel time with its 95% interval and clock, and the verdict; or all of it as JSON.

use std::process::ExitCode;

use image::DynamicImage;

use super::bench::{BenchArgs, bench_image};
use super::out::{errln, outln};
use super::pace::JobPace;
use crate::engine::estimate::{Task, Timed};
use crate::engine::sampling::{Budget, Interval};
use crate::engine::sweep::{WorkgroupRace, race_parts, workgroups};
use crate::engine::{ConvertSettings, Engine, WorkgroupSize, bench_bytes};
use crate::system::units::ms;

/// The race as JSON: the image's size, the formula and the work it ran with, per shape its kernel
/// time's interval and clock, then the verdict (each shape named as `256` or `16x16`, or null).
fn race_json(
    image: &DynamicImage,
    label: &str,
    settings: &ConvertSettings,
    adapter: &str,
    software: bool,
    r: &WorkgroupRace,
) -> serde_json::Value {
    let shapes: Vec<serde_json::Value> = r
        .shapes
        .iter()
        .map(|s| {
            serde_json::json!({
                "workgroup": s.workgroup.to_string(),
                "kernel_ns": s.kernel_ns,
                "clock": s.clock,
            })
        })
        .collect();
    serde_json::json!({
        "image": label,
        "width": image.width(),
        "height": image.height(),
        "formula": settings.formula,
        "work": settings.work,
        "adapter": adapter,
        "software_adapter": software,
        "shapes": shapes,
        "fastest": r.fastest.map(|w| w.to_string()),
        "runner_up": r.runner_up.map(|w| w.to_string()),
        "slowest": r.slowest.map(|w| w.to_string()),
        "speed_up": r.speed_up,
        "over_slowest": r.over_slowest,
        "decided": r.decided,
        "tied": r.tied.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "stop": r.stop,
        "rounds": r.rounds,
        "took_ns": r.took_ns,
        "verdict": r.sentence(),
    })
}

/// `1.234 (1.200–1.300)`, or `-` without an interval.
fn interval_ms(i: Option<Interval>) -> (String, String) {
    i.map_or_else(
        || ("-".to_owned(), "too few rounds".to_owned()),
        |i| (ms(i.median as u64), format!("{}–{}", ms(i.ci_low as u64), ms(i.ci_high as u64))),
    )
}

/// Races the workgroup shapes on the image `args` name (or the synthetic one).
pub(super) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    // Each shape keeps its own output buffer on the host.
    let shapes = WorkgroupSize::CANDIDATES.len() as u64;
    let engine = if args.cpu_clock { Engine::on_cpu_clock()? } else { Engine::new() };
    let (image, label, _memory) = bench_image(args, |in_bytes, out_bytes, synthetic| {
        let gpu = engine.gpu_host_memory()?;
        Ok(bench_bytes(in_bytes, out_bytes.saturating_mul(shapes), synthetic, Some(gpu)))
    })?;
    let gpu = engine.gpu()?;
    engine.check_fits_gpu(&image)?;
    let (adapter, software) = (gpu.adapter_info().name.clone(), gpu.is_software());
    let settings =
        ConvertSettings { formula: args.formula, work: args.work.work(), ..ConvertSettings::default() };
    let budget = Budget::FULL;
    // What the race will take, said first, as every long job does; its wall time teaches the
    // pace the app's race is estimated from too.
    let megapixels = crate::system::units::megapixels(image.width(), image.height());
    let shapes = gpu.valid_workgroups().len();
    let pace = JobPace::read(&engine, true, Task::Workgroups, |_| {
        race_parts(shapes, &settings, megapixels, &budget)
    });
    let estimate = pace.estimate();
    // Before a race was seen here, when it decides is a guess: its budget bounds it.
    let at_most = pace.at_most_s().filter(|_| !pace.seen_before());
    errln!("estimate: {}", estimate.brief_within(at_most));
    let race = workgroups(&engine, &image, &settings, &budget, None, &mut |_| {})?;
    let took_s = pace.took_s();
    pace.finished(&engine);
    if args.json {
        let json = race_json(&image, &label, &settings, &adapter, software, &race);
        let timed = Timed::new(&json, estimate, Some(took_s));
        outln!(
            "{}",
            crate::io::stamped_json(crate::io::ResultKind::Workgroups, &engine.provenance(), &timed)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "graylab bench --fastest-workgroup: {label}, {}, every workgroup shape in turns after a warm-up \
         round, until the fastest is decided (at most {} rounds or {} s)",
        args.formula,
        budget.max_rounds,
        budget.max_time.as_secs()
    );
    outln!("GPU: {adapter}");
    super::print_timing_warnings(software);
    outln!();
    outln!("{:<8} {:>16} {:>24}  clock", "shape", "kernel median ms", "95% interval ms");
    for s in &race.shapes {
        let (median, interval) = interval_ms(s.kernel_ns);
        let mark = if Some(s.workgroup) == race.fastest {
            "  fastest"
        } else if race.tied.contains(&s.workgroup) {
            "  tied"
        } else {
            ""
        };
        outln!("{:<8} {median:>16} {interval:>24}  {}{mark}", s.workgroup.to_string(), s.clock);
    }
    outln!();
    outln!("verdict: {}", race.sentence());
    Ok(ExitCode::SUCCESS)
}
