//! Results that say where they were made, and `graylab compare`: every JSON result carries its
//! schema, kind and provenance (host, adapter, build, command line, load), and two results of
//! one kind compared tell a slower run from a faster one and from noise, in the exit code too.

use std::path::Path;

use serde_json::Value;

use crate::common::{graylab, text};

/// `graylab args` in `dir`, its stdout parsed as JSON.
fn json_of(args: &[&str], dir: &Path) -> Value {
    let o = graylab(args, dir);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// Every timed figure of a result (each object with `median_ns`, probes aside) times `factor`,
/// its runs' range set to ±10% of its median: the comparison then depends on the factor alone,
/// not on how noisy the machine was when the base was measured.
fn scaled(value: &Value, factor: f64) -> Value {
    match value {
        Value::Object(map) => {
            let timed =
                map.contains_key("median_ns") && !map.contains_key("bytes") && !map.contains_key("ops");
            let median = map.get("median_ns").and_then(Value::as_u64).unwrap_or(0) as f64 * factor;
            Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let around = match k.as_str() {
                            "min_ns" => Some(0.9),
                            "median_ns" => Some(1.0),
                            "max_ns" => Some(1.1),
                            _ => None,
                        };
                        let v = match around {
                            Some(at) if timed => Value::from((median * at).round() as u64),
                            _ => scaled(v, factor),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| scaled(v, factor)).collect()),
        other => other.clone(),
    }
}

fn write(dir: &Path, name: &str, value: &Value) {
    std::fs::write(dir.join(name), serde_json::to_vec_pretty(value).expect("json")).expect("write");
}

#[test]
fn every_json_result_says_its_schema_kind_and_where_it_ran() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bench = json_of(
        &["bench", "--synthetic", "320x200", "--backend", "all", "--runs", "3", "--json"],
        dir.path(),
    );
    assert_eq!((bench["schema"].as_u64(), bench["kind"].as_str()), (Some(1), Some("bench")));
    let p = &bench["provenance"];
    assert_eq!(p["build"], if cfg!(debug_assertions) { "debug" } else { "release" });
    assert!(p["host"]["cpu_model"].as_str().is_some_and(|m| !m.is_empty()), "{p}");
    assert!(p["host"]["threads"].as_u64().is_some_and(|t| t >= 1), "{p}");
    let invocation: Vec<&str> =
        p["invocation"].as_array().expect("invocation").iter().filter_map(Value::as_str).collect();
    assert_eq!(invocation.get(1..4), Some(&["bench", "--synthetic", "320x200"][..]), "{invocation:?}");
    // The GPU ran, so its adapter is named with its limits; the results follow unchanged.
    assert!(p["adapter"]["name"].as_str().is_some_and(|n| !n.is_empty()), "{p}");
    assert!(p["adapter"]["max_storage_buffer_binding_bytes"].as_u64().is_some_and(|b| b > 0), "{p}");
    assert_eq!(bench["results"].as_array().map(Vec::len), Some(2), "cpu and gpu");
    let cpu_only = json_of(
        &["bench", "--synthetic", "320x200", "--backend", "cpu", "--runs", "1", "--json"],
        dir.path(),
    );
    assert_eq!(cpu_only["provenance"]["adapter"], Value::Null, "no GPU was opened to name one");
    let info = json_of(&["info", "--json"], dir.path());
    assert_eq!(info["kind"], "info");
    assert!(info["provenance"]["adapter"]["name"].is_string(), "the adapter graylab picks");
    let o = graylab(&["sweep", "--sizes", "0.05", "--runs", "1", "--json", "-"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let sweep: Value = serde_json::from_slice(&o.stdout).expect("sweep JSON");
    assert_eq!((sweep["schema"].as_u64(), sweep["kind"].as_str()), (Some(1), Some("sweep")));
}

#[test]
fn compare_tells_slower_from_faster_from_noise_in_its_exit_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let base = json_of(&["bench", "--synthetic", "320x200", "--backend", "cpu", "--runs", "6", "--json"], d);
    write(d, "base.json", &scaled(&base, 1.0));
    write(d, "slower.json", &scaled(&base, 3.0));
    write(d, "faster.json", &scaled(&base, 1.0 / 3.0));

    // A result against itself: nothing moved, exit 0.
    let o = graylab(&["compare", "base.json", "base.json"], d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("No figure moved") && text(&o).contains("0 slower"), "{}", text(&o));
    // Three times the time of every run: the kernel is slower beyond its noise, exit 3.
    let o = graylab(&["compare", "base.json", "slower.json"], d);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let kernel = text(&o).lines().find(|l| l.contains("· kernel")).map(str::to_owned).unwrap_or_default();
    assert!(kernel.contains("3.00") && kernel.ends_with("SLOWER"), "{}", text(&o));
    assert!(text(&o).contains("Exit 3"), "{}", text(&o));
    // A third of it: faster, and nothing slower, exit 0.
    let o = graylab(&["compare", "base.json", "faster.json", "--all"], d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).lines().any(|l| l.contains("· kernel") && l.contains("0.33") && l.ends_with("faster")),
        "{}",
        text(&o)
    );
    // A threshold above the change: the same.
    let o = graylab(&["compare", "base.json", "slower.json", "--threshold", "3"], d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn compare_refuses_what_it_cannot_compare_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let base = json_of(&["bench", "--synthetic", "320x200", "--backend", "cpu", "--runs", "1", "--json"], d);
    write(d, "bench.json", &base);
    write(d, "sweep.json", &serde_json::json!({ "schema": 1, "kind": "sweep", "points": [] }));
    write(d, "info.json", &serde_json::json!({ "schema": 1, "kind": "info" }));
    let mut newer = base.clone();
    newer["schema"] = Value::from(99);
    write(d, "newer.json", &newer);
    std::fs::write(d.join("text.json"), "not json").expect("write");
    for (args, code, says) in [
        (
            ["compare", "bench.json", "sweep.json"],
            1,
            "bench.json is a bench result and sweep.json is a sweep result",
        ),
        (["compare", "bench.json", "info.json"], 1, "and info.json is an info result"),
        (
            ["compare", "bench.json", "newer.json"],
            1,
            "(schema 99, newer than this graylab's 1: read it with a newer graylab): newer.json",
        ),
        (
            ["compare", "bench.json", "text.json"],
            1,
            "not a graylab JSON file (expected ident at line 1 column 2): text.json",
        ),
        (
            ["compare", "bench.json", "gone.json"],
            1,
            "not a saved graylab result (there is no such file): gone.json",
        ),
        (["compare", "bench.json", "bench.json"], 0, "0 slower"),
    ] {
        let o = graylab(&args, d);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    let o = graylab(&["compare", "bench.json", "bench.json", "--threshold", "0"], d);
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
}

/// Issue 42, E4: `compare` reads through the one bounded JSON reader: a sparse file of 2 GB, a
/// FIFO with no writer and /dev/zero fail at once, naming the file, without reading them.
#[cfg(unix)]
#[test]
fn compare_reads_only_a_small_regular_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "bench.json", &serde_json::json!({ "schema": 1, "kind": "bench", "results": [] }));
    let sparse = std::fs::File::create(d.join("huge.json")).expect("create");
    sparse.set_len(2 << 30).expect("a sparse 2 GiB file");
    crate::common::mkfifo(&d.join("fifo.json"));
    for (new, says) in [
        ("huge.json", "not a graylab JSON file (over 16777216 bytes): huge.json"),
        ("fifo.json", "cannot read the file (it is a FIFO (named pipe), not a regular file): fifo.json"),
        ("/dev/zero", "cannot read the file (it is a character device, not a regular file): /dev/zero"),
    ] {
        let mut cmd = crate::common::graylab_cmd(d);
        cmd.args(["compare", "bench.json", new]);
        // A deadline against the old hang on the FIFO: the test fails instead of hanging.
        let o = crate::common::output_within(cmd, 60);
        assert_eq!(o.status.code(), Some(1), "{new}: {}", text(&o));
        assert!(text(&o).contains(says), "{new}: {}", text(&o));
    }
}

