//! The real binary against what a filesystem can hold besides images (issue 16): devices and
//! FIFOs as outputs, inputs and caches, setuid bits, symlink loops, non-UTF-8 names, special
//! files, and caches that are huge, zero or garbage. Every run that could hang has a deadline.
#![cfg(unix)]

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
use std::path::Path;

use crate::common::{graylab, graylab_cmd, mkfifo, output_within, photo, text};

/// `graylab args` in `cwd`, failing the test after 60 s.
fn within(args: &[&str], cwd: &Path) -> std::process::Output {
    let mut cmd = graylab_cmd(cwd);
    cmd.args(args);
    output_within(cmd, 60)
}

#[test]
fn devices_and_fifos_are_never_replaced_and_setuid_bits_are_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(16, 8).save(d.join("in.png")).expect("save");
    for args in [
        &["convert", "in.png", "-o", "/dev/null", "--overwrite", "--format", "png"][..],
        &["convert", "in.png", "-o", "null.png", "--overwrite"][..],
    ] {
        std::os::unix::fs::symlink("/dev/null", d.join("null.png")).ok();
        let o = within(args, d);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("is a character device, which is never replaced"), "{}", text(&o));
        let meta = std::fs::metadata("/dev/null").expect("/dev/null");
        assert!(meta.file_type().is_char_device(), "/dev/null must still be a character device");
    }
    mkfifo(&d.join("fifo.png"));
    let o = within(&["convert", "in.png", "-o", "fifo.png", "--overwrite"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("a FIFO (named pipe), which is never replaced by an image file: fifo.png"));
    assert!(std::fs::symlink_metadata(d.join("fifo.png")).expect("fifo").file_type().is_fifo());
    // --overwrite keeps the permission bits of the file it replaces, never setuid/setgid/sticky.
    std::fs::write(d.join("old.png"), b"old").expect("write");
    std::fs::set_permissions(d.join("old.png"), std::fs::Permissions::from_mode(0o7755)).expect("chmod");
    let o = graylab(&["convert", "in.png", "-o", "old.png", "--overwrite"], d);
    assert!(o.status.success(), "{}", text(&o));
    let mode = std::fs::metadata(d.join("old.png")).expect("new").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755);
}

#[test]
fn special_inputs_say_what_they_are() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    mkfifo(&d.join("pipe.png"));
    std::fs::write(d.join("text.jpg"), b"hello, this is text\n").expect("write");
    let cases = [
        ("/dev/zero", "not an image file: it is a character device: /dev/zero"),
        ("pipe.png", "not an image file: it is a FIFO (named pipe): pipe.png"),
        ("/proc/self/status", "a special file that reports no size (as in /proc): /proc/self/status"),
        ("text.jpg", "not an image: the file looks like text: text.jpg"),
    ];
    for (input, message) in cases {
        let o = within(&["convert", input, "-o", "out.png"], d);
        assert_eq!(o.status.code(), Some(1), "{input}: {}", text(&o));
        assert!(text(&o).contains(message), "{input}: {}", text(&o));
        assert!(!text(&o).contains("empty"), "{input}: {}", text(&o));
    }
    assert!(!d.join("out.png").exists());
}

