//! What the app makes of a file: an export that keeps the input's pixel density and EXIF tags,
//! through the writers `convert` uses, its Export window saying what it keeps; a camera raw
//! refused on opening, as `convert` refuses it.

use crate::common;
use crate::harness::{harness, settle};
use egui_kittest::kittest::Queryable as _;

use graylab::io::{DecodeOptions, ExportFormat, decode_file};

#[test]
fn an_export_keeps_the_density_of_the_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A 300x150 dpi PNG (11811 by 5906 pixels per metre).
    let path = dir.path().join("scan.png");
    let file = std::fs::File::create(&path).expect("create");
    let mut encoder = png::Encoder::new(file, 48, 32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_pixel_dims(Some(png::PixelDimensions { xppu: 11811, yppu: 5906, unit: png::Unit::Meter }));
    let pixels = common::noise(48 * 32 * 3, 5);
    encoder.write_header().expect("header").write_image_data(&pixels).expect("pixels");
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    let formats =
        [("out.tif", ExportFormat::Tiff), ("out.jpg", ExportFormat::Jpeg), ("out.png", ExportFormat::Png)];
    for (name, format) in formats {
        h.state_mut().settings_mut().export.format = Some(format);
        let out = dir.path().join(name);
        h.state_mut().export_to(out.clone(), false);
        settle(&mut h);
        let decoded = decode_file(&out, &DecodeOptions::default()).expect("the export");
        let (x, y) = decoded.density.expect("a density").per_inch();
        assert_eq!(((x * 10.0).round(), (y * 10.0).round()), (3000.0, 1500.0), "{name}");
    }
    // Exactly the input's pixels per metre in a PNG, whole dpi in a JPEG's JFIF segment.
    let png = std::fs::read(dir.path().join("out.png")).expect("read");
    let phys = png.windows(4).position(|w| w == b"pHYs").expect("a pHYs chunk") + 4;
    assert_eq!(png[phys..phys + 9], [&11811u32.to_be_bytes()[..], &5906u32.to_be_bytes(), &[1]].concat());
    let jpeg = std::fs::read(dir.path().join("out.jpg")).expect("read");
    assert_eq!(jpeg[13..18], [1, 1, 44, 0, 150], "JFIF: dots per inch, 300 by 150");
}

#[test]
fn an_export_keeps_the_cameras_exif_and_drops_the_location() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("IMG_1.jpg");
    std::fs::write(&path, common::camera_jpeg(48, 32)).expect("write");
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    let formats =
        [("out.jpg", ExportFormat::Jpeg), ("out.png", ExportFormat::Png), ("out.webp", ExportFormat::Webp)];
    for (name, format) in formats {
        h.state_mut().settings_mut().export.format = Some(format);
        let out = dir.path().join(name);
        h.state_mut().export_to(out.clone(), false);
        settle(&mut h);
        let bytes = std::fs::read(&out).expect("the export");
        let tiff = bytes.windows(4).position(|w| w == b"MM\0*").expect("an EXIF block");
        let tags = common::exif_tags(&bytes[tiff..]);
        let has = |dir: u16, tag: u16| tags.iter().any(|t| (t.0, t.1) == (dir, tag));
        assert!(has(0, 0x010F) && has(0x8769, 0x9003), "{name}: the make and the date: {tags:?}");
        assert!(!has(0, 0x0112) && !has(0, 0x8825), "{name}: no orientation, no location: {tags:?}");
    }
    // The Export window says so before the export, and that a BMP cannot keep them.
    h.state_mut().settings_mut().export.format = None;
    h.state_mut().open_export_window_on(&dir.path().join("out2.png"));
    h.run_steps(3);
    h.get_by_label_contains("Keeps the photo's camera, exposure and date (EXIF), never its location");
    h.state_mut().open_export_window_on(&dir.path().join("out2.bmp"));
    h.run_steps(3);
    h.get_by_label_contains("A BMP has no place for the photo's camera, exposure and date");
    assert!(h.query_by_label_contains("Keeps the photo's camera").is_none());
}

#[test]
fn an_export_keeps_the_photos_xmp_title_keywords_and_rating_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("IMG_2.jpg");
    std::fs::write(&path, common::with_xmp(&common::camera_jpeg(48, 32), common::LIGHTROOM_XMP))
        .expect("write");
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    h.state_mut().settings_mut().export.format = Some(ExportFormat::Png);
    let out = dir.path().join("out.png");
    h.state_mut().export_to(out.clone(), false);
    settle(&mut h);
    let file = std::io::BufReader::new(std::fs::File::open(&out).expect("the export"));
    let mut png = image::codecs::png::PngDecoder::new(file).expect("png");
    let packet = image::ImageDecoder::xmp_metadata(&mut png).expect("read");
    let packet = String::from_utf8(packet.expect("an XMP packet")).expect("UTF-8");
    assert!(packet.contains("Dandelions &amp; light") && packet.contains("xmp:Rating=\"4\""), "{packet}");
    assert!(packet.contains("<rdf:li>meadow</rdf:li>") && !packet.contains("GPS"), "{packet}");
    h.state_mut().settings_mut().export.format = None;
    h.state_mut().open_export_window_on(&dir.path().join("out2.tif"));
    h.run_steps(3);
    h.get_by_label_contains(
        "Keeps the photo's camera, exposure and date (EXIF) and its title, keywords, rating and credits (XMP), \
         never its location",
    );
}

#[test]
fn opening_a_canon_cr2_says_it_is_a_camera_raw() {
    let dir = tempfile::tempdir().expect("temp dir");
    let raw = dir.path().join("IMG_0001.CR2");
    std::fs::write(&raw, common::canon_cr2(48, 32)).expect("write");
    let Some(mut h) = harness(None) else { return };
    settle(&mut h);
    h.state_mut().open(raw);
    settle(&mut h);
    let (text, is_error) = h.state().view().message.expect("a message");
    assert!(
        is_error && text.contains("a camera raw (Canon CR2) file") && text.contains("IMG_0001.CR2"),
        "{text}"
    );
    assert_eq!(h.state().view().input_image, None, "no preview shown as the photo");
}