/// `graylab compare base new` in `dir`: its exit code, its text, and the figures it found only in
/// the base and only in the new result (from its summary).
fn compared(dir: &Path, base: &str, new: &str) -> (Option<i32>, String, (usize, usize)) {
    let o = graylab(&["compare", base, new], dir);
    let said = text(&o);
    let count = |before: &str| {
        let at = said.find(before).unwrap_or_default();
        said[..at].rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)
    };
    let only = (count(" only in the base"), count(" only in the new result"));
    (o.status.code(), said, only)
}

/// Results of other settings are other figures: each only in its own result, never compared, so
/// never SLOWER and no exit 3 (issue: `compare` set them against each other, exit 3); with no
/// figure in common nothing was compared, exit 1; a result against itself is still compared
/// figure by figure, nothing moved.
fn assert_apart_and_same_still_compared(dir: &Path, base: &str, other: &str) {
    let (code, said, (only_base, only_new)) = compared(dir, base, other);
    let nothing = said.contains("have no figure in common");
    assert_eq!(code, Some(i32::from(nothing)), "{said}");
    assert!(only_base > 0 && only_new > 0, "({only_base}, {only_new}): {said}");
    assert!(said.contains("0 slower") && !said.contains("SLOWER"), "{said}");
    let (code, said, only) = compared(dir, base, base);
    assert_eq!((code, only), (Some(0), (0, 0)), "{said}");
    assert!(said.contains("No figure moved") && !said.contains("only in"), "{said}");
}

