//! One snapshot per window the app opens on demand (export, size sweep, round trips, parity, the
//! tutorial's claims before a run), as egui's demo app keeps one per demo window: a moved or
//! missing control, label or layout fails it. The round-trips window is also run on the small
//! photo, with its verdict and chart on screen. Each window is opened from the top bar over a fixed
//! gradient, with nothing measured on screen; what differs between machines (the temporary path,
//! the adapter, the CPU and the frame meter) is masked, as in `main_window_snapshot` of
//! `tests/ui/app.rs`.

use crate::{common, harness};

use egui_kittest::kittest::{NodeT as _, Queryable as _};
use graylab::engine::sweep::Winner;

/// Opens the gradient, clears the charts, opens the window `button` names and snapshots it as
/// `name`; `mask_in_window` names labels inside the window whose rows differ between machines.
fn window_snapshot(button: &str, name: &str, mask_in_window: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness::gradient_app(dir.path()) else { return };
    h.get_by_label("Clear").click();
    h.get_by_label(button).click();
    h.remove_cursor();
    h.run_steps(4);
    harness::mask_what_machines_differ_in(&mut h);
    // Each such row to the screen's right edge: its text's length differs too.
    for label in mask_in_window {
        let r = h.get_by_label_contains(label).rect();
        h.mask(egui::Rect::from_min_max(r.min - egui::vec2(2.0, 2.0), egui::pos2(1280.0, r.max.y + 2.0)));
    }
    h.snapshot(name);
}

#[test]
fn export_window_snapshot() {
    window_snapshot("Export…", "export_window_1280x720", &[]);
}

#[test]
fn sweep_window_snapshot() {
    // The estimate of how long the sweep takes depends on the machine.
    window_snapshot("Size sweep…", "sweep_window_1280x720", &["MP in all"]);
}

#[test]
fn parity_window_snapshot() {
    // The estimate of how long the check takes depends on the machine.
    window_snapshot("Parity…", "parity_window_1280x720", &["Takes "]);
}

#[test]
fn claims_window_snapshot() {
    // Before a run: nothing measured, the JSON path (next to the photo) masked with the fields,
    // and the estimate, which prices the claims' runs at this machine's pace.
    window_snapshot("Tutorial claims…", "claims_window_1280x720", &["Run (quick) takes about"]);
}

#[test]
fn round_trips_window_snapshot() {
    // The settings line names this machine's CPU threads; the estimate is this machine's pace.
    window_snapshot("Round trips…", "round_trips_window_1280x720", &["CPU threads.", "Takes about"]);
}

#[test]
fn round_trips_window_runs_on_the_photo_and_shows_the_verdict_and_chart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness::gradient_app(dir.path()) else { return };
    let gpu = common::gpu().expect("checked by the harness");
    h.get_by_label("Round trips…").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("No round trips yet").is_some());
    h.state_mut().set_round_trips("1, 2", 1);
    h.run_steps(2);
    // What they will take is said before they start, with what it rests on.
    let node = h.get_by_label_contains("Takes about");
    let said = node.accesskit_node().label().or_else(|| node.value()).unwrap_or_default();
    assert!(said.contains(" s, ") && said.ends_with('.'), "{said}");
    assert!(!said.contains("from runs seen"), "none seen yet: {said}");
    h.get_by_label("Run round trips").click();
    h.run_steps(2);
    assert!(h.state().view().busy, "the round trips run on the worker");
    harness::settle(&mut h);
    h.run_steps(2);
    let (result, unfinished) = h.state().view().round_trips;
    assert_eq!(unfinished, None);
    let r = result.expect("a result").clone();
    assert_eq!((r.width, r.height), (640, 400), "on the open photo");
    assert_eq!(r.points.iter().map(|p| p.passes).collect::<Vec<_>>(), [1, 2]);
    assert!(r.points.iter().all(|p| p.matches_cpu), "GPU = CPU after every count");
    assert_eq!(r.software_adapter, gpu.is_software());
    let verdict = h.get_by_label(&r.verdict).rect();
    assert!(h.ctx.content_rect().contains_rect(verdict), "the verdict is on screen");
    assert!(h.query_by_label_contains("Each GPU point is one round trip").is_some(), "the chart is drawn");
    assert!(h.query_by_label_contains("every GPU result equals the CPU's byte for byte").is_some());
    // Once they ran, the next round trips are estimated from them, and say so.
    let node = h.get_by_label_contains("Takes ");
    let said = node.accesskit_node().label().or_else(|| node.value()).unwrap_or_default();
    assert!(said.ends_with(", from runs seen on this machine."), "{said}");
    // Each count's verdict on screen: the GPU's speed-up with its 95% interval and the rounds,
    // an undecided one said to be inconclusive.
    for p in &r.points {
        let c = p.comparison;
        let i = c.speed_up.expect("at least six rounds: an interval");
        let r = graylab::system::units::ratio;
        let figure = format!("{}x ({}–{})", r(i.median), r(i.ci_low), r(i.ci_high));
        let verdict = match c.winner {
            Winner::GpuFaster => format!("GPU faster: {figure}"),
            Winner::CpuFaster => format!("CPU faster: {figure}"),
            Winner::WithinNoise => {
                format!("inconclusive here, within the noise (±{:.0}%): {figure}", i.spread_percent())
            }
            Winner::Undecided => panic!("n = {}: six rounds at least, an interval", p.passes),
        };
        let line = format!("n = {}: {verdict}, {} rounds", p.passes, c.rounds);
        let rect = h.get_by_label(&line).rect();
        assert!(h.ctx.content_rect().contains_rect(rect), "{line} is on screen");
    }
    // Esc closes the window (the top one) and nothing else.
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h.query_by_label_contains("Each GPU point is one round trip").is_none(), "closed by Esc");
}

