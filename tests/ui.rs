//! The real desktop app, driven headless by `egui_kittest` on the wgpu renderer (lavapipe in CI):
//! open by path, convert on both backends, switch workgroup sizes, watch the charts grow, keep
//! the old image on a bad file, export, and a snapshot of the main window.

mod common;

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use graylab::app::{AppOptions, GraylabApp};
use graylab::engine::{Backend, ConvertSettings, Engine, WorkgroupSize};
use image::{DynamicImage, RgbImage};

fn harness(initial: Option<std::path::PathBuf>) -> Option<Harness<'static, GraylabApp>> {
    common::gpu()?;
    let options = AppOptions { initial_path: initial, fresh_settings: true, ..AppOptions::default() };
    Some(
        Harness::builder()
            .with_size([1400.0, 900.0])
            .wgpu_setup(graylab::app::wgpu_setup())
            .build_eframe(move |cc| GraylabApp::new(cc, options)),
    )
}

/// Steps the app until the worker is idle (or fails the test after a minute).
fn settle(h: &mut Harness<'_, GraylabApp>) {
    let deadline = Instant::now() + Duration::from_mins(1);
    let mut idle_frames = 0;
    while idle_frames < 3 {
        assert!(Instant::now() < deadline, "the app did not finish its work in time");
        h.step();
        if h.state().is_busy() {
            idle_frames = 0;
            std::thread::sleep(Duration::from_millis(5));
        } else {
            idle_frames += 1;
        }
    }
}

fn photo(dir: &std::path::Path, name: &str, w: u32, h: u32) -> (std::path::PathBuf, DynamicImage) {
    let img = DynamicImage::ImageRgb8(
        RgbImage::from_raw(w, h, common::noise((w * h * 3) as usize, u64::from(w))).expect("size"),
    );
    let path = dir.join(name);
    img.save(&path).expect("save");
    (path, img)
}

fn engine_gray(img: &DynamicImage, settings: &ConvertSettings) -> DynamicImage {
    Engine::without_gpu("reference")
        .convert(img, &ConvertSettings { backend: Backend::Cpu, ..*settings })
        .expect("cpu")
        .image
}

#[test]
fn open_convert_on_both_backends_and_switch_workgroups() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "in.png", 333, 201);
    let Some(mut h) = harness(None) else { return };
    h.state_mut().open(path);
    settle(&mut h);
    assert_eq!(h.state().input_image(), Some(&img));
    let want = engine_gray(&img, &ConvertSettings::default());
    assert_eq!(h.state().output_pixels(), Some(&want), "CPU output = engine output");
    let runs = h.state().runs().len();
    assert!(runs >= 1);

    // Switch to the GPU by clicking, as a user would; the conversion re-runs by itself.
    h.get_by_label("GPU").click();
    settle(&mut h);
    let last = h.state().runs().last().expect("a run").clone();
    assert_eq!(last.settings.backend, Backend::Gpu, "{:?}", h.state().message());
    assert!(h.state().runs().len() > runs, "the chart series grow");
    let kernel = last.report.phase(graylab::engine::Phase::Kernel).expect("kernel timed");
    assert_eq!(kernel.source.label(), "gpu-timestamp", "lavapipe has timestamps");
    assert!(
        last.report.phase(graylab::engine::Phase::Download).is_none(),
        "shown from GPU memory, no download"
    );
    assert!(h.state().output_pixels().is_none());

    // The full round trip downloads the GPU result: byte-identical to the CPU.
    h.state_mut().settings_mut().round_trip = true;
    settle(&mut h);
    assert_eq!(h.state().output_pixels(), Some(&want), "GPU output = CPU output");

    // Another workgroup size, picked from the menu.
    h.get_by_role_and_label(egui::accesskit::Role::ComboBox, "Workgroup size").click();
    h.run_steps(2);
    h.get_by_label("16x16").click();
    settle(&mut h);
    let last = h.state().runs().last().expect("a run");
    assert_eq!(last.report.workgroup, Some(WorkgroupSize { x: 16, y: 16 }));
    assert_eq!(h.state().output_pixels(), Some(&want));

    // Run x10 adds ten runs to the charts.
    let before = h.state().runs().len();
    h.get_by_label("Run ×10").click();
    settle(&mut h);
    assert_eq!(h.state().runs().len(), before + 10);
}

