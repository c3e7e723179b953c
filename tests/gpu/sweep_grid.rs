//! `graylab sweep --work`: the work grid's JSON holds every size x work level, the frontier with
//! one point per size and the roofline's points, on any adapter and with `--cpu-only`; its CSV
//! has a `work_rounds` column.

use crate::common;

use crate::common::{graylab, text};

/// Runs a small grid (0 and 4 rounds, 0.01 and 0.02 MP, one warm run) and checks its JSON.
fn small_grid(cpu_only: bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut args = vec!["sweep", "--work", "0,4", "--sizes", "0.01,0.02", "--runs", "1", "--json", "-"];
    if cpu_only {
        args.push("--cpu-only");
    }
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document on stdout");
    let with_gpu = json["adapter"].is_string();
    // What the one estimator said before it started, and what it took.
    for key in ["estimate_s", "took_s"] {
        assert!(json[key].as_f64().is_some_and(|s| s > 0.0 && s.is_finite()), "{key}: {}", json[key]);
    }
    assert_eq!(json["estimate_basis"], "seen", "a grid is estimated from its calibration");
    assert_eq!(json["work_levels"], serde_json::json!([0, 4]));
    let points = json["points"].as_array().expect("points");
    // Every size at every level, ordered by level, then size.
    let cells: Vec<(u64, f64)> = points
        .iter()
        .map(|p| {
            (p["work_rounds"].as_u64().expect("work_rounds"), p["megapixels"].as_f64().expect("megapixels"))
        })
        .collect();
    assert_eq!(cells.len(), 4, "{cells:?}");
    assert_eq!(cells.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 0, 4, 4]);
    assert!(cells[0].1 < cells[1].1 && (cells[0].1 - cells[2].1).abs() < 1e-12, "{cells:?}");
    // The one-thread CPU series only at 0 rounds; the GPU's four with an adapter, and each
    // cell's comparison with its interval; how busy the machine was at each cell.
    for p in points {
        assert_eq!(p["end_to_end"]["speed_up"]["ci_low"].is_number(), with_gpu, "{p}");
        assert!(!with_gpu || p["end_to_end"]["speed_up"]["ci_high"].is_number(), "{p}");
        assert!(p["busy"].is_null() || p["busy"]["others_share"].is_number(), "{p}");
        assert!(p.get("busy").is_some(), "{p}");
        let names: Vec<&str> =
            p["series"].as_array().expect("series").iter().filter_map(|s| s[0].as_str()).collect();
        let mut want = if p["work_rounds"] == 0 { vec!["cpu1", "cpu_all"] } else { vec!["cpu_all"] };
        if with_gpu {
            want.extend(["gpu_total", "gpu_kernel", "gpu_resident"]);
        }
        assert_eq!(names, want, "{p}");
    }
    // The frontier: one measured point per size.
    let measured = json["frontier"]["measured"].as_array().expect("measured frontier");
    assert_eq!(measured.len(), 2, "{measured:?}");
    for (f, mp) in measured.iter().zip([cells[0].1, cells[1].1]) {
        assert_eq!(f["megapixels"].as_f64(), Some(mp), "{f}");
        if !with_gpu {
            assert!(f["end_to_end_from_rounds"].is_null() && f["resident_from_rounds"].is_null(), "{f}");
        }
        if let Some(k) = f["end_to_end_from_rounds"].as_f64() {
            assert!([0.0, 4.0].contains(&k), "{f}");
            // Only a cell decided "GPU faster" by its sampled comparison starts the frontier.
            let cell = points
                .iter()
                .find(|p| p["work_rounds"].as_f64() == Some(k) && p["megapixels"].as_f64() == Some(mp))
                .expect("the frontier's cell");
            assert_eq!(cell["end_to_end"]["winner"], "gpu_faster", "{cell}");
        }
    }
    // The roofline: CPU all threads (and the GPU's three) at each cell, at (3k + 7) / 4 ops per byte.
    let roof = &json["roofline"];
    let roof_points = roof["points"].as_array().expect("roofline points");
    assert_eq!(roof_points.len(), 4 * if with_gpu { 4 } else { 1 }, "{roof_points:?}");
    for rp in roof_points {
        let k = rp["work_rounds"].as_f64().expect("work_rounds");
        let x = rp["ops_per_byte"].as_f64().expect("ops_per_byte");
        assert!((x - (3.0 * k + 7.0) / 4.0).abs() < 1e-12, "{rp}");
        assert!(rp["ops_per_s"].as_f64().is_some_and(|y| y > 0.0), "{rp}");
        assert_ne!(rp["series"], "cpu1", "{rp}");
    }
    assert!(roof["cpu_bytes_per_s"].as_f64().is_some_and(|v| v > 0.0), "{roof}");
    assert_eq!(roof["transfer_bytes_per_s"].is_number(), with_gpu && json["ceilings"].is_object(), "{roof}");
    let verdict = json["verdict"].as_str().expect("verdict");
    assert!(verdict.contains("rounds per pixel"), "{verdict}");
}

#[test]
fn a_work_grid_holds_every_cell_the_frontier_and_the_roofline() {
    small_grid(common::gpu().is_none());
}

#[test]
fn a_cpu_only_work_grid_holds_every_cell_the_frontier_and_the_roofline() {
    small_grid(true);
}

#[test]
fn a_work_grid_csv_has_a_work_column_and_the_estimate_comes_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = ["sweep", "--work", "4,0", "--sizes", "0.01", "--runs", "1", "--cpu-only", "--csv", "g.csv"];
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let estimate = err.find("estimate: 2 cells").expect("the estimate");
    assert!(estimate < err.find("measuring 0.01 MP at 0 rounds").expect("progress"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("who wins") || out.contains("frontier") || out.contains("work"), "{out}");
    let csv = std::fs::read_to_string(dir.path().join("g.csv")).expect("csv written");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("work_rounds,megapixels,width,height,series,runs,min_ms,median_ms,max_ms,clock,op")
    );
    let rows: Vec<&str> = lines.collect();
    // 0 rounds: one thread and all threads; 4 rounds: all threads.
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[0].starts_with("0,") && rows[1].starts_with("0,") && rows[2].starts_with("4,"), "{csv}");
    // A level outside what convert --work accepts is refused before any work.
    let o = graylab(&["sweep", "--work", "0,99999999", "--cpu-only"], dir.path());
    assert!(!o.status.success() && text(&o).contains("not a work level"), "{}", text(&o));
}
