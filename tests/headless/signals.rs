//! Interrupted exports and file modes, on the real binary: SIGINT/SIGTERM remove the temporary
//! file and end the process by the signal; after SIGKILL the next run removes it; with
//! `O_TMPFILE` nothing is ever visible; new files get `0666 & ~umask`; a replaced file keeps
//! its mode; the empty folders made for the outputs go too.
#![cfg(target_os = "linux")]

use crate::common;

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn graylab(dir: &Path) -> Command {
    let mut c = common::graylab_cmd(dir);
    c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    c
}

/// graylab's temporary files in `dir` (none while it does not exist).
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".graylab-") && Path::new(n).extension().is_some_and(|e| e == "part"))
        .collect()
}

/// A gray-noise BMP to export (the export is held while it writes: see `GRAYLAB_HOLD_EXPORT`).
fn big_input(dir: &Path) {
    let (w, h) = (600, 400);
    let img = image::GrayImage::from_raw(w, h, common::noise((w * h) as usize, 3)).expect("size");
    img.save(dir.join("big.bmp")).expect("save");
}

/// Waits until a temporary file shows up in `dir` (the export has started), or the child ends.
fn wait_for_temp_file(dir: &Path, child: &mut Child) -> Option<String> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_mins(2) {
        if let Some(name) = temp_files(dir).pop() {
            return Some(name);
        }
        if child.try_wait().expect("try_wait").is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

/// graylab in `d` with `args`, each export held once its temporary file exists until `release`
/// is written (`GRAYLAB_HOLD_EXPORT`), its output piped.
fn spawn_held(d: &Path, release: &Path, args: &[&str]) -> Child {
    common::graylab_cmd(d)
        .env("GRAYLAB_NO_TMPFILE", "1")
        .env("GRAYLAB_HOLD_EXPORT", release)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn")
}

fn send(child: &Child, signal: &str) {
    let ok = Command::new("kill").args([format!("-{signal}"), child.id().to_string()]).status();
    assert!(ok.is_ok_and(|s| s.success()), "kill -{signal}");
}

#[test]
fn interrupted_exports_leave_nothing_behind() {
    let dir = tempfile::tempdir().expect("temp dir");
    big_input(dir.path());
    image::GrayImage::new(8, 8).save(dir.path().join("small.png")).expect("save");
    for (signal, number) in [("TERM", 15), ("INT", 2), ("KILL", 9)] {
        let out = format!("out-{signal}.png");
        // The named temporary file (as where O_TMPFILE is missing) is what a signal must remove.
        // Held once its temporary file exists (the release file is never made): the signal
        // lands while it writes, whatever the machine's load.
        let mut child = graylab(dir.path())
            .env("GRAYLAB_NO_TMPFILE", "1")
            .env("GRAYLAB_HOLD_EXPORT", dir.path().join("never"))
            .args(["convert", "big.bmp", "-o", &out])
            .spawn()
            .expect("spawn");
        let name = wait_for_temp_file(dir.path(), &mut child).expect("the export started");
        send(&child, signal);
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(number), "{signal}: {status:?}");
        assert!(!dir.path().join(&out).exists(), "{signal}: no half output");
        if signal == "KILL" {
            // Nothing can run on SIGKILL: the file stays until the next run in this folder.
            assert_eq!(temp_files(dir.path()), vec![name]);
            let o =
                graylab(dir.path()).args(["convert", "small.png", "-o", "next.png"]).output().expect("run");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        assert_eq!(temp_files(dir.path()), Vec::<String>::new(), "{signal}: a temporary file is left");
    }
}

fn o_tmpfile_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::TMPFILE.bits().cast_signed())
        .open(dir)
        .is_ok()
}

