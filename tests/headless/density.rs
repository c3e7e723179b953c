//! The input's pixel density (its print size) kept in the output: TIFF, PNG and JPEG inputs of
//! 300x300 and 300x150 dpi, written by other encoders (the `tiff` and `png` crates, the `image`
//! crate's JPEG encoder, an EXIF block by hand), converted by the engine into every format, and
//! by `graylab convert` alone and in a folder; each output read back by graylab's readers and by
//! the reference tools (`tiffinfo`, `pngcheck -v`, the JFIF segment's bytes). An input without
//! one writes none, or the format's default, as before.

use std::path::{Path, PathBuf};

use graylab::engine::{ConvertSettings, Engine, convert_file};
use graylab::io::{DecodeOptions, ExportOptions, decode_file};
use image::RgbImage;

use crate::codecs::reference_tool;
use crate::common;

/// Pixels per inch across and down.
type Dpi = (u32, u32);

/// A 24x16 RGB gradient.
fn rgb() -> RgbImage {
    RgbImage::from_fn(24, 16, |x, y| image::Rgb([(x * 10) as u8, (y * 15) as u8, 90]))
}

/// A TIFF written by the `tiff` crate, of `dpi` (its own default otherwise: 1 per unit of no
/// unit, an aspect ratio only), turned by `orientation` where given.
fn tiff_input(path: &Path, dpi: Option<Dpi>, orientation: Option<u16>) {
    use tiff::encoder::{Rational, TiffEncoder, colortype::RGB8};
    let image = rgb();
    let file = std::fs::File::create(path).expect("create");
    let mut encoder = TiffEncoder::new(file).expect("a TIFF");
    let mut tiff = encoder.new_image::<RGB8>(image.width(), image.height()).expect("an image");
    if let Some((x, y)) = dpi {
        tiff.resolution_unit(tiff::tags::ResolutionUnit::Inch);
        tiff.x_resolution(Rational { n: x, d: 1 });
        tiff.y_resolution(Rational { n: y, d: 1 });
    }
    if let Some(orientation) = orientation {
        tiff.encoder().write_tag(tiff::tags::Tag::Orientation, orientation).expect("orientation");
    }
    tiff.write_data(image.as_raw()).expect("pixels");
}

/// Pixels per metre of `dpi`, rounded as libpng's users write them.
fn per_metre(dpi: u32) -> u32 {
    (f64::from(dpi) / 0.0254).round() as u32
}

/// A PNG written by the `png` crate, with a `pHYs` chunk of `dpi` where given.
fn png_input(path: &Path, dpi: Option<Dpi>) {
    let image = rgb();
    let file = std::fs::File::create(path).expect("create");
    let mut encoder = png::Encoder::new(file, image.width(), image.height());
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_pixel_dims(dpi.map(|(x, y)| png::PixelDimensions {
        xppu: per_metre(x),
        yppu: per_metre(y),
        unit: png::Unit::Meter,
    }));
    encoder.write_header().expect("header").write_image_data(image.as_raw()).expect("pixels");
}

/// A JPEG written by the `image` crate, its JFIF segment of `dpi` (units 0 and 1:1 where
/// `None`, its own default); its bytes.
fn jpeg_input(path: &Path, dpi: Option<Dpi>) -> Vec<u8> {
    use image::codecs::jpeg::{JpegEncoder, PixelDensity, PixelDensityUnit};
    let mut bytes = Vec::new();
    let mut encoder = JpegEncoder::new_with_quality(&mut bytes, 95);
    if let Some((x, y)) = dpi {
        let density = (x as u16, y as u16);
        encoder.set_pixel_density(PixelDensity { density, unit: PixelDensityUnit::Inches });
    }
    encoder.encode_image(&rgb()).expect("encode");
    std::fs::write(path, &bytes).expect("write");
    bytes
}

/// A camera's JPEG: no JFIF segment, its density in the EXIF block (big-endian, as Canon's):
/// `XResolution`, `YResolution` of `dpi`, `ResolutionUnit` 2.
fn exif_jpeg_input(path: &Path, dpi: Dpi) {
    let jfif = jpeg_input(path, None);
    let app0_len = usize::from(u16::from_be_bytes([jfif[4], jfif[5]]));
    assert_eq!(&jfif[6..11], b"JFIF\0");
    let mut tiff = b"MM\0*\0\0\0\x08\0\x03".to_vec();
    for (tag, kind, value) in [(282u16, 5u16, 50u32), (283, 5, 58), (296, 3, 2 << 16)] {
        tiff.extend(tag.to_be_bytes());
        tiff.extend(kind.to_be_bytes());
        tiff.extend(1u32.to_be_bytes());
        tiff.extend(value.to_be_bytes());
    }
    tiff.extend([0; 4]);
    for value in [dpi.0, 1, dpi.1, 1] {
        tiff.extend(value.to_be_bytes());
    }
    let body = [&b"Exif\0\0"[..], &tiff].concat();
    let mut out = vec![0xFF, 0xD8, 0xFF, 0xE1];
    out.extend(((body.len() + 2) as u16).to_be_bytes());
    out.extend(body);
    out.extend(&jfif[4 + app0_len..]);
    std::fs::write(path, out).expect("write");
}