#[test]
fn compare_keeps_a_bench_with_its_input_kept_on_the_gpu_apart() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let args = ["bench", "--synthetic", "128x96", "--runs", "3", "--backend", "gpu", "--json"];
    write(d, "nokeep.json", &json_of(&args, d));
    let kept = json_of(&[&args[..], &["--keep-input-on-gpu"]].concat(), d);
    write(d, "keep.json", &kept);
    assert_apart_and_same_still_compared(d, "keep.json", "nokeep.json");
    // The machine's ceilings both carry compare nothing they ran: exit 1, said so (before, they
    // were the 8 figures "compared", and the gate said nothing moved, exit 0). The kept run's
    // figures are named so, and a slower copy of them is still SLOWER, exit 3.
    let (code, said, _) = compared(d, "keep.json", "nokeep.json");
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("have no figure in common but the ceilings probed beside them"), "{said}");
    write(d, "base.json", &scaled(&kept, 1.0));
    write(d, "slower.json", &scaled(&kept, 3.0));
    let (code, said, _) = compared(d, "base.json", "slower.json");
    assert_eq!(code, Some(3), "{said}");
    assert!(
        said.lines()
            .any(|l| l.contains("input kept on GPU") && l.contains("· kernel") && l.ends_with("SLOWER")),
        "{said}"
    );
}

#[test]
fn compare_keeps_round_trips_of_other_work_apart_and_counts_a_measurement_once() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let args = ["bench", "--synthetic", "128x96", "--passes", "1,2", "--runs", "1", "--json"];
    let plain = json_of(&args, d);
    write(d, "p0.json", &plain);
    write(d, "p64.json", &json_of(&[&args[..], &["--work", "64"]].concat(), d));
    assert_apart_and_same_still_compared(d, "p0.json", "p64.json");
    let (_, said, _) = compared(d, "p0.json", "p64.json");
    assert!(said.contains("have no figure in common"), "{said}");
    // Every timed run three times as long: each point's CPU round, GPU round and (with
    // timestamps) GPU passes are slower once, not again as a time per operation or an interval.
    write(d, "base.json", &scaled(&plain, 1.0));
    write(d, "slower.json", &scaled(&plain, 3.0));
    let points = plain["points"].as_array().expect("points");
    let timed = points.iter().map(|p| 2 + usize::from(p["gpu_kernel_ns"].is_object())).sum::<usize>();
    let (code, said, _) = compared(d, "base.json", "slower.json");
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains(&format!("{timed} slower")), "{timed}: {said}");
    for derived in ["cpu_per_op_ns", "· cpu_ns", "· gpu_ns"] {
        assert!(!said.contains(derived), "{derived}: {said}");
    }
}

#[test]
fn compare_names_a_workgroup_race_by_its_image_and_each_shape_by_its_own() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let args = ["bench", "--synthetic", "64x48", "--fastest-workgroup", "--json"];
    let small = json_of(&args, d);
    write(d, "wg_small.json", &small);
    write(
        d,
        "wg_big.json",
        &json_of(&["bench", "--synthetic", "128x96", "--fastest-workgroup", "--json"], d),
    );
    write(d, "wg_work.json", &json_of(&[&args[..], &["--work", "8"]].concat(), d));
    assert_eq!((small["width"].as_u64(), small["height"].as_u64()), (Some(64), Some(48)), "{small}");
    assert_eq!((small["formula"].as_str(), small["work"]["rounds"].as_u64()), (Some("bt601"), Some(0)));
    assert_apart_and_same_still_compared(d, "wg_small.json", "wg_big.json");
    assert_apart_and_same_still_compared(d, "wg_small.json", "wg_work.json");
    // Each shape is named by its shape, not by its place in the list.
    let o = graylab(&["compare", "wg_small.json", "wg_small.json", "--all"], d);
    let first = small["shapes"][0]["workgroup"].as_str().expect("a shape");
    assert!(
        text(&o).lines().any(
            |l| l.starts_with(&format!("bt601 64x48 · shapes · wg {first} [gpu-timestamp] · kernel_ns "))
        ),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("#1"), "{}", text(&o));
}

