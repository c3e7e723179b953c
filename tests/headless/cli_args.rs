//! Odd arguments and the messages a person sees, on the real binary: every value is checked
//! before any work, nothing panics or aborts, each cause is printed once, advice names the
//! flag, no driver noise, logging on request.

use crate::common;

use crate::common::text;

use std::path::Path;
use std::process::{Command, Output};

fn graylab(args: &[&str], cwd: &Path) -> Output {
    // A small budget makes "too large" the same on every machine.
    common::graylab_cmd(cwd).args(args).env("GRAYLAB_MEMORY_BUDGET", "1GiB").output().expect("run graylab")
}

/// Fails with exit code `code` and a message containing every one of `needles`, never a panic.
fn fails(args: &[&str], cwd: &Path, code: i32, needles: &[&str]) -> String {
    let o = graylab(args, cwd);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {t}");
    assert!(!t.contains("panicked"), "{args:?}: {t}");
    for n in needles {
        assert!(t.contains(n), "{args:?}: no {n:?} in: {t}");
    }
    t
}

#[test]
fn sizes_that_cannot_fit_are_refused_before_allocating() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    fails(
        &["bench", "--synthetic", "4294967295x4294967295", "--backend", "cpu"],
        d,
        1,
        &["4294967295x4294967295", "needs 16.0 EiB"],
    );
    fails(
        &["bench", "--synthetic", "100000x100000", "--backend", "cpu"],
        d,
        1,
        &["needs 37.3 GiB", "1.0 GiB", "GRAYLAB_MEMORY_BUDGET"],
    );
    fails(&["bench", "--synthetic", "99999999999x2"], d, 2, &["invalid size"]);
    fails(&["sweep", "--sizes", "0.25,1e30"], d, 2, &["1e30", "at most 100000"]);
    fails(&["sweep", "--sizes", "0.25,-1"], d, 2, &["-1"]);
    fails(&["sweep", "--sizes", "nan"], d, 2, &["nan"]);
    let t =
        fails(&["sweep", "--sizes", "0.001,100000", "--cpu-only"], d, 1, &["cannot sweep up to 100000 MP"]);
    assert!(!t.contains("measuring"), "nothing is measured first: {t}");
}

#[cfg(unix)]
#[test]
fn an_address_space_limit_is_part_of_the_budget() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A 20000 x 20000 RGB PNG header with enough bytes to be possible (1.2 MB): 1.6 GB to convert.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend_from_slice(&20_000u32.to_be_bytes());
    png.extend_from_slice(&20_000u32.to_be_bytes());
    png.extend_from_slice(&[8, 2, 0, 0, 0]); // RGB8
    let crc = crc32fast::hash(&png[12..29]);
    png.extend_from_slice(&crc.to_be_bytes());
    let chunk = |png: &mut Vec<u8>, kind: &[u8], data: &[u8]| {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let body = [kind, data].concat();
        png.extend_from_slice(&body);
        png.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    };
    chunk(&mut png, b"IDAT", &vec![0; 1_300_000]);
    chunk(&mut png, b"IEND", &[]);
    std::fs::write(dir.path().join("big.png"), &png).expect("write");
    let bin = env!("CARGO_BIN_EXE_graylab");
    // ulimit -v is RLIMIT_AS in KiB: 1.5 GiB.
    let o = Command::new("sh")
        .args(["-c", &format!("ulimit -v 1572864 && exec '{bin}' convert big.png -o out.png")])
        .env_remove("GRAYLAB_MEMORY_BUDGET")
        .current_dir(dir.path())
        .output()
        .expect("sh");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("image too large: 20000x20000") && t.contains("RLIMIT_AS"), "{t}");
}

