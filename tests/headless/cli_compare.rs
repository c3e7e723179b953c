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
