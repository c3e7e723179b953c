//! What every command writes, on the real binary (issue 42, items E3, 4, 5, 6; issue 44): one
//! check refuses an output over any input (also through a hard link) or over another output; a
//! trace or a report goes only to a regular file; a read-only file is never replaced; a user's
//! `x.gray.png` is told from graylab's own by graylab's mark, not by its name; `--out-dir` is
//! created; a name collision says how to resolve it; `-` is no output file.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::common::{graylab, graylab_cmd, photo, text};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

/// E3: `bench --trace` onto its own photo, by name or through a hard link, is refused before
/// any work and the photo is unchanged; so are outputs over each other and over a converted
/// image, the same check in every command.
#[test]
fn no_command_writes_an_output_over_its_input_or_another_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(32, 16).save(d.join("in.png")).expect("save");
    std::fs::hard_link(d.join("in.png"), d.join("linked.png")).expect("hard link");
    let before = std::fs::read(d.join("in.png")).expect("read");
    for target in ["in.png", "linked.png"] {
        let o = graylab(
            &["bench", "in.png", "--backend", "cpu", "--runs", "2", "--trace", target, "--overwrite"],
            d,
        );
        assert_eq!(o.status.code(), Some(1), "{target}: {}", text(&o));
        assert!(text(&o).contains(&format!("--trace would replace its own input: {target}")), "{}", text(&o));
        assert!(!text(&o).contains("warm"), "refused before any run: {}", text(&o));
        assert_eq!(
            std::fs::read(d.join("in.png")).expect("read"),
            before,
            "{target}: the photo is unchanged"
        );
    }
    // Two outputs of one command that are one file (a hard link) are refused by the same check.
    std::fs::write(d.join("r.json"), b"{}").expect("write");
    std::fs::hard_link(d.join("r.json"), d.join("r-link.json")).expect("hard link");
    // A small sweep writing its JSON and one more output (`flag`, `path`), replacing files.
    let sweep = |json: &str, (flag, path): (&str, &str)| {
        let args = ["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--json", json, flag, path];
        graylab(&[&args[..], &["--overwrite"]].concat(), d)
    };
    let o = sweep("r.json", ("--trace", "r-link.json"));
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
    assert!(text(&o).contains("--trace names the same file as --json: r-link.json"), "{}", text(&o));
    // A convert's trace over the image it writes, through a hard link.
    photo(8, 8).save(d.join("out.png")).expect("save");
    std::fs::hard_link(d.join("out.png"), d.join("out-link.json")).expect("hard link");
    let o = graylab(&["convert", "in.png", "-o", "out.png", "--overwrite", "--trace", "out-link.json"], d);
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
    assert!(
        text(&o).contains("--trace would replace an image this conversion writes: out-link.json"),
        "{}",
        text(&o)
    );
    assert_eq!(image::open(d.join("out.png")).expect("out.png").width(), 8, "not converted over");
    // The same file named twice, there and no --overwrite: the usage error still comes first.
    let o = graylab(&["convert", "in.png", "-o", "out.png", "--trace", "out.png"], d);
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
    assert!(
        text(&o).contains(
            "--trace would replace an image this conversion writes: out.png (give each its own file)"
        ),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("exists"), "{}", text(&o));
    assert_eq!(image::open(d.join("out.png")).expect("out.png").width(), 8, "not converted over");
    // Files not there yet, one name spelled two ways: refused alike, before any work (with
    // --overwrite the trace replaced the image, or the CSV the JSON, exit 0).
    let o = graylab(&["convert", "in.png", "-o", "new.png", "--trace", "./new.png", "--overwrite"], d);
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
    assert!(text(&o).contains("--trace would replace an image this conversion writes"), "{}", text(&o));
    assert!(!d.join("new.png").exists(), "nothing written");
    let absolute = d.join("t.json");
    let o = sweep("t.json", ("--csv", absolute.to_str().expect("a UTF-8 temp path")));
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
    assert!(text(&o).contains("--csv names the same file as --json"), "{}", text(&o));
    assert!(!d.join("t.json").exists(), "nothing measured, nothing written");
}