#[test]
fn a_fifo_in_a_folder_is_skipped_and_a_symlink_loop_is_listed_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in/sub")).expect("mkdir");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    photo(16, 8).save(d.join("in/a.png")).expect("save");
    photo(9, 7).save(d.join("in/sub/b.png")).expect("save");
    mkfifo(&d.join("in/pipe.png"));
    std::os::unix::fs::symlink("..", d.join("in/sub/up")).expect("symlink");
    let o = within(&["convert", "in", "--out-dir", "out", "--recursive"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("skipped (a FIFO (named pipe)): in/pipe.png"), "{}", text(&o));
    assert!(text(&o).contains("2 of 2 files converted, 0 failed, 1 skipped"), "{}", text(&o));
    let mut written: Vec<_> = walk(&d.join("out"));
    written.sort();
    assert_eq!(written, ["out/a.gray.png", "out/sub/b.gray.png"].map(|p| d.join(p)));
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("list").flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

#[test]
fn non_utf8_names_keep_their_bytes_in_outputs_and_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    let name = |bytes: &[u8]| OsStr::from_bytes(bytes).to_os_string();
    for stem in [&b"x\xff"[..], b"x\xfe"] {
        let mut file = name(stem);
        file.push(".png");
        photo(8, 8).save(d.join("in").join(file)).expect("save");
    }
    std::fs::write(d.join("in").join(name(b"bad\xffname.jpg")), b"\xff\xd8\xff\xe0garbage").expect("write");
    let o = within(&["convert", "in", "--out-dir", "out", "--json"], d);
    assert_eq!(o.status.code(), Some(1), "the bad file fails: {}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
    for stem in [&b"x\xff"[..], b"x\xfe"] {
        let mut file = name(stem);
        file.push(".gray.png");
        assert!(d.join("out").join(file).is_file(), "{stem:?} keeps its bytes");
    }
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let entries = json.as_array().expect("array");
    assert_eq!(entries.len(), 3);
    let bytes = |v: &serde_json::Value| -> Vec<u8> {
        v["bytes"]
            .as_array()
            .expect("bytes")
            .iter()
            .map(|b| u8::try_from(b.as_u64().expect("n")).expect("byte"))
            .collect()
    };
    let inputs: Vec<Vec<u8>> = entries.iter().map(|e| bytes(&e["input"])).collect();
    assert!(
        inputs.contains(&b"in/x\xff.png".to_vec()) && inputs.contains(&b"in/x\xfe.png".to_vec()),
        "{json}"
    );
    let outputs: Vec<Vec<u8>> =
        entries.iter().filter(|e| e.get("output").is_some()).map(|e| bytes(&e["output"])).collect();
    assert!(outputs.contains(&b"out/x\xff.gray.png".to_vec()), "{json}");
    assert!(entries.iter().any(|e| e["error"].as_str().is_some_and(|m| m.contains("name.jpg"))), "{json}");
}

#[test]
fn a_path_longer_than_the_system_takes_fails_by_name_and_exits_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    photo(16, 8).save(d.join("src.png")).expect("save");
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    photo(16, 8).save(d.join("in/ok.png")).expect("save");
    // 16 folders of 250 bytes, each made and entered by its own short name (the kernel limits
    // the path one call is given, PATH_MAX = 4096 bytes, not the depth): the deepest folder's
    // path stays under 4096 bytes, and the file's, 200 bytes longer, goes over.
    let folder = "d".repeat(250);
    let name = format!("{}.png", "f".repeat(200));
    let up = "../".repeat(17);
    let script = format!(
        "cd in && for i in $(seq 16); do mkdir {folder} && cd {folder} || exit 1; done && cp {up}src.png {name}"
    );
    let made = std::process::Command::new("sh").args(["-c", &script]).current_dir(d).status().expect("sh");
    assert!(made.success(), "the deep folders were made");
    let deep = d.join("in").join(std::iter::repeat_n(folder.as_str(), 16).collect::<Vec<_>>().join("/"));
    assert!(deep.as_os_str().len() < 4096 && deep.join(&name).as_os_str().len() > 4096);
    std::fs::create_dir(d.join("out")).expect("mkdir");
    let o = within(&["convert", "in", "--recursive", "--out-dir", "out"], d);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("File name too long") && t.contains(&name), "names the file and the cause: {t}");
    assert!(!t.contains("not an image"), "not skipped as no image: {t}");
    assert!(d.join("out/ok.gray.png").is_file(), "the other file is converted: {t}");
}

#[test]
fn a_bad_memory_budget_is_told_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    for i in 0..4 {
        photo(8 + i, 8).save(d.join(format!("in/{i}.png"))).expect("save");
    }
    let o = graylab_cmd(d)
        .args(["convert", "in", "--out-dir", "out"])
        .env("GRAYLAB_MEMORY_BUDGET", "lots")
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(text(&o).matches("GRAYLAB_MEMORY_BUDGET=\"lots\" is not a size").count(), 1, "{}", text(&o));
}

/// The ceilings cache replaced by a FIFO, a link to an endless device, a huge file and
/// implausible figures: read without hanging or without bound, and then treated as absent.
#[test]
fn hostile_ceilings_caches_are_not_trusted() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let o = within(&["info", "--probe", "--json"], d);
    assert!(o.status.success(), "{}", text(&o));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let cache = std::path::PathBuf::from(info["ceilings"]["cache_path"].as_str().expect("cached"));
    let good = std::fs::read_to_string(&cache).expect("cache");
    let absent = |what: &str| {
        let o = within(&["info"], d);
        assert!(o.status.success(), "{what}: {}", text(&o));
        assert!(text(&o).contains("ceilings: not measured yet"), "{what}: {}", text(&o));
        assert!(!text(&o).contains("inf%"), "{what}: {}", text(&o));
    };
    let reset = || {
        let _ = std::fs::remove_file(&cache);
    };
    reset();
    mkfifo(&cache);
    absent("a FIFO");
    for device in ["/dev/zero", "/dev/urandom"] {
        reset();
        std::os::unix::fs::symlink(device, &cache).expect("symlink");
        absent(device);
    }
    reset();
    std::fs::write(&cache, vec![b' '; 3 << 20]).expect("huge");
    absent("3 MiB of spaces");
    std::fs::write(&cache, b"\x00\x01garbage{").expect("garbage");
    absent("garbage");
    let mut json: serde_json::Value = serde_json::from_str(&good).expect("cache JSON");
    json["ceilings"]["device_copy"]["bytes"] = 0.into();
    std::fs::write(&cache, json.to_string()).expect("zero bytes");
    absent("\"bytes\": 0");
    let mut json: serde_json::Value = serde_json::from_str(&good).expect("cache JSON");
    json["ceilings"]["host_to_staging"]["best_ns"] = 0.into();
    std::fs::write(&cache, json.to_string()).expect("zero time");
    absent("best_ns: 0");
    // A bench then measures them again, and shows plausible rates.
    let o = within(&["bench", "--synthetic", "64x64", "--runs", "1", "--backend", "gpu"], d);
    assert!(o.status.success() && !text(&o).contains("inf%"), "{}", text(&o));
    std::fs::write(&cache, &good).expect("restore");
}

