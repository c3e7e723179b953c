//! Tests of [`super`]: figures found by what they are and named by their settings, and each
//! judged against the threshold and its noise.

use super::{Better, Change, CompareError, Comparison, Figure, Unit, kind_of};
use serde_json::{Value, json};

/// [`super::compare`] of two results that hold no corrupt figure.
fn compare(base: &Value, new: &Value, threshold: f64) -> Comparison {
    super::compare(base, new, threshold).expect("no corrupt figure")
}

/// [`super::figures`] of a result that holds no corrupt figure.
fn figures(json: &Value) -> Vec<Figure> {
    super::figures(json).expect("no corrupt figure")
}

fn bench(kernel: [u64; 3], total: [u64; 3]) -> serde_json::Value {
    let stats = |[min, median, max]: [u64; 3], extra: serde_json::Value| {
        let mut s = json!({ "min_ns": min, "median_ns": median, "max_ns": max, "runs": 9 });
        if let (Some(s), Some(extra)) = (s.as_object_mut(), extra.as_object()) {
            s.extend(extra.clone());
        }
        s
    };
    let settings = json!({ "backend": "gpu", "formula": "bt601", "workgroup": { "x": 16, "y": 16 },
                           "threads": 2, "work": { "rounds": 0 } });
    json!({
        "schema": 1, "kind": "bench", "provenance": { "host": { "threads": 2 } },
        "results": [{
            "settings": settings,
            "cold": { "total_ns": 99 },
            "phases": [stats(kernel, json!({ "phase": "kernel", "source": "gpu-timestamp" }))],
            "total": stats(total, json!({})),
            "rates": [{ "phase": "kernel", "gb_per_s": 3.0 }],
        }],
        "ceilings": { "ceilings": { "device_copy": { "bytes": 1_000_000_000u64, "best_ns": 90, "median_ns": 100 } } },
    })
}

#[test]
fn figures_are_found_by_what_they_are_and_named_by_their_path() {
    let found = figures(&bench([90, 100, 120], [180, 200, 260]));
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ceilings · device_copy",
            "gpu wg 16x16 bt601 · kernel [gpu-timestamp]",
            "gpu wg 16x16 bt601 · total"
        ]
    );
    // A probe is a rate at its best, the ceiling: 1 GB in 90 ns, higher is better; its median
    // (100 ns, 1e7 GB/s) bounds its noise.
    assert_eq!(
        (found[0].unit.clone(), found[0].value, found[0].better),
        (Unit::GbPerS, 1e9 / 90.0, Better::Higher)
    );
    assert_eq!(found[0].interval, Some((1e7, 1e9 / 90.0)));
    assert_eq!(
        (found[1].unit.clone(), found[1].better, found[1].interval),
        (Unit::Ns, Better::Lower, Some((90.0, 120.0)))
    );
    assert_eq!(found[2].interval, Some((180.0, 260.0)));
    assert_eq!(kind_of(&bench([1, 1, 1], [1, 1, 1])).as_deref(), Some("bench"));
    // An op after the grayscale names the figure: a blur:8 run is never set against a blur:4 one.
    let mut blurred = bench([1, 1, 1], [1, 1, 1]);
    blurred["results"][0]["settings"]["op"] = json!("blur:8");
    assert_eq!(figures(&blurred)[1].name, "gpu wg 16x16 bt601 then blur:8 · kernel [gpu-timestamp]");
    blurred["results"][0]["settings"]["op"] = json!("none");
    assert_eq!(figures(&blurred)[1].name, "gpu wg 16x16 bt601 · kernel [gpu-timestamp]");
    assert_eq!(kind_of(&json!({ "points": [] })).as_deref(), Some("sweep"), "an unstamped file");
}

