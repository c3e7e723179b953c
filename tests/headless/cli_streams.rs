//! The real binary's output streams and refusals (issue 16): a closed pipe ends quietly while
//! the work goes on, a full stdout is an error, no command writes over its own input, and
//! contradicting options are refused before any work.
#![cfg(unix)]

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Output, Stdio};

use crate::common::{graylab, graylab_cmd, photo, text};

fn folder_of(d: &Path, n: u32) {
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    std::fs::create_dir_all(d.join("out")).expect("mkdir");
    for i in 0..n {
        photo(64 + i, 48).save(d.join(format!("in/{i:02}.png"))).expect("save");
    }
}

#[test]
fn a_closed_pipe_ends_quietly_and_the_work_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    folder_of(d, 12);
    let mut child = graylab_cmd(d)
        .args(["convert", "in", "--out-dir", "out", "--jobs", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("a line");
    // The reader goes away, as `| head -1` does.
    let o = child.wait_with_output().expect("wait");
    assert!(first.contains("->"), "{first}");
    assert!(o.status.success(), "{:?}: {}", o.status, text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(d.join("out")).expect("list").count(), 12, "every file converted");
}

fn to_dev_full(args: &[&str], d: &Path) -> Output {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    graylab_cmd(d).args(args).stdout(full).output().expect("run")
}

#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    folder_of(d, 2);
    let cases: [&[&str]; 3] = [
        &["convert", "in", "--out-dir", "out", "--overwrite"],
        &["convert", "in", "--out-dir", "out", "--overwrite", "--json"],
        &["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--json", "-"],
    ];
    for args in cases {
        let o = to_dev_full(args, d);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("error: cannot write to standard output (No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn sweep_never_writes_over_the_photo_it_measures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(32, 16).save(d.join("src.png")).expect("save");
    std::os::unix::fs::symlink("src.png", d.join("link.png")).expect("symlink");
    let before = std::fs::read(d.join("src.png")).expect("read");
    let base =
        ["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--from-image", "src.png", "--overwrite"];
    for (flag, target) in
        [("--json", "src.png"), ("--csv", "src.png"), ("--json", "link.png"), ("--csv", "link.png")]
    {
        let mut args = base.to_vec();
        args.extend([flag, target]);
        let o = graylab(&args, d);
        assert_eq!(o.status.code(), Some(1), "{flag} {target}: {}", text(&o));
        assert!(text(&o).contains(&format!("{flag} would replace its own input: {target}")), "{}", text(&o));
        assert!(!text(&o).contains("measuring"), "refused before any work: {}", text(&o));
    }
    assert_eq!(std::fs::read(d.join("src.png")).expect("read"), before, "the photo is untouched");
}

#[test]
fn contradictions_are_refused_before_any_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(16, 8).save(d.join("in.png")).expect("save");
    std::fs::create_dir_all(d.join("a")).expect("mkdir");
    std::fs::create_dir_all(d.join("b")).expect("mkdir");
    std::fs::create_dir_all(d.join("out/p.gray.png")).expect("mkdir");
    photo(8, 8).save(d.join("a/p.png")).expect("save");
    photo(8, 8).save(d.join("b/p.png")).expect("save");
    photo(8, 8).save(d.join("a/q.png")).expect("save");
    // Options that contradict each other are a usage error (exit 2); outputs that cannot be
    // written fail by name (exit 1).
    let cases: [(&[&str], i32, &str); 8] = [
        (
            &["in.png", "-o", "x.png", "--format", "jpeg"],
            2,
            "--format jpeg contradicts -o/--output, whose name is a PNG file's: x.png",
        ),
        (
            &["in.png", "-o", "x.png", "--quality", "50"],
            2,
            "--quality sets JPEG quality, and the output is PNG",
        ),
        (&["in.png", "--out-dir", "out", "--format", "webp", "--quality", "50"], 2, "the output is WebP"),
        (
            &["in.png", "-o", "x.png", "--workgroup", "2048"],
            2,
            "--workgroup sets the GPU's workgroup size and does nothing with --backend cpu",
        ),
        (
            &["in.png", "-o", "x.png", "--divergent"],
            2,
            "--divergent runs the --work rounds only for odd grays",
        ),
        (&["in.png", "-o", "x.png/"], 2, "-o/--output names a folder, not a file: x.png/"),
        (
            &["a/p.png", "b/p.png", "--out-dir", "out2"],
            1,
            "two inputs would write the same output (a/p.png and b/p.png): out2/p.gray.png",
        ),
        (
            &["a/p.png", "--out-dir", "out"],
            1,
            "the output of a/p.png is a folder, not a file: out/p.gray.png",
        ),
    ];
    std::fs::create_dir_all(d.join("out2")).expect("mkdir");
    for (args, code, message) in cases {
        let o = graylab(&[&["convert"][..], args].concat(), d);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(message), "{args:?}: {}", text(&o));
        assert!(
            !text(&o).contains("use --out-dir for a folder") || !args.contains(&"--out-dir"),
            "{}",
            text(&o)
        );
        assert!(!text(&o).contains("decode"), "refused before decoding: {}", text(&o));
    }
    assert!(!d.join("x.png").exists() && std::fs::read_dir(d.join("out2")).expect("list").count() == 0);
    // JPEG quality with a JPEG output is fine; the help says what --workgroup accepts.
    let o = graylab(&["convert", "in.png", "-o", "x.jpg", "--quality", "50"], d);
    assert!(o.status.success(), "{}", text(&o));
    let help = text(&graylab(&["convert", "--help"], d));
    assert!(
        help.contains("2-D shape like 16x16, within the device's limits") && !help.contains("64…1024"),
        "{help}"
    );
}

