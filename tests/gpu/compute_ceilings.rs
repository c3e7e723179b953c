//! The compute ceilings of the synthetic work: the GPU's rounds-only kernel runs and gives a
//! positive rate with its clock, the engine's `compute_ceilings` with and without a GPU, the
//! cache round trip with the compute fields (and old or hand-edited files without them), and
//! `info --probe` printing both compute lines. GPU tests skip visibly without an adapter (see
//! tests/common); no figure is asserted beyond "measured and positive".

use crate::common;
use graylab::system::clock::Clock;

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{graylab, text};
use graylab::engine::{Engine, available_threads};

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn the_gpu_compute_kernel_runs_and_gives_a_positive_rate_with_its_clock() {
    let Some(conv) = common::converter() else { return };
    let c = conv.measure_compute().expect("compute probe");
    assert!(c.rounds > 0 && c.invocations > 0, "{c:?}");
    assert_eq!(c.ops, c.invocations * u64::from(c.rounds) * 3, "3 ops per round");
    assert!(c.best_ns > 0 && c.median_ns >= c.best_ns, "{c:?}");
    assert!(c.ops_per_s() > 0.0 && c.ops_per_s().is_finite(), "{c:?}");
    if !conv.context().timestamps().passes {
        assert_eq!(c.clock, Clock::CpuClock, "no pass timestamps: the CPU clock");
    }
    // The whole probe carries it too.
    let all = conv.measure_ceilings(None).expect("probe");
    assert!(all.compute.is_some_and(|g| g.ops_per_s() > 0.0), "{all:?}");
}

#[test]
fn the_engine_gives_both_ceilings_and_the_cpu_one_without_a_gpu() {
    let c = Engine::cpu_only().without_ceiling_cache().compute_ceilings().expect("cpu");
    assert!(c.cpu_ops_per_s > 0.0 && c.cpu_threads == available_threads(), "{c:?}");
    assert_eq!((c.gpu_ops_per_s, c.gpu_clock), (None, None));
    if common::gpu().is_none() {
        return;
    }
    let engine = Engine::new().without_ceiling_cache();
    let c = engine.compute_ceilings().expect("both");
    assert!(c.gpu_ops_per_s.is_some_and(|r| r > 0.0), "{c:?}");
    assert!(matches!(c.gpu_clock, Some(Clock::GpuTimestamp | Clock::CpuClock)), "{c:?}");
    // Measured once per engine: asked again, the same figures.
    assert_eq!(engine.compute_ceilings().expect("again"), c);
}

/// The one file in `dir` whose name starts with `prefix`.
fn cache_file(dir: &Path, prefix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir.join("graylab"))
        .expect("cache folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().expect("one")
}

fn edit(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    f(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).expect("json")).expect("write");
}

#[test]
fn info_probe_prints_both_compute_ceilings_and_caches_them() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path();
    let o = graylab(&["info", "--probe"], cache);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let cpu_line = out.lines().find(|l| l.trim_start().starts_with("CPU compute: ")).expect(&out);
    assert!(
        cpu_line.contains(" Gop/s (") && cpu_line.contains("threads") && cpu_line.contains("CPU clock"),
        "{cpu_line}"
    );
    let gpu_line = out.lines().find(|l| l.trim_start().starts_with("GPU compute: ")).expect(&out);
    assert!(
        gpu_line.contains(" Gop/s (")
            && (gpu_line.contains("GPU timestamps") || gpu_line.contains("CPU clock")),
        "{gpu_line}"
    );

    // Read back from the caches, not measured again, in the JSON too.
    let info = json(&graylab(&["info", "--json"], cache));
    assert_eq!(info["ceilings"]["measured_now"], false, "{info}");
    let gpu = &info["ceilings"]["ceilings"]["compute"];
    assert!(gpu["best_ns"].as_u64().is_some_and(|v| v > 0), "{info}");
    assert!(info["cpu_compute"]["ops"].as_u64().is_some_and(|v| v > 0), "{info}");
    assert!(info["compute"]["cpu_ops_per_s"].as_f64().is_some_and(|v| v > 0.0), "{info}");
    assert!(info["compute"]["gpu_ops_per_s"].as_f64().is_some_and(|v| v > 0.0), "{info}");

    // A run with work is held against the ceiling of its backend.
    let bench = json(&graylab(
        &["bench", "--synthetic", "160x120", "--backend", "cpu", "--runs", "1", "--work", "64", "--json"],
        cache,
    ));
    let work = &bench["results"][0];
    assert!(work["compute_share"].as_f64().is_some_and(|s| s > 0.0), "{work}");
    // The cached ceiling, unless the run beat it (a ceiling measured while the tests beside this one
    // held the cores): then raised to what the run did.
    let (held, cached) =
        (work["compute_ceiling_ops_per_s"].as_f64(), info["compute"]["cpu_ops_per_s"].as_f64());
    let (held, cached) = (held.expect("held against a ceiling"), cached.expect("the cached ceiling"));
    let run = work["kernel_ops_per_s"].as_f64().expect("the run's rate");
    let raised = held > cached && (held - run).abs() <= run * 1e-3;
    assert!((held - cached).abs() <= cached * 1e-9 || raised, "held against {held}, cached {cached}: {work}");

    // An old GPU cache file without the compute ceiling still loads: the rest is kept.
    let gpu_file = cache_file(cache, "ceilings-");
    edit(&gpu_file, |v| {
        v["ceilings"].as_object_mut().expect("ceilings").remove("compute");
    });
    let info = json(&graylab(&["info", "--json"], cache));
    assert_eq!(info["ceilings"]["measured_now"], false, "{info}");
    assert!(info["ceilings"]["ceilings"]["compute"].is_null(), "{info}");
    assert!(info["compute"]["gpu_ops_per_s"].is_null(), "{info}");
    let out = text(&graylab(&["info"], cache));
    assert!(out.contains("GPU compute: not measured yet"), "{out}");

    // Hand-edited absurd figures count as absent: the GPU's alone, the CPU's file as a whole.
    edit(&gpu_file, |v| {
        v["ceilings"]["compute"] = gpu.clone();
        // 1e15 operations in 1 ns: 1e24 ops/s.
        v["ceilings"]["compute"]["ops"] = 1_000_000_000_000_000u64.into();
        v["ceilings"]["compute"]["best_ns"] = 1.into();
        v["ceilings"]["compute"]["median_ns"] = 1.into();
    });
    edit(&cache_file(cache, "compute-cpu-"), |v| {
        v["compute"]["ops"] = 1_000_000_000_000_000u64.into();
        v["compute"]["best_ns"] = 1.into();
    });
    let info = json(&graylab(&["info", "--json"], cache));
    assert_eq!(info["ceilings"]["measured_now"], false, "{info}");
    assert!(info["ceilings"]["ceilings"]["compute"].is_null(), "{info}");
    assert!(info["cpu_compute"].is_null() && info["compute"].is_null(), "{info}");
}

