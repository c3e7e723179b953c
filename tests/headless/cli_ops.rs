//! `--op` on the real binary (issue 46): `convert --op blur:8` and `--op dither` give the same
//! bytes on the CPU and the GPU for the bundled photo, the dither is written as a 1-bit PNG, TIFF or BMP,
//! `bench --json` reports the op with its operations per pixel, and a file an op refuses is named.

use std::path::{Path, PathBuf};

use crate::common::{self, graylab, text};

fn photo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/dandelions-5312x2988.jpg")
}

/// The IHDR of a PNG: (width, height, bit depth, colour type).
fn ihdr(png: &[u8]) -> (u32, u32, u8, u8) {
    assert_eq!(png.get(..8), Some(&b"\x89PNG\r\n\x1a\n"[..]), "a PNG signature");
    assert_eq!(png.get(12..16), Some(&b"IHDR"[..]), "IHDR first");
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().expect("4 bytes"));
    (be(16), be(20), png[24], png[25])
}

#[test]
fn ops_give_the_same_bytes_on_both_backends_and_the_dither_is_1_bit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let input = photo();
    let input = input.to_str().expect("utf-8 path");
    let backends: &[&str] = if common::gpu().is_some() { &["cpu", "gpu"] } else { &["cpu"] };
    for (op, name) in [("blur:8", "blur"), ("dither", "dither")] {
        let mut outputs = Vec::new();
        for backend in backends {
            let out = format!("{name}.{backend}.png");
            let o = graylab(&["convert", input, "-o", &out, "--backend", backend, "--op", op], d);
            assert!(o.status.success(), "{op} {backend}: {}", text(&o));
            assert!(text(&o).contains("op "), "{op} {backend}: the op phase is reported: {}", text(&o));
            outputs.push(std::fs::read(d.join(&out)).expect("output"));
        }
        let first = &outputs[0];
        for other in &outputs[1..] {
            assert!(first == other, "{op}: the CPU and GPU files differ");
        }
        let (w, h, depth, colour) = ihdr(first);
        assert_eq!((w, h, colour), (5312, 2988, 0), "{op}: gray, the photo's size");
        assert_eq!(depth, if op == "dither" { 1 } else { 8 }, "{op}: bit depth");
        let decoded = image::load_from_memory(first).expect("decodes").to_luma8();
        if op == "dither" {
            let white: usize = decoded.iter().map(|&v| usize::from(v == 255)).sum();
            assert!(decoded.iter().all(|&v| v == 0 || v == 255));
            assert!(white > 0 && white < decoded.len(), "{white} white pixels");
        }
    }
}

