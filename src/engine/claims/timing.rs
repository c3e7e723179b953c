//! Claims 3 and 4: the kernel's time for every workgroup shape (all shapes in turns), and one
//! kernel timed three ways (around the submit alone, around submit and wait, by GPU timestamps).

use crate::engine::claims::sampled::{Sampling, gpu, median};
use crate::engine::claims::transfers::resident_rounds;
use crate::engine::claims::{ClaimResult, Measurement, rules};
use crate::engine::sweep::workgroups::{Goal, ShapeTime, race};
use crate::engine::{Engine, EngineError, synthetic_rgb};
use crate::gpu::ResidentPass;
use crate::system::clock::{Clock, THREAD_CPU_LABEL};

/// Claim 3's image: 1 MP.
pub(super) const WORKGROUP_IMAGE: (u32, u32) = (1224, 816);

/// Claim 3: every workgroup shape this adapter allows, in turns, on a 1 MP image: the engine's
/// race ([`crate::engine::sweep::workgroups`]), sampled until the slowest against the fastest is decided.
pub(super) fn workgroups(engine: &Engine, plan: &Sampling<'_>) -> Result<ClaimResult, EngineError> {
    let (w, h) = WORKGROUP_IMAGE;
    let image = synthetic_rgb(w, h, 3);
    let goal = Goal::Spread(rules::WORKGROUP_MATTERS_RATIO);
    let r = race(engine, &image, &gpu(), goal, &plan.budget, plan.cancel, &mut |_| {})?;
    let times: Vec<(String, f64)> =
        r.shapes.iter().map(|s| (s.workgroup.to_string(), median(&s.samples_ns))).collect();
    let kernel = |s: &ShapeTime| format!("kernel, workgroup {}", s.workgroup);
    let measurements =
        r.shapes.iter().map(|s| Measurement::ms_of(kernel(s), &s.samples_ns, s.clock.label())).collect();
    // One name whichever shapes they are (the sentence names them): `compare` keys a ratio by
    // its name, and the slowest and fastest shapes change from run to run.
    let statistic = "slowest shape / fastest shape";
    let ratio = r.slowest.map(|s| r.over_fastest(s)).unwrap_or_default();
    let e = plan.evidence(statistic, &ratio, rules::WORKGROUP_MATTERS_RATIO, r.stop);
    let (verdict, why) = rules::workgroup_matters(&times, &e);
    Ok(ClaimResult::new(
        (3, "CUDA thread/block configuration matters … optimal values depend on your GPU architecture."),
        format!(
            "the GPU kernel on a {w}x{h} image for every workgroup size and shape this adapter allows, all in turns, {} rounds; the slowest against the fastest, and the tutorial's (16,16) and (32,32)",
            r.rounds
        ),
        measurements,
        (verdict, why),
        vec![e],
    ))
}

/// Claim 4's image: 4 MP.
pub(super) const SYNC_IMAGE: (u32, u32) = (2449, 1633);

/// Claim 4: one kernel on data kept on the GPU, timed pass by pass around its submits alone
/// (forgetting to wait), around submit and wait, and by the GPU's timestamps where the adapter
/// takes them in place.
pub(super) fn synchronise(engine: &Engine, plan: &Sampling<'_>) -> Result<ClaimResult, EngineError> {
    let (w, h) = SYNC_IMAGE;
    let image = synthetic_rgb(w, h, 4);
    // On a software adapter the submits' own CPU time, not the clock around them: there the
    // submitting thread may wait for a core the "GPU" holds ([`rules::synchronise_before_timing`]).
    let software = engine.gpu()?.is_software();
    let own = |p: &ResidentPass| if software { p.submit_cpu_ns.unwrap_or(p.submit_ns) } else { p.submit_ns };
    let wait_over_own = |passes: &[ResidentPass]| {
        passes.iter().map(|p| p.wall_ns as f64 / (own(p) as f64).max(1.0)).collect::<Vec<_>>()
    };
    let sampled = resident_rounds(engine, plan, &image, |p| {
        plan.settled(&wait_over_own(p), rules::FORGOT_TO_WAIT_RATIO)
    })?;
    let passes = &sampled.rounds;
    let submit_only: Vec<f64> = passes.iter().map(|p| p.submit_ns as f64).collect();
    let submit_wait: Vec<f64> = passes.iter().map(|p| p.wall_ns as f64).collect();
    let own_cpu: Vec<f64> =
        passes.iter().filter_map(|p| p.submit_cpu_ns.filter(|_| software)).map(|ns| ns as f64).collect();
    let statistic = if own_cpu.is_empty() {
        "submit and wait / submit only"
    } else {
        "submit and wait / the submits' CPU time"
    };
    let e = plan.evidence(statistic, &wait_over_own(passes), rules::FORGOT_TO_WAIT_RATIO, sampled.stop);
    // The same passes' own time on the GPU, where every one was stamped.
    let stamped: Option<Vec<f64>> = passes.iter().map(|p| p.kernel_ns.map(|ns| ns as f64)).collect();
    let stamped = stamped.filter(|s| !s.is_empty());
    let timestamps = stamped.as_deref().map(median);
    let mut measurements = vec![
        Measurement::ms_of("submit only, no wait", &submit_only, "cpu-clock"),
        Measurement::ms_of("submit and wait", &submit_wait, "cpu-clock"),
    ];
    if !own_cpu.is_empty() {
        measurements.insert(1, Measurement::ms_of("the submits' own CPU time", &own_cpu, THREAD_CPU_LABEL));
    }
    measurements
        .extend(stamped.map(|ns| Measurement::ms_of("GPU timestamps", &ns, Clock::GpuTimestamp.label())));
    let own_median = (!own_cpu.is_empty()).then(|| median(&own_cpu));
    let (verdict, mut why) = rules::synchronise_before_timing(
        &e,
        (median(&submit_only), own_median),
        median(&submit_wait),
        timestamps,
    );
    if timestamps.is_none() {
        why.push_str("; this adapter has no usable timestamps");
    }
    Ok(ClaimResult::new(
        (4, "GPU operations are asynchronous. Always call cuda.synchronize() before measuring time."),
        format!(
            "the kernel over a {w}x{h} image kept on the GPU, {} passes: the CPU clock around the submit alone and around submit and wait, pass by pass{}, and the GPU's own timestamps",
            passes.len(),
            if own_cpu.is_empty() { "" } else { ", the CPU time the thread ran inside the submits" }
        ),
        measurements,
        (verdict, why),
        vec![e],
    ))
}
