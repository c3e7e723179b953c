//! A photo's EXIF kept in its outputs: a camera's JPEG (big-endian EXIF, rotated, with a
//! location and a maker note) converted by `graylab convert` into JPEG (streamed as decoded),
//! PNG and WebP, on the CPU and the GPU, alone and in a folder; each output's EXIF read back
//! without graylab's code: the camera, the exposure and the date kept, graylab's `Software`, no
//! orientation (the pixels are turned), no location, no maker note. A TIFF output holds the
//! text tags of the first directory (make, model, date) as its own and the exposure in an EXIF
//! directory, as `tiffinfo` reads them; converted again, that TIFF gives them all to a JPEG. A
//! PNG's `eXIf` chunk after the image data (`ImageMagick`'s place for it) is kept too. An XMP
//! packet keeps its title, keywords, rating and credits in every format, not its location or
//! develop settings.

use crate::common;

/// The EXIF block `path` holds, read by the `image` crate's decoder of its format.
fn exif_of(path: &std::path::Path) -> Vec<u8> {
    use image::ImageDecoder as _;
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("open"));
    let block = match path.extension().and_then(|e| e.to_str()) {
        Some("png") => image::codecs::png::PngDecoder::new(file).expect("png").exif_metadata(),
        Some("webp") => image::codecs::webp::WebPDecoder::new(file).expect("webp").exif_metadata(),
        _ => image::codecs::jpeg::JpegDecoder::new(file).expect("jpeg").exif_metadata(),
    };
    block.expect("read").unwrap_or_else(|| panic!("{}: no EXIF", path.display()))
}

/// Checks the EXIF of `path`, an output of [`common::camera_jpeg`].
fn check(path: &std::path::Path) {
    let name = path.display();
    let tags = common::exif_tags(&exif_of(path));
    let value = |dir: u16, tag: u16| tags.iter().find(|t| (t.0, t.1) == (dir, tag)).map(|t| t.2.clone());
    assert_eq!(value(0, 0x010F).as_deref(), Some(&b"Canon\0"[..]), "{name}: make");
    assert_eq!(value(0, 0x0110).as_deref(), Some(&b"EOS R5\0"[..]), "{name}: model");
    assert_eq!(value(0, 0x0131).as_deref(), Some(&b"graylab\0"[..]), "{name}: software");
    assert_eq!(value(0, 0x0132).as_deref(), Some(&b"2026:12:01 10:00:00\0"[..]), "{name}: date");
    assert_eq!(value(0x8769, 0x9003).as_deref(), Some(&b"2026:12:01 10:00:00\0"[..]), "{name}: capture date");
    assert_eq!(value(0x8769, 0x829A), Some(vec![0, 0, 0, 1, 0, 0, 0, 250]), "{name}: 1/250 s");
    assert_eq!(value(0x8769, 0x8827), Some(vec![1, 144]), "{name}: ISO 400");
    for (dir, tag, what) in
        [(0, 0x0112, "orientation"), (0, 0x8825, "location"), (0x8769, 0x927C, "maker note")]
    {
        assert_eq!(value(dir, tag), None, "{name}: the {what} is dropped");
    }
    assert!(tags.iter().all(|t| t.0 != 0x8825), "{name}: no GPS directory");
    assert!(graylab::io::is_graylab_output(path), "{name}: graylab's mark is still found");
}