#[test]
fn the_budget_under_an_address_space_limit_grows_with_the_limit() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        // Straight to the terminal: a test that could not run must not pass for one that did.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), b"SKIPPED: no prlimit (util-linux)\n");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = env!("CARGO_BIN_EXE_graylab");
    // A 16K synthetic image needs 506 MiB: each limit below refuses it, saying what it allows.
    let allowed_mib = |limit_mib: u64| -> f64 {
        let o = Command::new("prlimit")
            .arg(format!("--as={}", limit_mib << 20))
            .args([bin, "bench", "--backend", "cpu", "--synthetic", "16k", "--runs", "1"])
            .env_remove("GRAYLAB_MEMORY_BUDGET")
            .current_dir(dir.path())
            .output()
            .expect("prlimit");
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{limit_mib} MiB: {t}");
        assert!(t.contains("RLIMIT_AS"), "{limit_mib} MiB: {t}");
        let figure = t.split("but only ").nth(1).and_then(|r| r.split(" MiB may be used").next());
        figure.and_then(|f| f.parse().ok()).unwrap_or_else(|| panic!("{limit_mib} MiB: {t}"))
    };
    // 150M allowed 76.8 MiB, 200M 18.3 MiB and 250M 55.8 MiB while each thread's malloc arena
    // reserved 64 MiB of the limit, depending on which existed when the budget was read.
    let allowed: Vec<f64> = [150, 200, 250, 300].into_iter().map(allowed_mib).collect();
    for pair in allowed.windows(2) {
        // 3/4 of each 50 MiB more: 37.5 MiB more allowed, give or take what start-up maps.
        let more = pair[1] - pair[0];
        assert!((more - 37.5).abs() < 4.0, "{allowed:?}");
    }
}

#[test]
fn output_paths_are_checked_before_any_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    image::RgbImage::from_pixel(8, 8, image::Rgb([9, 9, 9])).save(d.join("in.png")).expect("save");
    std::fs::create_dir(d.join("folder")).expect("mkdir");
    let t = fails(&["convert", "in.png", "-o", "folder"], d, 2, &["names a folder", "--out-dir"]);
    assert!(!t.contains("exists") && !t.contains("unknown output format"), "{t}");
    fails(&["convert", "in.png", "-o", "out.gif"], d, 2, &["unknown format", "--format"]);
    fails(&["convert", "in.png", "-o", "no/such/dir/out.png"], d, 1, &["does not exist"]);
    fails(
        &["convert", "in.png", "--out-dir", "in.png"],
        d,
        2,
        &["--out-dir names a file, not a folder: in.png"],
    );
    // A folder named for a file is a usage error; a missing one is the disk's.
    for (json, code) in [("/no/such/dir/x.json", 1), ("folder", 2)] {
        let t = fails(&["sweep", "--sizes", "0.001", "--cpu-only", "--json", json], d, code, &["--json"]);
        assert!(!t.contains("measuring"), "nothing is measured first: {t}");
    }
    // Two reports in one file: a usage error, said before what is on disk (here, nothing yet).
    let both = ["sweep", "--sizes", "0.001", "--cpu-only", "--json", "a", "--csv", "a"];
    let t = fails(&both, d, 2, &["--csv names the same file as --json: a"]);
    assert!(!t.contains("measuring") && !d.join("a").exists(), "{t}");
    // The same with the file there and no --overwrite: the usage error still comes first.
    std::fs::write(d.join("a"), "mine").expect("write");
    let t = fails(&both, d, 2, &["--csv names the same file as --json: a"]);
    assert!(!t.contains("exists"), "{t}");
    assert_eq!(std::fs::read_to_string(d.join("a")).expect("read"), "mine");
    std::fs::write(d.join("old.csv"), "keep").expect("write");
    let t = fails(
        &["sweep", "--sizes", "0.001", "--cpu-only", "--csv", "old.csv"],
        d,
        1,
        &["exists", "--overwrite"],
    );
    assert!(!t.contains("measuring"), "{t}");
    assert_eq!(std::fs::read_to_string(d.join("old.csv")).expect("read"), "keep");
}

