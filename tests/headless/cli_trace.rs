//! `--trace FILE`: the runs of `bench` and `convert` as a Chrome trace that Perfetto opens.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{self, graylab, photo, text};

/// The trace at `path`, parsed, and its events.
fn events(path: &Path) -> Vec<Value> {
    let trace: Value = serde_json::from_slice(&std::fs::read(path).expect("trace written")).expect("JSON");
    assert_eq!(trace["displayTimeUnit"], "ms");
    trace["traceEvents"].as_array().expect("traceEvents").clone()
}

/// Each process's name and the names of its tracks.
fn names(events: &[Value]) -> (HashMap<u64, String>, HashMap<(u64, u64), String>) {
    let mut processes = HashMap::new();
    let mut tracks = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "M") {
        let (pid, tid) = (e["pid"].as_u64().expect("pid"), e["tid"].as_u64().expect("tid"));
        let name = e["args"]["name"].as_str().unwrap_or_default().to_owned();
        match e["name"].as_str() {
            Some("process_name") => {
                processes.insert(pid, name);
            }
            Some("thread_name") => {
                tracks.insert((pid, tid), name);
            }
            _ => {}
        }
    }
    (processes, tracks)
}

/// Every complete event lies within its run's event (track 0), on a named track, with a clock.
fn assert_within_runs(events: &[Value], tracks: &HashMap<(u64, u64), String>) {
    let runs: HashMap<u64, f64> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == 0)
        .map(|e| (e["pid"].as_u64().expect("pid"), e["dur"].as_f64().expect("dur")))
        .collect();
    for e in events.iter().filter(|e| e["ph"] == "X" && e["tid"] != 0) {
        let (pid, tid) = (e["pid"].as_u64().expect("pid"), e["tid"].as_u64().expect("tid"));
        let (ts, dur) = (e["ts"].as_f64().expect("ts"), e["dur"].as_f64().expect("dur"));
        let run = runs.get(&pid).copied().expect("every process has its run event");
        // Spans are placed on the run's CPU clock: within it, to a microsecond's rounding.
        assert!(ts >= 0.0 && dur >= 0.0 && ts + dur <= run + 1.0, "{e} outside its run of {run} µs");
        assert!(tracks.contains_key(&(pid, tid)), "{e} on a track without a name");
        assert!(e["args"]["clock"].as_str().is_some_and(|c| !c.is_empty()), "{e} says no clock");
    }
}