#[test]
fn figures_of_another_image_work_clock_pass_count_or_op_are_other_figures() {
    let base = bench([90, 100, 120], [180, 200, 260]);
    let changed = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut new = base.clone();
        edit(&mut new);
        let c = compare(&base, &new, 0.10);
        (c.rows.len(), c.only_base.len(), c.only_new.len())
    };
    // The device copy is still compared; the run's kernel and total are not.
    assert_eq!(changed(&|_| ()), (3, 0, 0));
    let result = |v: &mut serde_json::Value| v["results"][0].take();
    assert_eq!(
        changed(&|v| {
            let mut r = result(v);
            r["width"] = json!(4096);
            r["height"] = json!(2048);
            v["results"][0] = r;
        }),
        (1, 2, 2),
        "another image"
    );
    assert_eq!(
        changed(&|v| v["results"][0]["settings"]["work"] = json!({ "rounds": 64, "divergent": true })),
        (1, 2, 2),
        "divergent work"
    );
    assert_eq!(
        changed(&|v| v["results"][0]["phases"][0]["source"] = json!("cpu-clock")),
        (2, 1, 1),
        "a clock"
    );
    // Pass counts and a sweep's ops name their points; a median time with its interval is a time.
    let point = |passes: u64, ns: f64| json!({ "passes": passes, "gpu_kernel_ns": { "median": ns, "ci_low": ns, "ci_high": ns } });
    let passes = |counts: &[(u64, f64)]| {
        json!({ "kind": "round_trips", "width": 64, "height": 64,
        "points": counts.iter().map(|&(p, ns)| point(p, ns)).collect::<Vec<_>>() })
    };
    let found = figures(&passes(&[(1, 5.0), (4, 9.0)]));
    assert_eq!(found[1].name, "64x64 · 4 passes · gpu_kernel_ns");
    assert_eq!((found[1].unit.clone(), found[1].better), (Unit::Ns, Better::Lower));
    let c = compare(&passes(&[(1, 5.0), (2, 6.0)]), &passes(&[(4, 9.0), (8, 20.0)]), 0.10);
    assert!(c.rows.is_empty() && c.only_base.len() == 2, "{c:?}");
    let sweep = |op: &str| {
        json!({ "kind": "sweep", "points": [{ "megapixels": 1.0, "op": op,
        "series": [["cpu1", { "min_ns": 9, "median_ns": 10, "max_ns": 11, "runs": 3 }]] }] })
    };
    assert_eq!(figures(&sweep("blur:4"))[0].name, "1 MP then blur:4 · cpu1");
    assert!(compare(&sweep("blur:1"), &sweep("blur:16"), 0.10).rows.is_empty());
}

/// The rows, the figures only in the base and only in the new result of `base` against `new`.
fn apart(base: &Value, new: &Value) -> (usize, usize, usize) {
    let c = compare(base, new, 0.10);
    (c.rows.len(), c.only_base.len(), c.only_new.len())
}

/// `json` with `edit` made.
fn edited(json: &Value, edit: impl Fn(&mut Value)) -> Value {
    let mut new = json.clone();
    edit(&mut new);
    new
}

#[test]
fn a_bench_run_of_other_settings_or_with_its_input_kept_on_the_gpu_is_another_run() {
    let base = bench([90, 100, 120], [180, 200, 260]);
    let kept = edited(&base, |v| v["results"][0]["input_kept_on_gpu"] = json!(true));
    assert_eq!(figures(&kept)[1].name, "gpu wg 16x16 bt601 input kept on GPU · kernel [gpu-timestamp]");
    assert_eq!(apart(&base, &kept), (1, 2, 2), "only the device copy is compared");
    let not_kept = edited(&base, |v| v["results"][0]["input_kept_on_gpu"] = json!(false));
    assert_eq!(apart(&base, &not_kept), (3, 0, 0), "not kept, as the base");
    let settings = |v: &mut Value| v["results"][0]["settings"].take();
    let wide = edited(&base, |v| {
        let mut s = settings(v);
        s["workgroup"] = json!({ "x": 256, "y": 1 });
        v["results"][0]["settings"] = s;
    });
    assert_eq!(figures(&wide)[2].name, "gpu wg 256 bt601 · total");
    assert_eq!(apart(&base, &wide), (1, 2, 2), "another workgroup");
    let linear = edited(&base, |v| v["results"][0]["settings"]["formula"] = json!("linear"));
    assert_eq!(apart(&base, &linear), (1, 2, 2), "another formula");
    // On the CPU the threads name the run, the workgroup does not: all the machine's cores (its
    // provenance says 2), unless the command asked for a count.
    let cpu = edited(&base, |v| v["results"][0]["settings"]["backend"] = json!("cpu"));
    assert_eq!(figures(&cpu)[2].name, "cpu all cores bt601 · total");
    let one = edited(&cpu, |v| v["results"][0]["settings"]["threads"] = json!(1));
    assert_eq!(apart(&cpu, &one), (1, 2, 2), "another thread count");
    assert_eq!(
        apart(&cpu, &edited(&cpu, |v| v["results"][0]["settings"]["workgroup"]["x"] = json!(64))),
        (3, 0, 0)
    );
}