/// Issue 24, item 16: options that contradict each other are a usage error (exit 2, as the
/// guide says), and with --json an error found before any work is a JSON document too.
#[test]
fn contradicting_options_exit_2_and_errors_before_work_are_json_with_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    image::RgbImage::from_pixel(8, 8, image::Rgb([9, 9, 9])).save(d.join("in.png")).expect("save");
    std::fs::create_dir(d.join("folder")).expect("mkdir");
    let usage: [(&[&str], &str); 5] = [
        (&["in.png", "-o", "x.png", "--quality", "50"], "--quality sets JPEG quality, and the output is PNG"),
        (&["in.png", "-o", "x.png", "--format", "jpeg"], "--format jpeg contradicts -o/--output"),
        (&["in.png", "--workgroup", "64"], "--workgroup sets the GPU's workgroup size"),
        (&["folder"], "a folder input needs --out-dir: folder"),
        (&["in.png", "in.png", "-o", "x.png"], "-o/--output takes one input"),
    ];
    for (args, message) in usage {
        fails(&[&["convert"][..], args].concat(), d, 2, &[message]);
        let o = graylab(&[&["convert", "--json"][..], args].concat(), d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
        assert!(json["error"].as_str().is_some_and(|e| e.contains(message)), "{args:?}: {json}");
    }
    assert!(!d.join("x.png").exists());
    // A value the parser refuses: exit 2, in JSON too.
    let o = graylab(&["convert", "in.png", "--quality", "0", "--json"], d);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    assert!(json["error"].as_str().is_some_and(|e| e.contains("--quality")), "{json}");
    // An error of the files, not of the options: exit 1, in JSON too.
    std::fs::write(d.join("taken.png"), b"x").expect("write");
    let o = graylab(&["convert", "--json", "in.png", "-o", "taken.png"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    assert!(json["error"].as_str().is_some_and(|e| e.contains("the file exists")), "{json}");
}

/// Settings a command would ignore, or that this machine or input cannot take, are usage errors
/// (exit 2) before any work; a mistyped command says so instead of opening the app.
#[test]
fn ignored_or_impossible_settings_and_mistyped_commands_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    image::RgbImage::from_pixel(8, 8, image::Rgb([9, 9, 9])).save(d.join("in.png")).expect("save");
    let small = ["bench", "--synthetic", "64x48"];
    let usage: [(&[&str], &str); 6] = [
        (&["--passes", "1", "--op", "blur:8"], "'--passes <N,N,..>' cannot be used with '--op <OP>'"),
        (&["--fastest-workgroup", "--op", "blur:8"], "cannot be used with '--op <OP>'"),
        (&["--fastest-workgroup", "--runs", "3"], "cannot be used with '--runs <RUNS>'"),
        (&["--backend", "gpu", "--threads", "1,2"], "--threads sets the CPU's thread count"),
        (&["--backend", "gpu", "--workgroup", "4096"], "workgroup size 4096 does not fit this GPU"),
        (&["--backend", "gpu", "--workgroup", "256,256", "--runs", "1", "--json"], ""),
    ];
    for (args, message) in &usage[..5] {
        fails(&[&small[..], args].concat(), d, 2, &[message]);
    }
    fails(&["convert", "in.png", "--backend", "gpu", "--threads", "1"], d, 2, &["--threads sets the CPU's"]);
    image::RgbImage::from_pixel(16, 16, image::Rgb([9, 99, 9])).save(d.join("in.jpg")).expect("save");
    fails(&["bench", "in.jpg", "--formula", "stored-luma", "--runs", "1"], d, 2, &["nothing to time"]);
    // A gray photo converts to nothing; an op on it is timed after a colour image's conversion.
    image::GrayImage::from_pixel(16, 16, image::Luma([99])).save(d.join("gray.png")).expect("save");
    let args = ["bench", "gray.png", "--op", "dither", "--runs", "1"];
    fails(
        &args,
        d,
        2,
        &["nothing to time: the input is already gray", "an --op runs after the conversion there"],
    );
    // Nor can a sweep time it: its images are no JPEGs, so its cells would run bt601 under the
    // name (before: exit 0, every figure labelled stored-luma).
    for from in [&[][..], &["--from-image", "in.jpg"]] {
        let sweep = ["sweep", "--sizes", "0.01", "--cpu-only", "--runs", "1", "--formula", "stored-luma"];
        let t = fails(&[&sweep[..], from].concat(), d, 2, &["nothing to time", "sweep a colour formula"]);
        assert!(!t.contains("measuring") && !t.contains("graylab sweep:"), "nothing measured: {t}");
    }
    // A shape given twice is measured once.
    let o = graylab(&[&small[..], usage[5].0].concat(), d);
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(json["results"].as_array().map(Vec::len), Some(1), "{json}");
    // Mistyped commands, and a word that is neither a command nor a file.
    fails(
        &["covnert", "in.png", "-o", "x.png"],
        d,
        2,
        &["no command or file named 'covnert' (did you mean 'convert'?)"],
    );
    fails(&["benchmark"], d, 2, &["(did you mean 'bench'?)"]);
    fails(&["photos"], d, 2, &["no command or file named 'photos' (commands: convert, bench"]);
    fails(&["info.jpg"], d, 2, &["no command or file named 'info.jpg' (commands:"]);
    assert!(!d.join("x.png").exists());
}

/// Issue 24, item 1: an output that is another input of the batch (here with --overwrite, which
/// replaced it after converting it) is refused before any work; the other input is converted.
#[test]
fn an_output_that_is_another_input_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    common::photo(16, 8).save(d.join("b.jpg")).expect("save");
    common::photo(20, 8).save(d.join("b.gray.png")).expect("save");
    let before = std::fs::read(d.join("b.gray.png")).expect("read");
    for spelling in ["b.gray.png", "./b.gray.png"] {
        let o = graylab(&["convert", "b.jpg", spelling, "--overwrite"], d);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(
            t.contains("error: the output of b.jpg would replace another input of this batch: b.gray.png"),
            "{t}"
        );
        assert_eq!(std::fs::read(d.join("b.gray.png")).expect("read"), before, "the input is kept: {t}");
        let other = image::open(d.join("b.gray.gray.png")).expect("the other input is converted");
        assert_eq!((other.width(), other.height()), (20, 8));
        assert!(t.contains("1 of 2 files converted, 1 failed"), "{t}");
    }
}

