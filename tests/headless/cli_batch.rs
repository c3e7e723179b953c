//! `graylab convert` on folders: mixed files, subfolders, skip notes, progress lines, the
//! summary, and nothing but JSON with `--json`.

use crate::common::{graylab, photo};

use std::path::Path;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// in/: three images (PNG, JPEG, BMP), a text file, a file with an image extension that is not
/// one; in/sub/: one more image.
fn mixed_folder(root: &Path) {
    let input = root.join("in");
    std::fs::create_dir_all(input.join("sub")).expect("mkdir");
    photo(40, 30).save(input.join("a.png")).expect("save");
    photo(33, 17).save(input.join("b.jpg")).expect("save");
    photo(8, 8).save(input.join("c.bmp")).expect("save");
    std::fs::write(input.join("notes.txt"), b"not an image").expect("write");
    std::fs::write(input.join("fake.png"), b"plain text with a png name").expect("write");
    photo(21, 13).save(input.join("sub").join("d.png")).expect("save");
    std::fs::create_dir(root.join("out")).expect("mkdir");
}

#[test]
fn folder_mode_converts_images_and_skips_other_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    mixed_folder(dir.path());
    let o = graylab(&["convert", "in", "--out-dir", "out", "--jobs", "2"], dir.path());
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    for name in ["a", "b", "c"] {
        let out = image::open(dir.path().join("out").join(format!("{name}.gray.png"))).expect("output");
        assert_eq!(out.color(), image::ColorType::L8);
    }
    assert!(!dir.path().join("out/sub").exists(), "not recursive: sub/ is left alone");
    let err = stderr(&o);
    assert!(
        err.contains("skipped (not an image)") && err.contains("notes.txt") && err.contains("fake.png"),
        "{err}"
    );
    // Not a terminal: plain progress lines, one per file.
    assert!(err.contains("[3/3] 100%"), "{err}");
    let out = stdout(&o);
    assert!(out.contains("3 of 3 files converted, 0 failed, 2 skipped"), "{out}");
    assert!(out.contains("images/s"), "{out}");

    // Recursive: the subfolder is mirrored; existing outputs make those files fail, exit 1.
    let o = graylab(&["convert", "in", "--out-dir", "out", "--recursive"], dir.path());
    assert!(!o.status.success());
    assert!(image::open(dir.path().join("out/sub/d.gray.png")).is_ok(), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 of 4 files converted, 3 failed"), "{}", stdout(&o));
}