#[test]
fn bench_writes_every_run_as_a_trace_with_cpu_and_gpu_tracks() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 640x400: 4 chunks, so the CPU's threads share them (one chunk runs on the caller).
    let args = ["bench", "--synthetic", "640x400", "--backend", "all", "--runs", "2", "--trace", "t.json"];
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("ui.perfetto.dev"), "{}", text(&o));
    let events = events(&dir.path().join("t.json"));
    let (processes, tracks) = names(&events);
    // A cold and two warm runs of each backend, each its own process.
    assert_eq!(processes.len(), 6, "{processes:?}");
    assert_eq!(processes.values().filter(|p| p.contains("· cold")).count(), 2, "{processes:?}");
    assert!(processes.values().any(|p| p.starts_with("gpu · workgroup") && p.contains("warm 2 of 2")));
    let gpu_kernel = tracks.values().filter(|t| *t == "GPU queue · kernel").count();
    let cpu_kernel = tracks.values().filter(|t| *t == "CPU · kernel").count();
    assert_eq!((gpu_kernel, cpu_kernel), (3, 3), "{tracks:?}");
    assert!(tracks.values().any(|t| t == "GPU queue · upload copies"), "{tracks:?}");
    assert!(tracks.values().any(|t| t.starts_with("CPU · host copy")), "{tracks:?}");
    // A CPU kernel on more than one thread: a track per thread, its chunks in stretches.
    let parallel = std::thread::available_parallelism().map_or(1, std::num::NonZero::get) > 1;
    assert_eq!(tracks.values().any(|t| t.starts_with("CPU · kernel · thread")), parallel, "{tracks:?}");
    assert_within_runs(&events, &tracks);
    // GPU steps say how they were timed.
    let gpu_clocks: Vec<&str> =
        events.iter().filter(|e| e["cat"] == "gpu").filter_map(|e| e["args"]["clock"].as_str()).collect();
    assert!(!gpu_clocks.is_empty());
    assert!(
        gpu_clocks.iter().all(|c| matches!(
            *c,
            "gpu-timestamp, calibrated"
                | "gpu-timestamp, placed at submit"
                | "cpu-clock, around its submission"
        )),
        "{gpu_clocks:?}"
    );
    // Each GPU run says how its GPU steps sit on the CPU clock, and its steps agree.
    for (pid, process) in processes.iter().filter(|(_, p)| p.starts_with("gpu")) {
        let run = events.iter().find(|e| e["pid"] == *pid && e["name"] == "run").expect("run event");
        let said = run["args"]["gpu_clock"].as_str().unwrap_or_default();
        let calibrated =
            events.iter().any(|e| e["pid"] == *pid && e["args"]["clock"] == "gpu-timestamp, calibrated");
        assert_eq!(said.contains("calibration, within"), calibrated, "{process}: {said}");
    }

    // A run with work and an op says so in its name and its settings (two settings never share
    // a name: they did at 0 and 256 rounds).
    let heavy = ["bench", "--synthetic", "64x48", "--backend", "cpu", "--runs", "1", "--work", "16"];
    let o = graylab(&[&heavy[..], &["--op", "blur:2", "--trace", "w.json"]].concat(), dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let heavy_events = self::events(&dir.path().join("w.json"));
    let (processes, _) = names(&heavy_events);
    assert!(processes.values().all(|p| p.contains("· 16 rounds/px · then blur:2 ·")), "{processes:?}");
    let run = heavy_events.iter().find(|e| e["name"] == "run").expect("run event");
    assert_eq!(
        (&run["args"]["work_rounds"], &run["args"]["op"]),
        (&serde_json::json!(16), &serde_json::json!("blur:2"))
    );

    // Never over an existing file unless asked.
    let o = graylab(&args, dir.path());
    assert!(!o.status.success() && text(&o).contains("--overwrite"), "{}", text(&o));
    let o = graylab(&[&args[..], &["--overwrite"]].concat(), dir.path());
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn convert_traces_each_file_from_decode_to_encode_and_never_over_an_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    photo(97, 61).save(dir.path().join("a.png")).expect("save");
    photo(64, 40).save(dir.path().join("b.png")).expect("save");
    std::fs::create_dir(dir.path().join("out")).expect("out dir");
    let o = graylab(&["convert", "a.png", "b.png", "--out-dir", "out", "--trace", "c.json"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let events = events(&dir.path().join("c.json"));
    let (processes, tracks) = names(&events);
    assert_eq!(processes.len(), 2, "one process per file: {processes:?}");
    assert!(processes.values().any(|p| p == "cpu · a.png · bt601 · 97x61"), "{processes:?}");
    for lane in ["CPU · decode", "CPU · encode"] {
        assert_eq!(tracks.values().filter(|t| *t == lane).count(), 2, "{lane}: {tracks:?}");
    }
    // The CPU converts rows inside the encoder's stripes: its kernel time is in the run's phases;
    // each thread's track holds its stripes, each with its kernel inside, within the encode.
    let extent = |e: &Value| {
        let ts = e["ts"].as_f64().unwrap_or(-1.0);
        (ts, ts + e["dur"].as_f64().unwrap_or(0.0))
    };
    for run in events.iter().filter(|e| e["ph"] == "X" && e["tid"] == 0) {
        let kernel = &run["args"]["phases"]["kernel"];
        assert!(kernel["ms"].as_f64().is_some_and(|ms| ms > 0.0) && kernel["clock"] == "cpu-clock", "{run}");
        let pid = &run["pid"];
        let on_track = |pick: &dyn Fn(&str) -> bool| -> Vec<&Value> {
            let tids: Vec<u64> =
                tracks.iter().filter(|((p, _), n)| pid == p && pick(n)).map(|((_, t), _)| *t).collect();
            events
                .iter()
                .filter(|e| {
                    e["ph"] == "X" && e["pid"] == *pid && tids.contains(&e["tid"].as_u64().unwrap_or(0))
                })
                .collect()
        };
        let encode = on_track(&|n| n == "CPU · encode");
        let threads = on_track(&|n| n.starts_with("CPU · encoder thread"));
        let named = |prefix: &str| -> Vec<&Value> {
            threads
                .iter()
                .copied()
                .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
                .collect()
        };
        let (stripes, kernels) = (named("encode stripes"), named("kernel stripes"));
        assert!(!stripes.is_empty() && !kernels.is_empty() && encode.len() == 1, "{run}: {tracks:?}");
        let (from, to) = extent(encode[0]);
        for s in &stripes {
            let (start, end) = extent(s);
            assert!(start + 1.0 >= from && end <= to + 1.0, "{s} outside the encode");
        }
        // PNG also filters a sample of single rows first: those kernels have no stripe.
        let nested = kernels
            .iter()
            .filter(|k| {
                let (start, end) = extent(k);
                stripes
                    .iter()
                    .any(|s| s["tid"] == k["tid"] && extent(s).0 <= start + 1.0 && end <= extent(s).1 + 1.0)
            })
            .count();
        assert!(nested >= stripes.len(), "{nested} kernels in {} stripes", stripes.len());
    }
    assert_within_runs(&events, &tracks);

    // A trace over the photo would destroy it: refused before any work, the photo untouched.
    let before = std::fs::read(dir.path().join("a.png")).expect("read");
    let o = graylab(&["convert", "a.png", "-o", "a2.png", "--overwrite", "--trace", "a.png"], dir.path());
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("--trace would replace its own input: a.png"), "{}", text(&o));
    assert_eq!(std::fs::read(dir.path().join("a.png")).expect("read"), before);
    assert!(!dir.path().join("a2.png").exists());
}

/// A convert in which no file converted writes no trace and says so in one line (before: a
/// trace of no runs left behind after the error); where some converted, theirs is kept.
#[test]
fn a_convert_that_converts_nothing_leaves_no_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(64, 48).save(d.join("x.jpg")).expect("save");
    let whole = std::fs::read(d.join("x.jpg")).expect("read");
    std::fs::write(d.join("trunc.jpg"), &whole[..whole.len() / 2]).expect("write");
    std::fs::write(d.join("notimg.jpg"), b"not an image").expect("write");
    std::fs::write(d.join("empty.png"), b"").expect("write");
    let cases: [(&[&str], &str); 2] = [
        (&["convert", "trunc.jpg"], "t3.json"),
        (&["convert", "notimg.jpg", "empty.png", "--out-dir", "od2"], "t2.json"),
    ];
    for (args, trace) in cases {
        let o = graylab(&[args, &["--trace", trace]].concat(), d);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let said = format!("trace: not written, no file was converted (nothing to trace): {trace}");
        assert_eq!(err.matches(&said).count(), 1, "{args:?}: {err}");
        assert!(!err.contains("events"), "{args:?}: {err}");
        assert!(!d.join(trace).exists(), "{args:?}: no trace left behind");
    }
    assert!(!d.join("od2").exists(), "nor the folder made for the outputs");
    // One file converted, one failed: the trace of the one converted is kept.
    let o = graylab(&["convert", "x.jpg", "notimg.jpg", "--out-dir", "od", "--trace", "t1.json"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("trace: t1.json ("), "{}", text(&o));
    let (processes, _) = names(&events(&d.join("t1.json")));
    assert_eq!(processes.len(), 1, "{processes:?}");
}

#[test]
fn sweep_traces_each_points_cold_and_last_warm_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = ["sweep", "--sizes", "0.01,0.05", "--runs", "2", "--trace", "s.json", "--json", "r.json"];
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let events = events(&dir.path().join("s.json"));
    let (processes, tracks) = names(&events);
    for mp in ["0.01 MP", "0.05 MP"] {
        let at: Vec<&String> = processes.values().filter(|p| p.contains(mp)).collect();
        // Each series measured (all threads, maybe one thread, the GPU): a cold and a warm run.
        assert!(at.len() >= 4 && at.len().is_multiple_of(2), "{mp}: {at:?}");
        assert!(at.iter().any(|p| p.starts_with("gpu · ") && p.contains("· cold")), "{mp}: {at:?}");
        assert!(
            at.iter().any(|p| p.starts_with("cpu · ") && p.contains("all threads · warm")),
            "{mp}: {at:?}"
        );
    }
    assert_within_runs(&events, &tracks);
    // The runs are not part of the saved sweep.
    let saved = std::fs::read_to_string(dir.path().join("r.json")).expect("json");
    assert!(!saved.contains("\"runs\": [") && !saved.contains("spans"), "the sweep's JSON keeps no runs");
    // One file for two reports is refused before anything is measured.
    let o = graylab(&["sweep", "--sizes", "0.01", "--json", "x.json", "--trace", "x.json"], dir.path());
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
    assert!(text(&o).contains("--trace names the same file as --json: x.json"), "{}", text(&o));
}