#[test]
fn a_photos_camera_exposure_and_date_are_kept_and_its_location_is_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let photos = dir.path().join("photos");
    std::fs::create_dir(&photos).expect("mkdir");
    std::fs::write(photos.join("IMG_1.jpg"), common::camera_jpeg(64, 48)).expect("write");
    for (out, backend) in [("cpu.jpg", "cpu"), ("gpu.jpg", "gpu"), ("out.png", "cpu"), ("out.webp", "gpu")] {
        let o =
            common::graylab(&["convert", "photos/IMG_1.jpg", "-o", out, "--backend", backend], dir.path());
        assert!(o.status.success(), "{out}: {}", common::text(&o));
        let shown = image::open(dir.path().join(out)).expect("the output");
        assert_eq!((shown.width(), shown.height()), (48, 64), "{out}: turned as its orientation says");
        check(&dir.path().join(out));
    }
    let o = common::graylab(&["convert", "photos", "--out-dir", "gray", "--format", "jpeg"], dir.path());
    assert!(o.status.success(), "{}", common::text(&o));
    check(&dir.path().join("gray/IMG_1.gray.jpg"));
    // A TIFF: the camera and the date as its own tags, beside graylab's; the exposure and the
    // capture date in its EXIF directory, in the TIFF's (little-endian) byte order.
    let o = common::graylab(&["convert", "photos/IMG_1.jpg", "-o", "out.tif"], dir.path());
    assert!(o.status.success(), "{}", common::text(&o));
    let tiff = std::fs::read(dir.path().join("out.tif")).expect("read");
    let tags = common::exif_tags(&tiff);
    let value = |dir: u16, tag: u16| tags.iter().find(|t| (t.0, t.1) == (dir, tag)).map(|t| t.2.clone());
    assert_eq!(value(0, 0x010F).as_deref(), Some(&b"Canon\0"[..]));
    assert_eq!(value(0, 0x0132).as_deref(), Some(&b"2026:12:01 10:00:00\0"[..]));
    assert_eq!(value(0, 0x0131).as_deref(), Some(&b"graylab\0"[..]));
    assert_eq!(value(0x8769, 0x829A), Some(vec![1, 0, 0, 0, 250, 0, 0, 0]), "1/250 s");
    assert_eq!(value(0x8769, 0x8827), Some(vec![144, 1]), "ISO 400");
    assert_eq!(value(0x8769, 0x9003).as_deref(), Some(&b"2026:12:01 10:00:00\0"[..]));
    assert_eq!((value(0, 0x0112), value(0, 0x8825), value(0x8769, 0x927C)), (None, None, None));
    let info =
        crate::codecs::reference_tool("tiffinfo", "libtiff-tools", &[dir.path().join("out.tif").as_os_str()]);
    if let Some(info) = info {
        let text = String::from_utf8_lossy(&info.stdout);
        assert!(text.contains("Make: Canon") && text.contains("Model: EOS R5"), "{text}");
        assert!(text.contains("EXIF directory") && text.contains("ExposureTime: 0.004000"), "{text}");
        assert!(!String::from_utf8_lossy(&info.stderr).contains("arning"), "libtiff warns");
    }
    // That TIFF as an input: its own tags and its EXIF directory's, into a JPEG.
    let o = common::graylab(&["convert", "out.tif", "-o", "again.jpg"], dir.path());
    assert!(o.status.success(), "{}", common::text(&o));
    let again = exif_of(&dir.path().join("again.jpg"));
    assert!(again.starts_with(b"II"), "the TIFF's byte order");
    let mut kept = common::exif_tags(&again);
    kept.retain(|t| t.1 != 0x8769);
    let mut want: Vec<_> = tags
        .into_iter()
        .filter(|t| t.0 == 0x8769 || [0x010F, 0x0110, 0x0131, 0x0132].contains(&t.1))
        .collect();
    want.retain(|t| t.1 != 0x8769);
    kept.sort();
    want.sort();
    assert_eq!(kept, want, "the TIFF's kept tags, and nothing else");
    // A file without EXIF gets graylab's own block in a WebP only (its mark), none elsewhere.
    image::RgbImage::from_pixel(8, 8, image::Rgb([1, 2, 3])).save(dir.path().join("plain.png")).expect("png");
    let o = common::graylab(&["convert", "plain.png", "-o", "plain.jpg"], dir.path());
    assert!(o.status.success(), "{}", common::text(&o));
    let jpeg = std::fs::read(dir.path().join("plain.jpg")).expect("read");
    assert!(!jpeg.windows(6).any(|w| w == b"Exif\0\0"), "no EXIF block made up");
}

#[test]
fn a_pngs_exif_after_its_image_data_is_kept_as_imagemagick_writes_it() {
    // ImageMagick writes a PNG's `eXIf` chunk after the image data, where the `png` crate's
    // decoder no longer looks: its tags were lost until the chunk walk kept them.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut png = Vec::new();
    common::photo(64, 48)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("png");
    let (body, iend) = png.split_at(png.len() - 12);
    let chunk = [&b"eXIf"[..], &common::camera_exif()].concat();
    let late =
        [body, &(chunk.len() as u32 - 4).to_be_bytes(), &chunk, &crc32fast::hash(&chunk).to_be_bytes(), iend]
            .concat();
    assert!(late.windows(4).position(|w| w == b"IDAT") < late.windows(4).position(|w| w == b"eXIf"));
    std::fs::write(dir.path().join("late.png"), late).expect("write");
    for out in ["late.jpg", "late.webp"] {
        let o = common::graylab(&["convert", "late.png", "-o", out], dir.path());
        assert!(o.status.success(), "{}", common::text(&o));
        let shown = image::open(dir.path().join(out)).expect("the output");
        assert_eq!((shown.width(), shown.height()), (48, 64), "{out}: turned as its orientation says");
        check(&dir.path().join(out));
    }
}

/// The XMP packet `path` holds, read by the `image` crate's decoder of its format.
fn xmp_of(path: &std::path::Path) -> String {
    use image::ImageDecoder as _;
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("open"));
    let packet = match path.extension().and_then(|e| e.to_str()) {
        Some("png") => image::codecs::png::PngDecoder::new(file).expect("png").xmp_metadata(),
        Some("webp") => image::codecs::webp::WebPDecoder::new(file).expect("webp").xmp_metadata(),
        Some("tif") => image::codecs::tiff::TiffDecoder::new(file).expect("tiff").xmp_metadata(),
        _ => image::codecs::jpeg::JpegDecoder::new(file).expect("jpeg").xmp_metadata(),
    };
    let packet = packet.expect("read").unwrap_or_else(|| panic!("{}: no XMP", path.display()));
    String::from_utf8(packet).expect("UTF-8")
}

