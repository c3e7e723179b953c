//! `graylab info`: the CPU, the build, every GPU adapter, and with `--probe` this machine's
//! ceilings for every step of the GPU path and the compute ceilings of the CPU and the GPU
//! (measured, then cached per adapter and CPU).

use super::out::{errln, outln};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use crate::engine::ceilings::{Ceiling, LARGEST_PATH_BYTES, PathKind, TransferPath};
use crate::engine::ceilings::{
    ComputeCeilings, KnownCeilings, KnownCpuCompute, Origin, cached_ceilings, compute_ceilings_of,
    saved_cpu_compute,
};
use crate::engine::{
    ADAPTER_NAME_ENV, AdapterReport, Bandwidth, CpuCompute, Engine, GpuError, PROBE_HOLD_BYTES, SimdLevel,
    available_threads, list_adapters, simd_level, wanted_adapter_name,
};
use crate::system::clock::Clock;
use crate::system::memory_budget::budget;
use crate::system::units::{self, duration, gb, human_bytes};

/// Arguments of `graylab info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Measure this machine's ceilings now (host↔staging, GPU copies, the device's own copy
    /// bandwidth, the CPU's and the GPU's compute ceilings; a few seconds, 5 to 15 on two cores
    /// with a software adapter) and cache them for `bench`, `sweep` and the app.
    #[arg(long)]
    pub probe: bool,
}

#[derive(serde::Serialize)]
struct Info {
    version: &'static str,
    build: &'static str,
    cpu_threads: usize,
    cpu_simd: crate::engine::SimdLevel,
    memory_budget_bytes: u64,
    memory_budget_source: crate::system::memory::BudgetSource,
    adapters: Vec<crate::engine::AdapterReport>,
    /// The selected adapter's ceilings: measured now with `--probe`, else the cached ones.
    ceilings: Option<KnownCeilings>,
    /// The CPU's compute ceiling for the synthetic work: measured now with `--probe`, else the
    /// cached one.
    cpu_compute: Option<CpuCompute>,
    /// Where the CPU compute ceiling came from: measured now (`--probe`) or cached, when, and
    /// whether on a busy machine.
    cpu_compute_origin: Option<Origin>,
    /// Both compute ceilings in the engine's terms (the GPU part from `ceilings`).
    compute: Option<ComputeCeilings>,
    /// With `--probe`: every transfer path timed from 4 KiB up, with latency, bandwidth and n½.
    #[serde(skip_serializing_if = "Option::is_none")]
    transfer_paths: Option<Vec<TransferPath>>,
}