#[test]
fn every_value_is_typed_and_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    fails(&["convert", "x.png", "--backend", "tpu"], d, 2, &["possible values", "cpu", "gpu"]);
    fails(&["convert", "x.png", "--formula", "rec2020"], d, 2, &["bt601", "bt709", "linear"]);
    fails(&["convert", "x.png", "--format", "gif"], d, 2, &["png", "jpeg", "webp"]);
    fails(&["convert", "x.png", "--depth", "12"], d, 2, &["8", "16"]);
    fails(&["convert", "x.png", "--threads", "0"], d, 2, &["thread count"]);
    fails(&["convert", "x.png", "--threads", "99999999999999999999"], d, 2, &["thread count"]);
    fails(&["convert", "x.png", "--quality", "0"], d, 2, &["quality"]);
    fails(&["convert", "x.png", "--workgroup", "0x0"], d, 2, &["workgroup"]);
    fails(&["bench", "--backend", "both"], d, 2, &["all"]);
    fails(&["bench", "--threads", "1,0"], d, 2, &["thread count"]);
    fails(&["bench", "--workgroup", "256,huge"], d, 2, &["huge"]);
    fails(&["bench", "--runs", "0"], d, 2, &["runs"]);
    fails(&["sweep", "--runs", "99999999"], d, 2, &["runs"]);
}

#[test]
fn messages_say_each_cause_once_and_advise_in_cli_terms() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let t = fails(&["convert", "missing.png"], d, 1, &["missing.png"]);
    assert_eq!(t.matches("No such file").count(), 1, "{t}");
    image::RgbImage::from_pixel(8, 8, image::Rgb([9, 9, 9])).save(d.join("in.png")).expect("save");
    std::fs::write(d.join("taken.png"), b"x").expect("write");
    fails(&["convert", "in.png", "-o", "taken.png"], d, 1, &["exists", "--overwrite"]);
    // A truncated JPEG: refused with the row and the flag, kept with a warning when asked.
    let mut jpeg = Vec::new();
    let img = image::RgbImage::from_fn(64, 256, |x, y| image::Rgb([x as u8 * 4, y as u8, 40]));
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90).encode_image(&img).expect("encode");
    std::fs::write(d.join("cut.jpg"), &jpeg[..jpeg.len() / 2]).expect("write");
    fails(&["convert", "cut.jpg"], d, 1, &["cut.jpg", "ends after row", "of 256", "--allow-truncated"]);
    let o = graylab(&["convert", "cut.jpg", "--allow-truncated"], d);
    // Said once, where warnings go, naming the file (before: again among the notes on stdout).
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(text(&o).matches("the file is truncated").count(), 1, "{}", text(&o));
    assert!(text(&o).contains("warning: cut.jpg: the file is truncated"), "{}", text(&o));
    // bench and sweep take no such flag: their advice names convert's.
    for args in
        [&["bench", "cut.jpg", "--backend", "cpu"][..], &["sweep", "--from-image", "cut.jpg", "--cpu-only"]]
    {
        let t = fails(args, d, 1, &["cut.jpg", "ends after row", "graylab convert --allow-truncated keeps"]);
        assert!(!t.contains("pass --allow-truncated"), "{args:?}: {t}");
    }
    // A corrupt PNG chunk: the decoder's reason without a debug dump.
    let mut png = std::fs::read(d.join("in.png")).expect("read");
    let idat = png.windows(4).position(|w| w == b"IDAT").expect("IDAT");
    png[idat + 6] ^= 0xFF;
    std::fs::write(d.join("crc.png"), &png).expect("write");
    let t = fails(&["convert", "crc.png"], d, 1, &["crc.png"]);
    assert!(!t.contains("ChunkType {"), "{t}");
}