#[test]
fn a_file_of_one_setup_names_its_figures_by_it() {
    // Round trips: image, formula, workgroup, threads and work at the top; the time per
    // operation and the same rounds' medians with intervals are not figures of their own.
    let stats = json!({ "min_ns": 9, "median_ns": 10, "max_ns": 11, "runs": 3 });
    let interval = json!({ "median": 10.0, "ci_low": 9.0, "ci_high": 11.0, "samples": 3 });
    let trips = json!({ "kind": "round_trips", "width": 64, "height": 48, "formula": "bt601",
        "workgroup": { "x": 256, "y": 1 }, "cpu_threads": 2, "work_rounds": 0, "divergent": false,
        "points": [{ "passes": 1, "cpu_total_ns": stats, "cpu_per_op_ns": stats, "cpu_ns": interval,
                     "gpu_ns": interval, "gpu_per_op_ns": 10.0 }] });
    let names = |json: &Value| figures(json).into_iter().map(|f| f.name).collect::<Vec<_>>();
    // Without a provenance the machine's cores are not known: the CPU's count names its figures.
    assert_eq!(names(&trips), ["wg 256 bt601 64x48 · 1 passes · cpu_total_ns (2 threads)"]);
    let work = edited(&trips, |v| v["work_rounds"] = json!(64));
    assert_eq!(names(&work), ["wg 256 bt601 k=64 64x48 · 1 passes · cpu_total_ns (2 threads)"]);
    assert_eq!(apart(&trips, &work), (0, 1, 1), "other work");
    assert_eq!(apart(&trips, &edited(&trips, |v| v["cpu_threads"] = json!(1))), (0, 1, 1), "other threads");
    assert_eq!(apart(&trips, &trips), (1, 0, 0));
    // A workgroup race: each shape by its name, the race by its image, formula and work.
    let race = json!({ "kind": "workgroups", "width": 256, "height": 192, "formula": "bt601",
        "work": { "rounds": 0, "mask": 0, "divergent": false },
        "shapes": [{ "workgroup": "16x16", "kernel_ns": interval, "clock": "gpu-timestamp" }] });
    let found = figures(&race);
    assert_eq!(found[0].name, "bt601 256x192 · shapes · wg 16x16 [gpu-timestamp] · kernel_ns");
    let on_cpu_clock = edited(&race, |v| v["shapes"][0]["clock"] = json!("cpu-clock"));
    assert_eq!(apart(&race, &on_cpu_clock), (0, 1, 1), "another clock");
    assert_eq!((found[0].unit.clone(), found[0].better), (Unit::Ns, Better::Lower));
    assert_eq!(apart(&race, &edited(&race, |v| v["width"] = json!(1024))), (0, 1, 1), "another image");
    let divergent = edited(&race, |v| v["work"] = json!({ "rounds": 64, "divergent": true }));
    assert_eq!(
        names(&divergent)[0],
        "bt601 k=64 divergent 256x192 · shapes · wg 16x16 [gpu-timestamp] · kernel_ns"
    );
    // A sweep: its formula and workgroup at the top, each point's size, work and op; its CPU
    // series say their threads (`cpu1`, `cpu_all`).
    let sweep = json!({ "kind": "sweep", "formula": "bt601", "workgroup": { "x": 16, "y": 16 },
        "cpu_threads": 2, "divergent": false, "op": "blur:4",
        "points": [{ "megapixels": 1.0, "work_rounds": 8, "op": "blur:4", "series": [["cpu1", stats]] }] });
    assert_eq!(names(&sweep), ["wg 16x16 bt601 · 1 MP k=8 then blur:4 · cpu1"]);
    assert_eq!(
        apart(&sweep, &edited(&sweep, |v| v["formula"] = json!("linear"))),
        (0, 1, 1),
        "another formula"
    );
    assert_eq!(apart(&sweep, &edited(&sweep, |v| v["workgroup"]["x"] = json!(8))), (0, 1, 1));
}

