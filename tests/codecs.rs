//! graylab's own encoders against other decoders: the parallel PNG writer decodes to the same
//! samples with the `png` crate and with `image`'s reader (odd sizes, 8/16-bit, gray + alpha,
//! many stripes); the JPEG writer stays within the usual tolerance of its gray input, is
//! single-channel, and its size compares with another encoder's at the same quality.

mod common;

use graylab::io::{ExportFormat, ExportOptions, encode_file_with_progress, encode_to_vec};
use image::{DynamicImage, GrayAlphaImage, GrayImage, ImageBuffer, Luma, LumaA};

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
    use image::ImageEncoder as _;
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