#[test]
fn save_trace_writes_every_run_of_the_open_image() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = dir.path().join("first.png");
    common::photo(90, 60).save(&first).expect("save");
    let second = dir.path().join("second.png");
    common::photo(80, 70).save(&second).expect("save");
    let Some(mut h) = harness::harness(Some(first)) else { return };
    harness::settle(&mut h);
    h.state_mut().run_conversion(2);
    harness::settle(&mut h);
    h.state_mut().open(second);
    harness::settle(&mut h);
    h.state_mut().run_conversion(2);
    harness::settle(&mut h);
    let image = h.state().view().runs.last().expect("a run").image_id;
    let seqs: Vec<usize> =
        h.state().view().runs.iter().filter(|r| r.image_id == image).map(|r| r.seq).collect();
    assert_eq!(seqs.len(), 3, "the open and two more runs");
    // The button is on the Last run chart.
    let _button = h.get_by_label("Save trace…");
    let path = dir.path().join("second.trace.json");
    h.state_mut().save_trace_to(&path);
    let (message, error) = h.state().view().message.expect("a message");
    assert!(
        !error && message.contains("Saved the trace of 3 runs") && message.contains("ui.perfetto.dev"),
        "{message}"
    );
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("written")).expect("JSON");
    let processes: Vec<String> = trace["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    // Only the open image's runs, each its own process, named by its threads and its number.
    let threads = h.state().view().runs.last().expect("a run").settings.threads;
    let expected: Vec<String> = seqs.iter().map(|s| format!("{threads} threads · run {s}")).collect();
    assert_eq!(processes.len(), 3, "{processes:?}");
    for (process, run) in processes.iter().zip(&expected) {
        assert!(
            process.starts_with(&format!("cpu · {run}")) && process.ends_with("80x70"),
            "{process} for {run}"
        );
    }
    assert!(processes[0].contains("· cold"), "the first run of a setting is cold: {processes:?}");
    let runs =
        trace["traceEvents"].as_array().expect("events").iter().filter(|e| e["ph"] == "X" && e["tid"] == 0);
    assert_eq!(runs.count(), 3);
}