#[test]
fn compare_keeps_sweeps_of_another_formula_apart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for (file, formula) in [("a.json", "bt601"), ("b.json", "linear")] {
        let args = ["sweep", "--sizes", "0.02,0.05", "--runs", "3", "--cpu-only", "--formula", formula];
        let o = graylab(&[&args[..], &["--json", file]].concat(), d);
        assert!(o.status.success(), "{}", text(&o));
    }
    assert_apart_and_same_still_compared(d, "a.json", "b.json");
    let a: Value = serde_json::from_slice(&std::fs::read(d.join("a.json")).expect("a.json")).expect("JSON");
    write(d, "base.json", &scaled(&a, 1.0));
    write(d, "slower.json", &scaled(&a, 3.0));
    let (code, said, _) = compared(d, "base.json", "slower.json");
    assert_eq!(code, Some(3), "{said}");
    // A point is named by its size as a bench names one, `WxH`.
    let size = &a["points"][1];
    let point = format!("bt601 · {}x{} · cpu1", size["width"], size["height"]);
    assert!(said.lines().any(|l| l.contains(&point) && l.ends_with("SLOWER")), "{point}: {said}");
}

/// A bench result as `bench --json` writes one, by hand: made on a host of `cores` threads with
/// the adapter's `driver`, on `image`; each run `(backend, total median ns, clock, divergent)`
/// with its runs ±10% around it (a run without a clock as a file of an older graylab).
fn bench_made(cores: u64, driver: &str, image: &str, runs: &[(&str, u64, Option<&str>, bool)]) -> Value {
    let results: Vec<Value> = runs
        .iter()
        .map(|&(backend, median, clock, divergent)| {
            let mut total = serde_json::json!({ "min_ns": median * 9 / 10, "median_ns": median,
                "max_ns": median * 11 / 10, "runs": 5 });
            if let Some(clock) = clock {
                total["clock"] = Value::from(clock);
            }
            serde_json::json!({ "settings": { "backend": backend, "formula": "bt601",
                "workgroup": { "x": 256, "y": 1 }, "threads": cores, "work": { "rounds": 64, "divergent": divergent } },
                "width": 64, "height": 48, "total": total })
        })
        .collect();
    serde_json::json!({ "schema": 1, "kind": "bench", "image": image, "cpu_threads": cores,
        "provenance": { "graylab": "0.1.0", "build": "release", "written_unix_s": 1_796_577_327u64,
            "invocation": ["graylab", "bench", "--json"],
            "host": { "cpu_model": "a CPU", "threads": cores },
            "adapter": { "name": "a GPU", "driver": driver, "backend": "vulkan" } },
        "ceilings": { "ceilings": { "device_copy": { "bytes": 1_000_000_000u64, "best_ns": 1_000_000,
            "median_ns": 1_000_000, "clock": "cpu-clock" } } },
        "results": results })
}

/// Issue 66 (3, 4, 5, 10): the header names each adapter's driver and API and each machine's
/// threads; CPU runs on all the cores of two machines of other core counts are compared; a
/// figure of a file without clocks is compared on any clock and said so; a ratio under 0.01
/// keeps two digits; a figure in one result only is named, not only counted.
#[test]
fn compare_says_each_machine_and_names_every_figure_it_did_not_compare() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let image = "synthetic 64x48 Rgb8";
    let base = bench_made(
        16,
        "NVIDIA 580.159.04",
        image,
        &[("cpu", 1_000_000, None, false), ("gpu", 1_000_000, Some("cpu-clock"), false)],
    );
    let mut only_base = base["results"][1].clone();
    only_base["input_kept_on_gpu"] = Value::Bool(true);
    let mut base = base;
    base["results"].as_array_mut().expect("runs").push(only_base);
    write(d, "h200.json", &base);
    let new = bench_made(
        2,
        "llvmpipe Mesa 22.3.6",
        image,
        &[("cpu", 2200, Some("cpu-clock"), false), ("gpu", 3_000_000, Some("cpu-clock"), false)],
    );
    write(d, "here.json", &new);
    let (code, said, only) = compared(d, "h200.json", "here.json");
    assert_eq!((code, only), (Some(3), (1, 0)), "{said}");
    assert!(said.contains("a GPU, driver NVIDIA 580.159.04, vulkan"), "{said}");
    assert!(said.contains("a GPU, driver llvmpipe Mesa 22.3.6, vulkan"), "{said}");
    assert!(said.contains("the CPUs have 16 and 2 threads"), "{said}");
    let cpu = said.lines().find(|l| {
        l.starts_with("cpu all cores bt601 k=64 64x48 · total [base: clock unknown; new: cpu-clock]")
    });
    assert!(cpu.is_some_and(|l| l.contains(" 0.0022 (0.0018–0.0027)") && l.ends_with("faster")), "{said}");
    let gpu = said.lines().find(|l| l.starts_with("gpu wg 256 bt601 k=64 64x48 · total [cpu-clock]"));
    assert!(gpu.is_some_and(|l| l.contains(" 3.00 (") && l.ends_with("SLOWER")), "{said}");
    assert!(
        said.contains("Only in the base, not compared (1):\n  gpu wg 256 bt601 k=64 64x48 input kept on GPU · total [cpu-clock]"),
        "{said}"
    );
}

