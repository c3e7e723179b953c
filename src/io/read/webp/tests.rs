//! libwebp's pixels against `image-webp`'s, byte for byte, on lossy files libwebp writes (with
//! and without alpha, sizes that are no multiple of a macroblock); lossless and damaged files
//! left to `image-webp`.

use super::*;

/// Pixels of `channels` samples varied enough to need every coding tool.
fn pixels(width: u32, height: u32, channels: u32) -> Vec<u8> {
    (0..width * height * channels).map(|i| ((i * 7919 + i / 97) >> 2) as u8).collect()
}

/// A lossy WebP of `pixels` (RGBA where `alpha`) written by libwebp at quality 80.
fn lossy(pixels: &[u8], (width, height): (u32, u32), alpha: bool) -> Vec<u8> {
    let channels = if alpha { 4 } else { 3 };
    let mut out = std::ptr::null_mut();
    let int = |n: u32| i32::try_from(n).expect("fits");
    let (w, h, stride) = (int(width), int(height), int(width * channels));
    // SAFETY: `pixels` holds `height` rows of `stride` bytes; libwebp allocates `out` and says
    // its length, and it is freed with `WebPFree` once copied.
    unsafe {
        let len = if alpha {
            libwebp_sys::WebPEncodeRGBA(pixels.as_ptr(), w, h, stride, 80.0, &raw mut out)
        } else {
            libwebp_sys::WebPEncodeRGB(pixels.as_ptr(), w, h, stride, 80.0, &raw mut out)
        };
        assert!(len > 0 && !out.is_null(), "libwebp encodes");
        let file = std::slice::from_raw_parts(out, len).to_vec();
        libwebp_sys::WebPFree(out.cast());
        file
    }
}

/// `file` decoded by `WebPDecoder`, and whether libwebp was to decode it; or the error in words.
fn ours(file: &[u8]) -> Result<(ColorType, bool, Vec<u8>), String> {
    let decoder = WebPDecoder::new(file.to_vec(), image::Limits::no_limits()).map_err(|e| e.to_string())?;
    let (color, lossy_still) = (decoder.color_type(), decoder.lossy_still);
    let mut buf = vec![0; usize::try_from(decoder.total_bytes()).expect("fits")];
    decoder.read_image(&mut buf).map_err(|e| e.to_string())?;
    Ok((color, lossy_still, buf))
}

/// `file` decoded by the `image` crate alone.
fn theirs(file: &[u8]) -> Result<Vec<u8>, String> {
    image::load_from_memory_with_format(file, image::ImageFormat::WebP)
        .map(|i| i.as_bytes().to_vec())
        .map_err(|e| e.to_string())
}

#[test]
fn lossy_files_decode_through_libwebp_as_image_webp_decodes_them() {
    for (width, height) in [(37, 29), (64, 48), (1, 1), (300, 7)] {
        for alpha in [false, true] {
            let what = format!("{width}x{height} alpha {alpha}");
            let file = lossy(&pixels(width, height, if alpha { 4 } else { 3 }), (width, height), alpha);
            let (color, lossy_still, got) = ours(&file).expect(&what);
            assert!(lossy_still && !simple_lossless(&file), "{what}: to decode by libwebp");
            let mut direct = vec![0; got.len()];
            assert!(
                decode_into(&file, (width, height), alpha, &mut direct).is_some(),
                "{what}: libwebp decodes"
            );
            assert_eq!(direct, got, "{what}: by libwebp");
            assert_eq!(color, if alpha { ColorType::Rgba8 } else { ColorType::Rgb8 }, "{what}");
            assert_eq!(got, theirs(&file).expect(&what), "{what}: image-webp's pixels");
        }
    }
}

#[test]
fn lossless_files_are_left_to_image_webp() {
    let (width, height) = (41, 23);
    let source = pixels(width, height, 4);
    let mut file = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut file)
        .encode(&source, width, height, ExtendedColorType::Rgba8)
        .expect("encodes");
    assert!(simple_lossless(&file), "streamed by image-webp, not read whole");
    let (color, lossy_still, got) = ours(&file).expect("decodes");
    assert!(!lossy_still);
    assert_eq!((color, got), (ColorType::Rgba8, source));
}

#[test]
fn damaged_lossy_files_fail_as_image_webp_fails_them() {
    let (width, height) = (120, 90);
    let file = lossy(&pixels(width, height, 3), (width, height), false);
    // Cut short: libwebp refuses it, and image-webp says why in its own words.
    let short = &file[..file.len() * 2 / 3];
    assert_eq!(ours(short).map(|o| o.2), theirs(short));
    assert!(theirs(short).is_err(), "a cut file is refused");
    // A byte of the bitstream changed: both decode it the same way, or refuse it alike.
    let mut changed = file.clone();
    changed[file.len() / 2] ^= 0x5A;
    assert_eq!(ours(&changed).map(|o| o.2), theirs(&changed));
}