/// An output folder inside the input folder is left out of a recursive listing, and said so
/// (its files were left out without a word).
#[test]
fn an_output_folder_inside_the_input_is_said_to_be_left_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in/out")).expect("mkdir");
    photo(8, 8).save(d.join("in/a.png")).expect("save");
    photo(8, 8).save(d.join("in/out/b.png")).expect("save");
    let o = graylab(&["convert", "in", "--out-dir", "in/out", "--recursive"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("skipped (the output folder, with the files in it): in/out"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("1 of 1 files converted, 0 failed, 1 skipped"), "{}", stdout(&o));
    assert!(!d.join("in/out/b.gray.png").exists(), "its files are not converted");
}

#[test]
fn json_mode_prints_only_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    mixed_folder(dir.path());
    let o = graylab(&["convert", "in", "--out-dir", "out", "--recursive", "--json"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "no progress, notes or summary on stderr with --json");
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("stdout is one JSON document");
    let entries = json.as_array().expect("an array");
    assert_eq!(entries.iter().filter(|e| e.get("output").is_some()).count(), 4);
    assert_eq!(entries.iter().filter(|e| e.get("skipped").is_some()).count(), 2);
    // RGB to PNG on the CPU converts stripe by stripe inside the encoder, and says so.
    let report =
        entries.iter().find(|e| e["input"].as_str().is_some_and(|i| i.ends_with("a.png"))).expect("a.png");
    let phases: Vec<&str> = report["run"]["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .filter_map(|p| p["phase"].as_str())
        .collect();
    assert_eq!(phases, ["decode", "kernel", "encode"]);
    let notes = report["run"]["notes"].to_string();
    assert!(notes.contains("stripe by stripe"), "{notes}");
}

#[test]
fn folder_input_needs_an_output_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    mixed_folder(dir.path());
    let o = graylab(&["convert", "in"], dir.path());
    assert!(!o.status.success());
    assert!(stderr(&o).contains("needs --out-dir"), "{}", stderr(&o));
}

/// Issue 24, items 12 and 1: two inputs that would write one output are refused by name, and
/// the rest of the folder is converted; exit 1 at the end.
#[test]
fn a_name_clash_refuses_the_pair_and_converts_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    photo(8, 8).save(d.join("in/a.bmp")).expect("save");
    photo(9, 8).save(d.join("in/a.jpg")).expect("save");
    photo(10, 8).save(d.join("in/b.bmp")).expect("save");
    let o = graylab(&["convert", "in", "--out-dir", "out"], d);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("error: two inputs would write the same output (in/a.bmp and in/a.jpg): out/a.gray.png")
            .count(),
        1,
        "one message names the pair: {err}"
    );
    assert!(!d.join("out/a.gray.png").exists(), "neither of the pair is converted");
    let b = image::open(d.join("out/b.gray.png")).expect("b.bmp is converted");
    assert_eq!((b.width(), b.height()), (10, 8));
    assert!(stdout(&o).contains("1 of 3 files converted, 2 failed, 0 skipped"), "{}", stdout(&o));
    // With --json, each of the pair has its entry with the error.
    let o = graylab(&["convert", "in", "--out-dir", "out", "--json", "--overwrite"], d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON document");
    let errors: Vec<&str> =
        json.as_array().expect("array").iter().filter_map(|e| e["error"].as_str()).collect();
    assert_eq!(errors.len(), 2, "{json}");
    assert!(errors.iter().all(|e| e.contains("(in/a.bmp and in/a.jpg)")), "{json}");
}

/// Two outputs that are links to one file are one output: the pair is refused by name, as a
/// name clash is, and the file keeps what it held (before, the second result replaced the first,
/// exit 0). A link to another input's output is the same clash.
#[test]
fn outputs_linked_to_one_file_are_a_name_clash() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    photo(8, 8).save(d.join("in/a.png")).expect("save");
    photo(9, 8).save(d.join("in/b.png")).expect("save");
    std::fs::write(d.join("target.png"), b"old").expect("write");
    for name in ["a", "b"] {
        std::os::unix::fs::symlink("../target.png", d.join(format!("out/{name}.gray.png"))).expect("link");
    }
    let o = graylab(&["convert", "in", "--out-dir", "out", "--overwrite", "--jobs", "1"], d);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("two inputs would write the same output (in/a.png and in/b.png)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(d.join("target.png")).expect("target"), b"old");
    // One link, to the other input's output.
    std::fs::remove_file(d.join("out/b.gray.png")).expect("rm");
    std::fs::write(d.join("out/b.gray.png"), b"b's").expect("write");
    std::fs::remove_file(d.join("out/a.gray.png")).expect("rm");
    std::os::unix::fs::symlink("b.gray.png", d.join("out/a.gray.png")).expect("link");
    let o = graylab(&["convert", "in", "--out-dir", "out", "--overwrite"], d);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("0 of 2 files converted, 2 failed"), "{}", stdout(&o));
    assert_eq!(std::fs::read(d.join("out/b.gray.png")).expect("b"), b"b's");
}

/// A trace an earlier run left in a folder input is a file graylab skips there: a rerun over it
/// is refused saying so (before: "would replace its own input", of a file it never reads).
#[test]
fn a_trace_inside_the_input_folder_is_refused_as_a_skipped_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir(d.join("in")).expect("mkdir");
    photo(8, 8).save(d.join("in/a.png")).expect("save");
    let args = ["convert", "in", "--out-dir", "out", "--trace", "in/run.json", "--overwrite"];
    assert!(graylab(&args, d).status.success());
    let o = graylab(&args, d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = "--trace would replace a file of the input folder, which graylab skips (not an image): \
                in/run.json (name a file outside it)";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
}