/// Item 6: a trace or a JSON report is never written to a device, and the message says so in
/// its own words (not an image's).
#[test]
fn a_trace_or_a_report_goes_only_to_a_regular_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let o = graylab(
        &[
            "bench",
            "--synthetic",
            "64x64",
            "--backend",
            "cpu",
            "--runs",
            "1",
            "--trace",
            "/dev/null",
            "--overwrite",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(
            "--trace names a character device; a trace is written only to a regular file: /dev/null"
        ),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("image file"), "{}", text(&o));
    let o = graylab(&["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--json", "/dev/null"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(
            "--json names a character device; a JSON report is written only to a regular file: /dev/null"
        ),
        "{}",
        text(&o)
    );
}

/// `-` names no output file: refused as a usage error (exit 2), naming what is written and a
/// file it could go to (before, `--trace -` and `-o - --format png` wrote a file named "-"),
/// except a sweep's `--json -` or `--csv -`, standard output (one of them). Nor does it name an
/// input (before, "cannot read the file (No such file or directory): -", or with `-o -` "the
/// output would replace its own input: -").
#[test]
fn a_dash_is_no_output_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(32, 16).save(d.join("in.png")).expect("save");
    for (args, says) in [
        (
            &["convert", "in.png", "-o", "-", "--format", "png"][..],
            "-o/--output -: an image is written only to a file, not to stdout (name one, e.g. -o out.png)",
        ),
        (&["convert", "in.png", "-o", "-"], "-o/--output -: an image is written only to a file"),
        (
            &["convert", "in.png", "--trace", "-"],
            "--trace -: a trace is written only to a file, not to stdout (name one, e.g. --trace run.trace.json)",
        ),
        (&["bench", "in.png", "--backend", "cpu", "--trace", "-"], "--trace -: a trace is written only"),
        (
            &["sweep", "--cpu-only", "--sizes", "0.01", "--csv", "-", "--json", "-"],
            "--json - and --csv - both name standard output: send one of them to a file",
        ),
        (
            &["convert", "-", "-o", "-"],
            "invalid value '-' for '<INPUTS>...': graylab reads a file, not standard input (name one; a file \
             named - is ./-)",
        ),
        (&["convert", "-", "-o", "out.png"], "graylab reads a file, not standard input"),
        (&["bench", "-", "--backend", "cpu"], "invalid value '-' for '[INPUT]': graylab reads a file, not"),
        (&["sweep", "--from-image", "-"], "invalid value '-' for '--from-image <FROM_IMAGE>': graylab reads"),
        (
            &["compare", "in.png", "-"],
            "invalid value '-' for '<NEW>': graylab reads a file, not standard input",
        ),
    ] {
        let o = graylab(args, d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
        assert!(!d.join("-").exists() && !d.join("in.gray.png").exists(), "{args:?}: nothing written");
    }
    // A sweep's CSV, as its JSON, may go to standard output, alone there.
    let o = graylab(&["sweep", "--cpu-only", "--sizes", "0.01", "--runs", "1", "--csv", "-"], d);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.starts_with("megapixels,width,height,series,"), "{stdout}");
    assert!(stdout.lines().skip(1).all(|l| l.starts_with("0.0100,")), "{stdout}");
    assert!(!d.join("-").exists(), "no file named -");
}

