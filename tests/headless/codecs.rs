//! graylab's own encoders against other decoders: the parallel PNG writer decodes to the same
//! samples with the `png` crate and with `image`'s reader (odd sizes, 8/16-bit, gray + alpha,
//! many stripes); the JPEG writer stays within the usual tolerance of its gray input, is
//! single-channel, and its size compares with another encoder's at the same quality.

use crate::common;

use graylab::io::{ExportFormat, ExportOptions, encode_file_with_progress, encode_to_vec};
use std::io::Write as _;

use image::{DynamicImage, GrayAlphaImage, GrayImage, ImageBuffer, ImageEncoder as _, Luma, LumaA};

/// Photo-like gray: smooth gradients, texture, grain, and a flat region (long zero runs after
/// filtering).
fn photo_gray(w: u32, h: u32) -> GrayImage {
    let grain = common::noise((w * h) as usize, u64::from(w * 31 + h));
    GrayImage::from_fn(w, h, |x, y| {
        if x < w / 5 {
            return Luma([200]);
        }
        let (fx, fy) = (f64::from(x), f64::from(y));
        let smooth = 128.0 + 60.0 * (fx / 37.0).sin() * (fy / 53.0).cos() + 40.0 * ((fx + fy) / 211.0).sin();
        let g = f64::from(grain[(y * w + x) as usize] % 7) - 3.0;
        Luma([(smooth + g).clamp(0.0, 255.0) as u8])
    })
}

/// Decodes a PNG with the `png` crate: samples as stored (16-bit big-endian).
fn decode_with_png_crate(bytes: &[u8]) -> (png::ColorType, png::BitDepth, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("png data");
    buf.truncate(info.buffer_size());
    (info.color_type, info.bit_depth, buf)
}

fn check_png(image: &DynamicImage) {
    let bytes = encode_to_vec(image, ExportFormat::Png, 90).expect("encode");
    let back = image::load_from_memory(&bytes).expect("image decodes it");
    assert_eq!(back.color(), image.color(), "{}x{}", image.width(), image.height());
    assert_eq!(
        back.as_bytes(),
        image.as_bytes(),
        "image's reader, {:?} {}x{}",
        image.color(),
        image.width(),
        image.height()
    );
    let (color, depth, samples) = decode_with_png_crate(&bytes);
    let expected_color =
        if image.color().has_alpha() { png::ColorType::GrayscaleAlpha } else { png::ColorType::Grayscale };
    assert_eq!(color, expected_color);
    let sixteen = image.color().bytes_per_pixel() / image.color().channel_count() == 2;
    assert_eq!(depth, if sixteen { png::BitDepth::Sixteen } else { png::BitDepth::Eight });
    let native: Vec<u8> = if sixteen {
        samples.chunks_exact(2).flat_map(|s| u16::from_be_bytes([s[0], s[1]]).to_ne_bytes()).collect()
    } else {
        samples
    };
    assert_eq!(
        native,
        image.as_bytes(),
        "png crate, {:?} {}x{}",
        image.color(),
        image.width(),
        image.height()
    );
}

#[test]
fn parallel_png_decodes_identically_8_bit() {
    // 1x1, odd sizes, one row, one column, and an image of several 1 MiB stripes.
    for (w, h) in [(1, 1), (7, 3), (1, 300), (301, 1), (1023, 517), (1500, 2100)] {
        check_png(&DynamicImage::ImageLuma8(photo_gray(w, h)));
    }
    // Constant (one long run) and pure noise (no runs).
    check_png(&DynamicImage::ImageLuma8(GrayImage::from_pixel(999, 1201, Luma([0]))));
    let noise = common::noise(777 * 1555, 5);
    check_png(&DynamicImage::ImageLuma8(GrayImage::from_raw(777, 1555, noise).expect("size")));
}