#[test]
fn with_o_tmpfile_not_even_sigkill_leaves_a_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    if !o_tmpfile_works(dir.path()) {
        eprintln!("skipping: this filesystem has no O_TMPFILE");
        return;
    }
    big_input(dir.path());
    let mut child = graylab(dir.path())
        .env("GRAYLAB_HOLD_EXPORT", dir.path().join("never"))
        .args(["convert", "big.bmp", "-o", "out.png"])
        .spawn()
        .expect("spawn");
    // The export has begun when the process holds an unnamed file in the folder.
    let fds = format!("/proc/{}/fd", child.id());
    let unnamed_open = || {
        std::fs::read_dir(&fds)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .any(|l| l.starts_with(dir.path()) && l.to_string_lossy().ends_with("(deleted)"))
    };
    let started = Instant::now();
    while !unnamed_open() {
        assert_eq!(temp_files(dir.path()), Vec::<String>::new(), "a named temporary file appeared");
        assert!(child.try_wait().expect("try_wait").is_none(), "it ended before its export was seen");
        assert!(started.elapsed() < Duration::from_mins(2), "no export seen");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().expect("SIGKILL");
    assert_eq!(child.wait().expect("wait").signal(), Some(9));
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
    assert!(!dir.path().join("out.png").exists());
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

#[test]
fn new_files_follow_the_umask_and_replaced_files_keep_their_mode() {
    let dir = tempfile::tempdir().expect("temp dir");
    image::RgbImage::from_pixel(10, 10, image::Rgb([1, 2, 3])).save(dir.path().join("in.png")).expect("save");
    let bin = env!("CARGO_BIN_EXE_graylab");
    for (named, suffix) in [("0", "tmpfile"), ("1", "named")] {
        let out = format!("out-{suffix}.png");
        let json = format!("s-{suffix}.json");
        let script = format!(
            "umask 027 && '{bin}' convert in.png -o {out} && '{bin}' sweep --sizes 0.001 --runs 1 --cpu-only --json {json} --csv {json}.csv"
        );
        let o = Command::new("sh")
            .args(["-c", &script])
            .env("GRAYLAB_NO_TMPFILE", named)
            .current_dir(dir.path())
            .output()
            .expect("sh");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for f in [out.clone(), json.clone(), format!("{json}.csv")] {
            assert_eq!(mode(&dir.path().join(&f)), 0o640, "{f}");
        }
        let target = dir.path().join(&out);
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o604)).expect("chmod");
        let o = graylab(dir.path())
            .env("GRAYLAB_NO_TMPFILE", named)
            .args(["convert", "in.png", "-o", &out, "--overwrite"])
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(mode(&target), 0o604, "{suffix}: the replaced file keeps its mode");
    }
    assert_eq!(temp_files(dir.path()), Vec::<String>::new());
}

/// Issue 42, E8: SIGINT mid-batch ends the process by the signal after a summary of what was
/// done. Each export is held until the test releases it (`GRAYLAB_HOLD_EXPORT`, one release
/// per export): the first file is let through, the second is held while it writes, and the
/// signal lands then, so exactly one file is done, whatever the machine's load.
#[test]
fn a_signal_mid_batch_says_what_was_done() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for name in ["a.png", "b.png", "c.png"] {
        image::GrayImage::from_raw(64, 32, common::noise(64 * 32, 5))
            .expect("size")
            .save(d.join(name))
            .expect("save");
    }
    std::fs::create_dir(d.join("out")).expect("mkdir");
    let out = d.join("out");
    let release = d.join("release");
    let mut child = graylab(d)
        .env("GRAYLAB_NO_TMPFILE", "1")
        .env("GRAYLAB_HOLD_EXPORT", &release)
        .args(["convert", "a.png", "b.png", "c.png", "--out-dir", "out", "--jobs", "1"])
        .spawn()
        .expect("spawn");
    let first = wait_for_temp_file(&out, &mut child).expect("a.png's export started");
    std::fs::write(&release, b"").expect("release one export");
    // b.png's export holds once its own temporary file exists (a.png's is gone by then).
    let started = Instant::now();
    while !(release.symlink_metadata().is_err() && temp_files(&out).iter().any(|n| *n != first)) {
        assert!(child.try_wait().expect("try_wait").is_none(), "it ended before b.png's export");
        assert!(started.elapsed() < Duration::from_mins(2), "b.png's export never started");
        std::thread::sleep(Duration::from_millis(2));
    }
    send(&child, "INT");
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.signal(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let last = err.lines().last().unwrap_or_default();
    assert_eq!(last, "1 of 3 files converted, 0 failed, stopped by SIGINT", "{err}");
    let a = image::open(out.join("a.gray.png")).expect("a.png's output is whole");
    assert_eq!((a.width(), a.height()), (64, 32));
    assert!(!out.join("b.gray.png").exists() && !out.join("c.gray.png").exists(), "{err}");
    assert_eq!(temp_files(&out), Vec::<String>::new(), "no temporary file is left");
}