#[test]
fn bench_reports_the_op_its_operations_and_its_phase() {
    let dir = tempfile::tempdir().expect("temp dir");
    let o = graylab(
        &["bench", "--synthetic", "97x61", "--backend", "cpu", "--runs", "2", "--op", "blur:3", "--json"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let result = &json["results"][0];
    assert_eq!(result["settings"]["op"], "blur:3");
    assert_eq!(result["op"]["op"], "blur:3");
    assert_eq!(result["op"]["ops_per_pixel"], 28);
    assert!(result["op"]["op_ops_per_s"].as_f64().is_some_and(|r| r > 0.0), "{result}");
    assert!(result["phases"].as_array().expect("phases").iter().any(|p| p["phase"] == "op"), "{result}");
    let o = graylab(&["bench", "--synthetic", "8x8", "--runs", "1", "--op", "blur:65"], dir.path());
    assert!(!o.status.success() && text(&o).contains("blur:R with R in 1..=64"), "{}", text(&o));
}

/// An op on a 16-bit input runs on the narrowed gray, as on a `--depth 8` file, and says so;
/// `bench` times it so (before, it refused it).
#[test]
fn an_op_on_sixteen_bit_samples_runs_on_the_narrowed_gray() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let deep = image::ImageBuffer::<image::Rgb<u16>, _>::from_fn(7, 5, |x, y| {
        image::Rgb([9000 + 900 * x as u16, 30000 - 2000 * y as u16, 65535])
    });
    deep.save(d.join("deep.png")).expect("save");
    let o = graylab(&["convert", "deep.png", "--out-dir", "out", "--op", "blur:2"], d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("note: 16-bit gray narrowed to 8-bit: blur:2 runs on 8-bit gray"),
        "{}",
        text(&o)
    );
    for args in [
        &["convert", "deep.png", "--depth", "8", "-o", "d8.png"][..],
        &["convert", "d8.png", "--op", "blur:2", "-o", "two.png"],
    ] {
        assert!(graylab(args, d).status.success(), "{args:?}");
    }
    let one = image::open(d.join("out/deep.gray.png")).expect("one step");
    assert_eq!(one.color(), image::ColorType::L8);
    assert_eq!(one, image::open(d.join("two.png")).expect("two steps"));
    // `bench` times it as `convert` runs it: the 16-bit kernel, then the op on every run.
    let o = graylab(&["bench", "deep.png", "--op", "blur:2", "--runs", "2", "--backend", "cpu", "--json"], d);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let result = &report["results"][0];
    assert_eq!(result["kernel"], "rgb16_to_l16", "{result}");
    let notes = result["cold"]["notes"].to_string();
    assert!(notes.contains("16-bit gray narrowed to 8-bit: blur:2 runs on 8-bit gray"), "{notes}");
    let op = result["phases"].as_array().expect("phases").iter().find(|p| p["phase"] == "op");
    assert_eq!(op.map(|p| p["runs"].as_u64()), Some(Some(2)), "{result}");
    assert!(result["op"]["kernel_ns"].as_u64().is_some_and(|ns| ns > 0), "{result}");
    let o = graylab(&["bench", "deep.png", "--op", "blur:2", "--runs", "1", "--backend", "cpu"], d);
    assert!(
        text(&o).contains("note: 16-bit gray narrowed to 8-bit: blur:2 runs on 8-bit gray"),
        "{}",
        text(&o)
    );
}

/// The dither is black and white: a lossy JPEG output is refused before any work (exit 2;
/// before, a JPEG of dozens of grays, exit 0), TIFF (as libtiff reads it) and BMP hold it as 1
/// bit a pixel (before, 8 bits: 8x the bytes), and WebP (lossless) holds its 0s and 255s as 8-bit
/// gray; each reads back as the PNG's pixels.
#[test]
fn the_dither_refuses_a_lossy_output_and_stays_black_and_white_in_the_others() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    common::photo(97, 61).save(d.join("x.png")).expect("save");
    for args in
        [&["-o", "d.jpg", "--format", "jpeg"][..], &["-o", "d.jpg"], &["--format", "jpeg", "--out-dir", "od"]]
    {
        let o = graylab(&[&["convert", "x.png", "--op", "dither"][..], args].concat(), d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("--op dither outputs black and white only, and JPEG is lossy"),
            "{args:?}: {}",
            text(&o)
        );
        assert!(o.stdout.is_empty() && !d.join("d.jpg").exists() && !d.join("od").exists(), "no work");
    }
    let read = |name: &str| {
        graylab::io::decode_file(&d.join(name), &graylab::io::DecodeOptions::default())
            .expect("decodes")
            .image
    };
    let o = graylab(&["convert", "x.png", "--op", "dither", "-o", "d.png"], d);
    assert!(o.status.success(), "png: {}", text(&o));
    let png = read("d.png").to_rgb8();
    for ext in ["tif", "bmp", "webp"] {
        let out = format!("d.{ext}");
        let o = graylab(&["convert", "x.png", "--op", "dither", "-o", &out], d);
        assert!(o.status.success(), "{ext}: {}", text(&o));
        let decoded = read(&out);
        // A BMP's colours are a palette and a WebP stores RGB: read back as RGB, all equal.
        assert!(!decoded.color().has_alpha(), "{ext}: {:?}", decoded.color());
        let rgb = decoded.to_rgb8();
        let white = rgb.pixels().filter(|p| p.0 == [255; 3]).count();
        assert!(rgb.pixels().all(|p| p.0 == [0; 3] || p.0 == [255; 3]), "{ext}: black and white only");
        assert!(white > 0 && white < rgb.pixels().len(), "{ext}: {white} white pixels");
        assert!(rgb == png, "{ext}: the PNG's pixels");
    }
    // 97 pixels a row in 13 bytes, 61 rows, after the directory: libtiff reads 1 bit a sample.
    let tif = std::fs::read(d.join("d.tif")).expect("TIFF");
    assert!(tif.len() > 13 * 61 && tif.len() < 13 * 61 + 400, "{} bytes", tif.len());
    // A BMP's rows padded to 16 bytes, after 62 of headers and its two colours.
    let bmp = std::fs::read(d.join("d.bmp")).expect("BMP");
    assert_eq!((bmp.len(), bmp[28]), (62 + 16 * 61, 1), "a 1-bit BMP");
    let tif_path = d.join("d.tif");
    if let Some(out) = crate::codecs::reference_tool("tiffinfo", "libtiff-tools", &[tif_path.as_os_str()]) {
        let (info, warnings) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && warnings.is_empty(), "{warnings}");
        assert!(info.contains("Bits/Sample: 1") && info.contains("min-is-black"), "{info}");
    }
}

/// An op's own planes are reserved with the decode, before anything is allocated: a 4000x4000
/// photo (48 MB of RGB, 16 MB of gray) converts within 70 MiB, but its dither needs the 16 MB
/// of its output plane too, 80 MB (76.3 MiB), and is refused there (before, it ran past the
/// budget: an 8K dither peaked 38 MB above what the decode had reserved), then converts within
/// 80 MiB.
#[test]
fn an_ops_planes_are_reserved_with_the_decode() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    common::photo(4000, 4000).save(d.join("x.png")).expect("save");
    let within = |budget: &str, op: &str| {
        let args = ["convert", "x.png", "-o", "y.png", "--overwrite", "--backend", "cpu", "--op", op];
        common::graylab_cmd(d).args(args).env("GRAYLAB_MEMORY_BUDGET", budget).output().expect("run graylab")
    };
    let o = within("70MiB", "none");
    assert!(o.status.success(), "{}", text(&o));
    let o = within("70MiB", "dither");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("4000x4000 needs 76.3 MiB but only 70.0 MiB may be used"), "{}", text(&o));
    let o = within("80MiB", "dither");
    assert!(o.status.success(), "{}", text(&o));
}
