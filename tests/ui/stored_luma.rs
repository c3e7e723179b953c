//! "Luma as stored (JPEG)" in the app: a YCbCr JPEG's Y plane, decoded alone, is the result on
//! either backend (no kernel, nothing uploaded), as `djpeg -grayscale` decodes it; any other
//! file is converted with bt601, and the run says why.

use std::path::Path;

use crate::harness::{harness_with, settle};
use egui_kittest::kittest::Queryable as _;
use graylab::app::AppOptions;
use graylab::engine::{Backend, ConvertSettings, Engine, Phase, RunOptions};
use graylab::pixel::Formula;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg").join(name)
}

#[test]
fn luma_as_stored_shows_the_jpegs_own_gray_plane_on_either_backend() {
    let reference = image::open(fixture("luma-420.djpeg-grayscale.png")).expect("reference").to_luma8();
    let options = AppOptions { initial_path: Some(fixture("luma-420.jpg")), ..AppOptions::default() };
    let Some(mut h) = harness_with(options, [1280.0, 800.0]) else { return };
    settle(&mut h);
    let colour_runs = h.state().view().runs.len();
    h.state_mut().settings_mut().convert.formula = Formula::StoredLuma;
    settle(&mut h);
    h.get_by_label("GPU").click();
    settle(&mut h);
    let runs = &h.state().view().runs[colour_runs..];
    let backends: Vec<Backend> = runs.iter().map(|r| r.settings.backend).collect();
    assert_eq!(backends, [Backend::Cpu, Backend::Gpu], "one run a backend");
    for run in runs {
        let phases: Vec<Phase> = run.report.phases.iter().map(|p| p.phase).collect();
        // The decode of the luma is the run: no kernel ran, nothing went up or down.
        assert_eq!(phases, [Phase::Decode, Phase::Display], "{:?}", run.settings.backend);
        assert!(
            run.report.notes.iter().any(|n| n.contains("luma as stored in the JPEG")),
            "{:?}",
            run.report.notes
        );
    }
    let Some(image::DynamicImage::ImageLuma8(shown)) = h.state().view().output_pixels else {
        panic!("the stored luma is one gray plane on the host")
    };
    assert_eq!(shown.dimensions(), reference.dimensions());
    let max = shown.as_raw().iter().zip(reference.as_raw()).map(|(a, b)| a.abs_diff(*b)).max();
    assert!(max.is_some_and(|m| m <= 1), "within a level of djpeg -grayscale: {max:?}");
}

#[test]
fn luma_as_stored_converts_other_files_with_bt601_and_says_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("in.png");
    let img = crate::common::photo(64, 48);
    img.save(&path).expect("save");
    let options = AppOptions { initial_path: Some(path), ..AppOptions::default() };
    let Some(mut h) = harness_with(options, [1280.0, 800.0]) else { return };
    settle(&mut h);
    h.state_mut().settings_mut().convert.formula = Formula::StoredLuma;
    settle(&mut h);
    let run = h.state().view().runs.last().expect("a run").clone();
    assert_eq!(run.settings.formula, Formula::StoredLuma);
    assert!(run.report.phases.iter().any(|p| p.phase == Phase::Kernel), "converted: {:?}", run.report.phases);
    assert!(
        run.report.notes.iter().any(|n| n.contains("not a JPEG") && n.contains("bt601")),
        "{:?}",
        run.report.notes
    );
    let bt601 =
        ConvertSettings { backend: Backend::Cpu, formula: Formula::Bt601, ..ConvertSettings::default() };
    let expected = Engine::cpu_only().convert(&img, &bt601, RunOptions::default()).expect("cpu").image;
    assert_eq!(h.state().view().output_pixels, Some(&expected), "bt601, byte for byte");
}
