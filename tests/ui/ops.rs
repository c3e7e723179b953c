//! The Operation choice after the grayscale (issue 46), driven through the settings panel: a
//! blur of a chosen radius and the dither, each on the CPU and on the GPU, byte-identical to the
//! engine's CPU result; the dither's output shown at 1:1, black and white, and exported as a
//! 1-bit PNG and a 1-bit TIFF.

use crate::common;
use crate::harness::{harness_sized, settle};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use graylab::engine::{Backend, ConvertSettings, Engine, RunOptions};
use graylab::pixel::Op;

/// The engine's CPU result of `image` with `op`: what both backends must show.
fn want(image: &image::DynamicImage, op: Op) -> image::DynamicImage {
    let settings = ConvertSettings { backend: Backend::Cpu, op, ..ConvertSettings::default() };
    Engine::cpu_only().convert(image, &settings, RunOptions::default()).expect("cpu").image
}

#[test]
fn the_operation_choice_runs_blur_and_dither_on_both_backends_alike() {
    let dir = tempfile::tempdir().expect("temp dir");
    let image = common::photo(203, 117);
    let path = dir.path().join("in.png");
    image.save(&path).expect("save");
    let Some(mut h) = harness_sized(Some(path), [1280.0, 800.0]) else { return };
    settle(&mut h);
    for (choice, op) in [("blur", Op::Blur { radius: 8 }), ("dither (1 bit)", Op::Dither)] {
        h.get_by_role_and_label(Role::ComboBox, "Operation").click();
        h.run_steps(2);
        h.get_by_label(choice).click();
        settle(&mut h);
        let want = want(&image, op);
        for backend in [Backend::Cpu, Backend::Gpu] {
            h.get_by_label(if backend == Backend::Cpu { "CPU" } else { "GPU" }).click();
            settle(&mut h);
            let last = h.state().view().runs.last().expect("a run").clone();
            assert_eq!(
                (last.settings.backend, last.settings.op),
                (backend, op),
                "{:?}",
                h.state().view().message
            );
            assert_eq!(last.report.op.op, op, "the run's report names its op");
            assert!(last.report.phase(graylab::engine::Phase::Op).is_some_and(|p| p.ns > 0), "an op phase");
            assert_eq!(h.state().view().output_pixels, Some(&want), "{choice} on {backend:?} = the CPU's");
        }
        if matches!(op, Op::Blur { .. }) {
            assert!(h.query_all_by_label_contains("blur radius").next().is_some(), "the radius is offered");
            assert!(h.query_by_label("68 operations a pixel").is_some(), "and its work said");
        }
    }
    // The dither is shown pixel for pixel (1:1, not Fit), black and white, and exported as a
    // 1-bit PNG or TIFF.
    assert!(!h.state().view().fitting, "a dither is shown at 1:1");
    let pixels = h.state().view().output_pixels.expect("an output").to_luma8();
    assert!(pixels.pixels().all(|p| p.0[0] == 0 || p.0[0] == 255), "only black and white");
    let out = dir.path().join("dithered.png");
    h.state_mut().export_to(out.clone(), false);
    settle(&mut h);
    let bytes = std::fs::read(&out).expect("exported");
    // IHDR: width, height, then the bit depth (1) and the colour type (0, gray).
    assert_eq!((bytes[24], bytes[25]), (1, 0), "a 1-bit gray PNG");
    let read = image::open(&out).expect("reads back").to_luma8();
    assert_eq!(read, pixels, "the file holds the image shown");
    // A TIFF too holds it as 1 bit a pixel: 8 pixels a byte, each row padded to a whole byte.
    let tif = dir.path().join("dithered.tif");
    h.state_mut().export_to(tif.clone(), false);
    settle(&mut h);
    let bytes = std::fs::read(&tif).expect("exported");
    let packed = (pixels.width() as usize).div_ceil(8) * pixels.height() as usize;
    assert!(
        bytes.len() >= packed && bytes.len() < packed + 1024,
        "{} bytes for {packed} packed",
        bytes.len()
    );
    let read = graylab::io::decode_file(&tif, &graylab::io::DecodeOptions::default()).expect("reads back");
    assert_eq!(read.image.to_luma8(), pixels, "the TIFF holds the image shown");
    // The Export window refuses a JPEG for it, as the CLI does: its coding would add grays.
    h.state_mut().open_export_window();
    h.run_steps(2);
    assert!(h.query_by_label_contains("JPEG is lossy").is_none(), "a PNG name is fine");
    assert!(h.query_by_label_contains("(EXIF)").is_none(), "a photo without EXIF: nothing said of it");
    // Typed after the name offered: "….png" becomes "….pngx.jpg", a JPEG's name.
    h.get_by_role_and_label(Role::TextInput, "File").focus();
    h.run_steps(1);
    h.key_press(egui::Key::End);
    h.get_by_role_and_label(Role::TextInput, "File").type_text("x.jpg");
    h.run_steps(2);
    let typed = h.get_by_role_and_label(Role::TextInput, "File").value().unwrap_or_default();
    assert!(
        h.query_by_label_contains("The dither is black and white only, and JPEG is lossy").is_some(),
        "{typed}"
    );
}