#[test]
fn parallel_png_decodes_identically_16_bit_and_alpha() {
    let gray = photo_gray(733, 811);
    let la8 =
        GrayAlphaImage::from_fn(733, 811, |x, y| LumaA([gray.get_pixel(x, y)[0], ((x * y) % 256) as u8]));
    check_png(&DynamicImage::ImageLumaA8(la8));
    let l16: ImageBuffer<Luma<u16>, Vec<u16>> = ImageBuffer::from_fn(733, 811, |x, y| {
        Luma([u16::from(gray.get_pixel(x, y)[0]) * 257 + (x % 3) as u16])
    });
    check_png(&DynamicImage::ImageLuma16(l16));
    let gray_alpha16: ImageBuffer<LumaA<u16>, Vec<u16>> =
        ImageBuffer::from_fn(501, 777, |x, y| LumaA([(x * 131 + y) as u16, (y * 65) as u16]));
    check_png(&DynamicImage::ImageLumaA16(gray_alpha16));
    check_png(&DynamicImage::ImageLuma16(ImageBuffer::from_pixel(3, 5, Luma([65535]))));
}

fn jpeg_errors(original: &GrayImage, quality: u8) -> (f64, u8, usize) {
    let bytes = encode_to_vec(&DynamicImage::ImageLuma8(original.clone()), ExportFormat::Jpeg, quality)
        .expect("encode");
    let back = image::load_from_memory(&bytes).expect("image decodes it");
    assert_eq!(back.color(), image::ColorType::L8, "a gray JPEG stays single-channel");
    assert_eq!((back.width(), back.height()), original.dimensions());
    let diffs: Vec<u8> = back.as_bytes().iter().zip(original.as_raw()).map(|(a, b)| a.abs_diff(*b)).collect();
    let mse = diffs.iter().map(|&d| f64::from(d) * f64::from(d)).sum::<f64>() / diffs.len() as f64;
    let psnr = 10.0 * (255.0 * 255.0 / mse.max(1e-9)).log10();
    (psnr, diffs.iter().copied().max().unwrap_or(0), bytes.len())
}

#[test]
fn jpeg_is_within_tolerance_of_its_input() {
    // Odd sizes exercise the edge blocks; 2100 rows make many restart intervals.
    for (w, h) in [(1, 1), (9, 7), (1023, 517), (640, 2100)] {
        let img = photo_gray(w, h);
        let (psnr, max_diff, _) = jpeg_errors(&img, 90);
        assert!(psnr > 38.0, "{w}x{h}: PSNR {psnr:.1} dB");
        assert!(max_diff <= 24, "{w}x{h}: max difference {max_diff}");
    }
    // Quality 100 is near-lossless; lower quality is smaller and worse.
    let img = photo_gray(800, 600);
    let (psnr_100, max_100, size_100) = jpeg_errors(&img, 100);
    let (psnr_50, _, size_50) = jpeg_errors(&img, 50);
    assert!(psnr_100 > 50.0 && max_100 <= 3, "q100: {psnr_100:.1} dB, max {max_100}");
    assert!(size_50 < size_100 && psnr_50 < psnr_100);
}

#[test]
fn jpeg_size_compares_with_another_encoder_at_the_same_quality() {
    let img = photo_gray(1024, 768);
    let ours = encode_to_vec(&DynamicImage::ImageLuma8(img.clone()), ExportFormat::Jpeg, 90).expect("encode");
    let mut theirs = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut theirs, 90)
        .write_image(img.as_raw(), 1024, 768, image::ExtendedColorType::L8)
        .expect("image encodes");
    let ratio = ours.len() as f64 / theirs.len() as f64;
    assert!((0.85..1.15).contains(&ratio), "ours {} bytes, image's {} bytes", ours.len(), theirs.len());
}

#[test]
fn export_reports_progress_per_stripe_up_to_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let image = DynamicImage::ImageLuma8(photo_gray(1200, 1900));
    for (name, format) in [("p.png", ExportFormat::Png), ("p.jpg", ExportFormat::Jpeg)] {
        let seen = std::sync::Mutex::new(Vec::new());
        let path = dir.path().join(name);
        let report = encode_file_with_progress(&image, &path, &ExportOptions::default(), &|f| {
            seen.lock().expect("lock").push(f);
        })
        .expect("export");
        assert_eq!(report.format, format);
        let seen = seen.into_inner().expect("lock");
        // Several stripes, each reported, ending at exactly 1.
        assert!(seen.len() > 2, "{name}: {seen:?}");
        assert!(seen.iter().all(|f| (0.0..=1.0).contains(f)), "{name}: {seen:?}");
        assert_eq!(seen.last().copied(), Some(1.0));
        assert!(image::open(&path).is_ok());
    }
}