/// The density graylab reads in `path`, in pixels per inch to a tenth (a PNG's or a BMP's
/// whole pixels per metre hold 150 dpi as 150.0124).
fn read_dpi(path: &Path) -> Option<(f64, f64)> {
    let decoded = decode_file(path, &DecodeOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let tenths = |v: f64| (v * 10.0).round() / 10.0;
    decoded.density.map(graylab::io::Density::per_inch).map(|(x, y)| (tenths(x), tenths(y)))
}

/// What `tiffinfo` says of the resolution ("Resolution: 300, 150 pixels/inch"), or `None`
/// without the tool.
fn tiffinfo_resolution(path: &Path) -> Option<String> {
    let out = reference_tool("tiffinfo", "libtiff-tools", &[path.as_os_str()])?;
    assert!(out.status.success(), "tiffinfo {}", path.display());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(text.lines().find(|l| l.contains("Resolution:")).map_or_else(String::new, |l| l.trim().to_owned()))
}

/// What `pngcheck -v` says of the `pHYs` chunk ("11811x11811 pixels/meter (300 dpi)", or
/// "11811x5906 pixels/meter" where they differ), an empty string where there is none, or `None`
/// without the tool.
fn pngcheck_phys(path: &Path) -> Option<String> {
    let out = reference_tool("pngcheck", "pngcheck", &["-v".as_ref(), path.as_os_str()])?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success() && text.contains("No errors detected"), "pngcheck:\n{text}");
    let line = text.lines().find(|l| l.contains("chunk pHYs"));
    Some(line.and_then(|l| l.split_once(": ")).map_or_else(String::new, |(_, said)| said.trim().to_owned()))
}

/// A JPEG's JFIF density, from its segment's bytes: units, across, down.
fn jfif_density(path: &Path) -> (u8, u16, u16) {
    let bytes = std::fs::read(path).expect("read");
    assert_eq!(&bytes[..4], [0xFF, 0xD8, 0xFF, 0xE0], "a JFIF segment first");
    assert_eq!(&bytes[6..11], b"JFIF\0");
    (bytes[13], u16::from_be_bytes([bytes[14], bytes[15]]), u16::from_be_bytes([bytes[16], bytes[17]]))
}

/// Converts `input` into `name` in `dir` on the CPU, as `convert` does, and returns its path.
fn convert(engine: &Engine, input: &Path, dir: &Path, name: &str) -> PathBuf {
    let output = dir.join(name);
    let options = (&DecodeOptions::default(), &ExportOptions::default());
    convert_file(engine, (input, &output), &ConvertSettings::default(), options, None)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    output
}

/// Checks each output format of `input` (whose density is `dpi`, `None` where it has none):
/// graylab reads the density back, and the reference tools read it.
fn check_outputs(engine: &Engine, input: &Path, dpi: Option<Dpi>) {
    let dir = input.parent().expect("a folder");
    let stem = input.file_name().and_then(|n| n.to_str()).expect("a name");
    let want = dpi.map(|(x, y)| (f64::from(x), f64::from(y)));
    for ext in ["tif", "png", "jpg", "bmp"] {
        let output = convert(engine, input, dir, &format!("{stem}.{ext}"));
        // A TIFF says 72 dpi where the input said nothing, as graylab always wrote.
        let want = if ext == "tif" { want.or(Some((72.0, 72.0))) } else { want };
        assert_eq!(read_dpi(&output), want, "{stem} to {ext}");
    }
    if let Some(line) = tiffinfo_resolution(&dir.join(format!("{stem}.tif"))) {
        let (x, y) = dpi.unwrap_or((72, 72));
        assert_eq!(line, format!("Resolution: {x}, {y} pixels/inch"), "{stem}: 72 dpi where none");
    }
    if let Some(phys) = pngcheck_phys(&dir.join(format!("{stem}.png"))) {
        let said = dpi.map_or_else(String::new, |(x, y)| {
            let dpi = if x == y { format!(" ({x} dpi)") } else { String::new() };
            format!("{}x{} pixels/meter{dpi}", per_metre(x), per_metre(y))
        });
        assert_eq!(phys, said, "{stem}: no pHYs where none");
    }
    let jfif = dpi.map_or((0, 1, 1), |(x, y)| (1, x as u16, y as u16));
    assert_eq!(jfif_density(&dir.join(format!("{stem}.jpg"))), jfif, "{stem}: units 0, 1:1 where none");
    // A BMP's pixels per metre, at bytes 38 to 45 (0 where none).
    let bmp = std::fs::read(dir.join(format!("{stem}.bmp"))).expect("read");
    let fields = dpi.map_or([0, 0], |(x, y)| [per_metre(x), per_metre(y)]);
    assert_eq!(bmp[38..46], [fields[0].to_le_bytes(), fields[1].to_le_bytes()].concat(), "{stem}");
}

