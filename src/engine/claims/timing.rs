//! Claims 3 and 4: the kernel's time for every workgroup shape, and one kernel timed three
//! ways (around the submit alone, around submit and wait, by GPU timestamps).

use crate::engine::claims::transfers::{median, median_of, resident_passes};
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::report::{ClockSource, Phase};
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, bench, synthetic_rgb};

/// Claim 3: every workgroup shape this adapter allows, on a 2 MP image (0.5 MP quick).
pub(super) fn workgroups(engine: &Engine, quick: bool) -> Result<ClaimResult, EngineError> {
    let ((w, h), runs) = if quick { ((866, 577), 1) } else { ((1732, 1155), 2) };
    let image = synthetic_rgb(w, h, 3);
    let mut times = Vec::new();
    let mut measurements = Vec::new();
    for workgroup in engine.gpu()?.valid_workgroups() {
        let settings = ConvertSettings { backend: Backend::Gpu, workgroup, ..ConvertSettings::default() };
        let r = bench(engine, &image, &settings, runs)?;
        if let Some((ns, clock)) = median(&r, Phase::Kernel) {
            measurements.push(Measurement::ms(format!("kernel, workgroup {workgroup}"), ns, &clock));
            times.push((workgroup.to_string(), ns));
        }
    }
    let (verdict, why) = rules::workgroup_matters(&times);
    Ok(ClaimResult {
        id: 3,
        claim: "CUDA thread/block configuration matters … optimal values depend on your GPU architecture."
            .to_owned(),
        experiment: format!(
            "the GPU kernel on a {w}x{h} image for every workgroup size and shape this adapter allows, {} each; the slowest against the fastest, and the tutorial's (16,16) and (32,32)",
            super::warm_runs(runs)
        ),
        measurements,
        verdict,
        why,
    })
}

/// Claim 4: one kernel on data kept on the GPU (4 MP, 1 MP quick), timed around its submits
/// alone (what a program that forgets to wait measures), around submit and wait, and by the
/// GPU's timestamps where the adapter has them.
pub(super) fn synchronise(engine: &Engine, quick: bool) -> Result<ClaimResult, EngineError> {
    let ((w, h), runs) = if quick { ((1224, 816), 3) } else { ((2449, 1633), 5) };
    let image = synthetic_rgb(w, h, 4);
    let passes = resident_passes(engine, &image, runs)?;
    let submit_only = median_of(&passes.iter().map(|p| p.submit_ns).collect::<Vec<_>>());
    let submit_wait = median_of(&passes.iter().map(|p| p.wall_ns).collect::<Vec<_>>());
    let settings = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    let r = bench(engine, &image, &settings, runs.min(3))?;
    let timestamps = r
        .phases
        .iter()
        .find(|p| p.phase == Phase::Kernel && p.source == ClockSource::GpuTimestamp)
        .map(|p| p.stats.median_ns as f64);
    let mut measurements = vec![
        Measurement::ms("submit only, no wait", submit_only, "cpu-clock"),
        Measurement::ms("submit and wait", submit_wait, "cpu-clock"),
    ];
    if let Some(ns) = timestamps {
        measurements.push(Measurement::ms("GPU timestamps", ns, "gpu-timestamp"));
    }
    let (verdict, mut why) = rules::synchronise_before_timing(submit_only, submit_wait, timestamps);
    if timestamps.is_none() {
        why.push_str("; this adapter has no usable timestamps");
    }
    Ok(ClaimResult {
        id: 4,
        claim: "GPU operations are asynchronous. Always call cuda.synchronize() before measuring time."
            .to_owned(),
        experiment: format!(
            "the kernel over a {w}x{h} image kept on the GPU, {runs} runs: the CPU clock around the submit alone, around submit and wait, and the GPU's own timestamps"
        ),
        measurements,
        verdict,
        why,
    })
}