/// Runs `tool` (a reference reader from the Debian package `package`) with `args`, or returns
/// `None` after printing a line when it is not installed; with `CI` set a missing tool fails
/// the test instead, so the check never passes unseen.
pub(crate) fn reference_tool(
    tool: &str,
    package: &str,
    args: &[&std::ffi::OsStr],
) -> Option<std::process::Output> {
    match std::process::Command::new(tool).args(args).output() {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(std::env::var_os("CI").is_none(), "CI is set but {tool} is missing: install {package}");
            let test = std::thread::current().name().unwrap_or("a reference check").to_owned();
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED in {test}: no {tool} (install {package}); CI=1 fails instead"
            );
            None
        }
        Err(e) => panic!("{tool}: {e}"),
    }
}

/// `djpeg`'s decode of a JPEG file as PGM, with no warning, or `None` without the tool.
fn djpeg_gray(path: &std::path::Path) -> Option<(u32, u32)> {
    let out = reference_tool("djpeg", "libjpeg-turbo-progs", &["-pnm".as_ref(), path.as_os_str()])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "djpeg {}: {stderr}", path.display());
    let header = String::from_utf8_lossy(out.stdout.get(..32).unwrap_or(&out.stdout)).into_owned();
    let mut fields = header.split_ascii_whitespace();
    assert_eq!(fields.next(), Some("P5"), "djpeg writes gray as PGM: {header:?}");
    let w = fields.next().and_then(|f| f.parse().ok()).expect("width");
    let h = fields.next().and_then(|f| f.parse().ok()).expect("height");
    Some((w, h))
}

#[test]
fn jpeg_sides_above_libjpegs_65500_are_refused_before_writing() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (w, h) in [(65_501, 1), (1, 65_535)] {
        let image = DynamicImage::ImageLuma8(GrayImage::from_pixel(w, h, Luma([90])));
        let path = dir.path().join(format!("{w}x{h}.jpg"));
        let err = graylab::io::encode_file(&image, &path, &ExportOptions::default()).expect_err("too large");
        let msg = err.to_string();
        assert!(matches!(err, graylab::io::IoError::ExportUnsupported { .. }), "{err:?}");
        assert!(
            msg.contains(&format!("{w}x{h} exceeds its 65500 px limit per side"))
                && msg.ends_with(&format!("{w}x{h}.jpg")),
            "{msg}"
        );
        assert!(!path.exists(), "nothing written");
        let err = encode_to_vec(&image, ExportFormat::Jpeg, 90).expect_err("the encoder refuses it too");
        assert!(err.to_string().contains("65500"), "{err}");
    }
    // 65500 is the largest side libjpeg reads.
    let image = DynamicImage::ImageLuma8(GrayImage::from_fn(65_500, 1, |x, _| Luma([(x % 251) as u8])));
    let path = dir.path().join("65500x1.jpg");
    graylab::io::encode_file(&image, &path, &ExportOptions::default()).expect("at the limit");
    if let Some(size) = djpeg_gray(&path) {
        assert_eq!(size, (65_500, 1));
    }
}

#[test]
fn the_cli_refuses_a_jpeg_side_above_65500_before_decoding() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&common::noise(65_501 * 3, 7), 65_501, 1, image::ExtendedColorType::Rgb8)
        .expect("encode");
    std::fs::write(dir.path().join("wide.png"), &png).expect("write");
    // The same file with its image data damaged: only a refusal before decoding names the size.
    let idat = png.windows(4).position(|w| w == b"IDAT").expect("IDAT");
    png[idat + 8] ^= 0xFF;
    std::fs::write(dir.path().join("damaged.png"), &png).expect("write");
    let mut backends = vec!["cpu"];
    if common::gpu().is_some() {
        backends.push("gpu");
    }
    for backend in backends {
        for input in ["wide.png", "damaged.png"] {
            let o = common::graylab(&["convert", input, "-o", "out.jpg", "--backend", backend], dir.path());
            let t = common::text(&o);
            assert_eq!(o.status.code(), Some(1), "{backend} {input}: {t}");
            assert!(
                t.contains("cannot export as JPEG (65501x1 exceeds its 65500 px limit per side)")
                    && t.contains("out.jpg"),
                "{backend} {input}: {t}"
            );
            assert!(!t.contains("panicked") && !t.contains("CRC"), "{backend} {input}: {t}");
            assert!(!dir.path().join("out.jpg").exists(), "{backend} {input}: nothing written");
        }
        // PNG stores that side: the same input converts.
        let o = common::graylab(
            &["convert", "wide.png", "-o", "out.png", "--backend", backend, "--overwrite"],
            dir.path(),
        );
        assert!(o.status.success(), "{backend}: {}", common::text(&o));
        let back = image::open(dir.path().join("out.png")).expect("written");
        assert_eq!((back.width(), back.height()), (65_501, 1), "{backend}");
    }
}