#[test]
fn a_figure_is_slower_only_beyond_the_threshold_and_its_noise() {
    let base = bench([90, 100, 120], [180, 200, 260]);
    assert!(
        compare(&base, &base, 0.10).rows.iter().all(|r| r.change == Change::Same),
        "a file against itself"
    );
    // Kernel twice as slow, every run slower than every base run; total 25% slower, but its
    // runs overlap the base's.
    let slower = bench([190, 200, 230], [200, 250, 300]);
    let c = compare(&base, &slower, 0.10);
    let changes: Vec<Change> = c.rows.iter().map(|r| r.change).collect();
    assert_eq!(changes, [Change::Same, Change::Slower, Change::Noise]);
    assert!((c.rows[1].ratio - 2.0).abs() < 1e-12, "{}", c.rows[1].ratio);
    assert_eq!(c.rows[1].ratio_range, Some((190.0 / 120.0, 230.0 / 90.0)));
    // The other way round, faster.
    let back = compare(&slower, &base, 0.10);
    assert_eq!(back.rows[1].change, Change::Faster);
    assert_eq!((back.count(Change::Slower), back.count(Change::Faster)), (0, 1));
    // A threshold wider than the change: the same.
    assert_eq!(compare(&base, &slower, 1.5).count(Change::Same), 3);
    // One run on either side: no noise known, so unsure, never slower.
    let mut single = slower.clone();
    single["results"][0]["phases"][0]["runs"] = json!(1);
    let c = compare(&base, &single, 0.10);
    assert_eq!(c.rows[1].change, Change::Unsure);
    assert_eq!((c.count(Change::Slower), c.rows[1].ratio_range), (0, None));
}

const DEVICE_COPY: &str = "ceilings · device_copy";

