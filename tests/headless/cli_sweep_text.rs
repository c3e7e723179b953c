//! `graylab sweep`'s text on the real binary: the first grid's estimate says the figure and the
//! basis its JSON keeps, and the table names the clock of every column.

use crate::common::{self, graylab, text};

#[test]
fn the_first_grids_estimate_says_the_figure_and_the_basis_its_json_keeps() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A fresh cache folder: no grid seen here yet, so the estimate is the calibration's plan.
    let args =
        ["sweep", "--sizes", "0.02", "--work", "0,16", "--runs", "1", "--cpu-only", "--json", "s.json"];
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).expect("json written"))
            .expect("valid JSON");
    assert_eq!(json["estimate_basis"], "seen", "{json}");
    let estimate_s = json["estimate_s"].as_f64().expect("estimate_s");
    // The whole job as its user waits for it, the calibration included: the same figure, the
    // same basis, in the text.
    let stderr = String::from_utf8_lossy(&o.stderr);
    let said = format!("estimated at about {estimate_s:.1} s in all, from runs seen on this machine");
    assert!(stderr.contains(&said), "{said:?} is not in: {stderr}");
    assert!(stderr.contains("spent calibrating just now"), "{stderr}");
}

#[test]
fn the_table_names_each_columns_clock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let with_gpu = common::gpu().is_some();
    let mut args = vec!["sweep", "--sizes", "0.02,0.05", "--work", "0,16", "--runs", "1", "--json", "s.json"];
    if !with_gpu {
        args.push("--cpu-only");
    }
    let o = graylab(&args, dir.path());
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).expect("json written"))
            .expect("valid JSON");
    // Every column of the table is under the clock that timed it.
    let clocks = t.lines().find(|l| l.starts_with("clocks: ")).expect("a line of clocks");
    let threads = json["cpu_threads"].as_u64().expect("cpu_threads");
    assert!(clocks.starts_with(&format!("clocks: cpu-clock (cpu 1 thr, cpu {threads} thr")), "{clocks}");
    if !with_gpu {
        return;
    }
    for column in ["gpu total", "gpu kernel", "gpu resid.", "up GB/s", "down GB/s"] {
        assert!(clocks.contains(column), "{column}: {clocks}");
    }
    if json["gpu_timestamps"] == true {
        assert!(clocks.contains("gpu-timestamp (gpu kernel"), "{clocks}");
    }
}