/// An `--out-dir` whose creation fails part way (here a name too long for the filesystem)
/// leaves none of the folders it made (before, `new` and `new/deeper` stayed, empty).
#[test]
fn a_failed_out_dir_creation_leaves_no_folder_it_made() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(8, 8).save(d.join("a.png")).expect("save");
    let out = format!("new/deeper/{}", "x".repeat(300));
    let o = graylab(&["convert", "a.png", "--out-dir", &out], d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot create new/deeper/xxx"), "{}", stderr(&o));
    assert!(!d.join("new").exists(), "the folders made are removed");
}

/// Issue 24, item 13 (and 1): `--out-dir` is the input folder. A rerun leaves graylab's own
/// outputs alone, saying whose output each is, instead of converting them again
/// (`a.gray.gray.png`) or replacing an input of the batch.
#[test]
fn graylabs_own_outputs_in_the_input_folder_are_not_converted_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    photo(12, 8).save(d.join("in/a.jpg")).expect("save");
    photo(14, 8).save(d.join("in/b.png")).expect("save");
    let o = graylab(&["convert", "in", "--out-dir", "in"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = std::fs::read(d.join("in/a.gray.png")).expect("a's output");
    for overwrite in [false, true] {
        let mut args = vec!["convert", "in", "--out-dir", "in"];
        if overwrite {
            args.push("--overwrite");
        }
        let o = graylab(&args, d);
        let err = stderr(&o);
        assert!(err.contains("skipped (graylab's output of in/a.jpg): in/a.gray.png"), "{err}");
        assert!(err.contains("skipped (graylab's output of in/b.png): in/b.gray.png"), "{err}");
        assert!(!d.join("in/a.gray.gray.png").exists() && !d.join("in/b.gray.gray.png").exists(), "{err}");
        if overwrite {
            assert!(o.status.success(), "{err}");
            assert!(stdout(&o).contains("2 of 2 files converted, 0 failed, 2 skipped"), "{}", stdout(&o));
        } else {
            // The outputs exist: a and b fail as in any folder, and nothing is replaced.
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(err.contains("the output file exists: in/a.gray.png"), "{err}");
        }
        assert_eq!(std::fs::read(d.join("in/a.gray.png")).expect("a's output"), first, "the same image");
    }
    // Into another folder later, in another format: the outputs of the batch before stay out.
    let o = graylab(&["convert", "in", "--out-dir", "in/gray", "--format", "tif"], d);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("skipped (graylab's output of in/a.jpg): in/a.gray.png"), "{err}");
    assert!(stdout(&o).contains("2 of 2 files converted, 0 failed, 2 skipped"), "{}", stdout(&o));
    assert!(d.join("in/gray/a.gray.tif").is_file() && !d.join("in/gray/a.gray.gray.tif").exists());
}

/// Issue 24, item 18: a mirrored subfolder whose files all fail is removed at the end; one that
/// existed before is kept.
#[test]
fn mirrored_folders_left_empty_are_removed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for sub in ["in/bad/deeper", "in/good", "in/old", "out/old"] {
        std::fs::create_dir_all(d.join(sub)).expect("mkdir");
    }
    let broken = b"\x89PNG\r\n\x1a\ntruncated";
    std::fs::write(d.join("in/bad/x.png"), broken).expect("write");
    std::fs::write(d.join("in/bad/deeper/y.png"), broken).expect("write");
    std::fs::write(d.join("in/old/z.png"), broken).expect("write");
    photo(8, 8).save(d.join("in/good/ok.png")).expect("save");
    let o = graylab(&["convert", "in", "--out-dir", "out", "--recursive"], d);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 of 4 files converted, 3 failed"), "{}", stdout(&o));
    assert!(d.join("out/good/ok.gray.png").is_file());
    assert!(!d.join("out/bad").exists(), "created and left empty: removed");
    assert!(d.join("out/old").is_dir(), "it existed before: kept");
}