/// Issue 66 (9): a figure that cannot be one (a time negative, zero, null or of 1e300 ns) is
/// refused naming the file and the field, exit 1, as a file that is not JSON is: never dropped
/// ("nothing moved", exit 0) nor printed as u64's 584 years.
#[test]
fn compare_refuses_a_corrupt_figure_naming_the_file_and_the_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let base =
        bench_made(2, "a driver", "synthetic 64x48 Rgb8", &[("gpu", 1_000_000, Some("cpu-clock"), false)]);
    write(d, "base.json", &base);
    for (median, said) in [(Value::from(-5), "-5"), (Value::Null, "null"), (Value::from(1e300), "1e+300")] {
        let mut bad = base.clone();
        bad["results"][0]["total"]["median_ns"] = median;
        write(d, "bad.json", &bad);
        for (args, file) in [
            (["compare", "base.json", "bad.json"], "bad.json"),
            (["compare", "bad.json", "base.json"], "bad.json"),
        ] {
            let o = graylab(&args, d);
            assert_eq!(o.status.code(), Some(1), "{said}: {}", text(&o));
            let refused = format!(
                "a corrupt figure (results[0].total.median_ns is {said}: a time must be at least 0 ns and at most a day): {file}"
            );
            assert!(text(&o).contains(&refused), "{said}: {}", text(&o));
            assert!(!text(&o).contains("18446744074 s") && !text(&o).contains("compared"), "{}", text(&o));
        }
    }
}

/// Issue 66 (2, 8): divergent work on another image is other work, and the header says the
/// images differ (it was "0.17 faster", exit 0); two results sharing only their ceilings say
/// nothing of "this machine" and count none of the rows they did not list.
#[test]
fn compare_keeps_divergent_work_on_another_image_apart_and_counts_only_what_it_shows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let run = [("gpu", 1_000_000, Some("cpu-clock"), true)];
    let synthetic = bench_made(2, "a driver", "synthetic 1024x1024 Rgb8", &run);
    let mut slower_ceilings = synthetic.clone();
    slower_ceilings["ceilings"]["ceilings"]["device_copy"]["best_ns"] = Value::from(3_000_000);
    slower_ceilings["ceilings"]["ceilings"]["device_copy"]["median_ns"] = Value::from(3_000_000);
    write(d, "syn.json", &slower_ceilings);
    write(
        d,
        "even.json",
        &bench_made(
            2,
            "a driver",
            "even1024.png (1024x1024 Rgb8)",
            &[("gpu", 170_000, Some("cpu-clock"), true)],
        ),
    );
    let (code, said, only) = compared(d, "syn.json", "even.json");
    assert_eq!((code, only), (Some(1), (1, 1)), "{said}");
    assert!(
        said.contains("the images differ (synthetic 1024x1024 Rgb8; even1024.png (1024x1024 Rgb8))"),
        "{said}"
    );
    assert!(said.contains("divergent 64x48 of synthetic · total [cpu-clock]"), "{said}");
    assert!(said.contains("divergent 64x48 of even1024.png · total [cpu-clock]"), "{said}");
    assert!(said.contains("have no figure in common but the ceilings probed beside them"), "{said}");
    assert!(
        !said.contains("this machine") && !said.contains("faster") && !said.contains("1 compared"),
        "{said}"
    );
    assert!(said.contains("Nothing they ran was compared: 0 slower; 1 ceilings figure in both left out; 1 only in the base, 1 only in the new result."), "{said}");
    // The same divergent work on the same synthetic image is compared.
    write(d, "syn2.json", &synthetic);
    let (code, said, only) = compared(d, "syn.json", "syn2.json");
    assert_eq!((code, only), (Some(0), (0, 0)), "{said}");
}
