//! `graylab sweep --radii` on the real binary (issue 46, item 3): the grid's second axis is the
//! blur's radius, each level with its operations per pixel, every cell measured, the blur points
//! on the roofline; `--radii` beside several work levels, or beside `--op`, is refused.

use crate::common::{self, graylab, text};

#[test]
fn a_radius_sweep_maps_sizes_by_blur_radius_with_every_cell_measured() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The CPU alone, and with the GPU where there is one (lavapipe in CI).
    let mut runs: Vec<Vec<&str>> = vec![vec!["--cpu-only"]];
    if common::gpu().is_some() {
        runs.push(Vec::new());
    }
    for extra in runs {
        let with_gpu = extra.is_empty();
        let mut args = vec!["sweep", "--sizes", "0.01,0.03", "--radii", "8,1", "--runs", "1", "--json", "-"];
        args.extend(extra);
        let o = graylab(&args, dir.path());
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
        assert_eq!(json["axis"], "blur_radius", "{json}");
        assert_eq!(json["work_levels"], serde_json::json!([0]));
        let levels = json["levels"].as_array().expect("levels");
        let level = |l: &serde_json::Value, key: &str| l[key].as_u64().expect(key);
        let got: Vec<(u64, u64, u64)> = levels
            .iter()
            .map(|l| (level(l, "level"), level(l, "op_ops_per_pixel"), level(l, "ops_per_pixel")))
            .collect();
        // Lowest first; 4 (2R + 1) operations for the blur, 7 more with the formula's.
        assert_eq!(got, vec![(1, 12, 19), (8, 68, 75)], "{json}");
        assert_eq!(levels[1]["op"], "blur:8");
        // Every size at every radius, each cell with samples of every series it runs.
        let points = json["points"].as_array().expect("points");
        assert_eq!(points.len(), 4, "{json}");
        let cells: Vec<(String, f64)> = points
            .iter()
            .map(|p| {
                (p["op"].as_str().unwrap_or_default().to_owned(), p["megapixels"].as_f64().unwrap_or(0.0))
            })
            .collect();
        assert_eq!(
            cells.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            ["blur:1", "blur:1", "blur:8", "blur:8"]
        );
        assert!(cells[0].1 < cells[1].1, "sizes sorted within a radius: {cells:?}");
        let want: &[&str] =
            if with_gpu { &["cpu_all", "gpu_total", "gpu_kernel", "gpu_resident"] } else { &["cpu_all"] };
        for p in points {
            assert_eq!(p["work_rounds"], 0);
            let series = p["series"].as_array().expect("series");
            let names: Vec<&str> = series.iter().filter_map(|s| s[0].as_str()).collect();
            assert_eq!(names, want, "{p}");
            for s in series {
                assert!(s[1]["runs"].as_u64() >= Some(1) && s[1]["median_ns"].as_u64() > Some(0), "{p}");
            }
        }
        // The blur points on the roofline, their intensity rising with the radius.
        let roof = json["roofline"]["points"].as_array().expect("roofline points");
        let intensity = |op: &str| {
            roof.iter()
                .find(|p| p["op"] == op)
                .and_then(|p| p["ops_per_byte"].as_f64())
                .expect("a blur point")
        };
        assert!(intensity("blur:8") > intensity("blur:1") * 3.0, "{roof:?}");
        // The estimate says the blur is priced, and what it rests on; the table names the axis.
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(json["estimate_s"].as_f64().is_some_and(|s| s > 0.0), "{json}");
        let basis = json["op_estimate_basis"].as_str().unwrap_or_default();
        assert!(
            // One basis, the one it rests on: the rates measured, or the ops as rounds.
            basis.contains(
                "priced from the ops' rates measured with this machine's ceilings (the blur per pixel and tap"
            ) != basis.contains("integer operations per pixel (12 for blur:1, 68 for blur:8)"),
            "{basis}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // The text: the axis and each level's operations per pixel, and the map over radii.
    let mut args = vec!["sweep", "--sizes", "0.01", "--radii", "1,8", "--runs", "1"];
    if common::gpu().is_none() {
        args.push("--cpu-only");
    }
    let o = graylab(&args, dir.path());
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("axis: blur radius") && t.contains("1 19 ops/px, 8 75 ops/px"), "{t}");
    assert!(
        t.contains("priced from the ops' rates measured") || t.contains("priced as its integer operations"),
        "{t}"
    );
    if common::gpu().is_some() {
        assert!(t.contains("across: blur radius") && t.contains("radius 8"), "{t}");
    }
}

/// `--radii` beside work above 0 (several levels, or one) or beside an op is a usage error.
#[test]
fn radii_with_work_or_an_op_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (extra, says) in [
        (&["--work", "0,16"][..], "cannot go with --work 0,16"),
        (&["--work", "5"], "cannot go with --work 5"),
        (&["--op", "dither"], "cannot go with --op dither"),
    ] {
        let args = [&["sweep", "--sizes", "0.01", "--radii", "1,4", "--cpu-only"][..], extra].concat();
        let o = graylab(&args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
    }
}

/// A radius that is none (`dither`, 0) says what `--radii` takes; an input that cannot be read
/// and sizes that cannot fit are refused before the ceilings are measured (seconds where none
/// are cached: this folder is a fresh cache).
#[test]
fn bad_radii_inputs_and_sizes_are_refused_before_any_measuring() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for radius in ["dither", "0", "65"] {
        let o = graylab(&["sweep", "--radii", radius], d);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(&format!("{radius:?} is not a blur radius from 1 to 64")), "{}", text(&o));
    }
    std::fs::write(d.join("notes.jpg"), "hello").expect("write");
    let cases: [(&[&str], &str); 3] = [
        (&["--from-image", "nosuch.jpg"], "cannot read the file"),
        (&["--from-image", "notes.jpg"], "notes.jpg"),
        (&["--sizes", "99999"], "cannot sweep up to 99999 MP"),
    ];
    for (args, says) in cases {
        let o = graylab(&[&["sweep", "--runs", "1"][..], args].concat(), d);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("measuring"), "{args:?}: refused before any probe: {}", text(&o));
    }
}