#[test]
fn an_animated_input_reports_its_frames_in_json_and_in_the_notes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in");
    std::fs::create_dir_all(&input).expect("mkdir");
    std::fs::create_dir(dir.path().join("out")).expect("mkdir");
    let frame = |v: u8| image::Frame::new(image::RgbaImage::from_pixel(8, 6, image::Rgba([v, v, v, 255])));
    let mut gif = Vec::new();
    image::codecs::gif::GifEncoder::new(&mut gif)
        .encode_frames([frame(10), frame(90), frame(200)])
        .expect("gif");
    std::fs::write(input.join("anim.gif"), &gif).expect("write");
    photo(8, 6).save(input.join("still.png")).expect("save");
    let o = graylab(&["convert", "in", "--out-dir", "out", "--json"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("stdout is one JSON document");
    let entries = json.as_array().expect("an array");
    let report = |name: &str| {
        entries.iter().find(|e| e["input"].as_str().is_some_and(|i| i.ends_with(name))).expect("a report")
    };
    let anim = report("anim.gif");
    assert_eq!(anim["frames"], serde_json::json!({"converted": 1, "total": 3}), "{anim}");
    let notes = anim["run"]["notes"].to_string();
    assert!(notes.contains("frame 1 of 3 converted"), "{notes}");
    assert!(report("still.png").get("frames").is_none(), "a still image has no frame count");
    // Without --json the note is printed.
    let o = graylab(&["convert", "in/anim.gif", "-o", "out/text.png"], dir.path());
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success() && said.contains("frame 1 of 3 converted"), "{said}");
}

/// An APNG whose still image is its first frame, or one its animation leaves out (then the
/// still image is what is converted, and said so, not "frame 1 of 3").
#[test]
fn an_apng_says_whether_its_still_image_is_a_frame() {
    let dir = tempfile::tempdir().expect("temp dir");
    let apng = |still_apart: bool| {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, 4, 2);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_animated(2, 0).expect("animated");
        encoder.set_sep_def_img(still_apart).expect("still image");
        let mut writer = encoder.write_header().expect("header");
        for v in [10u8, 100, 200].iter().take(if still_apart { 3 } else { 2 }) {
            writer.write_image_data(&[*v; 24]).expect("image");
        }
        writer.finish().expect("finished");
        out
    };
    for (still_apart, says, json) in [
        (
            false,
            "the file holds 2 frames: frame 1 of 2 converted",
            serde_json::json!({"converted": 1, "total": 2}),
        ),
        (
            true,
            "the file holds a still image and an animation of 2 frames: the still image converted",
            serde_json::json!({"converted": 1, "still_apart": true, "total": 3}),
        ),
    ] {
        std::fs::write(dir.path().join("a.png"), apng(still_apart)).expect("write");
        let o = graylab(&["convert", "a.png", "-o", "g.png", "--overwrite", "--json"], dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        assert_eq!(report[0]["frames"], json, "{report}");
        assert!(report[0]["warnings"].to_string().contains(says), "{report}");
        let gray = image::open(dir.path().join("g.png")).expect("converted").to_luma8();
        assert_eq!(gray.get_pixel(0, 0).0, [10], "the still image, first in the file");
    }
}