pub(super) fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let (memory_budget_bytes, memory_budget_source) = budget().capacity();
    let adapters = list_adapters();
    let (ceilings, cpu_known, transfer_paths) = if args.probe {
        let engine = Engine::new();
        // Each step said as it starts, so that seconds of measuring are not seconds of silence.
        errln!("measuring the CPU's compute ceiling…");
        let cpu = engine.known_cpu_compute_from(true)?;
        errln!(
            "timing every transfer path from 4 KiB up{}, the GPU's ceilings read from them, the compute \
             ceiling…",
            paths_estimate(&engine)
        );
        let (gpu, paths) =
            engine.gpu_ceilings_and_paths(LARGEST_PATH_BYTES).context("cannot measure the GPU ceilings")?;
        (Some(gpu), Some(cpu), Some(paths))
    } else {
        let cached = adapters.iter().find(|a| a.selected).and_then(|a| cached_ceilings(&a.ceilings_key()));
        (cached, saved_cpu_compute(), None)
    };
    let cpu_compute = cpu_known.map(|k| k.compute);
    let gpu_compute = ceilings.as_ref().and_then(|k| k.ceilings.compute);
    let compute = cpu_compute.map(|c| compute_ceilings_of(&c, gpu_compute.as_ref()));
    let info = Info {
        version: crate::system::host::VERSION,
        build: crate::system::host::BUILD,
        cpu_threads: available_threads(),
        cpu_simd: simd_level(),
        memory_budget_bytes,
        memory_budget_source,
        adapters,
        ceilings,
        cpu_compute,
        cpu_compute_origin: cpu_known.map(|k| k.origin),
        compute,
        transfer_paths,
    };
    if args.json {
        let selected = info.adapters.iter().find(|a| a.selected);
        let provenance = crate::io::Provenance::now(selected, available_threads());
        outln!("{}", crate::io::stamped_json(crate::io::ResultKind::Info, &provenance, &info)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!("graylab {} ({} build)", info.version, info.build);
    outln!("CPU: {}, kernel uses {:?}", units::count(info.cpu_threads, "thread"), info.cpu_simd);
    outln!(
        "memory budget for images: {} ({})",
        human_bytes(info.memory_budget_bytes),
        info.memory_budget_source
    );
    if let Some(w) = super::build_warning() {
        errln!("{w}");
    }
    if info.adapters.is_empty() {
        outln!(
            "GPU: no adapter found (install a Vulkan driver, e.g. mesa-vulkan-drivers); the CPU backend still works"
        );
    }
    for a in &info.adapters {
        outln!();
        outln!("{} {}", if a.selected { "* GPU (selected):" } else { "  GPU:" }, a.name);
        outln!("    backend {}, type {}, driver {}", a.backend, a.device_type, a.driver);
        if a.device_type == "Cpu" {
            outln!("    note: a software rasteriser on the CPU: its timings say nothing about GPUs");
        }
        outln!(
            "    max storage binding {} (one band), max buffer {}, max texture {} px",
            human_bytes(a.max_storage_buffer_binding_bytes),
            human_bytes(a.max_buffer_bytes),
            a.max_texture_dimension_2d
        );
        outln!(
            "    max {} invocations per workgroup, {} workgroups per dimension",
            a.max_invocations_per_workgroup,
            a.max_workgroups_per_dimension
        );
        let ts = match (a.timestamps_in_passes, a.timestamps_in_encoders) {
            (true, true) => "yes (compute passes and encoders: kernel and copies timed on the GPU)",
            (true, false) => "compute passes only (kernel on the GPU clock, copies on the CPU clock)",
            _ => "no (every GPU figure falls back to the CPU clock)",
        };
        outln!("    timestamps: {ts}");
        outln!("    workgroup sizes: {}", a.valid_workgroups.join(", "));
    }
    outln!("{}", adapter_choice(&info.adapters, wanted_adapter_name().as_deref()));
    match &info.ceilings {
        Some(k) => outln!("{}", ceilings_lines(k).join("\n")),
        None if !info.adapters.is_empty() => {
            outln!("ceilings: not measured yet on this adapter (graylab info --probe measures them)");
        }
        None => {}
    }
    outln!("{}", compute_lines(cpu_known.as_ref(), info.ceilings.as_ref()).join("\n"));
    // An adapter whose ceilings are not cached has no GPU compute figure yet either: said.
    if info.ceilings.is_none() && !info.adapters.is_empty() {
        outln!("    GPU compute: not measured yet (graylab info --probe measures it)");
    }
    if let Some(paths) = &info.transfer_paths {
        outln!("{}", paths_lines(paths).join("\n"));
    }
    Ok(ExitCode::SUCCESS)
}

/// Which adapter every command and the app use, and how to pick another (`wanted`: what
/// `WGPU_ADAPTER_NAME` asks for), after a blank line, and one more below; a blank line alone
/// without adapters.
fn adapter_choice(adapters: &[AdapterReport], wanted: Option<&str>) -> String {
    if adapters.is_empty() {
        return String::new();
    }
    format!("\n{}\n", adapter_choice_line(adapters, wanted))
}

/// The line of [`adapter_choice`].
fn adapter_choice_line(adapters: &[AdapterReport], wanted: Option<&str>) -> String {
    match (adapters.iter().find(|a| a.selected), wanted) {
        (Some(a), Some(w)) => format!(
            "adapter used: {} (its name contains {ADAPTER_NAME_ENV}={w}; unset the variable for the best here)",
            a.name
        ),
        (Some(a), None) => format!(
            "adapter used: {} (the best here: a real GPU before a software one); another: \
             {ADAPTER_NAME_ENV}=<part of its name> before any graylab command or the app",
            a.name
        ),
        (None, Some(w)) => {
            let listed: Vec<String> =
                adapters.iter().map(|a| GpuError::adapter_label(&a.name, &a.backend)).collect();
            let e = GpuError::no_adapter_named(w, listed.iter().map(String::as_str));
            format!("adapter used: none, every GPU command fails: {e}")
        }
        (None, None) => "adapter used: none".to_owned(),
    }
}

/// Each transfer path as latency, bandwidth, n½ and the fit's error, one line each.
fn paths_lines(paths: &[TransferPath]) -> Vec<String> {
    let sizes = |p: &TransferPath| {
        let bytes: Vec<u64> = p.points.iter().map(|q| q.bytes).collect();
        (bytes.first().copied().unwrap_or(0), bytes.last().copied().unwrap_or(0))
    };
    let (smallest, largest) = paths.first().map(sizes).unwrap_or_default();
    let mut lines = vec![
        String::new(),
        format!(
            "Transfer paths: each timed end to end (CPU clock, from the first call until the bytes are usable) \
             at {} to {}, fitted with t(n) = latency + n / bandwidth; n½ = latency × bandwidth, the size \
             that reaches half the bandwidth",
            human_bytes(smallest),
            human_bytes(largest)
        ),
        format!(
            "    {:<34} {:>10} {:>11} {:>11} {:>10}  {}",
            "path",
            "latency",
            "bandwidth",
            "n½",
            "fit error",
            format_args!("measured at {}", human_bytes(largest))
        ),
    ];
    for p in paths {
        // A path that stops short of the largest size (the copy kernel: one storage binding)
        // says where it was measured.
        let own_largest = if p.path == PathKind::Both { sizes(p).1 / 2 } else { sizes(p).1 };
        let at_largest = gb(p.largest_gb_per_s());
        let at_largest = if own_largest == largest {
            at_largest
        } else {
            format!("{at_largest} at {}", human_bytes(own_largest))
        };
        lines.push(match &p.fit {
            Some(f) => format!(
                "    {:<34} {:>10} {:>11} {:>11} {:>9.0}%  {}",
                p.path.label(),
                duration(f.latency_ns.round() as u64),
                gb(f.gb_per_s),
                human_bytes(f.n_half_bytes.round() as u64),
                f.rms_relative_error * 100.0,
                at_largest
            ),
            None => format!("    {:<34} no fit: its time did not grow with size", p.path.label()),
        });
    }
    lines.push(
        "    below n½ a transfer is mostly its fixed cost: an image that small loses on the GPU whatever the kernel; \
         a large fit error, or a rate at the largest size far from the fitted one, says two numbers do not \
         describe the path (caches, page faults on fresh memory)"
            .to_owned(),
    );
    lines
}

/// What timing every transfer path this GPU has takes, as the app's Transfer paths window
/// estimates it (the paths take the probe's time): " (about 9 s, …)", or nothing before this
/// machine's ceilings are known (a rough guess is 1 GB/s: 45 s where lavapipe's first probe took
/// 10).
fn paths_estimate(engine: &Engine) -> String {
    let gpu = engine.gpu().ok();
    let measured = |k: &&PathKind| {
        gpu.is_some_and(|g| k.measured_on(g.device().features(), g.adapter_info().device_type))
    };
    let count = PathKind::ALL.iter().filter(measured).count();
    let parts = crate::engine::estimate::transfer_paths_parts(LARGEST_PATH_BYTES, count);
    let task = crate::engine::estimate::Task::TransferPaths;
    let estimate = super::pace::JobPace::read(engine, true, task, |_| parts).estimate();
    let known = estimate.basis != crate::engine::estimate::Basis::Guess;
    if known { format!(" ({})", estimate.sentence()) } else { String::new() }
}

/// The compute ceilings for a `bench` with work: the CPU's (cached, else measured now, a few
/// tenths of a second), and with `gpu` the GPU's (with its cached ceilings, else measured alone);
/// a note on stderr when one cannot be had (the work's rate is then shown without its share).
pub(super) fn compute_for(engine: &Engine, gpu: bool) {
    let note = |what: &str, e: &crate::engine::EngineError| {
        errln!("note: the {what} compute ceiling could not be measured: {}", super::describe(e));
    };
    if let Err(e) = engine.cpu_compute(false) {
        note("CPU", &e);
    }
    if gpu && let Err(e) = engine.gpu_compute() {
        note("GPU", &e);
    }
}

/// Where the ceilings a sweep's or the claims' figures rest on came from, and how old they are:
/// the GPU ceilings' header (`known`, none without a GPU) and the compute lines under it.
pub(super) fn held_against_lines(engine: &Engine, known: Option<&KnownCeilings>) -> Vec<String> {
    let origin =
        known.map_or_else(|| "the compute ceiling:".to_owned(), |k| ceilings_lines(k).swap_remove(0));
    let compute = compute_lines(engine.held_known_cpu_compute().as_ref(), known);
    std::iter::once(origin).chain(compute.into_iter().skip(1)).collect()
}

/// The compute ceilings as text lines: "CPU compute: 16.4 Gop/s (2 threads, AVX2, CPU clock; …;
/// cached, measured 3 min ago)", "GPU compute: 1.7 Gop/s (llvmpipe, GPU timestamps)", or how to
/// measure them. The CPU's says where it came from, as the GPU ceilings' header does.
pub(super) fn compute_lines(cpu: Option<&KnownCpuCompute>, gpu: Option<&KnownCeilings>) -> Vec<String> {
    let not_yet =
        |what: &str| format!("    {what} compute: not measured yet (graylab info --probe measures it)");
    let cpu = match cpu {
        Some(k) => {
            let c = &k.compute;
            let gops = |ns: u64| c.ops as f64 / ns.max(1) as f64;
            // A figure a run raised is the run's, not the probe's: said, with the probe's beside.
            let raised = c.raised_from_best_ns.map_or_else(String::new, |ns| {
                format!(", raised to what a run of the work kernel did (the probe's best {:.1})", gops(ns))
            });
            format!(
                "    CPU compute: {:.1} Gop/s ({} threads, {}, CPU clock; the probe's median {:.1}, data in cache{raised}; {})",
                c.ops_per_s() / 1e9,
                c.threads,
                SimdLevel::name(c.simd),
                gops(c.median_ns),
                origin_words(&k.origin, "")
            )
        }
        None => not_yet("CPU"),
    };
    let mut lines =
        vec!["compute ceilings of the synthetic work (hash rounds, 3 integer ops each):".to_owned(), cpu];
    let Some(k) = gpu else { return lines };
    lines.push(match k.ceilings.compute {
        Some(g) => {
            let clock = match g.clock {
                Clock::GpuTimestamp => "GPU timestamps",
                Clock::CpuClock | Clock::Mixed => "CPU clock around a submit-and-wait",
            };
            format!(
                "    GPU compute: {:.1} Gop/s ({}, {clock}; median {:.1}, {} invocations x {} rounds)",
                g.ops_per_s() / 1e9,
                k.ceilings.adapter,
                g.ops as f64 / g.median_ns.max(1) as f64,
                g.invocations,
                g.rounds
            )
        }
        None => not_yet("GPU"),
    });
    lines
}

/// Where a ceiling came from, the GPU's and the CPU's alike: "measured now{took}" or "cached,
/// measured 3 min ago{took}", and ", on a busy machine: measured again once it is quiet" when so.
fn origin_words(o: &Origin, took: &str) -> String {
    let when = if o.measured_now {
        "measured now".to_owned()
    } else {
        format!("cached, measured {}", o.measured_ago())
    };
    let busy = if o.busy { ", on a busy machine: measured again once it is quiet" } else { "" };
    format!("{when}{took}{busy}")
}

/// The ceilings as text lines, with where they came from.
pub(super) fn ceilings_lines(k: &KnownCeilings) -> Vec<String> {
    let c = &k.ceilings;
    let origin = origin_words(&k.origin, &format!(" in {:.2} s", c.probe_ns as f64 / 1e9));
    let cache = match (&k.cache_path, &k.cache_error) {
        (Some(p), _) => format!("; {}", p.display()),
        // The cause is in the warning said when caching failed: not said twice.
        (None, Some(_)) => "; not cached (see the warning): the next run measures them again".to_owned(),
        (None, None) => String::new(),
    };
    let mib = c.host_to_staging.bytes as f64 / f64::from(1 << 20);
    let mut lines = vec![format!(
        "ceilings of {} ({origin}, {}, {mib:.0} MiB per step{cache}):",
        c.adapter,
        crate::system::units::count(c.host_threads, "host thread")
    )];
    let mut steps: Vec<(&str, &Bandwidth, &str)> =
        Ceiling::STEPS.iter().filter_map(|&s| Some((s.name(), s.step(c)?, s.what(c)))).collect();
    steps.push(("host memcpy", &c.host_memcpy, "reference: plain parallel memcpy, same threads"));
    lines.extend(steps.iter().map(|(name, b, what)| {
        format!(
            "    {name:<20} {:>12} (median {:>12})  {:<14} {what}",
            gb(b.gb_per_s()),
            gb(b.median_gb_per_s()),
            b.clock.label()
        )
    }));
    if let Some(k) = &c.plain_kernel {
        lines.push(format!(
            "    {:<20} {:>12} (median {:>12})  {:<14} graylab's grayscale kernel on data kept on the GPU, \
             read + write counted (what estimates price a kernel at)",
            "plain kernel",
            gb(k.gb_per_s()),
            gb(k.median_gb_per_s()),
            k.clock.label()
        ));
    }
    lines.push(format!(
        "    upload as a whole (host→staging→device): {}; download as a whole: {}",
        gb(c.host_to_device_gb_per_s()),
        gb(c.device_to_host_gb_per_s())
    ));
    lines.push(format!(
        "    submit-and-wait latency of a tiny copy: {:.3} ms (cpu-clock)",
        c.submit_latency_ns as f64 / 1e6
    ));
    if c.software_adapter {
        lines.push("    note: a software adapter: the \"GPU\" copies run on the CPU's cores".to_owned());
    }
    lines
}

/// The GPU's ceilings for `bench` and `sweep`: cached, else measured now (a note on stderr
/// says so) with their memory reserved from the budget; `None`, with a note, when they cannot
/// be had (the rates are then shown without percentages).
pub(super) fn ceilings_for(engine: &Engine) -> Option<KnownCeilings> {
    if let Some(k) = engine.cached_gpu_ceilings() {
        return Some(k);
    }
    let note = |why: String| errln!("note: {why}; phases are shown without their % of ceiling");
    let _memory = match budget().try_reserve(PROBE_HOLD_BYTES) {
        Ok(m) => m,
        Err(e) => {
            note(format!("no memory to measure this machine's ceilings now ({e})"));
            return None;
        }
    };
    errln!("measuring this machine's ceilings for this adapter (graylab info --probe measures them again)…");
    match engine.gpu_ceilings(false, None) {
        Ok(k) => Some(k),
        Err(e) => {
            note(format!("the ceilings could not be measured: {}", super::describe(&e)));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_ceilings_lines_say_where_the_cpu_figure_came_from() {
        let compute = CpuCompute {
            threads: 2,
            simd: SimdLevel::Avx2,
            ops: 2_000_000_000,
            best_ns: 100_000_000,
            median_ns: 110_000_000,
            clock: Clock::CpuClock,
            op_rates: None,
            raised_from_best_ns: None,
        };
        let now = crate::system::clock::unix_now_s();
        let origin = Origin { measured_now: true, measured_unix_s: now, busy: true };
        let probed = KnownCpuCompute { compute, origin };
        let lines = compute_lines(Some(&probed), None);
        assert!(
            lines[1].ends_with(
                "data in cache; measured now, on a busy machine: measured again once it is quiet)"
            ),
            "{lines:?}"
        );
        let origin = Origin { measured_now: false, measured_unix_s: now - 3 * 86_400, busy: false };
        let cached = KnownCpuCompute { origin, ..probed };
        let lines = compute_lines(Some(&cached), None);
        assert!(lines[1].ends_with("data in cache; cached, measured 3 days ago)"), "{lines:?}");
        assert!(lines[1].starts_with("    CPU compute: 20.0 Gop/s (2 threads"), "{lines:?}");
    }

    #[test]
    fn info_says_which_adapter_is_used_and_how_to_pick_another() {
        let report = |name: &str, selected| AdapterReport {
            name: name.to_owned(),
            backend: "vulkan".to_owned(),
            device_type: "Cpu".to_owned(),
            driver: String::new(),
            selected,
            max_storage_buffer_binding_bytes: 128 << 20,
            max_buffer_bytes: 1 << 31,
            max_texture_dimension_2d: 16_384,
            max_invocations_per_workgroup: 1024,
            max_workgroups_per_dimension: 65_535,
            timestamps_in_passes: true,
            timestamps_in_encoders: true,
            valid_workgroups: Vec::new(),
        };
        let here = [report("NVIDIA H200", true), report("llvmpipe (LLVM 15.0.6, 256 bits)", false)];
        assert_eq!(
            adapter_choice_line(&here, None),
            "adapter used: NVIDIA H200 (the best here: a real GPU before a software one); another: \
             WGPU_ADAPTER_NAME=<part of its name> before any graylab command or the app"
        );
        let picked = [report("NVIDIA H200", false), report("llvmpipe (LLVM 15.0.6, 256 bits)", true)];
        assert_eq!(
            adapter_choice_line(&picked, Some("llvm")),
            "adapter used: llvmpipe (LLVM 15.0.6, 256 bits) (its name contains WGPU_ADAPTER_NAME=llvm; \
             unset the variable for the best here)"
        );
        assert_eq!(adapter_choice(&here, None), format!("\n{}\n", adapter_choice_line(&here, None)));
        assert_eq!(adapter_choice(&[], Some("radeon")), "");
        let none = [report("NVIDIA H200", false)];
        assert_eq!(
            adapter_choice_line(&none, Some("radeon")),
            "adapter used: none, every GPU command fails: no GPU adapter's name contains \"radeon\" \
             (set by WGPU_ADAPTER_NAME); the adapters here: NVIDIA H200 on vulkan"
        );
    }

    #[test]
    fn ceilings_not_cached_say_so_without_repeating_the_warnings_cause() {
        let cause = "the output is a folder, not a file: /cache/graylab/ceilings-x.json";
        let k = KnownCeilings {
            ceilings: crate::engine::ceilings::example_ceilings(),
            origin: Origin {
                measured_now: true,
                measured_unix_s: crate::system::clock::unix_now_s(),
                busy: false,
            },
            cache_path: None,
            cache_error: Some(cause.to_owned()),
        };
        let header = &ceilings_lines(&k)[0];
        assert!(!header.contains(cause), "the warning said it: {header}");
        assert!(
            header.ends_with("not cached (see the warning): the next run measures them again):"),
            "{header}"
        );
    }
}