/// The folders `--out-dir` made go with a signal when nothing landed in them; a folder that
/// was there before stays (before, `new/deeper` was left behind, empty).
#[test]
fn a_signal_removes_the_empty_folders_made_for_the_outputs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    big_input(d);
    std::fs::create_dir(d.join("kept")).expect("mkdir");
    for (out_dir, json) in [("new/deeper", false), ("kept/new", true)] {
        let release = d.join("release");
        let mut c = graylab(d);
        c.env("GRAYLAB_NO_TMPFILE", "1").env("GRAYLAB_HOLD_EXPORT", &release);
        c.args(["convert", "big.bmp", "--out-dir", out_dir]);
        let mut child = if json { c.arg("--json") } else { &mut c }.spawn().expect("spawn");
        wait_for_temp_file(&d.join(out_dir), &mut child).expect("the export started");
        send(&child, "TERM");
        let o = child.wait_with_output().expect("wait");
        assert_eq!(o.status.signal(), Some(15), "{o:?}");
        let first = Path::new(out_dir).components().next().expect("a folder");
        let left = if json { d.join("kept") } else { d.join(first) };
        assert_eq!(left.exists(), json, "{out_dir}: {o:?}");
        assert!(!d.join(out_dir).exists(), "{out_dir}: {o:?}");
    }
}

/// A trace that cannot be written once the files are converted (its folder gone while it was
/// held) fails the command, told on its own; the converted file and the JSON report of it are
/// kept (before, the report was replaced by `{"error": …}`).
#[test]
fn a_trace_that_fails_after_the_work_keeps_the_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    image::GrayImage::from_raw(64, 32, common::noise(64 * 32, 7))
        .expect("size")
        .save(d.join("a.png"))
        .expect("save");
    std::fs::create_dir(d.join("traces")).expect("mkdir");
    let release = d.join("release");
    let mut child = spawn_held(
        d,
        &release,
        &["convert", "a.png", "-o", "a.gray.png", "--json", "--trace", "traces/t.json"],
    );
    // The image's export, then the trace's, each held once its temporary file exists.
    wait_for_temp_file(d, &mut child).expect("the image's export started");
    std::fs::write(&release, b"").expect("release the image");
    wait_for_temp_file(&d.join("traces"), &mut child).expect("the trace's export started");
    std::fs::remove_dir_all(d.join("traces")).expect("the trace's folder removed");
    std::fs::write(&release, b"").expect("release the trace");
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the trace was not written") && err.contains("t.json"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(report.as_array().map(Vec::len), Some(1), "{report}");
    assert!(report[0]["error"].is_null(), "{report}");
    assert_eq!(image::open(d.join("a.gray.png")).expect("converted").width(), 64);
}

/// A bench whose trace cannot be written (its folder gone while it was held) still prints its
/// figures, then fails naming the trace (before, nothing was printed: the runs were lost).
#[test]
fn a_bench_whose_trace_fails_keeps_its_figures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir(d.join("traces")).expect("mkdir");
    let release = d.join("release");
    let args = [
        "bench",
        "--synthetic",
        "64x32",
        "--backend",
        "cpu",
        "--runs",
        "1",
        "--json",
        "--trace",
        "traces/t.json",
    ];
    let mut child = spawn_held(d, &release, &args);
    wait_for_temp_file(&d.join("traces"), &mut child).expect("the trace's export started");
    std::fs::remove_dir_all(d.join("traces")).expect("the trace's folder removed");
    std::fs::write(&release, b"").expect("release the trace");
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("t.json"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the bench's JSON");
    assert!(report["results"][0]["total"]["median_ns"].as_u64().is_some_and(|ns| ns > 0), "{report}");
}