#[test]
fn a_slower_probe_is_a_lower_rate_and_ratios_only_move() {
    let base = bench([90, 100, 120], [180, 200, 260]);
    let mut new = base.clone();
    new["ceilings"]["ceilings"]["device_copy"]["median_ns"] = json!(200);
    let c = compare(&base, &new, 0.10);
    assert_eq!(c.rows[0].change, Change::Same, "half the median bandwidth, its best (the ceiling) unchanged");
    new["ceilings"]["ceilings"]["device_copy"]["best_ns"] = json!(180);
    let c = compare(&base, &new, 0.10);
    assert_eq!(c.rows[0].change, Change::Slower, "its best below the base's median: beyond the noise");
    assert_eq!(c.rows[0].ratio_range, Some((1e9 / 200.0 / (1e9 / 90.0), 1e9 / 180.0 / (1e9 / 100.0))));
    let claim = |median: f64| {
        json!({ "claims": [{ "id": 3, "evidence": [{ "statistic": "upload / kernel",
            "interval": { "median": median, "ci_low": median * 0.9, "ci_high": median * 1.1, "samples": 9 } }] }] })
    };
    let c = compare(&claim(2.0), &claim(4.0), 0.10);
    assert_eq!(c.rows[0].base.name, "claim 3 · upload / kernel");
    assert_eq!(c.rows[0].change, Change::Moved, "a ratio has no slower side");
    assert!(c.verdicts.is_empty(), "no verdict in either");
    // A verdict that turned is listed with the claim.
    let verdict = |v: &str| json!({ "claims": [{ "id": 7, "claim": "cache-sized data", "verdict": v }] });
    let c = compare(&verdict("does not hold here"), &verdict("inconclusive here"), 0.10);
    assert_eq!(c.verdicts.len(), 1);
    let v = &c.verdicts[0];
    assert_eq!(
        (v.id, v.claim.as_str(), v.base.as_str(), v.new.as_str()),
        (7, "cache-sized data", "does not hold here", "inconclusive here")
    );
    assert!(compare(&verdict("holds here"), &verdict("holds here"), 0.10).verdicts.is_empty());
    // Figures in one file only are listed, not compared.
    let c = compare(&base, &claim(2.0), 0.10);
    assert!(c.rows.is_empty() && c.only_base.len() == 3 && c.only_new.len() == 1, "{c:?}");
    // A figure whose unit changed (a byte probe become an operation probe) is in both lists.
    let mut ops = base.clone();
    let probe = ops["ceilings"]["ceilings"]["device_copy"].as_object_mut().expect("a probe");
    let bytes = probe.remove("bytes").expect("its bytes");
    probe.insert("ops".to_owned(), bytes);
    let c = compare(&base, &ops, 0.10);
    assert_eq!(
        (c.rows.len(), &c.only_base, &c.only_new),
        (2, &vec![DEVICE_COPY.to_owned()], &vec![DEVICE_COPY.to_owned()])
    );
}

#[test]
fn results_that_share_only_the_machines_ceilings_compared_nothing_they_ran() {
    let base = bench([90, 100, 120], [180, 200, 260]);
    // The same bench with another formula: its figures are other figures, the ceilings the same.
    let other = serde_json::from_str::<Value>(&base.to_string().replace("bt601", "bt709")).expect("json");
    let c = compare(&base, &other, 0.1);
    assert_eq!(c.rows.len(), 1, "the ceilings alone are in both: {c:?}");
    assert!(!c.shares_run_figures("bench"), "{c:?}");
    assert!(compare(&base, &base, 0.1).shares_run_figures("bench"));
    // An info result's figures are the ceilings themselves.
    assert!(c.shares_run_figures("info"));
    // Two sweeps of one setup and no size in common: their ceilings carry the setup's name.
    let sweep = |mp: f64| {
        json!({ "kind": "sweep", "formula": "bt601", "cpu_threads": 2,
            "ceilings": { "device_copy": { "bytes": 1e9, "median_ns": 1e6, "best_ns": 9e5, "clock": "cpu-clock" } },
            "points": [{ "megapixels": mp, "series": [["cpu1", { "median_ns": 100, "min_ns": 90, "max_ns": 120,
                "runs": 3, "clock": "cpu-clock" }]] }] })
    };
    let c = compare(&sweep(0.5), &sweep(0.75), 0.1);
    assert_eq!((c.rows.len(), c.only_base.len(), c.only_new.len()), (1, 1, 1), "{c:?}");
    assert!(!c.shares_run_figures("sweep"), "{c:?}");
    assert!(compare(&sweep(0.5), &sweep(0.5), 0.1).shares_run_figures("sweep"));
}

#[test]
fn a_figure_of_no_better_way_without_a_range_is_unsure() {
    let claim = |value: f64| {
        json!({ "claims": [{ "id": 5, "measurements": [{ "name": "copies' latency (fitted)", "value": value,
            "unit": "µs", "clock": "cpu-clock" }] }] })
    };
    let c = compare(&claim(100.0), &claim(70.0), 0.10);
    assert_eq!(c.rows[0].name, "claim 5 · copies' latency (fitted) [cpu-clock]");
    assert_eq!(c.rows[0].change, Change::Unsure, "no interval: noise unknown, not moved");
}