#[test]
fn an_unreadable_file_shows_an_error_and_keeps_the_image() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (good, img) = photo(dir.path(), "good.png", 64, 48);
    let bad = dir.path().join("broken.jpg");
    std::fs::write(&bad, b"\xFF\xD8\xFF\xE0 this is not really a JPEG").expect("write");
    let Some(mut h) = harness(Some(good)) else { return };
    settle(&mut h);
    let runs = h.state().runs().len();
    h.state_mut().open(bad);
    settle(&mut h);
    let (text, is_error) = h.state().message().expect("a message");
    assert!(is_error && text.contains("broken.jpg"), "{text}");
    assert_eq!(h.state().input_image(), Some(&img), "the old image stays");
    assert!(h.state().output_pixels().is_some());
    assert_eq!(h.state().runs().len(), runs);
    assert!(h.query_by_label_contains("broken.jpg").is_some(), "the error is on screen");
}

#[test]
fn export_writes_the_converted_image_and_never_clobbers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "in.png", 120, 80);
    let Some(mut h) = harness(Some(path)) else { return };
    h.state_mut().settings_mut().convert.formula = graylab::pixel::Formula::Linear;
    settle(&mut h);
    let out = dir.path().join("out.png");
    h.state_mut().export_to(out.clone(), false);
    settle(&mut h);
    let written = image::open(&out).expect("exported file");
    let settings = ConvertSettings { formula: graylab::pixel::Formula::Linear, ..ConvertSettings::default() };
    assert_eq!(written, engine_gray(&img, &settings));
    assert!(h.state().message().is_some_and(|(t, e)| !e && t.contains("out.png")));

    // A GPU result that stayed on the GPU is downloaded for export.
    h.state_mut().settings_mut().convert.backend = Backend::Gpu;
    settle(&mut h);
    assert!(h.state().output_pixels().is_none());
    let gpu_out = dir.path().join("gpu.tif");
    h.state_mut().export_to(gpu_out.clone(), false);
    settle(&mut h);
    assert_eq!(image::open(&gpu_out).expect("exported"), written);

    // An existing file is not replaced without consent.
    std::fs::write(dir.path().join("taken.png"), b"keep").expect("write");
    h.state_mut().export_to(dir.path().join("taken.png"), false);
    settle(&mut h);
    assert!(h.state().message().is_some_and(|(t, e)| e && t.contains("taken.png")));
    assert_eq!(std::fs::read(dir.path().join("taken.png")).expect("read"), b"keep");
}

#[test]
fn main_window_snapshot() {
    let Some(mut h) = harness(None) else { return };
    settle(&mut h);
    assert!(h.query_by_label_contains("No image open").is_some());
    // What changes from frame to frame or machine to machine: the frame-time readout (top
    // right), the CPU's instruction set and the adapter's details (left).
    h.mask(egui::Rect::from_min_max(egui::pos2(1120.0, 0.0), egui::pos2(1400.0, 28.0)));
    h.mask(egui::Rect::from_min_max(egui::pos2(0.0, 115.0), egui::pos2(310.0, 134.0)));
    h.mask(egui::Rect::from_min_max(egui::pos2(100.0, 345.0), egui::pos2(316.0, 560.0)));
    h.snapshot("main_window_empty");
}

#[test]
fn sweep_panel_runs_and_draws_every_series() {
    let Some(mut h) = harness(None) else { return };
    settle(&mut h);
    h.get_by_label("Size sweep…").click();
    h.run_steps(2);
    h.state_mut().set_sweep_sizes("0.01, 0.05, 0.002", 2);
    h.run_steps(2);
    h.get_by_label("Run sweep").click();
    settle(&mut h);
    let result = h.state().sweep_result().expect("a sweep finished").clone();
    let sizes: Vec<f64> = result.points.iter().map(|p| p.megapixels).collect();
    assert_eq!(sizes.len(), 3);
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    for p in &result.points {
        assert_eq!(p.series.len(), 5, "every series at {} MP", p.megapixels);
    }
    assert!(result.software_adapter && result.verdict.contains("software adapter"), "{}", result.verdict);
    h.run_steps(3);
    for series in graylab::engine::Series::ALL {
        assert!(h.query_by_label_contains(series.label()).is_some(), "legend shows {}", series.label());
    }
    assert!(h.query_by_label_contains(&result.verdict).is_some(), "the verdict is on screen");
}

#[test]
fn parity_window_reports_zero_differences() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, _) = photo(dir.path(), "in.png", 97, 61);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    h.get_by_label("Parity…").click();
    h.run_steps(2);
    h.get_by_label("Check the open image").click();
    settle(&mut h);
    let report = h.state().parity_result().expect("a parity report");
    let d = report.cpu_vs_gpu.expect("the GPU ran");
    assert_eq!((d.differing, d.max_diff, d.pixels), (0, 0, 97 * 61));
    assert!(report.formulas.iter().all(|(_, _, f)| f.differing > 0), "the formulas do differ");
    h.run_steps(2);
    assert!(h.query_by_label_contains("0 of 5,917").is_some(), "shown on screen");
}