/// A sweep's outputs are each written even when one cannot be (its CSV's folder gone while it
/// was held): the JSON is kept and the command fails naming the CSV.
#[test]
fn a_sweep_keeps_every_output_it_can_write() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir(d.join("csv")).expect("mkdir");
    let release = d.join("release");
    let args =
        ["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--json", "s.json", "--csv", "csv/s.csv"];
    let mut child = spawn_held(d, &release, &args);
    // Every export before the CSV's (the caches', the JSON's) is released as it holds.
    let mut released = std::collections::HashSet::new();
    let started = Instant::now();
    while temp_files(&d.join("csv")).is_empty() {
        assert!(child.try_wait().expect("try_wait").is_none(), "it ended before the CSV's export");
        assert!(started.elapsed() < Duration::from_mins(2), "the CSV's export never started");
        let cache = d.join("graylab");
        let held =
            temp_files(d).into_iter().chain(cache.is_dir().then(|| temp_files(&cache)).into_iter().flatten());
        for name in held {
            if released.insert(name) {
                std::fs::write(&release, b"").expect("release one export");
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    std::fs::remove_dir_all(d.join("csv")).expect("the CSV's folder removed");
    std::fs::write(&release, b"").expect("release the CSV");
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("s.csv"), "{err}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("s.json")).expect("the JSON kept")).expect("JSON");
    assert!(json["points"].as_array().is_some_and(|p| p.len() == 1), "{json}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("graylab sweep:"), "the table printed");
}

/// Ctrl-C during the claims stops them gently, as the app's Stop does: the claims finished are
/// written (here as JSON), the rest marked not run, stderr says how many, and the process exits
/// 130. The signal is sent once the estimate is said (the gentle stop is in place by then).
#[test]
fn a_signal_during_the_claims_keeps_the_claims_finished() {
    use std::io::BufRead as _;
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = graylab(dir.path())
        .stdout(std::process::Stdio::piped())
        .args(["claims", "--quick", "--json"])
        .spawn()
        .expect("spawn");
    let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut said = String::new();
    while !said.contains("estimate:") {
        let read = err.read_line(&mut said).expect("stderr");
        assert!(read > 0, "it ended before its estimate: {said}");
    }
    send(&child, "INT");
    let o = child.wait_with_output().expect("wait");
    std::io::Read::read_to_string(&mut err, &mut said).expect("the rest of stderr");
    assert_eq!(o.status.code(), Some(130), "{said}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON of what finished");
    assert_eq!(json["stopped"], true, "{json}");
    let claims = json["claims"].as_array().expect("every claim");
    assert_eq!(claims.len(), 10);
    assert!(claims.iter().any(|c| c["verdict"] == "not run (stopped)"), "{json}");
    assert!(said.contains("SIGINT: stopping") && said.contains(" of 10 claims finished"), "{said}");
}

/// Ctrl-C during a sweep stops it gently, as the claims stop: held before its second point
/// (`GRAYLAB_HOLD_STEP`, which the signal releases) until the signal lands, it prints its first
/// point and the other two as not run, writes a JSON that says it was stopped and that
/// `graylab compare` reads, and exits 130.
#[test]
fn a_signal_during_a_sweep_keeps_the_points_finished() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let args = ["sweep", "--cpu-only", "--sizes", "0.01,0.02,0.04", "--runs", "1", "--json", "s.json"];
    let mut child = graylab(d)
        .stdout(std::process::Stdio::piped())
        .env("GRAYLAB_HOLD_STEP", d.join("never"))
        .args(args)
        .spawn()
        .expect("spawn");
    let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut said = String::new();
    while !said.contains("(1 of 3)") {
        let read = err.read_line(&mut said).expect("stderr");
        assert!(read > 0, "it ended before its first point: {said}");
    }
    send(&child, "INT");
    let o = child.wait_with_output().expect("wait");
    std::io::Read::read_to_string(&mut err, &mut said).expect("the rest of stderr");
    assert_eq!(o.status.code(), Some(130), "{said}");
    assert!(said.contains("SIGINT: stopping") && said.contains("1 of 3 points finished"), "{said}");
    assert!(!said.contains("(2 of 3)"), "no point begun after the signal: {said}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("0.01 ") && table.matches("not run (stopped)").count() == 2, "{table}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("s.json")).expect("the JSON kept")).expect("JSON");
    assert_eq!(json["stopped"], true, "{json}");
    let points = json["points"].as_array().expect("points");
    assert_eq!(points.len(), 1, "{json}");
    assert!(points[0]["series"][0][1]["median_ns"].as_u64().is_some_and(|ns| ns > 0), "{json}");
    let not_run: Vec<u64> =
        json["not_run"].as_array().expect("not run").iter().filter_map(|c| c["width"].as_u64()).collect();
    assert_eq!(not_run.len(), 2, "{json}");
    assert!(
        json["verdict"].as_str().is_some_and(|v| v.contains("stopped: 1 of 3 points measured")),
        "{json}"
    );
    // `compare` reads it: its one point against itself, nothing slower.
    let o = common::graylab(&["compare", "s.json", "s.json"], d);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    assert!(common::text(&o).contains("0 slower"), "{}", common::text(&o));
}