#[test]
fn no_driver_noise_and_logging_on_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let o = Command::new(env!("CARGO_BIN_EXE_graylab"))
        .arg("info")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("RUST_LOG")
        .current_dir(dir.path())
        .output()
        .expect("run");
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("memory budget for images"));
    // A log warning reads as the CLI's own warnings do, not in the logger's format.
    let o = Command::new(env!("CARGO_BIN_EXE_graylab"))
        .arg("info")
        .env("GRAYLAB_MEMORY_BUDGET", "abc")
        .env_remove("RUST_LOG")
        .current_dir(dir.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("warning: GRAYLAB_MEMORY_BUDGET=\"abc\" is not a size"), "{stderr}");
    assert!(!stderr.contains("WARN"), "{stderr}");
    let o = Command::new(env!("CARGO_BIN_EXE_graylab"))
        .args(["bench", "--synthetic", "64x64", "--backend", "cpu", "--runs", "1"])
        .env("RUST_LOG", "graylab=debug")
        .current_dir(dir.path())
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&o.stderr).contains("DEBUG graylab"), "{}", text(&o));
    if common::gpu().is_some() {
        // Without any adapter, the GPU backend's error says what to do instead. The Vulkan
        // loader reads VK_DRIVER_FILES before VK_ICD_FILENAMES (a GPU machine may name its
        // driver there) and adds VK_ADD_DRIVER_FILES to either: all three hide every driver.
        let o = Command::new(env!("CARGO_BIN_EXE_graylab"))
            .args(["bench", "--synthetic", "64x64", "--backend", "gpu"])
            .env("VK_DRIVER_FILES", "/nonexistent.json")
            .env("VK_ICD_FILENAMES", "/nonexistent.json")
            .env("VK_ADD_DRIVER_FILES", "")
            .env("WGPU_BACKEND", "vulkan")
            .current_dir(dir.path())
            .output()
            .expect("run");
        assert!(!o.status.success() && text(&o).contains("--backend cpu"), "{}", text(&o));
    }
}

/// The app's `--frame-log` is a new file: one already there (the photo being opened, a FIFO)
/// is refused before the window opens, and left as it was.
#[test]
fn a_frame_log_never_replaces_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    common::photo(16, 8).save(d.join("p.png")).expect("save");
    let before = std::fs::read(d.join("p.png")).expect("read");
    fails(&["--frame-log", "p.png", "p.png"], d, 2, &["--frame-log: the file exists already: p.png"]);
    assert_eq!(std::fs::read(d.join("p.png")).expect("read"), before, "the photo is kept");
}

#[test]
fn an_output_error_names_the_input_even_where_the_output_path_holds_its_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // WebP stores at most 16383 px a side: refused from the header, naming the output.
    image::GrayImage::new(16384, 1).save(d.join("x.png")).expect("save");
    let o = graylab(&["convert", "x.png", "-o", "x.png.webp"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let line = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_default();
    assert!(
        line.starts_with("error: x.png: cannot export as WebP (") && line.ends_with("): x.png.webp"),
        "{stderr}"
    );
    // An error of the input names it once.
    std::fs::write(d.join("cut.png"), b"\x89PNG\r\n\x1a\n").expect("write");
    let o = graylab(&["convert", "cut.png", "-o", "cut.png.webp"], d);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("cut.png").count(), 1, "{stderr}");
}