#[test]
fn a_photos_title_keywords_and_rating_are_kept_in_every_format_and_its_location_and_crop_are_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("IMG_2.jpg"),
        common::with_xmp(&common::camera_jpeg(64, 48), common::LIGHTROOM_XMP),
    )
    .expect("write");
    let mut written = Vec::new();
    for (out, backend) in [("cpu.jpg", "cpu"), ("gpu.png", "gpu"), ("out.tif", "cpu"), ("out.webp", "cpu")] {
        let o = common::graylab(&["convert", "IMG_2.jpg", "-o", out, "--backend", backend], dir.path());
        assert!(o.status.success(), "{out}: {}", common::text(&o));
        let packet = xmp_of(&dir.path().join(out));
        for kept in [
            "xmp:Rating=\"4\"",
            "xmp:Label=\"Red\"",
            "<rdf:li xml:lang=\"x-default\">Dandelions &amp; light</rdf:li>",
            "<dc:creator><rdf:Seq><rdf:li>Ada Lovelace</rdf:li></rdf:Seq></dc:creator>",
            "© 2026 Ada Lovelace",
            "<rdf:Bag><rdf:li>dandelion</rdf:li><rdf:li>meadow</rdf:li></rdf:Bag>",
        ] {
            assert!(packet.contains(kept), "{out}: {kept} in {packet}");
        }
        for dropped in ["GPS", "crs:", "Crop", "Orientation", "48,51"] {
            assert!(!packet.contains(dropped), "{out}: {dropped} in {packet}");
        }
        if out != "out.tif" {
            check(&dir.path().join(out));
        }
        written.push(packet);
    }
    assert!(written.windows(2).all(|w| w[0] == w[1]), "one packet in every format");
    // Each output as an input gives the same packet again.
    for input in ["gpu.png", "out.tif", "out.webp"] {
        let o = common::graylab(&["convert", input, "-o", "again.jpg", "--overwrite"], dir.path());
        assert!(o.status.success(), "{input}: {}", common::text(&o));
        assert_eq!(xmp_of(&dir.path().join("again.jpg")), written[0], "{input}");
    }
    // A photo with XMP and no EXIF: the packet, and no EXIF block made up in a JPEG or PNG.
    let mut plain = Vec::new();
    image::codecs::jpeg::JpegEncoder::new(&mut plain).encode_image(&common::photo(16, 8)).expect("encode");
    std::fs::write(dir.path().join("plain.jpg"), common::with_xmp(&plain, common::LIGHTROOM_XMP))
        .expect("write");
    for out in ["plain-out.jpg", "plain-out.png"] {
        let o = common::graylab(&["convert", "plain.jpg", "-o", out], dir.path());
        assert!(o.status.success(), "{}", common::text(&o));
        assert_eq!(xmp_of(&dir.path().join(out)), written[0], "{out}");
        let bytes = std::fs::read(dir.path().join(out)).expect("read");
        assert!(!bytes.windows(4).any(|w| w == b"Exif" || w == b"eXIf"), "{out}: no EXIF made up");
    }
}

#[test]
fn a_pngs_xmp_is_kept_compressed_after_its_image_data_or_as_imagemagicks_raw_profile() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut png = Vec::new();
    common::photo(16, 8).write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png).expect("png");
    let (body, iend) = png.split_at(png.len() - 12);
    let chunk = |kind: &[u8], data: &[u8]| {
        let typed = [kind, data].concat();
        [&(data.len() as u32).to_be_bytes()[..], &typed, &crc32fast::hash(&typed).to_be_bytes()].concat()
    };
    let packet = common::LIGHTROOM_XMP.as_bytes();
    let zlib = miniz_oxide::deflate::compress_to_vec_zlib(packet, 6);
    // ImageMagick's raw profile: its name, its length, then hex digits, 72 a line.
    let hex = packet.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().concat();
    let lines: Vec<&str> = hex.as_bytes().chunks(72).map(|l| std::str::from_utf8(l).expect("hex")).collect();
    let raw = format!("\nxmp\n{:8}\n{}\n", packet.len(), lines.join("\n"));
    let raw_z = miniz_oxide::deflate::compress_to_vec_zlib(raw.as_bytes(), 6);
    let files = [
        ("late-itxt.png", chunk(b"iTXt", &[&b"XML:com.adobe.xmp\0\x01\0\0\0"[..], &zlib].concat())),
        ("magick.png", chunk(b"zTXt", &[&b"Raw profile type xmp\0\0"[..], &raw_z].concat())),
        ("magick-text.png", chunk(b"tEXt", &[&b"Raw profile type xmp\0"[..], raw.as_bytes()].concat())),
    ];
    let mut kept = Vec::new();
    for (name, late) in files {
        std::fs::write(dir.path().join(name), [body, &late, iend].concat()).expect("write");
        let o = common::graylab(&["convert", name, "-o", "out.tif", "--overwrite"], dir.path());
        assert!(o.status.success(), "{name}: {}", common::text(&o));
        let packet = xmp_of(&dir.path().join("out.tif"));
        assert!(
            packet.contains("Dandelions &amp; light") && packet.contains("xmp:Rating=\"4\""),
            "{name}: {packet}"
        );
        kept.push(packet);
    }
    assert!(kept.windows(2).all(|w| w[0] == w[1]), "one packet from each");
}