#[test]
fn bench_refuses_a_workgroup_for_the_cpu_before_any_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for wg in ["2048", "64", "16x16", "all"] {
        let o = graylab(
            &["bench", "--backend", "cpu", "--workgroup", wg, "--synthetic", "64x64", "--runs", "1"],
            d,
        );
        assert_eq!(o.status.code(), Some(2), "{wg}: {}", text(&o));
        assert!(
            text(&o)
                .contains("--workgroup sets the GPU's workgroup size and does nothing with --backend cpu"),
            "{wg}: {}",
            text(&o)
        );
        assert!(!text(&o).contains("cpu ") && o.stdout.is_empty(), "nothing measured: {}", text(&o));
    }
    // Nor does any other GPU setting, or --divergent without rounds; with sweep too.
    for args in [
        &["bench", "--backend", "cpu", "--keep-input-on-gpu"][..],
        &["bench", "--backend", "cpu", "--cpu-clock"],
        &["bench", "--divergent"],
        &["sweep", "--cpu-only", "--workgroup", "64"],
        &["sweep", "--cpu-only", "--divergent"],
        &["sweep", "--cpu-only", "--radii", "1", "--divergent"],
    ] {
        let o = graylab(&[args, &["--runs", "1"]].concat(), d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("cannot be used with") || text(&o).contains("does nothing"),
            "{}",
            text(&o)
        );
        assert!(o.stdout.is_empty(), "nothing measured: {}", text(&o));
    }
    // The CPU alone without it, and the default workgroup where the GPU runs, are fine.
    let o = graylab(&["bench", "--backend", "cpu", "--synthetic", "64x64", "--runs", "1"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("cpu"), "{}", text(&o));
}

#[test]
fn one_summary_for_a_batch() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    folder_of(d, 2);
    std::fs::write(d.join("in/bad.png"), b"\x89PNG\r\n\x1a\ntruncated").expect("write");
    let o = graylab(&["convert", "in", "--out-dir", "out"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!err.contains("files failed") && !err.contains("files converted"), "no second summary: {err}");
    assert_eq!(out.matches("2 of 3 files converted, 1 failed, 0 skipped").count(), 1, "{out}");
}

/// `bench`'s warnings go to stderr, as `convert`'s do, its table alone on stdout (before: a
/// software adapter's warning among the table's lines); with `--cpu-clock`, the GPU's passes
/// say that flag is why they are not measured (before: "no GPU timestamps read in place on this
/// device", on a device that reads them).
#[test]
fn bench_warns_on_stderr_and_says_why_the_cpu_clock_measures_no_passes() {
    if crate::common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let o = graylab(&["bench", "--synthetic", "64x48", "--runs", "1"], d);
    assert!(o.status.success(), "{}", text(&o));
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!out.contains("warning"), "warnings go to stderr: {out}");
    let software =
        out.lines().any(|l| l.starts_with("GPU: ") && (l.contains("llvmpipe") || l.contains("lavapipe")));
    assert_eq!(err.contains("warning: the GPU is a software rasteriser"), software, "{}", text(&o));
    let o = graylab(&["bench", "--synthetic", "64x48", "--passes", "1", "--runs", "1", "--cpu-clock"], d);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("GPU passes: not measured (--cpu-clock asks for the CPU clock only"), "{out}");
    assert!(!out.contains("on this device") && !out.contains("warning"), "{out}");
}