#[test]
fn images_graylab_does_not_read_fail_in_a_folder_by_their_format_never_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in");
    std::fs::create_dir(&input).expect("mkdir");
    let heic = [&24u32.to_be_bytes()[..], b"ftypheic\0\0\0\0mif1heic", &[0; 2000]].concat();
    std::fs::write(input.join("IMG_1234.HEIC"), heic).expect("write");
    std::fs::write(input.join("edit.psd"), [b"8BPS\0\x01".as_slice(), &[0; 40]].concat()).expect("write");
    // A raw beside its JPEG: one output name between them, and the JPEG is still converted.
    std::fs::write(input.join("IMG_0002.dng"), crate::tiff::camera_raw(true)).expect("write");
    photo(16, 12).save(input.join("IMG_0002.jpg")).expect("save");
    // A Canon raw beside its JPEG likewise.
    std::fs::write(input.join("IMG_0003.CR2"), crate::common::canon_cr2(48, 32)).expect("write");
    photo(48, 32).save(input.join("IMG_0003.JPG")).expect("save");
    // Raws of layouts of their own, named by their first bytes (they were "not an image").
    let cr3 = [&24u32.to_be_bytes()[..], b"ftypcrx \0\0\0\x01crx isom", &[0; 2000]].concat();
    std::fs::write(input.join("IMG_0004.CR3"), cr3).expect("write");
    std::fs::write(input.join("DSCF0005.RAF"), [b"FUJIFILMCCD-RAW 0201".as_slice(), &[0; 2000]].concat())
        .expect("write");
    std::fs::write(input.join("notes.txt"), b"not an image").expect("write");
    let o = graylab(&["convert", "in", "--out-dir", "out"], dir.path());
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    for (name, why) in [
        ("IMG_1234.HEIC", "HEIF/HEIC images are not supported (graylab reads JPEG, PNG, TIFF"),
        ("edit.psd", "Photoshop (PSD) images are not supported (graylab reads JPEG, PNG, TIFF"),
        (
            "IMG_0002.dng",
            "unsupported image (a camera raw (DNG) file: graylab would read only its 16x12 preview",
        ),
        (
            "IMG_0003.CR2",
            "unsupported image (a camera raw (Canon CR2) file: graylab would read only its 48x32 JPEG preview",
        ),
        (
            "IMG_0004.CR3",
            "unsupported image (a camera raw (Canon CR3) file: raw sensor data is not supported; develop it to \
             TIFF or JPEG first)",
        ),
        ("DSCF0005.RAF", "unsupported image (a camera raw (Fujifilm RAF) file: raw sensor data"),
    ] {
        let line = err.lines().find(|l| l.ends_with(&format!(": in/{name}"))).unwrap_or_default();
        assert!(line.starts_with(&format!("error: {why}")), "{name}: {err}");
    }
    assert!(err.contains("skipped (not an image): in/notes.txt"), "{err}");
    assert_eq!(err.matches("skipped").count(), 1, "{err}");
    assert!(out.contains("2 of 8 files converted, 6 failed, 1 skipped"), "{out}");
    let converted = image::open(dir.path().join("out/IMG_0002.gray.png")).expect("the JPEG converted");
    assert_eq!((converted.width(), converted.height()), (16, 12));
    let converted = image::open(dir.path().join("out/IMG_0003.gray.png")).expect("the JPEG converted");
    assert_eq!((converted.width(), converted.height()), (48, 32));
}

/// `convert --backend gpu` names the adapter that ran it, once per command, for one file and
/// for a folder, and warns of a software adapter once, as `bench` and `sweep` do (before, it
/// said neither).
#[test]
fn a_gpu_conversion_names_its_adapter_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let info = graylab(&["info", "--json"], d);
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("info JSON");
    let adapters = info["adapters"].as_array().cloned().unwrap_or_default();
    let Some(used) = adapters.iter().find(|a| a["selected"] == true) else { return };
    let (name, software) = (used["name"].as_str().unwrap_or_default(), used["device_type"] == "Cpu");
    std::fs::create_dir(d.join("in")).expect("mkdir");
    for i in 0..3 {
        photo(30 + i, 20).save(d.join(format!("in/p{i}.png"))).expect("save");
    }
    for args in [
        &["convert", "in/p0.png", "-o", "one.png", "--backend", "gpu"][..],
        &["convert", "in", "--out-dir", "out", "--backend", "gpu"][..],
    ] {
        let o = graylab(args, d);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let named: Vec<String> =
            stdout(&o).lines().filter(|l| l.starts_with("GPU: ")).map(str::to_owned).collect();
        assert_eq!(named, [format!("GPU: {name}")], "{args:?}");
        let warned = stderr(&o).matches("warning: the GPU is a software rasteriser").count();
        assert_eq!(warned, usize::from(software), "{args:?}: {}", stderr(&o));
    }
    // On the CPU: no adapter named.
    let o = graylab(&["convert", "in/p1.png", "-o", "cpu.png"], d);
    assert!(o.status.success() && !stdout(&o).contains("GPU: "), "{}", stdout(&o));
}