/// The four gray layouts graylab exports, with every sample distinct enough to catch a swap:
/// (name, image).
fn gray_layouts() -> Vec<(&'static str, DynamicImage)> {
    let (w, h) = (37, 23);
    let g8 = |x: u32, y: u32| (x * 5 + y * 3) as u8;
    let a8 = |x: u32, y: u32| (255 - x * 2 - y) as u8;
    let g16 = |x: u32, y: u32| (x * 1700 + y * 13 + 1) as u16;
    let a16 = |x: u32, y: u32| (65_535 - x * 900 - y * 7) as u16;
    vec![
        ("l8", DynamicImage::ImageLuma8(GrayImage::from_fn(w, h, |x, y| Luma([g8(x, y)])))),
        ("la8", DynamicImage::ImageLumaA8(GrayAlphaImage::from_fn(w, h, |x, y| LumaA([g8(x, y), a8(x, y)])))),
        ("l16", DynamicImage::ImageLuma16(ImageBuffer::from_fn(w, h, |x, y| Luma([g16(x, y)])))),
        (
            "la16",
            DynamicImage::ImageLumaA16(ImageBuffer::from_fn(w, h, |x, y| LumaA([g16(x, y), a16(x, y)]))),
        ),
    ]
}

/// A tool's standard error, which must hold no warning (libtiff's, libjpeg's, libpng's).
fn quiet_stderr(tool: &str, out: &std::process::Output, file: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "{tool} {file}: {stderr}");
}

#[test]
fn tiff_is_gray_with_extra_samples_as_libtiff_reads_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, image) in gray_layouts() {
        let path = dir.path().join(format!("{name}.tif"));
        let report = graylab::io::encode_file(&image, &path, &ExportOptions::default()).expect("export");
        assert!(report.notes.is_empty(), "{name}: nothing changed to fit TIFF: {:?}", report.notes);
        let alpha = image.color().has_alpha();
        let bits = if name.ends_with("16") { 16 } else { 8 };
        // The samples as stored, read by the `tiff` crate (the `image` crate does not read gray + alpha).
        let mut decoder =
            tiff::decoder::Decoder::new(std::fs::File::open(&path).expect("open")).expect("a TIFF");
        assert_eq!(decoder.dimensions().expect("size"), (37, 23));
        let channels = if alpha { 2 } else { 1 };
        assert_eq!(
            decoder.colortype().expect("colour type"),
            if channels == 1 {
                tiff::ColorType::Gray(bits)
            } else {
                tiff::ColorType::Multiband { bit_depth: bits, num_samples: 2 }
            },
            "{name}"
        );
        let samples: Vec<u8> = match decoder.read_image().expect("pixels") {
            tiff::decoder::DecodingResult::U8(v) => v,
            tiff::decoder::DecodingResult::U16(v) => v.iter().flat_map(|s| s.to_ne_bytes()).collect(),
            _ => panic!("{name}: 8 or 16-bit samples"),
        };
        assert_eq!(samples, image.as_bytes(), "{name}: the samples as given");
        let Some(info) = reference_tool("tiffinfo", "libtiff-tools", &[path.as_os_str()]) else { continue };
        quiet_stderr("tiffinfo", &info, name);
        let info = String::from_utf8_lossy(&info.stdout);
        for line in [
            "Image Width: 37 Image Length: 23".to_owned(),
            format!("Bits/Sample: {bits}"),
            "Compression Scheme: None".to_owned(),
            "Photometric Interpretation: min-is-black".to_owned(),
            format!("Samples/Pixel: {channels}"),
            "Planar Configuration: single image plane".to_owned(),
        ] {
            assert!(info.contains(&line), "{name}: no {line:?} in:\n{info}");
        }
        assert_eq!(info.contains("Extra Samples: 1<unassoc-alpha>"), alpha, "{name}:\n{info}");
        assert!(!info.contains("Predictor"), "{name}: an uncompressed TIFF has no predictor:\n{info}");
        let dump = reference_tool("tiffdump", "libtiff-tools", &[path.as_os_str()]).expect("with tiffinfo");
        quiet_stderr("tiffdump", &dump, name);
        let dump = String::from_utf8_lossy(&dump.stdout);
        assert!(!dump.contains("(317)") && !dump.contains("Predictor"), "{name}:\n{dump}");
    }
}