#[test]
fn a_sweep_point_is_named_by_its_width_and_height() {
    // 0.001 and 0.004 MP were both "0.00 MP": one figure, 3.5 times "slower".
    let sweep = |width: u64, height: u64| {
        let mp = (width * height) as f64 / 1e6;
        json!({ "kind": "sweep", "formula": "bt601", "points": [{ "megapixels": mp, "width": width,
            "height": height, "series": [["cpu1", { "median_ns": 100, "min_ns": 90, "max_ns": 110, "runs": 5 }]] }] })
    };
    assert_eq!(figures(&sweep(39, 26))[0].name, "bt601 · 39x26 · cpu1");
    assert_eq!(apart(&sweep(39, 26), &sweep(77, 52)), (0, 1, 1));
    assert_eq!(apart(&sweep(39, 26), &sweep(39, 26)), (1, 0, 0));
}

/// A bench of one GPU run and one CPU run on `image`, on a machine of `cores` threads, run
/// with `args` on its command line.
fn bench_on(image: &str, cores: u64, args: &[&str]) -> Value {
    let stats = json!({ "min_ns": 90, "median_ns": 100, "max_ns": 110, "runs": 5, "clock": "cpu-clock" });
    let run = |backend: &str, threads: u64| {
        json!({ "settings": { "backend": backend, "formula": "bt601", "workgroup": { "x": 256, "y": 1 },
            "threads": threads, "work": { "rounds": 64, "divergent": false } },
            "width": 64, "height": 48, "total": stats })
    };
    let threads = args.iter().position(|a| *a == "--threads").and_then(|i| args[i + 1].parse().ok());
    json!({ "kind": "bench", "image": image, "cpu_threads": cores,
        "provenance": { "host": { "threads": cores }, "invocation": args },
        "results": [run("gpu", cores), run("cpu", threads.unwrap_or(cores))] })
}

#[test]
fn divergent_work_on_another_image_is_other_work() {
    let synthetic = bench_on("synthetic 64x48 Rgb8", 2, &[]);
    let photo = bench_on("/home/me/even.png (64x48 Rgb8)", 2, &[]);
    // Uniform work costs the same on any pixels of one size: compared.
    assert_eq!(apart(&synthetic, &photo), (2, 0, 0));
    let divergent = |v: &Value| {
        let mut v = v.clone();
        for run in v["results"].as_array_mut().expect("runs") {
            run["settings"]["work"]["divergent"] = json!(true);
        }
        v
    };
    let names: Vec<String> = figures(&divergent(&photo)).into_iter().map(|f| f.label()).collect();
    assert_eq!(
        names,
        [
            "gpu wg 256 bt601 k=64 divergent 64x48 of even.png · total [cpu-clock]",
            "cpu all cores bt601 k=64 divergent 64x48 of even.png · total [cpu-clock]"
        ]
    );
    assert_eq!(apart(&divergent(&synthetic), &divergent(&photo)), (0, 2, 2));
    // The same photo in another folder is the same image.
    let elsewhere = bench_on("even.png (64x48 Rgb8)", 2, &[]);
    assert_eq!(apart(&divergent(&elsewhere), &divergent(&photo)), (2, 0, 0));
    // A sweep of divergent work names its source too.
    let sweep = json!({ "kind": "sweep", "source": "synthetic", "divergent": true, "formula": "bt601",
        "points": [{ "megapixels": 0.003, "width": 64, "height": 48,
            "series": [["gpu_kernel", { "median_ns": 100, "min_ns": 90, "max_ns": 110, "runs": 5 }]] }] });
    assert_eq!(figures(&sweep)[0].name, "bt601 divergent of synthetic · 64x48 · gpu_kernel");
}