/// Issue 24, item 11: a subfolder that cannot be listed (here its path is longer than the system
/// takes, which fails even for root, as no permission fails for others) is told by name with its
/// cause, the rest is converted, and the run exits 1; with --json it has an entry.
#[test]
fn a_folder_that_cannot_be_listed_is_told_and_the_rest_converted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in/fine")).expect("mkdir");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    photo(16, 8).save(d.join("in/ok.png")).expect("save");
    photo(12, 8).save(d.join("in/fine/ok2.png")).expect("save");
    // 17 folders of 250 bytes, each made (and the first 16 entered) by its own short name: the
    // 17th's path is over PATH_MAX (4096 bytes), so it cannot be listed.
    let folder = "d".repeat(250);
    let script = format!(
        "cd in && for i in $(seq 16); do mkdir {folder} && cd {folder} || exit 1; done && mkdir {folder}"
    );
    let made = std::process::Command::new("sh").args(["-c", &script]).current_dir(d).status().expect("sh");
    assert!(made.success(), "the deep folders were made");
    let deepest = format!("in/{}", std::iter::repeat_n(folder.as_str(), 17).collect::<Vec<_>>().join("/"));
    // A folder without permissions, as the issue found it: it cannot be listed unless by root.
    std::fs::create_dir(d.join("in/locked")).expect("mkdir");
    std::fs::set_permissions(d.join("in/locked"), std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let locked = std::fs::read_dir(d.join("in/locked")).is_err();
    let o = within(&["convert", "in", "--recursive", "--out-dir", "out"], d);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!(
            "error: cannot list the folder (File name too long (os error 36)), so its files are not converted: {deepest}\n"
        )),
        "names the folder and the cause: {t}"
    );
    assert_eq!(
        t.contains("(Permission denied (os error 13)), so its files are not converted: in/locked"),
        locked,
        "{t}"
    );
    assert!(d.join("out/ok.gray.png").is_file() && d.join("out/fine/ok2.gray.png").is_file(), "{t}");
    let folders = if locked { "2 folders not listed" } else { "1 folder not listed" };
    assert!(t.contains(&format!("2 of 2 files converted, 0 failed, 0 skipped, {folders}")), "{t}");
    assert!(!d.join("out").join(&folder).exists(), "no empty mirrored folders are left: {t}");
    let o = within(&["convert", "in", "--recursive", "--out-dir", "out", "--overwrite", "--json"], d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let entries = json.as_array().expect("array");
    let unlisted = entries.iter().find(|e| e["input"] == deepest.as_str()).expect("an entry for the folder");
    assert!(unlisted["error"].as_str().is_some_and(|e| e.contains("cannot list the folder")), "{json}");
    assert_eq!(entries.iter().filter(|e| e.get("output").is_some()).count(), 2, "{json}");
    std::fs::set_permissions(d.join("in/locked"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Issue 24, item 1: an output that is an input of the batch through a link or another spelling
/// (a symlinked folder, a hard link) is refused before any work, with or without --overwrite.
#[test]
fn an_output_that_is_an_input_through_a_link_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("in")).expect("mkdir");
    std::fs::create_dir(d.join("out")).expect("mkdir");
    photo(16, 8).save(d.join("in/a.png")).expect("save");
    photo(20, 8).save(d.join("in/c.png")).expect("save");
    let c = std::fs::read(d.join("in/c.png")).expect("read");
    std::os::unix::fs::symlink("in", d.join("alias")).expect("symlink");
    // b.jpg's output, spelt through the symlinked folder, is the input alias/b.gray.png.
    photo(10, 8).save(d.join("in/b.jpg")).expect("save");
    std::fs::copy(d.join("in/c.png"), d.join("in/b.gray.png")).expect("copy");
    for overwrite in [false, true] {
        let mut args = vec!["convert", "in/b.jpg", "alias/b.gray.png"];
        if overwrite {
            args.push("--overwrite");
        }
        let o = within(&args, d);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            text(&o)
                .contains("the output of in/b.jpg would replace another input of this batch: in/b.gray.png"),
            "{}",
            text(&o)
        );
        assert_eq!(std::fs::read(d.join("in/b.gray.png")).expect("read"), c, "the input is kept");
    }
    // A hard link: out/a.gray.png is in/c.png.
    std::fs::remove_file(d.join("in/b.jpg")).expect("rm");
    std::fs::remove_file(d.join("in/b.gray.png")).expect("rm");
    std::fs::remove_file(d.join("in/b.gray.gray.png")).expect("rm");
    std::fs::hard_link(d.join("in/c.png"), d.join("out/a.gray.png")).expect("hard link");
    let o = within(&["convert", "in", "--out-dir", "out", "--overwrite"], d);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("the output of in/a.png would replace another input of this batch: out/a.gray.png"),
        "{t}"
    );
    assert_eq!(std::fs::read(d.join("in/c.png")).expect("read"), c, "the input is kept");
    assert!(d.join("out/c.gray.png").is_file(), "the rest is converted: {t}");
}