#[test]
fn a_cpu_compute_ceiling_measured_busy_is_measured_again_once_the_machine_is_quiet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path();
    // The machine's load is injected (GRAYLAB_BUSY), not made.
    let run = |busy: &str, args: &[&str]| {
        json(&common::graylab_cmd(cache).env("GRAYLAB_BUSY", busy).args(args).output().expect("run graylab"))
    };
    let sweep = ["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--json", "-"];
    let busy_sweep = run("1", &sweep);
    // The load is recorded (null when the sweep was shorter than the kernel's clock tick).
    assert!(busy_sweep.as_object().is_some_and(|o| o.contains_key("busy")), "{busy_sweep}");
    // Where the ceiling its figures are held against came from, as its text ends with.
    let origin = &busy_sweep["held_against"]["cpu_compute"];
    assert_eq!((&origin["measured_now"], &origin["busy"]), (&true.into(), &true.into()), "{busy_sweep}");
    assert!(busy_sweep["held_against"]["gpu"].is_null(), "a CPU-only sweep: {busy_sweep}");
    let file = cache_file(cache, "compute-cpu-");
    let read = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(&file).expect("the cache file")).expect("JSON")
    };
    let first = read();
    assert_eq!(first["busy"], true, "{first}");
    // Still busy: the cached one is used as it is.
    let info = run("1", &["info", "--json"]);
    assert!(info["cpu_compute"]["ops"].as_u64().is_some_and(|v| v > 0), "{info}");
    // Quiet: `info` shows it, as measured busy (before: "not measured yet", right after the
    // probe), and the next command that needs it measures again.
    let info = run("0", &["info", "--json"]);
    assert!(info["cpu_compute"]["ops"].as_u64().is_some_and(|v| v > 0), "{info}");
    assert_eq!(info["cpu_compute_origin"]["busy"], true, "{info}");
    // A conversion with work holds each file's run against the ceiling it does not measure: the
    // busy one is refused once (a load watch each time before: 200 ms a file), not once a file.
    for name in ["a.png", "b.png", "c.png"] {
        common::photo(32, 24).save(cache.join(name)).expect("an input");
    }
    let convert = common::graylab_cmd(cache)
        .env("GRAYLAB_BUSY", "0")
        .env("RUST_LOG", "info")
        .args(["convert", "a.png", "b.png", "c.png", "--out-dir", "gray", "--backend", "cpu", "--work", "16"])
        .output()
        .expect("run graylab");
    let log = String::from_utf8_lossy(&convert.stderr);
    assert!(convert.status.success(), "{log}");
    assert_eq!(log.matches("measured on a busy machine and this one is quiet now").count(), 1, "{log}");
    // The conversion measured it again, quiet: the next sweep reads that from the cache.
    let quiet_sweep = run("0", &sweep);
    let origin = &quiet_sweep["held_against"]["cpu_compute"];
    assert_eq!((&origin["measured_now"], &origin["busy"]), (&false.into(), &false.into()), "{quiet_sweep}");
    let again = read();
    assert_eq!(again["busy"], false, "{again}");
    assert_ne!(again["compute"], first["compute"], "measured again, not copied");
}

/// A bench whose runs beat the CPU's compute ceiling raises it to what they did, and says so
/// beside the share ("100%" of a ceiling raised by the run itself is no measurement of it).
#[test]
fn a_bench_that_raises_the_cpu_ceiling_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path();
    let sweep = graylab(&["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--json", "-"], cache);
    assert!(sweep.status.success(), "{}", text(&sweep));
    // A probe that read 10 Mop/s: plausible, and below what any run does.
    edit(&cache_file(cache, "compute-cpu-"), |v| {
        let ops = v["compute"]["ops"].as_u64().expect("ops");
        v["compute"]["best_ns"] = (ops * 100).into();
        v["compute"]["median_ns"] = (ops * 100).into();
    });
    let bench = graylab(
        &["bench", "--synthetic", "128x128", "--backend", "cpu", "--work", "16", "--runs", "2"],
        cache,
    );
    assert!(bench.status.success(), "{}", text(&bench));
    assert!(text(&bench).contains("raised now from 0.01: a run beat it"), "{}", text(&bench));
    // The next bench starts from the raised ceiling (a run may raise it a little more).
    let again = graylab(
        &["bench", "--synthetic", "128x128", "--backend", "cpu", "--work", "16", "--runs", "2"],
        cache,
    );
    assert!(again.status.success() && !text(&again).contains("from 0.01"), "{}", text(&again));
}