/// The samples of a PAM or PNM (`P5`, `P6`, `P7`) file: width, height, channels, bytes.
fn pnm_samples(bytes: &[u8]) -> (u32, u32, usize, Vec<u8>) {
    let text = String::from_utf8_lossy(bytes.get(..bytes.len().min(128)).unwrap_or(bytes)).into_owned();
    if text.starts_with("P7") {
        let end = text.find("ENDHDR\n").expect("PAM header") + "ENDHDR\n".len();
        let field = |key: &str| -> u32 {
            let at = text.find(key).expect(key) + key.len();
            text[at..].split_ascii_whitespace().next().and_then(|v| v.parse().ok()).expect(key)
        };
        let (w, h, depth) = (field("WIDTH "), field("HEIGHT "), field("DEPTH "));
        return (w, h, depth as usize, bytes[end..].to_vec());
    }
    let fields: Vec<&str> = text.split_ascii_whitespace().take(4).collect();
    let channels = if fields[0] == "P5" { 1 } else { 3 };
    let header = fields.iter().map(|f| f.len() + 1).sum::<usize>();
    (
        fields[1].parse().expect("width"),
        fields[2].parse().expect("height"),
        channels,
        bytes[header..].to_vec(),
    )
}

#[test]
fn png_jpeg_and_webp_pass_their_reference_readers() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, image) in gray_layouts() {
        let alpha = image.color().has_alpha();
        let sixteen = name.ends_with("16");
        let png = dir.path().join(format!("{name}.png"));
        graylab::io::encode_file(&image, &png, &ExportOptions::default()).expect("png");
        if let Some(out) = reference_tool("pngcheck", "pngcheck", &["-v".as_ref(), png.as_os_str()]) {
            quiet_stderr("pngcheck", &out, name);
            let text = String::from_utf8_lossy(&out.stdout);
            // pngcheck names the bits per pixel.
            let kind = format!(
                "{}-bit grayscale{}",
                if sixteen { 16 } else { 8 } * if alpha { 2 } else { 1 },
                if alpha { "+alpha" } else { "" }
            );
            assert!(text.contains(&kind) && text.contains("No errors detected"), "{name}:\n{text}");
        }
        let jpeg = dir.path().join(format!("{name}.jpg"));
        graylab::io::encode_file(&image, &jpeg, &ExportOptions::default()).expect("jpeg");
        if let Some(size) = djpeg_gray(&jpeg) {
            assert_eq!(size, (37, 23), "{name}");
        }
        let webp = dir.path().join(format!("{name}.webp"));
        graylab::io::encode_file(&image, &webp, &ExportOptions::default()).expect("webp");
        let pam = dir.path().join(format!("{name}.webp.pam"));
        let args = [webp.as_os_str(), "-quiet".as_ref(), "-pam".as_ref(), "-o".as_ref(), pam.as_os_str()];
        if let Some(out) = reference_tool("dwebp", "webp", &args) {
            quiet_stderr("dwebp", &out, name);
            let (w, h, channels, samples) = pnm_samples(&std::fs::read(&pam).expect("dwebp's PAM"));
            assert_eq!((w, h, channels), (37, 23, 4), "{name}");
            // Lossless: each pixel's gray in R, G and B, its alpha kept (8-bit).
            let gray = image.to_luma_alpha8();
            for (rgba, la) in samples.chunks_exact(4).zip(gray.pixels()) {
                let a = if alpha { la[1] } else { 255 };
                assert_eq!(rgba, [la[0], la[0], la[0], a], "{name}");
            }
        }
    }
}