/// An output that is a symbolic link is written through, as `cp` writes: the file it leads to
/// is replaced (with `--overwrite`) and the link kept. A link to nothing, or to a process's
/// open file (`/dev/stdout` is one), is refused before any work (before, the link itself was
/// replaced by a file: `--json /dev/stdout --overwrite` replaced `/dev/stdout`).
#[test]
fn a_symbolic_link_is_written_through_or_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(32, 16).save(d.join("in.png")).expect("save");
    std::fs::create_dir(d.join("sub")).expect("mkdir");
    std::fs::write(d.join("sub/kept.png"), b"old").expect("write");
    let link = |to: &str, name: &str| std::os::unix::fs::symlink(to, d.join(name)).expect("symlink");
    link("sub/kept.png", "link.png");
    link("none.png", "dangling.png");
    let o = graylab(&["convert", "in.png", "-o", "link.png"], d);
    assert!(text(&o).contains("the file exists (pass --overwrite to replace it): link.png"), "{}", text(&o));
    let o = graylab(&["convert", "in.png", "-o", "link.png", "--overwrite"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        d.join("link.png").symlink_metadata().expect("link").file_type().is_symlink(),
        "the link is kept"
    );
    let gray = image::open(d.join("sub/kept.png")).expect("the file it leads to is the gray image");
    assert_eq!((gray.width(), gray.height()), (32, 16));
    let o = graylab(&["convert", "in.png", "-o", "dangling.png", "--overwrite"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("a symbolic link to none.png, which leads to no file"), "{}", text(&o));
    link("loop-b.png", "loop-a.png");
    link("loop-a.png", "loop-b.png");
    let o = graylab(&["convert", "in.png", "-o", "loop-a.png", "--overwrite"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("which leads round a loop of links: loop-a.png"), "{}", text(&o));
    // As `--json /dev/stdout` with stdout sent to a file.
    link("/proc/self/fd/1", "stdout.json");
    let stdout = std::fs::File::create(d.join("stdout.txt")).expect("create");
    let o = graylab_cmd(d)
        .args([
            "sweep",
            "--cpu-only",
            "--sizes",
            "0.01",
            "--runs",
            "1",
            "--json",
            "stdout.json",
            "--overwrite",
        ])
        .stdout(stdout)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("--json: the output is a symbolic link to /proc/self/fd/1, a process's open file"),
        "{said}"
    );
    assert!(!said.contains("measuring"), "refused before any run: {said}");
    assert!(d.join("stdout.json").symlink_metadata().expect("link").file_type().is_symlink());
    assert!(!d.join("none.png").exists(), "nothing made through a dangling link");
}

/// Item 5: a read-only (0444) output is refused with --overwrite, naming the file and saying it
/// is read-only, whether `-o` names it, a batch writes it or it is a trace; it keeps its bytes
/// and its mode. (The tests run as root: the mode bits decide, not `access()`.)
#[test]
fn a_read_only_output_is_never_replaced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(16, 8).save(d.join("in.png")).expect("save");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    for path in ["kept.png", "out/in.gray.png", "t.json"] {
        photo(4, 4).save_with_format(d.join(path), image::ImageFormat::Png).expect("save");
        std::fs::set_permissions(d.join(path), std::fs::Permissions::from_mode(0o444)).expect("chmod");
    }
    let before = std::fs::read(d.join("kept.png")).expect("read");
    let cases: [(&[&str], &str); 3] = [
        (
            &["convert", "in.png", "-o", "kept.png", "--overwrite"],
            "-o/--output: the file is read-only (mode 0444), so --overwrite does not replace it",
        ),
        (
            &["convert", "in.png", "--out-dir", "out", "--overwrite"],
            "the output file is read-only (mode 0444), so it is not replaced: out/in.gray.png",
        ),
        (
            &["bench", "in.png", "--backend", "cpu", "--runs", "1", "--trace", "t.json", "--overwrite"],
            "--trace: the file is read-only (mode 0444), so --overwrite does not replace it",
        ),
    ];
    for (args, says) in cases {
        let o = graylab(args, d);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    assert_eq!(std::fs::read(d.join("kept.png")).expect("read"), before);
    for path in ["kept.png", "out/in.gray.png", "t.json"] {
        assert_eq!(mode(&d.join(path)), 0o444, "{path}");
        let kept = image::load_from_memory(&std::fs::read(d.join(path)).expect("read"));
        assert_eq!(kept.expect("still the old image").width(), 4, "{path}");
    }
}

/// Item 4: graylab's outputs carry its mark in every format that has room for one (BMP has
/// none); a file of the same name without it is a user's.
#[test]
fn graylabs_outputs_carry_its_mark() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(40, 24).save(d.join("in.png")).expect("save");
    for (ext, marked) in [("png", true), ("jpg", true), ("tif", true), ("webp", true), ("bmp", false)] {
        let out = format!("out.{ext}");
        let o = graylab(&["convert", "in.png", "-o", &out], d);
        assert!(o.status.success(), "{ext}: {}", text(&o));
        assert_eq!(graylab::io::is_graylab_output(&d.join(&out)), marked, "{ext}");
        assert_eq!(image::open(d.join(&out)).expect("readable").width(), 40, "{ext}");
    }
    // Its own 16-bit PNG too (the row-streaming writer), and nothing another program wrote.
    image::DynamicImage::ImageLuma16(image::ImageBuffer::from_pixel(8, 8, image::Luma([700u16])))
        .save(d.join("deep.png"))
        .expect("save");
    assert!(!graylab::io::is_graylab_output(&d.join("deep.png")), "the image crate's PNG");
    let o = graylab(&["convert", "deep.png", "-o", "deep-out.png"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(graylab::io::is_graylab_output(&d.join("deep-out.png")));
    assert!(!graylab::io::is_graylab_output(&d.join("in.png")));
    assert!(!graylab::io::is_graylab_output(Path::new("/dev/zero")));
    assert!(!graylab::io::is_graylab_output(&d.join("missing.png")));
}

/// Item 4: a user's `x.gray.png` beside `x.jpg`, `--out-dir` the same folder, `--overwrite`: it
/// has no mark, so it is neither skipped as graylab's nor replaced; `x.jpg` is refused as any
/// output over another input of the batch is.
#[test]
fn a_users_gray_png_is_neither_skipped_nor_replaced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir(d.join("in")).expect("mkdir");
    photo(12, 8).save(d.join("in/x.jpg")).expect("save");
    photo(20, 10).save(d.join("in/x.gray.png")).expect("save");
    let before = std::fs::read(d.join("in/x.gray.png")).expect("read");
    let o = graylab(&["convert", "in", "--out-dir", "in", "--overwrite"], d);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("skipped (graylab's output"), "{err}");
    assert!(
        err.contains(
            "error: the output of in/x.jpg would replace another input of this batch: in/x.gray.png"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read(d.join("in/x.gray.png")).expect("read"), before, "the user's file is kept");
    // It is an input like any other: converted beside itself.
    let gray = image::open(d.join("in/x.gray.gray.png")).expect("the user's file converted");
    assert_eq!((gray.width(), gray.height()), (20, 10));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 of 2 files converted, 1 failed, 0 skipped"));
}

/// Issue 44: a missing `--out-dir` is created (as `cp -r` creates its target), once every other
/// check has passed, and the log says so; a refused run creates nothing.
#[test]
fn a_missing_out_dir_is_created_after_the_checks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(16, 8).save(d.join("in.png")).expect("save");
    let o = graylab_cmd(d)
        .env("RUST_LOG", "info")
        .args(["convert", "in.png", "--out-dir", "new/deeper"])
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("created the folder new/deeper"), "{}", text(&o));
    let out = image::open(d.join("new/deeper/in.gray.png")).expect("the output in the new folder");
    assert_eq!((out.width(), out.height()), (16, 8));
    // Refused before any work: no folder made.
    let o = graylab(&["convert", "in.png", "--out-dir", "made", "--trace", "in.png", "--overwrite"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!d.join("made").exists(), "{}", text(&o));
    let o = graylab(&["convert", "in.png", "--out-dir", "in.png/sub"], d);
    assert_eq!(o.status.code(), Some(2), "a usage error: {}", text(&o));
    assert!(
        text(&o).contains("--out-dir: cannot create the folder, in.png is not a folder: in.png/sub"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_file_named_as_the_folder_of_an_output_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(16, 8).save(d.join("in.png")).expect("save");
    std::fs::write(d.join("afile"), b"a file").expect("write");
    for (args, says) in [
        (
            &["convert", "in.png", "-o", "afile/x.png"][..],
            "-o/--output: afile is not a folder, so it cannot hold afile/x.png",
        ),
        (
            &["convert", "in.png", "-o", "afile/sub/x.png"],
            "-o/--output: afile is not a folder, so it cannot hold afile/sub/x.png",
        ),
        (
            &["convert", "in.png", "--out-dir", "afile/sub"],
            "--out-dir: cannot create the folder, afile is not a folder: afile/sub",
        ),
        (
            &["sweep", "--sizes", "0.25", "--json", "afile/s.json"],
            "--json: afile is not a folder, so it cannot hold afile/s.json",
        ),
    ] {
        let o = graylab(args, d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(&format!("error: {says}")), "{args:?}: {}", text(&o));
    }
    // A folder that is not there is said as it is.
    let o = graylab(&["convert", "in.png", "-o", "nowhere/x.png"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("error: -o/--output: the folder does not exist: nowhere"), "{}", text(&o));
}

/// Issue 44: two inputs that would write one output are refused with the way out.
#[test]
fn a_name_collision_says_how_to_resolve_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for sub in ["a", "b"] {
        std::fs::create_dir(d.join(sub)).expect("mkdir");
        photo(8, 8).save(d.join(sub).join("p.png")).expect("save");
    }
    let o = graylab(&["convert", "a/p.png", "b/p.png", "--out-dir", "out"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(
            "two inputs would write the same output (a/p.png and b/p.png): out/p.gray.png (convert one \
             of them in another run, with another --format or another --out-dir)"
        ),
        "{}",
        text(&o)
    );
}