#[test]
fn claims_trace_each_whole_run_they_compare_with_the_cold_runs_setup() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let o = graylab(&["claims", "--quick", "--trace", "c.json"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let events = events(&dir.path().join("c.json"));
    let (processes, tracks) = names(&events);
    // Claims 1 and 5 to 10 run whole conversions; 2 to 4 time passes and kernels alone.
    let claim_of =
        |p: &String| p.split(" · claim ").nth(1).and_then(|c| c.split(' ').next()).map(str::to_owned);
    let mut claims: Vec<String> = processes.values().filter_map(claim_of).collect();
    claims.sort();
    claims.dedup();
    assert_eq!(claims, ["1", "10", "5", "6", "7", "8", "9"], "{processes:?}");
    // Claim 10: the dither and the blur on both backends at both sizes, each a side of its own.
    assert_eq!(processes.values().filter(|p| p.contains("· claim 10 ·")).count(), 8, "{processes:?}");
    assert!(processes.values().any(|p| p.contains("claim 10 · workgroup") && p.contains("then dither")));
    // Each side once: claim 1 the 8K image on both backends, claim 5 both at each of five sizes.
    assert_eq!(processes.values().filter(|p| p.contains("· claim 1 ·")).count(), 2, "{processes:?}");
    assert_eq!(processes.values().filter(|p| p.contains("· claim 5 ·")).count(), 10, "{processes:?}");
    // Claim 7 names its branching side apart from its uniform one.
    assert!(
        processes.values().any(|p| p.contains("claim 7 · workgroup") && p.contains("on odd gray values"))
    );
    // Claim 6's cold run shows its setup on the CPU and its copies and kernel on the GPU queue.
    let (&cold, _) = processes.iter().find(|(_, p)| p.contains("claim 6 · cold")).expect("the cold run");
    for lane in ["CPU · GPU setup (pipelines, buffers)", "GPU queue · kernel", "GPU queue · upload copies"]
    {
        assert!(tracks.iter().any(|((p, _), n)| *p == cold && n == lane), "{lane}: {tracks:?}");
    }
    assert_within_runs(&events, &tracks);
}

#[test]
fn a_gpu_dither_traces_each_submission_of_its_wavefront_steps() {
    if common::gpu().is_none() {
        return;
    }
    // 1200 x 40: 1200 + 2 * 40 - 2 = 1278 wavefront steps. By steps, a dispatch a step and 1,024
    // to a submission: two. Persistent, chunks of steps within the loop rounds: one dispatch.
    for (wavefront, submissions) in [("steps", 2), ("persistent", 1)] {
        let dir = tempfile::tempdir().expect("temp dir");
        let args = [
            "bench",
            "--synthetic",
            "1200x40",
            "--op",
            "dither",
            "--backend",
            "gpu",
            "--runs",
            "1",
            "--trace",
            "t.json",
        ];
        let o = common::graylab_cmd(dir.path())
            .args(args)
            .env("GRAYLAB_DITHER_WAVEFRONT", wavefront)
            .output()
            .expect("run graylab");
        assert!(o.status.success(), "{}", text(&o));
        let events = events(&dir.path().join("t.json"));
        let (processes, tracks) = names(&events);
        assert_eq!(processes.len(), 2, "a cold and a warm run: {processes:?}");
        assert_within_runs(&events, &tracks);
        for pid in processes.keys() {
            let of = |name: &str| -> Vec<&Value> {
                events.iter().filter(|e| e["pid"] == *pid && e["ph"] == "X" && e["name"] == name).collect()
            };
            let (op, passes) = (of("op"), of("op passes"));
            assert_eq!((op.len(), passes.len()), (1, submissions), "{wavefront}, run {pid}: {passes:?}");
            // Each submission lies within the op's stage, one after the other.
            let span = |e: &Value| {
                (
                    e["ts"].as_f64().expect("ts"),
                    e["ts"].as_f64().expect("ts") + e["dur"].as_f64().expect("dur"),
                )
            };
            let (start, end) = span(op[0]);
            let spans: Vec<(f64, f64)> = passes.iter().map(|e| span(e)).collect();
            assert!(spans.iter().all(|s| start <= s.0 + 1.0 && s.1 <= end + 1.0), "{op:?} {passes:?}");
            assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0 + 1.0), "{passes:?}");
            assert_eq!(passes[0]["args"]["clock"], "cpu-clock, around its submission");
        }
        assert!(
            tracks.values().any(|t| t == "GPU queue · op passes (a submission each, with its wait)"),
            "{tracks:?}"
        );
    }
}