#[test]
fn all_cores_compare_across_machines_and_gpu_figures_ignore_the_threads() {
    let (two, sixteen) =
        (bench_on("synthetic 64x48 Rgb8", 2, &[]), bench_on("synthetic 64x48 Rgb8", 16, &[]));
    let c = compare(&sixteen, &two, 0.10);
    let names: Vec<&str> = c.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gpu wg 256 bt601 k=64 64x48 · total [cpu-clock]",
            "cpu all cores bt601 k=64 64x48 · total [cpu-clock]"
        ]
    );
    // A count asked with --threads stays that count: 2 asked is not all cores by default.
    let asked = bench_on("synthetic 64x48 Rgb8", 2, &["graylab", "bench", "--threads", "2"]);
    assert_eq!(figures(&asked)[1].name, "cpu 2 threads bt601 k=64 64x48 · total");
    assert_eq!(apart(&two, &asked), (1, 1, 1), "the GPU run still compared");
    // `--threads all` asks every count: its last is all cores.
    let every = bench_on("synthetic 64x48 Rgb8", 2, &["graylab", "bench", "--threads", "all"]);
    assert_eq!(apart(&two, &every), (2, 0, 0));
    // A sweep of 16 threads against one of 2: every series compared (its CPU series say their
    // threads), none named by the CPU's count.
    let sweep = |cores: u64| {
        let stats = json!({ "median_ns": 100, "min_ns": 90, "max_ns": 110, "runs": 5 });
        json!({ "kind": "sweep", "formula": "bt601", "cpu_threads": cores, "provenance": { "host": { "threads": cores } },
            "points": [{ "megapixels": 0.003, "width": 64, "height": 48,
                "series": [["cpu_all", stats], ["gpu_kernel", stats]] }] })
    };
    assert_eq!(apart(&sweep(16), &sweep(2)), (2, 0, 0));
    // Round trips: the CPU's rounds and the speed-up by all cores, the GPU's by nothing of the CPU.
    let trips = |cores: u64, threads: u64| {
        let stats = json!({ "median_ns": 100, "min_ns": 90, "max_ns": 110, "runs": 5 });
        json!({ "kind": "round_trips", "width": 64, "height": 48, "cpu_threads": threads,
            "provenance": { "host": { "threads": cores } },
            "points": [{ "passes": 1, "cpu_total_ns": stats, "gpu_total_ns": stats }] })
    };
    let names: Vec<String> = figures(&trips(16, 16)).into_iter().map(|f| f.name).collect();
    assert_eq!(names, ["64x48 · 1 passes · cpu_total_ns (all cores)", "64x48 · 1 passes · gpu_total_ns"]);
    assert_eq!(apart(&trips(16, 16), &trips(2, 2)), (2, 0, 0));
    assert_eq!(apart(&trips(16, 1), &trips(2, 2)), (1, 1, 1), "1 thread is not all cores");
}

#[test]
fn a_figure_without_a_clock_is_matched_on_any_clock_and_said_so() {
    let sweep = |clock: Option<&str>| {
        let mut stats = json!({ "median_ns": 100, "min_ns": 90, "max_ns": 110, "runs": 5 });
        if let Some(clock) = clock {
            stats["clock"] = json!(clock);
        }
        json!({ "kind": "sweep", "formula": "bt601", "points": [{ "megapixels": 0.003, "width": 64,
            "height": 48, "series": [["gpu_kernel", stats]] }] })
    };
    let (old, new) = (sweep(None), sweep(Some("gpu-timestamp")));
    let c = compare(&old, &new, 0.10);
    assert_eq!(c.rows.len(), 1, "{c:?}");
    assert_eq!(c.rows[0].name, "bt601 · 64x48 · gpu_kernel [base: clock unknown; new: gpu-timestamp]");
    let c = compare(&new, &old, 0.10);
    assert_eq!(c.rows[0].name, "bt601 · 64x48 · gpu_kernel [base: gpu-timestamp; new: clock unknown]");
    // Two known clocks that differ are two figures, each named with its clock.
    let c = compare(&new, &sweep(Some("cpu-clock")), 0.10);
    assert_eq!(
        (c.rows.len(), c.only_base.as_slice(), c.only_new.as_slice()),
        (
            0,
            &["bt601 · 64x48 · gpu_kernel [gpu-timestamp]".to_owned()][..],
            &["bt601 · 64x48 · gpu_kernel [cpu-clock]".to_owned()][..]
        )
    );
}

