//! The real `graylab` binary end to end, in temporary folders.

use crate::common;

use crate::common::{graylab, photo, text};

use image::{DynamicImage, RgbaImage};

fn expected_gray(img: &DynamicImage, formula: graylab::pixel::Formula) -> Vec<u8> {
    img.to_rgb8().pixels().map(|p| formula.luma8(p[0], p[1], p[2])).collect()
}

#[test]
fn convert_writes_the_exact_gray_image() {
    let dir = tempfile::tempdir().expect("temp dir");
    let img = photo(123, 45);
    img.save(dir.path().join("in.png")).expect("save");
    let o = graylab(&["convert", "in.png", "-o", "out.png"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("kernel"), "{}", text(&o));
    let out = image::open(dir.path().join("out.png")).expect("output");
    assert_eq!(out.color(), image::ColorType::L8);
    assert_eq!(out.as_bytes(), expected_gray(&img, graylab::pixel::Formula::Bt601));

    // bt709 through --formula, default output name beside the input.
    let o = graylab(&["convert", "in.png", "--formula", "bt709"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = image::open(dir.path().join("in.gray.png")).expect("default output name");
    assert_eq!(out.as_bytes(), expected_gray(&img, graylab::pixel::Formula::Bt709));
}

#[test]
fn convert_refuses_to_overwrite_unless_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    photo(16, 16).save(dir.path().join("a.png")).expect("save");
    std::fs::write(dir.path().join("b.png"), b"keep me").expect("write");
    let o = graylab(&["convert", "a.png", "-o", "b.png"], dir.path());
    assert!(!o.status.success());
    assert!(text(&o).contains("b.png") && text(&o).contains("exists"), "{}", text(&o));
    assert_eq!(std::fs::read(dir.path().join("b.png")).expect("read"), b"keep me");
    let o = graylab(&["convert", "a.png", "-o", "b.png", "--overwrite"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(image::open(dir.path().join("b.png")).is_ok());
    let o = graylab(&["convert", "a.png", "-o", "a.png", "--overwrite"], dir.path());
    assert!(!o.status.success() && text(&o).contains("replace its own input"), "{}", text(&o));
}

#[test]
fn many_files_bad_ones_named_good_ones_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    for i in 0..4 {
        photo(20 + i, 10).save(dir.path().join(format!("p{i}.png"))).expect("save");
    }
    std::fs::write(dir.path().join("broken.jpg"), b"\xFF\xD8\xFF\xE0 not really").expect("write");
    let o = graylab(
        &[
            "convert",
            "p0.png",
            "p1.png",
            "broken.jpg",
            "p2.png",
            "p3.png",
            "--out-dir",
            "out",
            "--format",
            "tiff",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let items = json.as_array().expect("array");
    assert_eq!(items.len(), 5);
    assert!(items[2]["error"].as_str().is_some_and(|e| e.contains("broken.jpg")), "{json}");
    for i in 0..4 {
        let img = image::open(out.join(format!("p{i}.gray.tif"))).expect("written");
        assert_eq!(img.width(), 20 + i);
    }
    assert!(!out.join("broken.gray.tif").exists());
    assert_eq!(items[0]["run"]["phases"][0]["phase"], "decode");
    assert_eq!(items[0]["run"]["phases"][1]["source"], "cpu-clock");
}

#[test]
fn alpha_is_kept_or_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rgba =
        RgbaImage::from_fn(9, 7, |x, y| image::Rgba([255, (x * 20) as u8, (y * 30) as u8, (x * y) as u8]));
    rgba.save(dir.path().join("a.png")).expect("save");
    let o = graylab(&["convert", "a.png", "-o", "la.png"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let la = image::open(dir.path().join("la.png")).expect("out").to_luma_alpha8();
    assert_eq!(la.get_pixel(3, 2).0, [graylab::pixel::Formula::Bt601.luma8(255, 60, 60), 6]);
    let o = graylab(&["convert", "a.png", "-o", "l.png", "--drop-alpha"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(image::open(dir.path().join("l.png")).expect("out").color(), image::ColorType::L8);
}

#[test]
fn gpu_convert_matches_cpu_convert() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    photo(301, 77).save(dir.path().join("in.png")).expect("save");
    let o = graylab(
        &[
            "convert",
            "in.png",
            "-o",
            "gpu.png",
            "--backend",
            "gpu",
            "--workgroup",
            "16x16",
            "--formula",
            "linear",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("upload"), "{}", text(&o));
    let o =
        graylab(&["convert", "in.png", "-o", "cpu.png", "--formula", "linear", "--threads", "1"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let gpu = image::open(dir.path().join("gpu.png")).expect("gpu out");
    let cpu = image::open(dir.path().join("cpu.png")).expect("cpu out");
    assert_eq!(gpu.as_bytes(), cpu.as_bytes());
    let o =
        graylab(&["convert", "in.png", "-o", "x.png", "--backend", "gpu", "--workgroup", "4096"], dir.path());
    assert!(!o.status.success() && text(&o).contains("does not fit"), "{}", text(&o));
}

#[test]
fn bench_and_info_print_valid_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    let backend = if common::gpu().is_some() { "all" } else { "cpu" };
    let o = graylab(
        &[
            "bench",
            "--synthetic",
            "320x200",
            "--runs",
            "3",
            "--backend",
            backend,
            "--threads",
            "1,2",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("bench JSON");
    let results = json["results"].as_array().expect("results");
    assert_eq!(results.len(), if backend == "all" { 3 } else { 2 });
    for r in results {
        assert_eq!(r["width"], 320);
        assert_eq!(r["warm"].as_array().map(Vec::len), Some(3));
        let kernel =
            r["phases"].as_array().and_then(|p| p.iter().find(|p| p["phase"] == "kernel")).expect("kernel");
        let median_ns = kernel["median_ns"].as_u64().expect("median_ns");
        assert!(median_ns > 0 && kernel["min_ns"].as_u64() <= Some(median_ns), "{kernel}");
        // The kernel's rate: 320x200 pixels, 3 bytes read and 1 written each, over its median.
        let want = 320.0 * 200.0 * 4.0 / median_ns as f64;
        let got = r["kernel_gb_per_s"].as_f64().expect("kernel_gb_per_s");
        assert!((got - want).abs() <= want * 1e-9, "{got} against {want}");
    }
    // An RGBA image on the CPU is held against the memory stream over its own bytes, as the
    // app holds it (before, only RGB had a ceiling in bench).
    let rgba = dir.path().join("rgba.png");
    image::RgbaImage::from_fn(64, 48, |x, y| image::Rgba([x as u8, y as u8, 7, 200]))
        .save(&rgba)
        .expect("save");
    let o = graylab(
        &["bench", rgba.to_str().expect("utf-8"), "--backend", "cpu", "--runs", "2", "--json"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("bench JSON");
    let kernel =
        json["results"][0]["rates"].as_array().and_then(|r| r.iter().find(|r| r["phase"] == "kernel"));
    let kernel = kernel.expect("the kernel's rate");
    assert_eq!(kernel["ceiling"], "memory_stream", "{kernel}");
    assert!(kernel["ceiling_gb_per_s"].as_f64().is_some_and(|g| g > 0.0), "{kernel}");
    let o = graylab(&["info", "--json"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).expect("info JSON");
    assert!(info["cpu_threads"].as_u64().is_some_and(|n| n >= 1));
    if common::gpu().is_some() {
        let adapters = info["adapters"].as_array().expect("adapters");
        assert!(adapters.iter().any(|a| a["selected"] == true
            && !a["valid_workgroups"].as_array().expect("list").is_empty()));
    }
}

/// `bench --fastest-workgroup --json`: every shape the adapter allows with its kernel time's
/// interval (at least six samples), the fastest among them, the speed-up, the decision, the stop
/// and the rounds; the table names the same fastest shape in its verdict.
#[test]
fn bench_measures_more_threads_than_the_machine_has_at_its_own_count_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args =
        ["bench", "--synthetic", "64x64", "--runs", "1", "--backend", "cpu", "--threads", "1,1024", "--json"];
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let here = graylab::cpu::available_threads();
    assert!(
        text(&o).contains(&format!("--threads 1024 is more than the {here} threads here")),
        "{}",
        text(&o)
    );
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("bench JSON");
    let threads: Vec<(u64, u64)> = json["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (r["settings"]["threads"].as_u64().expect("asked"), r["cold"]["threads"].as_u64().expect("ran"))
        })
        .collect();
    // What the settings say is what ran; 1 and the machine's count once each.
    let here = here as u64;
    let want = if here == 1 { vec![(1, 1)] } else { vec![(1, 1), (here, here)] };
    assert_eq!(threads, want);
}

#[test]
fn bench_fastest_workgroup_races_every_shape() {
    let Some(gpu) = common::gpu() else { return };
    let valid: Vec<String> = gpu.valid_workgroups().iter().map(ToString::to_string).collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let o = graylab(&["bench", "--synthetic", "96x64", "--fastest-workgroup", "--json"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("race JSON");
    let shapes = json["shapes"].as_array().expect("shapes");
    let names: Vec<String> =
        shapes.iter().filter_map(|s| s["workgroup"].as_str().map(str::to_owned)).collect();
    assert_eq!(names, valid);
    let rounds = json["rounds"].as_u64().expect("rounds");
    assert!((6..=42).contains(&rounds), "{rounds}");
    for s in shapes {
        let k = &s["kernel_ns"];
        assert_eq!(k["samples"].as_u64(), Some(rounds), "{s}");
        let (low, median, high) = (k["ci_low"].as_f64(), k["median"].as_f64(), k["ci_high"].as_f64());
        assert!(low > Some(0.0) && low <= median && median <= high, "{s}");
        assert!(["gpu-timestamp", "cpu-clock"].contains(&s["clock"].as_str().unwrap_or_default()), "{s}");
    }
    let fastest = json["fastest"].as_str().expect("fastest");
    assert!(valid.iter().any(|v| v == fastest), "{fastest}");
    assert!(["decided", "time", "rounds"].contains(&json["stop"].as_str().unwrap_or_default()), "{json}");
    let decided = json["decided"].as_bool().expect("decided");
    let tied: Vec<&str> = json["tied"].as_array().expect("tied").iter().filter_map(|t| t.as_str()).collect();
    if valid.len() > 1 {
        assert!(json["speed_up"]["median"].as_f64().is_some_and(|m| m > 0.0), "{json}");
        // Decided: every other shape is decided slower, the runner-up by median too. Undecided:
        // some shape ties with the fastest, which may be a noisier one than the runner-up while
        // the runner-up alone is decided slower (before, this asserted that the runner-up's
        // interval decided the race, and failed in CI when it cleared 1 and 256 did not).
        let runner_up_slower = json["speed_up"]["ci_low"].as_f64().is_some_and(|l| l > 1.0);
        assert!(!decided || runner_up_slower, "{json}");
        assert_eq!(decided, tied.is_empty(), "{json}");
        if !decided {
            assert!(tied.len() >= 2 && tied[0] == fastest, "{json}");
            assert!(tied.iter().all(|t| valid.iter().any(|v| v == t)), "{json}");
        }
    }
    let verdict = json["verdict"].as_str().expect("verdict");
    if decided {
        assert!(verdict.starts_with(&format!("{fastest} is fastest")), "{verdict}");
    } else {
        assert!(verdict.starts_with("No shape is clearly fastest") && verdict.contains(fastest), "{verdict}");
    }
    let o = graylab(&["bench", "--fastest-workgroup", "--workgroup", "256"], dir.path());
    assert!(!o.status.success() && text(&o).contains("cannot be used with"), "{}", text(&o));
}

#[test]
fn usage_errors_exit_non_zero_with_a_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in [
        &["convert"][..],
        &["convert", "a.png", "b.png", "-o", "c.png"],
        &["convert", "missing.png"],
        &["convert", "x.png", "--formula", "rec2020"],
        &["bench", "--synthetic", "0x0"],
    ] {
        let o = graylab(args, dir.path());
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(!text(&o).contains("panicked"), "{args:?}: {}", text(&o));
        assert!(!text(&o).trim().is_empty());
    }
    let o = graylab(&["convert", "missing.png"], dir.path());
    assert!(text(&o).contains("missing.png"), "{}", text(&o));
}

#[test]
fn sweep_estimates_from_the_pace_kept_by_the_run_before_and_a_damaged_pace_is_ignored() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut args = vec!["sweep", "--sizes", "0.25", "--runs", "3", "--json", "-"];
    if common::gpu().is_none() {
        args.push("--cpu-only");
    }
    let sweep = |want_basis: &[&str]| {
        let o = graylab(&args, dir.path());
        assert!(o.status.success(), "{}", text(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
        let basis = json["estimate_basis"].as_str().unwrap_or_default();
        assert!(want_basis.contains(&basis), "{basis}: {}", text(&o));
        let figure = |key: &str| json[key].as_f64().filter(|s| *s > 0.0 && s.is_finite()).expect(key);
        (figure("estimate_s"), figure("took_s"), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    // Nothing seen here yet: a guess (from the ceilings, once cached). The run keeps the pace in
    // the cache folder.
    let (_, first_took_s, _) = sweep(&["guess", "ceilings"]);
    let kept: Vec<_> = std::fs::read_dir(dir.path().join("graylab"))
        .expect("the cache folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("pace-")))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    // The same sweep again: estimated from the run seen, near what that run took.
    let (estimate_s, _, _) = sweep(&["seen"]);
    let ratio = estimate_s / first_took_s;
    assert!(
        (1.0 / 3.0..=3.0).contains(&ratio),
        "estimated {estimate_s} s, the run before took {first_took_s} s"
    );
    // A damaged pace: said in a warning, treated as nothing seen, never an error.
    std::fs::write(&kept[0], b"{ \"machine\": 3 ").expect("damage the pace");
    let (_, _, stderr) = sweep(&["guess", "ceilings"]);
    // Said once, though the command reads the pace before its job and again to keep it.
    assert_eq!(stderr.matches("the kept pace is not readable").count(), 1, "{stderr}");
    assert!(std::fs::read(&kept[0]).is_ok_and(|b| serde_json::from_slice::<serde_json::Value>(&b).is_ok()));
}

#[test]
fn sweep_writes_json_and_csv_with_every_series() {
    let dir = tempfile::tempdir().expect("temp dir");
    let with_gpu = common::gpu().is_some();
    let mut args =
        vec!["sweep", "--sizes", "0.01,0.002,0.05", "--runs", "2", "--json", "s.json", "--csv", "s.csv"];
    if !with_gpu {
        args.push("--cpu-only");
    }
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    // A crossover is stated only where the GPU was measured.
    assert_eq!(text(&o).contains("crossover"), with_gpu, "{}", text(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).expect("json written"))
            .expect("valid JSON");
    // What the one estimator said before it started, and what it took.
    for key in ["estimate_s", "took_s"] {
        assert!(json[key].as_f64().is_some_and(|s| s > 0.0 && s.is_finite()), "{key}: {}", json[key]);
    }
    let points = json["points"].as_array().expect("points");
    assert_eq!(points.len(), 3);
    let sizes: Vec<f64> = points.iter().filter_map(|p| p["megapixels"].as_f64()).collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "sizes sorted: {sizes:?}");
    let expected = if with_gpu { 5 } else { 2 };
    for p in points {
        let series = p["series"].as_array().expect("series");
        assert_eq!(series.len(), expected, "{p}");
        for s in series {
            let st = &s[1];
            assert!(
                st["min_ns"].as_u64() <= st["median_ns"].as_u64()
                    && st["median_ns"].as_u64() <= st["max_ns"].as_u64()
            );
            assert_eq!(st["runs"], 2);
        }
    }
    assert!(json["verdict"].as_str().is_some_and(|v| !v.is_empty()));
    // How busy the machine was: over the sweep and at each point (Linux reads it from /proc).
    if cfg!(target_os = "linux") {
        assert!(json["busy"]["others_share"].is_number(), "{}", json["busy"]);
        // A point shorter than the kernel's clock tick has none (`null`), but the field is there.
        assert!(
            points.iter().all(|p| p["busy"].is_null() || p["busy"]["others_share"].is_number()),
            "{points:?}"
        );
        assert!(points.iter().all(|p| p.get("busy").is_some()), "{points:?}");
    }
    // With a GPU each point's comparison, run in turns, carries its interval in the JSON and
    // "x (a–b)" in the table.
    for p in points.iter().filter(|_| with_gpu) {
        let c = &p["end_to_end"];
        assert!(
            ["gpu_faster", "cpu_faster", "within_noise"].contains(&c["winner"].as_str().unwrap_or("")),
            "{c}"
        );
        let i = &c["speed_up"];
        let (low, median, high) = (i["ci_low"].as_f64(), i["median"].as_f64(), i["ci_high"].as_f64());
        assert!(low <= median && median <= high && low.is_some(), "{c}");
        assert!(i["samples"].as_u64().is_some_and(|n| n >= 6) && c["rounds"].as_u64() >= Some(6), "{c}");
        assert!(c["cpu_series"] == "cpu_all" || c["cpu_series"] == "cpu1", "{c}");
    }
    if with_gpu {
        assert!(text(&o).contains("run in turns until decided"), "{}", text(&o));
        assert!(text(&o).contains("x (") && text(&o).contains("rounds against CPU"), "{}", text(&o));
        assert!(points[2]["upload_gb_per_s"].as_f64().is_some_and(|v| v > 0.0));
    }
    let csv = std::fs::read_to_string(dir.path().join("s.csv")).expect("csv written");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("megapixels,width,height,series,runs,min_ms,median_ms,max_ms,clock,op"));
    // Every row and every series of the JSON names the clock that timed it: the CPU's, the GPU's
    // whole runs on the CPU clock, its kernel as its phase was timed.
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3 * expected);
    assert!(csv.contains(",cpu1,") && csv.contains(",cpu_all,"));
    for row in &rows {
        // Then the op after the grayscale: none here.
        let row = row.strip_suffix(",none").unwrap_or_else(|| panic!("the op last: {row}"));
        let kernel = row.contains(",gpu_kernel,") && row.ends_with(",gpu-timestamp");
        assert!(kernel || row.ends_with(",cpu-clock"), "{row}");
    }
    for series in points.iter().flat_map(|p| p["series"].as_array().expect("series")) {
        assert!(series[1]["clock"].is_string(), "{series}");
    }
    // Existing reports are not replaced without --overwrite.
    let o = graylab(&args, dir.path());
    assert!(!o.status.success() && text(&o).contains("exists"), "{}", text(&o));
}

#[test]
fn claims_report_every_claim_with_measurements_a_verdict_and_why() {
    let Some(gpu) = common::gpu() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let o = graylab(&["claims", "--quick", "--json"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        o.stderr.is_empty() || !String::from_utf8_lossy(&o.stderr).contains('['),
        "no progress with --json"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["software_adapter"], gpu.is_software());
    // What the one estimator said before it started, and what it took.
    for key in ["estimate_s", "took_s"] {
        assert!(v[key].as_f64().is_some_and(|s| s > 0.0 && s.is_finite()), "{key}: {}", v[key]);
    }
    assert_eq!(v["quick"], true);
    let claims = v["claims"].as_array().expect("claims");
    let ids: Vec<u64> = claims.iter().filter_map(|c| c["id"].as_u64()).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for c in claims {
        for field in ["claim", "experiment", "why"] {
            assert!(c[field].as_str().is_some_and(|s| s.len() > 10), "claim {}: {field}", c["id"]);
        }
        let verdict = c["verdict"].as_str().expect("verdict");
        assert!(
            verdict == "holds here"
                || verdict == "does not hold here"
                || verdict == "inconclusive here"
                || (verdict.starts_with("holds from ") && verdict.ends_with(" on")),
            "{verdict}"
        );
        let ms = c["measurements"].as_array().expect("measurements");
        assert!(!ms.is_empty(), "claim {}", c["id"]);
        for m in ms {
            let value = m["value"].as_f64().expect("a value");
            assert!(value.is_finite(), "{m}");
            assert!(m["unit"].as_str().is_some_and(|u| !u.is_empty()), "{m}");
            assert!(m["clock"].as_str().is_some_and(|u| !u.is_empty()), "{m}");
            // A median of enough samples carries its 95% interval, around it.
            if let (Some(low), Some(high)) = (m["ci_low"].as_f64(), m["ci_high"].as_f64()) {
                assert!(low <= value && value <= high && m["samples"].as_u64() >= Some(6), "{m}");
            }
        }
        // Every verdict rests on at least one ratio sampled in turns, never on one warm run:
        // at least six rounds, an interval, and a decision that agrees with the verdict.
        let evidence = c["evidence"].as_array().expect("evidence");
        assert!(!evidence.is_empty(), "claim {}", c["id"]);
        for e in evidence {
            let i = &e["interval"];
            assert!(i["samples"].as_u64() >= Some(6), "{e}");
            let (low, high) = (i["ci_low"].as_f64().expect("low"), i["ci_high"].as_f64().expect("high"));
            let threshold = e["threshold"].as_f64().expect("threshold");
            let decision = e["decision"].as_str().expect("decision");
            let expected = if low > threshold {
                "above"
            } else if high < threshold {
                "below"
            } else {
                "within"
            };
            assert_eq!(decision, expected, "{e}");
        }
        // Inconclusive: within the noise, or measured while other processes took most of the
        // machine, which the reason says.
        if verdict == "inconclusive here" {
            let overwhelmed = c["why"].as_str().is_some_and(|w| w.contains("; not decided: "));
            assert!(overwhelmed || evidence.iter().any(|e| e["decision"] == "within"), "claim {}", c["id"]);
        }
        // On a software adapter every verdict says what the "GPU" is.
        assert_eq!(c["why"].as_str().is_some_and(|w| w.contains("CPU's own cores")), gpu.is_software());
    }
    // Claim 4 names its timings.
    let names: Vec<&str> = claims[3]["measurements"]
        .as_array()
        .expect("claim 4")
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    // On a software adapter also the submits' own CPU time, on which it is decided (the clock
    // around them counts the thread's wait for a core the "GPU" holds).
    let own_cpu = gpu.is_software() && cfg!(unix);
    let timings: &[&str] = if own_cpu {
        &["submit only, no wait", "the submits' own CPU time", "submit and wait"]
    } else {
        &["submit only, no wait", "submit and wait"]
    };
    assert!(names.starts_with(timings), "{names:?}");
    let statistic = claims[3]["evidence"][0]["statistic"].as_str().unwrap_or_default();
    assert_eq!(statistic.ends_with("the submits' CPU time"), own_cpu, "{statistic}");
    if gpu.timestamps().passes {
        assert!(names.contains(&"GPU timestamps"), "{names:?}");
    }
    // Claims 5 and 9 set the copies' fitted latencies against the CPU's rate: the size below
    // which no GPU wins, in the measurements and in the reason.
    for (index, floor_unit, latency) in
        [(4, "KiB", "copies' latency (fitted)"), (8, "MP", "upload latency (fitted)")]
    {
        let ms = claims[index]["measurements"].as_array().expect("measurements");
        let measurement =
            |name: &str| ms.iter().find(|m| m["name"] == name).unwrap_or_else(|| panic!("{name}: {ms:?}"));
        assert!(measurement(latency)["value"].as_f64().is_some_and(|us| us >= 0.0), "{ms:?}");
        let floor = measurement("latency floor");
        assert_eq!(floor["unit"], floor_unit);
        assert!(floor["value"].as_f64().is_some_and(|v| v >= 0.0), "{floor}");
        let why = claims[index]["why"].as_str().unwrap_or_default();
        assert!(why.contains("no GPU wins, however fast"), "claim {}: {why}", index + 1);
    }
    claim_10_is_the_dither_against_the_cpu_at_each_size(&claims[9]);
    // Without --json: one block per claim.
    let o = graylab(&["claims", "--quick"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("   verdict: ").count(), 10, "{out}");
}

/// Claim 10, the tutorial's last: the dither's GPU wavefront against the CPU's loop, at each
/// size with its interval, the blur beside it.
fn claim_10_is_the_dither_against_the_cpu_at_each_size(tenth: &serde_json::Value) {
    assert!(tenth["claim"].as_str().is_some_and(|c| c.starts_with("Sequential operations")), "{tenth}");
    let statistics: Vec<&str> = tenth["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(|e| e["statistic"].as_str())
        .collect();
    assert_eq!(statistics, ["GPU / CPU dither at 1 MP", "GPU / CPU dither at 4 MP"]);
    let why = tenth["why"].as_str().unwrap_or_default();
    assert!(why.contains("the GPU's dither") && why.contains("GPU / CPU dither at 4 MP"), "{why}");
}

#[test]
fn work_per_pixel_from_the_command_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (w, h) = (61, 23);
    let rgba = RgbaImage::from_raw(w, h, common::noise((w * h * 4) as usize, 61)).expect("size");
    DynamicImage::ImageRgba8(rgba).save(dir.path().join("in.png")).expect("save");
    let work = ["--work", "9", "--divergent", "--work-mask", "0xff"];
    let mut outputs = Vec::new();
    let backends: &[&str] = if common::gpu().is_some() { &["cpu", "gpu"] } else { &["cpu"] };
    for backend in backends {
        let out = format!("{backend}.png");
        let mut args = vec!["convert", "in.png", "-o", &out, "--backend", backend];
        args.extend(work);
        let o = graylab(&args, dir.path());
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("work 9 rounds/px (synthetic, divergent"), "{}", text(&o));
        outputs.push(image::open(dir.path().join(&out)).expect("output"));
    }
    let o = graylab(&["convert", "in.png", "-o", "plain.png", "--json"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("convert JSON");
    assert_eq!(json[0]["run"]["work_rounds"], 0);
    let plain = image::open(dir.path().join("plain.png")).expect("plain");
    // CPU (converted inside the PNG stripes) and GPU agree, gray changed and alpha kept.
    for out in &outputs {
        assert_eq!(out.as_bytes(), outputs[0].as_bytes());
        assert_ne!(out.as_bytes(), plain.as_bytes());
        let alpha = |i: &DynamicImage| i.to_luma_alpha8().pixels().map(|p| p[1]).collect::<Vec<_>>();
        assert_eq!(alpha(out), alpha(&plain));
    }
    let o = graylab(
        &["bench", "--synthetic", "33x17", "--backend", "cpu", "--runs", "1", "--work", "16", "--json"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("bench JSON");
    let r = &json["results"][0];
    assert_eq!((r["work_rounds"].as_u64(), r["divergent"].as_bool()), (Some(16), Some(false)));
    assert_eq!(r["ops_per_byte"].as_f64(), Some(13.75), "(48 + the formula's 7) / 4");
    assert!(r["kernel_ops_per_s"].as_f64().is_some_and(|v| v > 0.0), "{r}");
    let o = graylab(&["bench", "--work", "-1"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn sweep_from_a_very_wide_photo_stays_near_its_prediction() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 20000 x 1 swept to 1 MP (1224 x 816): resized vertically first, the float intermediate
    // alone was 20000 x 816 x 16 bytes = 261 MB; horizontally first it is 16 MB.
    image::RgbImage::from_fn(20_000, 1, |x, _| image::Rgb([(x % 256) as u8, (x / 256) as u8, 9]))
        .save(dir.path().join("wide.png"))
        .expect("save");
    let run = common::graylab_cmd(dir.path())
        .env("RUST_LOG", "graylab=debug")
        .env("GRAYLAB_MEMORY_BUDGET", "1GiB")
        .args(["sweep", "--from-image", "wide.png", "--sizes", "1", "--runs", "1", "--cpu-only"])
        .output()
        .expect("run graylab");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let peak: u64 = stderr
        .lines()
        .find_map(|l| l.split("peak resident memory: ").nth(1)?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no peak memory line in: {stderr}"));
    assert!(peak < 150 << 20, "peak {} MiB", peak >> 20);
}

#[test]
fn a_jpegs_colour_is_libjpegs_converted_as_decoded_exactly_as_opencv_would() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg");
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    for name in [
        "luma-420",
        "luma-422",
        "luma-444",
        "luma-progressive",
        "luma-restart",
        "luma-restart-tall",
        "colour-restart-tall-444",
    ] {
        let input = fixtures.join(format!("{name}.jpg"));
        let input = input.to_str().expect("utf-8 path");
        // OpenCV's `cvtColor(imread(…), COLOR_BGR2GRAY)`: bt601 of libjpeg's RGB (djpeg's).
        let rgb = image::open(fixtures.join(format!("{name}.djpeg.png"))).expect("reference").to_rgb8();
        let mut expected = vec![0u8; (rgb.width() * rgb.height()) as usize];
        graylab::cpu::convert_reference(
            graylab::pixel::Kernel::Rgb8ToL8,
            graylab::pixel::Formula::Bt601,
            rgb.as_raw(),
            &mut expected,
        )
        .expect("reference");
        for out in ["png", "jpg"] {
            let file = format!("{name}.{out}");
            let o = graylab(&["convert", input, "-o", &file, "--json"], dir.path());
            assert!(o.status.success(), "{}", text(&o));
            let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
            let notes = report[0]["run"]["notes"].to_string();
            assert!(notes.contains("the decode, the kernel and the encode overlap"), "{name}: {notes}");
            // Bands only where the chroma is not subsampled vertically (4:4:4 here): libjpeg's
            // upsampling reads chroma rows across a band's edge.
            let banded = name == "colour-restart-tall-444" && cores > 1;
            let bands = if banded { "bands at once" } else { "on one thread" };
            assert!(notes.contains(bands), "{name}: {bands}: {notes}");
            let phases = report[0]["run"]["phases"].to_string();
            assert!(phases.contains("\"kernel\""), "{name}: {phases}");
            let written = std::fs::read(dir.path().join(&file)).expect("written");
            if out == "png" {
                let written = image::load_from_memory(&written).expect("png").to_luma8();
                assert_eq!(written.as_raw(), &expected, "{name}: bt601 of libjpeg's RGB");
            } else {
                // JPEG: byte for byte what encoding the whole converted plane gives.
                let (w, h) = rgb.dimensions();
                let plane = image::GrayImage::from_raw(w, h, expected.clone()).expect("plane");
                let whole = graylab::io::encode_to_vec(&plane.into(), graylab::io::ExportFormat::Jpeg, 90)
                    .expect("encode");
                assert_eq!(written, whole, "{name}: the same file");
            }
        }
        // The app's decode (the whole image) gives the same RGB, and converting it whole gives
        // what the stream gives for every formula and work per pixel.
        let decoded =
            graylab::io::decode_file(std::path::Path::new(input), &graylab::io::DecodeOptions::default())
                .expect("decoded");
        assert_eq!(decoded.image.to_rgb8().as_raw(), rgb.as_raw(), "{name}: libjpeg's RGB");
        let settings = graylab::engine::ConvertSettings {
            formula: graylab::pixel::Formula::Linear,
            work: graylab::pixel::Work { rounds: 2, ..graylab::pixel::Work::NONE },
            ..graylab::engine::ConvertSettings::default()
        };
        let whole = graylab::engine::Engine::cpu_only()
            .convert(&decoded.image, &settings, graylab::engine::RunOptions::default())
            .expect("converted")
            .image;
        let args =
            ["convert", input, "-o", "linear.png", "--formula", "linear", "--work", "2", "--overwrite"];
        let o = graylab(&args, dir.path());
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("converted with linear"), "{}", text(&o));
        let streamed = image::open(dir.path().join("linear.png")).expect("png");
        assert_eq!(streamed.as_bytes(), whole.as_bytes(), "{name}: linear, 2 rounds, streamed against whole");
    }
}

#[test]
fn stored_luma_file_to_file_is_decoded_while_encoded_and_equals_libjpegs_luma() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg");
    for name in ["luma-420", "luma-422", "luma-444", "luma-progressive", "luma-restart", "luma-restart-tall"]
    {
        let input = fixtures.join(format!("{name}.jpg"));
        let input = input.to_str().expect("utf-8 path");
        let djpeg = image::open(fixtures.join(format!("{name}.djpeg-grayscale.png"))).expect("reference");
        // To PNG: exactly `djpeg -grayscale`'s pixels (the same decoder).
        let png = format!("{name}.png");
        let o = graylab(&["convert", input, "-o", &png, "--formula", "stored-luma", "--json"], dir.path());
        assert!(o.status.success(), "{}", text(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let notes = report[0]["run"]["notes"].to_string();
        assert!(notes.contains("the decode and the encode overlap"), "{name}: {notes}");
        // 400 rows with a restart at each MCU row: bands decoded at once where there are cores.
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let bands = if name == "luma-restart-tall" && cores > 1 { "bands at once" } else { "on one thread" };
        assert!(notes.contains(bands), "{name}: {bands}: {notes}");
        let spans = &report[0]["run"]["spans"];
        assert_eq!((spans[0]["lane"].as_str(), spans[1]["lane"].as_str()), (Some("decode"), Some("encode")));
        let written = image::open(dir.path().join(&png)).expect("png");
        assert_eq!(
            written.as_bytes(),
            djpeg.to_luma8().as_raw().as_slice(),
            "{name}: djpeg -grayscale's pixels"
        );
        // To JPEG: byte for byte what encoding the whole decoded plane gives.
        let jpg = format!("{name}.jpg");
        let o = graylab(&["convert", input, "-o", &jpg, "--formula", "stored-luma"], dir.path());
        assert!(o.status.success(), "{}", text(&o));
        let whole = graylab::io::encode_to_vec(&djpeg.to_luma8().into(), graylab::io::ExportFormat::Jpeg, 90)
            .expect("encode");
        assert_eq!(std::fs::read(dir.path().join(&jpg)).expect("jpg"), whole, "{name}: the same file");
    }
    // A JPEG with an orientation to apply is decoded whole and turned, as for any formula.
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95)
        .encode_image(&image::RgbImage::from_fn(4, 2, |x, y| {
            image::Rgb([(x * 60) as u8, (y * 90) as u8, 30])
        }))
        .expect("encode jpeg");
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0".to_vec();
    exif.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]);
    let mut rotated = jpeg[..2].to_vec();
    rotated.extend_from_slice(&[0xFF, 0xE1]);
    rotated.extend_from_slice(&((exif.len() + 2) as u16).to_be_bytes());
    rotated.extend_from_slice(&exif);
    rotated.extend_from_slice(&jpeg[2..]);
    std::fs::write(dir.path().join("rotated.jpg"), rotated).expect("write");
    let o =
        graylab(&["convert", "rotated.jpg", "-o", "rotated.jpg.png", "--formula", "stored-luma"], dir.path());
    assert!(o.status.success() && text(&o).contains("EXIF orientation applied"), "{}", text(&o));
    assert!(!text(&o).contains("overlap"), "{}", text(&o));
    let turned = image::open(dir.path().join("rotated.jpg.png")).expect("png");
    assert_eq!((turned.width(), turned.height()), (2, 4));
}

#[test]
fn stored_luma_writes_the_luma_a_jpeg_stores_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg");
    std::fs::copy(fixtures.join("luma-420.jpg"), dir.path().join("in.jpg")).expect("copy");
    std::fs::copy(fixtures.join("stored-rgb.jpg"), dir.path().join("rgb.jpg")).expect("copy");
    for backend in ["cpu", "gpu"] {
        if backend == "gpu" && common::gpu().is_none() {
            continue;
        }
        let out = format!("out-{backend}.png");
        let args = ["convert", "in.jpg", "-o", &out, "--formula", "stored-luma", "--backend", backend];
        let o = graylab(&args, dir.path());
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("luma as stored in the JPEG"), "{}", text(&o));
        // Nothing was converted, so no kernel and nothing moved to the GPU.
        assert!(!text(&o).contains("upload"), "{}", text(&o));
        let written = image::open(dir.path().join(&out)).expect("output");
        let stored = graylab::io::decode_file(
            &dir.path().join("in.jpg"),
            &graylab::io::DecodeOptions { stored_luma: true, ..Default::default() },
        )
        .expect("decode");
        assert_eq!(written.as_bytes(), stored.image.as_bytes(), "{backend}: the stored luma, unchanged");
    }
    // A JPEG that stores RGB is converted with bt601, and the report says why.
    let o = graylab(&["convert", "rgb.jpg", "-o", "rgb.png", "--formula", "stored-luma"], dir.path());
    assert!(o.status.success() && text(&o).contains("the JPEG stores RGB"), "{}", text(&o));
    // Its colour is libjpeg's, as every complete JPEG's (OpenCV's pixels).
    let colour =
        graylab::io::decode_file(&dir.path().join("rgb.jpg"), &graylab::io::DecodeOptions::default())
            .expect("rgb")
            .image;
    let written = image::open(dir.path().join("rgb.png")).expect("output");
    assert_eq!(written.as_bytes(), expected_gray(&colour, graylab::pixel::Formula::Bt601));
}