/// `--threads` holds where the kernel runs inside the encoder's stripes (RGB to PNG on the CPU):
/// the run reports the threads asked for, and one thread writes the same bytes as all.
#[test]
fn threads_asked_for_run_the_stripes_inside_the_encode() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(301, 203).save(d.join("a.png")).expect("save");
    let run = |threads: &str, out: &str| {
        let o = graylab(&["convert", "a.png", "-o", out, "--threads", threads, "--json"], d);
        assert!(o.status.success(), "{}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("stdout is one JSON document");
        let entry = json.as_array().and_then(|a| a.first()).cloned().unwrap_or(json);
        (entry["run"]["threads"].as_u64(), entry["run"]["notes"].to_string())
    };
    let (threads, notes) = run("1", "one.png");
    assert_eq!(threads, Some(1), "{notes}");
    assert!(notes.contains("inside the encode on 1 thread:"), "{notes}");
    let all = graylab::cpu::available_threads().to_string();
    let (threads, _) = run(&all, "all.png");
    assert_eq!(threads, Some(graylab::cpu::available_threads() as u64));
    let read = |name: &str| std::fs::read(d.join(name)).expect("read");
    assert_eq!(read("one.png"), read("all.png"), "one thread and all write the same bytes");
}

/// A folder's batch says what it will take before its first file, from the pace kept in the
/// cache folder (here one the test writes: each 300x200 file's conversion seen to take 2 s, and
/// batches 5 s beyond their runs a unit of 0.06 MP + 0.1 a file), and only when that is long
/// enough to matter; every batch converted whole keeps what it took for the next.
#[test]
fn a_folder_batch_says_its_estimate_from_the_kept_pace_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir(d.join("in")).expect("mkdir");
    for name in ["a", "b", "c", "d"] {
        photo(300, 200).save(d.join("in").join(format!("{name}.png"))).expect("save");
    }
    let convert = |out: &str| {
        let o = graylab(&["convert", "in", "--out-dir", out, "--jobs", "2", "--threads", "1"], d);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    // Nothing seen: its guess, well under a second for 0.24 MP, is not said.
    let said = convert("out1");
    assert!(!said.contains("converting 4 files"), "{said}");
    let kept: Vec<_> = std::fs::read_dir(d.join("graylab"))
        .expect("the cache folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("pace-")))
        .collect();
    assert_eq!(kept.len(), 1, "the batch kept its pace: {kept:?}");
    let pace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&kept[0]).expect("the pace")).expect("JSON");
    assert!(pace["overheads"].as_array().is_some_and(|o| o.iter().any(|o| o[0] == "Batch")), "{pace}");
    let write_pace = |run_s: f64, overhead_s: f64| {
        let seen = |lane: &str| serde_json::json!({ "lane": lane, "megapixels": 0.06, "rounds": 0, "seconds": run_s });
        let written = serde_json::json!({
            "machine": pace["machine"], "format": pace["format"],
            "seen": [seen("CpuOneThread"), seen("CpuAllThreads")],
            "overheads": [["Batch", overhead_s]],
        });
        std::fs::write(&kept[0], written.to_string()).expect("write the pace");
    };
    // 4 x 2 s of runs, and 5 s x 4 x (0.06 + 0.1) = 3.2 s beyond them: 11.2 s.
    write_pace(2.0, 5.0);
    let said = convert("out2");
    let line = said.lines().next().unwrap_or_default();
    assert_eq!(line, "converting 4 files (0.24 MP): about 11 s, from runs seen on this machine", "{said}");
    // A tenth of a second (4 x 0.01 s and 0.1 s x 0.64): not worth a line.
    write_pace(0.01, 0.1);
    let said = convert("out3");
    assert!(!said.contains("converting 4 files"), "{said}");
}