#[test]
fn the_runs_chart_sets_a_saved_bench_beside_the_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let photo = dir.path().join("photo.png");
    common::photo(90, 60).save(&photo).expect("save");
    // A saved bench of two settings, as another machine would send it.
    let args =
        ["bench", "--synthetic", "120x80", "--backend", "cpu", "--threads", "1,2", "--runs", "3", "--json"];
    let o = common::graylab(&args, dir.path());
    assert!(o.status.success(), "{}", common::text(&o));
    let saved = dir.path().join("other.json");
    std::fs::write(&saved, &o.stdout).expect("write");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let Some(mut h) = harness::harness(Some(photo)) else { return };
    harness::settle(&mut h);
    let _button = h.get_by_label("Compare with a saved bench…");
    // A dropped (or chosen) JSON file is compared, not opened as an image.
    h.state_mut().open(saved.clone());
    harness::settle(&mut h);
    let view = h.state().view();
    let (message, error) = view.message.expect("a message");
    assert!(!error && message.contains("Comparing with 2 settings of other.json"), "{message}");
    let compared = view.compared_runs.expect("the saved bench is on the chart");
    assert!(compared.label.starts_with("other.json · synthetic 120x80"), "{}", compared.label);
    assert_eq!(view.input_path.and_then(|p| p.file_name()), Some(std::ffi::OsStr::new("photo.png")));
    // Each setting is its warm medians: the phases and the wall time as saved.
    for (run, result) in compared.runs.iter().zip(json["results"].as_array().expect("results")) {
        assert_eq!(run.report.total_ns, result["total"]["median_ns"].as_u64().expect("total"));
        let kernel = run.report.phase(graylab::engine::Phase::Kernel).expect("a kernel phase").ns;
        let saved_kernel =
            result["phases"].as_array().expect("phases").iter().find(|p| p["phase"] == "kernel");
        assert_eq!(Some(kernel), saved_kernel.and_then(|p| p["median_ns"].as_u64()));
        assert_eq!(run.report.threads, result["settings"]["threads"].as_u64().map(|t| t as usize));
    }
    let _clear = h.get_by_label("Clear comparison");
    // Another kind of result is refused by name and changes nothing.
    let sweep = dir.path().join("sweep.json");
    std::fs::write(&sweep, r#"{"schema": 1, "kind": "sweep", "points": []}"#).expect("write");
    h.state_mut().open(sweep);
    harness::settle(&mut h);
    let (message, error) = h.state().view().message.expect("a message");
    assert!(
        error
            && message.contains("sweep.json")
            && message.contains("not a saved bench (it is a saved sweep)"),
        "{message}"
    );
    assert!(h.state().view().compared_runs.is_some(), "the loaded bench stays");
    h.get_by_label("Clear comparison").click();
    harness::settle(&mut h);
    assert!(h.state().view().compared_runs.is_none());
}

#[test]
fn the_transfer_paths_window_measures_every_path_and_charts_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness::gradient_app(dir.path()) else { return };
    // The adapter panel offers it (below the fold here, where a click would miss); opened with
    // its largest size at 4 MiB.
    h.get_by_label("Transfer paths…");
    h.state_mut().open_transfer_paths(4);
    h.run_steps(2);
    h.get_by_label("Not measured yet.");
    // What it will take is said before it starts, with what it rests on.
    let node = h.get_by_label_contains("Takes ");
    let said = node.accesskit_node().label().or_else(|| node.value()).unwrap_or_default();
    assert!(said.contains(" (") && said.ends_with(")."), "{said}");
    assert!(h.ctx.content_rect().contains_rect(node.rect()), "{said} is on screen");
    h.get_by_label("Measure transfer paths").click();
    h.run_steps(1);
    assert!(h.query_by_label_contains("Takes ").is_none(), "said before it starts, not while it runs");
    harness::settle(&mut h);
    let paths = h.state().view().transfer_paths.expect("measured").to_vec();
    // Eight, and the mapped storage buffers on unified memory (a software adapter's is).
    let software = common::gpu().is_some_and(|g| g.is_software());
    assert!(paths.len() == 8 || software && paths.len() == 10, "{}", paths.len());
    for p in &paths {
        assert_eq!(p.points.last().map(|q| q.bytes % (4 << 20)), Some(0), "up to 4 MiB: {p:?}");
        assert!(p.fit.is_some_and(|f| f.gb_per_s > 0.0 && f.latency_ns >= 0.0), "{p:?}");
    }
    // The table names each path and its n½; the chart its axis.
    for label in ["up: queue.write_buffer", "down: readback, all threads", "n½", "at 4.0 MiB"] {
        h.get_by_label(label);
    }
    h.get_by_label("bytes per transfer (log scale)");
    // Measured again and stopped by Esc (held at its start, so that Esc lands inside it on any
    // adapter and under any load), the measurement before stays, and the window says so; its
    // window stays open (Esc stops work before it closes windows).
    h.state_mut().hold_next_job(graylab::system::progress::HoldAt::Step);
    h.get_by_label("Measure transfer paths").click();
    harness::until_held(&mut h);
    h.key_press(egui::Key::Escape);
    h.run_steps(1);
    h.state().release_job();
    harness::settle(&mut h);
    h.get_by_label("Stopped: the measurement before is shown.");
    assert_eq!(h.state().view().transfer_paths.map(<[_]>::len), Some(paths.len()), "the paths stay");
    h.get_by_label("Measure transfer paths");
}