#[test]
fn tiff_png_and_jpeg_inputs_keep_their_density_in_every_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::cpu_only();
    for dpi in [(300, 300), (300, 150)] {
        let (x, y) = dpi;
        let tiff = dir.path().join(format!("t{x}x{y}.tif"));
        tiff_input(&tiff, Some(dpi), None);
        assert_eq!(read_dpi(&tiff), Some((f64::from(x), f64::from(y))), "the input, as read");
        check_outputs(&engine, &tiff, Some(dpi));
        let png = dir.path().join(format!("p{x}x{y}.png"));
        png_input(&png, Some(dpi));
        check_outputs(&engine, &png, Some(dpi));
        let jpeg = dir.path().join(format!("j{x}x{y}.jpg"));
        jpeg_input(&jpeg, Some(dpi));
        check_outputs(&engine, &jpeg, Some(dpi));
    }
    // A camera's JPEG: no JFIF segment, the density in its EXIF block.
    let exif = dir.path().join("exif.jpg");
    exif_jpeg_input(&exif, (300, 300));
    assert_eq!(std::fs::read(&exif).expect("read")[..4], [0xFF, 0xD8, 0xFF, 0xE1], "no JFIF segment");
    check_outputs(&engine, &exif, Some((300, 300)));
}

#[test]
fn inputs_without_a_density_write_none_or_the_default() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::cpu_only();
    // The `tiff` crate's default (1 per unit of no unit) is an aspect ratio: no density.
    let tiff = dir.path().join("plain.tif");
    tiff_input(&tiff, None, None);
    assert_eq!(read_dpi(&tiff), None);
    check_outputs(&engine, &tiff, None);
    let png = dir.path().join("plain.png");
    png_input(&png, None);
    check_outputs(&engine, &png, None);
    let jpeg = dir.path().join("plain.jpg");
    jpeg_input(&jpeg, None);
    check_outputs(&engine, &jpeg, None);
}

#[test]
fn a_quarter_turn_swaps_the_density_with_the_sides() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::cpu_only();
    let tiff = dir.path().join("turned.tif");
    // Orientation 6: shown turned a quarter clockwise, 300 across as stored is 300 down.
    tiff_input(&tiff, Some((300, 150)), Some(6));
    assert_eq!(read_dpi(&tiff), Some((150.0, 300.0)));
    let png = convert(&engine, &tiff, dir.path(), "turned.png");
    let image = image::open(&png).expect("the output");
    assert_eq!((image.width(), image.height()), (16, 24), "turned");
    assert_eq!(read_dpi(&png), Some((150.0, 300.0)));
}

#[test]
fn convert_keeps_the_density_of_a_file_and_of_a_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let photos = dir.path().join("photos");
    std::fs::create_dir(&photos).expect("mkdir");
    tiff_input(&photos.join("scan.tif"), Some((300, 150)), None);
    png_input(&photos.join("print.png"), Some((300, 300)));
    jpeg_input(&photos.join("photo.jpg"), Some((300, 300)));
    let o = common::graylab(&["convert", "photos/scan.tif", "-o", "scan.tif"], dir.path());
    assert!(o.status.success(), "{}", common::text(&o));
    assert_eq!(read_dpi(&dir.path().join("scan.tif")), Some((300.0, 150.0)));
    if let Some(line) = tiffinfo_resolution(&dir.path().join("scan.tif")) {
        assert_eq!(line, "Resolution: 300, 150 pixels/inch");
    }
    for (format, ext) in [("tiff", "tif"), ("png", "png"), ("jpeg", "jpg")] {
        let out = format!("out-{format}");
        let o = common::graylab(&["convert", "photos", "--out-dir", &out, "--format", format], dir.path());
        assert!(o.status.success(), "{}", common::text(&o));
        let read = |name: &str| read_dpi(&dir.path().join(&out).join(format!("{name}.gray.{ext}")));
        assert_eq!(read("scan"), Some((300.0, 150.0)), "{format}");
        assert_eq!(read("print"), Some((300.0, 300.0)), "{format}");
        assert_eq!(read("photo"), Some((300.0, 300.0)), "{format}");
    }
    if let Some(phys) = pngcheck_phys(&dir.path().join("out-png/scan.gray.png")) {
        assert_eq!(phys, "11811x5906 pixels/meter");
    }
    if let Some(phys) = pngcheck_phys(&dir.path().join("out-png/photo.gray.png")) {
        assert_eq!(phys, "11811x11811 pixels/meter (300 dpi)");
    }
    assert_eq!(jfif_density(&dir.path().join("out-jpeg/scan.gray.jpg")), (1, 300, 150));
}