#[test]
fn a_figure_that_cannot_be_one_is_refused_naming_its_field() {
    let base = bench([90, 100, 120], [180, 200, 260]);
    let field = "results[0].phases[0].median_ns";
    for (median, value) in
        [(json!(-100), "-100"), (json!(null), "null"), (json!(1e300), "1e+300"), (json!("100"), "\"100\"")]
    {
        let mut bad = base.clone();
        bad["results"][0]["phases"][0]["median_ns"] = median;
        let corrupt = super::CorruptFigure {
            field: field.to_owned(),
            value: value.to_owned(),
            why: "a time must be at least 0 ns and at most a day",
        };
        assert_eq!(super::compare(&base, &bad, 0.1), Err(CompareError::New(corrupt.clone())), "{value}");
        assert_eq!(super::compare(&bad, &base, 0.1), Err(CompareError::Base(corrupt)), "{value}");
    }
    // A clock coarser than the run reads 0: measured, not corrupt. A run of 0 compares; a median
    // of 0 has no ratio, so it is no figure.
    let mut coarse = base.clone();
    coarse["results"][0]["total"]["min_ns"] = json!(0);
    assert!(super::compare(&base, &coarse, 0.1).is_ok());
    coarse["results"][0]["phases"][0]["median_ns"] = json!(0);
    let (all, fewer) = (super::figures(&base).expect("figures"), super::figures(&coarse).expect("figures"));
    assert_eq!(fewer.len() + 1, all.len(), "the 0-ns median left out, the rest kept");
    let mut bad = base.clone();
    bad["results"][0]["total"]["min_ns"] = json!(-5);
    let err = super::compare(&base, &bad, 0.1).expect_err("a negative run");
    assert_eq!(
        err.to_string(),
        "the new result holds a corrupt figure (results[0].total.min_ns is -5: a time must be at least 0 ns and at most a day)"
    );
    let mut bad = base;
    bad["ceilings"]["ceilings"]["device_copy"]["bytes"] = json!(-1);
    let err = super::figures(&bad).expect_err("negative bytes");
    assert_eq!(err.field, "ceilings.ceilings.device_copy.bytes");
}

#[test]
fn a_transfer_path_is_named_by_its_path_and_a_point_by_its_bytes() {
    let point =
        |bytes: u64| json!({ "bytes": bytes, "best_ns": 1000, "median_ns": 1100, "clock": "cpu-clock" });
    let probe = json!({ "kind": "info", "transfer_paths": [
        { "path": "write_buffer", "points": [point(4096), point(1 << 20)] },
        { "path": "readback_one_thread", "points": [point(1 << 20)] },
        { "path": "a_path_of_a_newer_graylab", "points": [point(1 << 20)] },
    ] });
    let names: Vec<String> = figures(&probe).into_iter().map(|f| f.label()).collect();
    assert_eq!(
        names,
        [
            "transfer_paths · up: queue.write_buffer · 4.0 KiB [cpu-clock]",
            "transfer_paths · up: queue.write_buffer · 1.0 MiB [cpu-clock]",
            "transfer_paths · down: readback, 1 thread · 1.0 MiB [cpu-clock]",
            "transfer_paths · a_path_of_a_newer_graylab · 1.0 MiB [cpu-clock]",
        ]
    );
    // Places in a list are never collapsed: `#2 · #2` is not `#2`.
    let places = json!({ "kind": "info", "lists": [[{}], [{}, { "median_ns": 5, "min_ns": 4, "max_ns": 6, "runs": 3 }]] });
    assert_eq!(figures(&places)[0].name, "lists · #2 · #2");
}
