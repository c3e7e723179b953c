//! `graylab sweep`'s text on the real binary: the first grid's estimate says the figure and the
//! basis its JSON keeps, both tables name the clock of every column, and the map of who wins shows
//! each cell's figure as its line of comparisons printed it.

use crate::common::{self, graylab, graylab_cmd, text};

/// The first speed-up in `line`: the first word like `0.05x` (marks and commas aside).
fn first_ratio(line: &str) -> Option<String> {
    line.split_whitespace()
        .map(|w| w.trim_end_matches([',', '~', '?', '*']))
        .find(|w| w.strip_suffix('x').is_some_and(|n| n.parse::<f64>().is_ok()))
        .map(str::to_owned)
}

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
fn the_table_names_each_columns_clock_and_the_map_shows_the_compared_figures() {
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
    ceilings_table_names_its_clocks(&t, &json);
    // The map's end-to-end figure of each cell is the one its line of comparisons printed.
    let compared: Vec<(String, String)> = t
        .lines()
        .filter(|l| l.contains(" MP at ") && l.contains(" rounds against "))
        .filter_map(|l| {
            let (mp, rest) = l.trim().split_once(" MP at ")?;
            let level = rest.split(':').next()?.trim_end_matches(" rounds").trim().to_owned();
            Some((format!("{mp} {level}"), first_ratio(rest)?))
        })
        .collect();
    let map = t.lines().skip_while(|l| !l.starts_with("across: ")).skip(2);
    let mut cells = 0;
    for row in map.take_while(|l| l.trim_start().starts_with("0.")) {
        let words: Vec<&str> = row.split_whitespace().collect();
        for (level, cell) in ["0", "16"].iter().zip(words[1..].chunks(3)) {
            cells += 1;
            // "*": no rounds run in turns, so the medians (and no figure on the line).
            let at = format!("{} {level}", words[0]);
            let figure = first_ratio(cell[0]).expect("a figure");
            let sampled = compared.iter().find(|c| c.0 == at).map(|c| c.1.as_str());
            if cell[0].ends_with('*') {
                assert_eq!(sampled, None, "{at}: {t}");
            } else {
                assert_eq!(sampled, Some(figure.as_str()), "{at}: the map against its comparison: {t}");
            }
        }
    }
    assert_eq!(cells, 4, "{t}");
}

/// The groups of a clocks line's `section` ("clocks: " or "ceilings: "): each clock with the
/// columns under it.
fn clock_groups<'a>(line: &'a str, section: &str) -> Vec<(&'a str, Vec<&'a str>)> {
    let part = line.split("; ").find_map(|p| p.strip_prefix(section)).unwrap_or_default();
    part.split("), ")
        .filter_map(|g| g.trim_end_matches(')').split_once(" ("))
        .map(|(clock, columns)| (clock, columns.split(", ").collect()))
        .collect()
}

/// The ceilings table's line of clocks, under its title, names the clock of each % column's
/// rate and ceiling as the JSON keeps them, the medians' clock, and the model's having none.
fn ceilings_table_names_its_clocks(t: &str, json: &serde_json::Value) {
    let mut lines = t.lines().skip_while(|l| !l.starts_with("against this machine's ceilings"));
    let (Some(_), Some(line)) = (lines.next(), lines.next()) else { return };
    assert!(line.starts_with("clocks: "), "{line}");
    let (runs, ceilings) = (clock_groups(line, "clocks: "), clock_groups(line, "ceilings: "));
    let under = |groups: &[(&str, Vec<&str>)], clock: &str, column: &str| {
        groups.iter().any(|(c, columns)| *c == clock && columns.contains(&column))
    };
    assert!(under(&runs, "cpu-clock", "gpu total") && under(&runs, "cpu-clock", "cpu all"), "{line}");
    let points = json["points"].as_array().expect("points");
    for (column, phase, on_gpu) in [
        ("cpu %", "kernel", false),
        ("upload %", "upload", true),
        ("kern. %", "kernel", true),
        ("down %", "download", true),
    ] {
        for point in points {
            let rates = point["rates"].as_array().expect("rates");
            let shown = rates.iter().find(|r| {
                let ceiling = &r["ceiling"];
                r["phase"] == phase
                    && r["part"] == "whole"
                    && !ceiling.is_null()
                    && (ceiling != "memory_stream") == on_gpu
            });
            let Some(rate) = shown.filter(|r| !r["percent_of_ceiling"].is_null()) else { continue };
            let (run, probe) = (rate["source"].as_str(), rate["ceiling_source"].as_str());
            assert!(under(&runs, run.expect("a clock"), column), "{column} on {run:?}: {line}");
            assert!(
                under(&ceilings, probe.expect("a clock"), column),
                "{column}'s ceiling on {probe:?}: {line}"
            );
        }
    }
    let modelled = points.iter().any(|p| !p["modelled"].is_null());
    assert_eq!(line.ends_with("; model: no clock, from the ceilings"), modelled, "{line}");
}

/// A sweep of the CPU alone states no crossover (before: "never decided faster than the CPU",
/// a GPU result it never measured); its warning of a busy machine goes to stderr, as every
/// warning does, and `--json -` keeps stdout clean JSON.
#[test]
fn a_cpu_only_sweep_states_no_crossover_and_warns_on_stderr() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = ["sweep", "--sizes", "0.02", "--runs", "1", "--cpu-only"];
    let busy = |more: &[&str]| {
        graylab_cmd(dir.path())
            .env("GRAYLAB_BUSY", "1")
            .args([&args[..], more].concat())
            .output()
            .expect("run")
    };
    let o = busy(&[]);
    assert!(o.status.success(), "{}", text(&o));
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("No GPU was measured") && !out.contains("crossover"), "{out}");
    assert!(!out.contains("warning"), "warnings go to stderr: {out}");
    assert!(err.contains("warning: the machine was busy"), "{err}");
    let o = busy(&["--json", "-"]);
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON alone");
    assert!(json["points"].is_array(), "{json}");
}
