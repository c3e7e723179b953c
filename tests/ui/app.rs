//! The real desktop app, driven headless by `egui_kittest` on the wgpu renderer (lavapipe in CI,
//! any GPU elsewhere: nothing here assumes a software adapter): open by path or by dropping a
//! file, convert on both backends, stop and supersede long work, shortcuts while typing, every
//! window reachable in a small window, charts scoped to the open image, export, the sweep and
//! parity windows, previews at Fit and tiles when zoomed in, and a snapshot at 1280x720.

use crate::{common, harness};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::harness::{harness, harness_sized, harness_with, settle};
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use graylab::app::{AppOptions, GpuDevice, ViewMode};
use graylab::engine::{Backend, ConvertSettings, Engine, Phase, RunOptions, WorkgroupSize};
use graylab::pixel::Formula;
use graylab::system::progress::HoldAt;
use image::{DynamicImage, RgbImage};

fn photo(dir: &Path, name: &str, w: u32, h: u32) -> (PathBuf, DynamicImage) {
    let img = common::photo(w, h);
    let path = dir.join(name);
    img.save(&path).expect("save");
    (path, img)
}

fn engine_gray(img: &DynamicImage, settings: &ConvertSettings) -> DynamicImage {
    Engine::cpu_only()
        .convert(img, &ConvertSettings { backend: Backend::Cpu, ..*settings }, RunOptions::default())
        .expect("cpu")
        .image
}

/// A file dropped on the window, as eframe hands it to egui.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn open_convert_on_both_backends_and_switch_workgroups() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "in.png", 333, 201);
    // GPU work on the window's device (the default on a hardware GPU): results are drawn from
    // GPU memory.
    let options = AppOptions { gpu_device: GpuDevice::Window, ..AppOptions::default() };
    let Some(mut h) = harness_with(options, [1280.0, 800.0]) else { return };
    let gpu = common::gpu().expect("checked by harness");
    h.state_mut().open(path);
    settle(&mut h);
    assert_eq!(h.state().view().input_image, Some(&img));
    let want = engine_gray(&img, &ConvertSettings::default());
    assert_eq!(h.state().view().output_pixels, Some(&want), "CPU output = engine output");
    let runs = h.state().view().runs.len();
    assert_eq!(runs, 1, "one conversion after opening");

    // Switch to the GPU by clicking, as a user would; the conversion re-runs by itself.
    h.get_by_label("GPU").click();
    settle(&mut h);
    let last = h.state().view().runs.last().expect("a run").clone();
    assert_eq!(last.settings.backend, Backend::Gpu, "{:?}", h.state().view().message);
    assert_eq!(h.state().view().runs.len(), runs + 1, "the chart series grow");
    let kernel = last.report.phase(Phase::Kernel).expect("kernel timed");
    // A software adapter's timestamps are read late once frames are drawn: the app uses the CPU
    // clock there.
    let clock = if gpu.timestamps().passes && !gpu.is_software() { "gpu-timestamp" } else { "cpu-clock" };
    assert_eq!(kernel.source.label(), clock, "the kernel's clock is what the adapter can give here");
    assert!(last.report.phase(Phase::Download).is_none(), "shown from GPU memory, no download");
    assert!(h.state().view().output_pixels.is_none());
    // Showing the result is one phase, counted once, and a stacked bar sums to the run's wall
    // time: phases − overlap + other.
    let display = last.report.phases.iter().filter(|p| p.phase == Phase::Display).collect::<Vec<_>>();
    assert!(
        display.len() == 1 && display[0].ns > 0,
        "the display is measured once: {:?}",
        last.report.phases
    );
    let phases: u64 = last.report.phases.iter().map(|p| p.ns).sum();
    assert_eq!(phases - last.overlap_ns() + last.other_ns(), last.wall_ns());

    // The full round trip downloads the GPU result: byte-identical to the CPU.
    h.state_mut().settings_mut().round_trip = true;
    settle(&mut h);
    assert_eq!(h.state().view().output_pixels, Some(&want), "GPU output = CPU output");

    // Another workgroup size, picked from the menu.
    h.get_by_role_and_label(Role::ComboBox, "Workgroup size").click();
    h.run_steps(2);
    h.get_by_label("16x16").click();
    settle(&mut h);
    let last = h.state().view().runs.last().expect("a run");
    assert_eq!(last.report.workgroup, Some(WorkgroupSize { x: 16, y: 16 }));
    assert_eq!(h.state().view().output_pixels, Some(&want));

    // Run x10 adds ten runs to the charts.
    let before = h.state().view().runs.len();
    h.get_by_label("Run ×10").click();
    settle(&mut h);
    assert_eq!(h.state().view().runs.len(), before + 10);
}

#[test]
fn on_a_device_of_its_own_gpu_results_are_read_back_and_timed_on_the_gpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "in.png", 333, 201);
    // The default on a software adapter: GPU work on a device of its own, at the work threads'
    // priority, so the window's frames never wait behind it in one queue.
    let options =
        AppOptions { initial_path: Some(path), gpu_device: GpuDevice::Own, ..AppOptions::default() };
    let Some(mut h) = harness_with(options, [1280.0, 800.0]) else { return };
    let gpu = common::gpu().expect("checked by harness");
    settle(&mut h);
    h.get_by_label("GPU").click();
    settle(&mut h);
    let last = h.state().view().runs.last().expect("a run").clone();
    assert_eq!(last.settings.backend, Backend::Gpu, "{:?}", h.state().view().message);

    // The result is read back, whatever the round-trip box says, and is byte-identical to the
    // CPU's.
    assert!(!h.state_mut().settings_mut().round_trip, "the box was not ticked");
    let want = engine_gray(&img, &ConvertSettings::default());
    assert_eq!(h.state().view().output_pixels, Some(&want), "GPU output = CPU output");
    let phases: Vec<Phase> = last.report.phases.iter().map(|p| p.phase).collect();
    assert!(phases.contains(&Phase::Download), "read back: {phases:?}");
    assert_eq!(phases.iter().filter(|p| **p == Phase::Display).count(), 1, "shown once: {phases:?}");
    let sum: u64 = last.report.phases.iter().map(|p| p.ns).sum();
    assert_eq!(sum - last.overlap_ns() + last.other_ns(), last.wall_ns());

    // No frame is drawn on this device, so its timestamps are used where the adapter has them.
    let kernel = last.report.phase(Phase::Kernel).expect("kernel timed");
    let clock = if gpu.timestamps().passes { "gpu-timestamp" } else { "cpu-clock" };
    assert_eq!(kernel.source.label(), clock);

    // The panel says so: the round-trip box is ticked and cannot be unticked, and the adapter
    // panel explains why.
    let round_trip = h.get_by_label("Download the result (full round trip)");
    let node = round_trip.accesskit_node();
    assert!(node.is_disabled(), "the box is fixed on a device of its own");
    assert_eq!(node.toggled(), Some(egui::accesskit::Toggled::True), "and ticked");
    h.get_by_label_contains("run on a device of their own");
}

#[test]
fn stop_ends_a_batch_and_escape_ends_continuous() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, _) = photo(dir.path(), "in.png", 1200, 900);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    let before = h.state().view().runs.len();
    h.state_mut().settings_mut().repeat = 1000;
    h.run_steps(2);
    h.get_by_label("Run ×1000").click();
    h.run_steps(3);
    assert!(h.state().view().busy, "the batch runs");
    h.get_by_label("Stop").click();
    settle(&mut h);
    let done = h.state().view().runs.len() - before;
    assert!(done < 1000, "Stop ended the batch after {done} runs");
    assert!(!h.state().view().busy, "nothing left to stop");
    h.run_steps(2);
    // The status bar says how far it got ("Stopped the runs after 12 of 1000", or "before the
    // first of 1000 finished", never "after 0 of"), not "Ready".
    h.get_by_label_contains("Stopped the runs ");
    assert!(h.query_by_label_contains("after 0 of").is_none());
    assert!(h.query_by_label_contains(" of 1000").is_some() && h.query_by_label("Ready").is_none());

    // Continuous, then Esc.
    h.get_by_label("Continuous (re-run as soon as a run ends)").click();
    h.run_steps(5);
    assert!(h.state().view().continuous && h.state().view().busy);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(!h.state().view().continuous, "Esc ends Continuous");
    settle(&mut h);
}

#[test]
fn a_setting_change_supersedes_the_runs_in_flight() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "in.png", 1200, 900);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    let before = h.state().view().runs.len();
    h.state_mut().settings_mut().repeat = 1000;
    h.run_steps(2);
    h.get_by_label("Run ×1000").click();
    h.run_steps(3);
    h.state_mut().settings_mut().convert.formula = Formula::Bt709;
    settle(&mut h);
    let batch =
        h.state().view().runs[before..].iter().filter(|r| r.settings.formula == Formula::Bt601).count();
    assert!(batch < 1000, "the batch stopped after {batch} runs");
    let last = h.state().view().runs.last().expect("a run");
    assert_eq!(last.settings.formula, Formula::Bt709, "the newest settings ran last");
    let settings = ConvertSettings { formula: Formula::Bt709, ..ConvertSettings::default() };
    assert_eq!(h.state().view().output_pixels, Some(&engine_gray(&img, &settings)), "and are shown");
}

#[test]
fn stop_and_a_setting_change_cut_a_gpu_run_short_between_submissions() {
    cut_short_between_submissions(GpuDevice::Window);
}

#[test]
fn stop_and_a_setting_change_cut_a_run_short_on_a_device_of_its_own() {
    cut_short_between_submissions(GpuDevice::Own);
}

fn cut_short_between_submissions(gpu_device: GpuDevice) {
    let dir = tempfile::tempdir().expect("temp dir");
    // One row per submission: a GPU run of 64 submissions, held by the test after its first.
    let (path, img) = photo(dir.path(), "tall.png", 48, 64);
    let options = AppOptions {
        initial_path: Some(path),
        gpu_chunk_limit_bytes: Some(1),
        gpu_device,
        ..AppOptions::default()
    };
    let Some(mut h) = harness_with(options, [1280.0, 800.0]) else { return };
    settle(&mut h);
    let cpu_runs = h.state().view().runs.len();

    // Stop while the GPU run is in flight: it ends at its next submission, and is not charted.
    h.state_mut().hold_next_job(HoldAt::Pixels);
    h.get_by_label("GPU").click();
    harness::until_held(&mut h);
    assert_eq!(h.state().view().job_progress.as_deref(), Some("Converting"), "held inside the run");
    h.get_by_label("Stop").click();
    h.run_steps(2);
    h.state().release_job();
    settle(&mut h);
    assert_eq!(h.state().view().runs_cut_short, 1, "the GPU run saw the cancel between submissions");
    assert_eq!(h.state().view().runs.len(), cpu_runs, "a run cut short is not charted");
    assert_eq!(h.state().view().message, None, "and is no error");

    // A changed setting supersedes the run in flight the same way; the new one then runs whole.
    h.state_mut().settings_mut().round_trip = true;
    h.state_mut().hold_next_job(HoldAt::Pixels);
    h.state_mut().run_conversion(1);
    harness::until_held(&mut h);
    h.state_mut().settings_mut().convert.formula = Formula::Bt709;
    h.run_steps(2);
    h.state().release_job();
    settle(&mut h);
    assert_eq!(h.state().view().runs_cut_short, 2);
    let gpu_runs: Vec<_> =
        h.state().view().runs[cpu_runs..].iter().map(|r| (r.settings.backend, r.settings.formula)).collect();
    assert_eq!(gpu_runs, [(Backend::Gpu, Formula::Bt709)], "only the newest settings ran to the end");
    let settings = ConvertSettings { formula: Formula::Bt709, ..ConvertSettings::default() };
    assert_eq!(h.state().view().output_pixels, Some(&engine_gray(&img, &settings)), "and are shown");
}

#[test]
fn gpu_runs_are_shown_against_the_ceilings_and_can_keep_their_input() {
    ceilings_and_kept_input(GpuDevice::Window);
}

#[test]
fn on_a_device_of_its_own_gpu_runs_have_ceilings_and_keep_their_input() {
    ceilings_and_kept_input(GpuDevice::Own);
}

fn ceilings_and_kept_input(gpu_device: GpuDevice) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "in.png", 640, 480);
    let options = AppOptions { initial_path: Some(path), gpu_device, ..AppOptions::default() };
    let Some(mut h) = harness_with(options, [1280.0, 800.0]) else { return };
    settle(&mut h);
    assert!(h.state().view().ceilings.is_none(), "a CPU run measures no GPU ceilings");
    let cpu = h.state().view().runs.last().expect("a CPU run").clone();
    let kernel = cpu.rates.iter().find(|r| r.phase == Phase::Kernel).expect("the CPU kernel as a rate");
    assert!(kernel.gb_per_s > 0.0 && kernel.ceiling_gb_per_s.is_some_and(|c| c > 0.0), "{kernel:?}");

    // The first GPU run asks for the ceilings (measured here: tests keep no cache); the adapter
    // panel lists them and the next run's phases are percentages of them.
    h.get_by_label("GPU").click();
    settle(&mut h);
    let ceilings = h.state().view().ceilings.expect("measured after the first GPU run").clone();
    assert!(
        ceilings.origin.measured_now && ceilings.cache_path.is_none(),
        "measured, not cached: {ceilings:?}"
    );
    assert!(ceilings.ceilings.device_copy.gb_per_s() > 0.0);
    h.get_by_label("host to staging");
    h.get_by_label("Measure again");
    h.state_mut().run_conversion(1);
    settle(&mut h);
    let last = h.state().view().runs.last().expect("a GPU run").clone();
    for phase in [Phase::Upload, Phase::Kernel] {
        let rate = last.rates.iter().find(|r| r.phase == phase).expect("every moving phase as a rate");
        let pct = rate.percent_of_ceiling.expect("against its ceiling");
        let ceiling = rate.ceiling_gb_per_s.expect("its ceiling's rate");
        // The rate is its bytes over its time, and the percentage that rate over the ceiling's.
        assert!(rate.ns > 0 && (rate.gb_per_s - rate.bytes as f64 / rate.ns as f64).abs() < 1e-9, "{rate:?}");
        assert!((pct - 100.0 * rate.gb_per_s / ceiling).abs() < 1e-6, "{rate:?}");
    }
    assert!(h.get_all_by_label_contains("GB/s ·").count() >= 2, "the last run shows rate · % of ceiling");

    // Keep the input on the GPU: the first run uploads it, another formula uploads nothing and
    // is still byte-identical to the CPU.
    h.state_mut().settings_mut().round_trip = true;
    h.get_by_label("Keep the input on the GPU").click();
    settle(&mut h);
    let kept = h.state().view().runs.last().expect("a run").clone();
    assert!(kept.report.phase(Phase::Upload).is_some(), "the first run with the box ticked uploads");
    h.state_mut().settings_mut().convert.formula = Formula::Bt709;
    settle(&mut h);
    let resident = h.state().view().runs.last().expect("a run").clone();
    assert_eq!(resident.settings.formula, Formula::Bt709);
    assert!(resident.report.phase(Phase::Upload).is_none(), "nothing uploaded: {:?}", resident.report.phases);
    assert!(
        resident.report.notes.iter().any(|n| n.contains("already on the GPU")),
        "{:?}",
        resident.report.notes
    );
    let settings = ConvertSettings { formula: Formula::Bt709, ..ConvertSettings::default() };
    assert_eq!(
        h.state().view().output_pixels,
        Some(&engine_gray(&img, &settings)),
        "GPU = CPU from the kept input"
    );

    // Unticked: the next run uploads again.
    h.get_by_label("Keep the input on the GPU").click();
    settle(&mut h);
    let last = h.state().view().runs.last().expect("a run");
    assert!(last.report.phase(Phase::Upload).is_some(), "uploads again once unticked");
}

#[test]
fn single_key_shortcuts_are_ignored_while_typing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, _) = photo(dir.path(), "in.png", 64, 48);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    h.state_mut().settings_mut().view = ViewMode::Flip;
    h.run_steps(2);
    assert!(h.state().view().showing_output);
    let field = h.get_by_role(Role::TextInput);
    field.focus();
    h.run_steps(1);
    h.get_by_role(Role::TextInput).type_text("b");
    h.run_steps(2);
    assert!(h.state().view().showing_output, "typing b in a text field does not flip");
    assert!(h.get_by_role(Role::TextInput).value().is_some_and(|v| v.ends_with('b')), "it types");
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    h.key_press(egui::Key::B);
    h.run_steps(2);
    assert!(!h.state().view().showing_output, "B flips once no text field has focus");
}

#[test]
fn every_window_is_reachable_at_1024x640() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, _) = photo(dir.path(), "in.png", 320, 200);
    let Some(mut h) = harness_sized(Some(path), [1024.0, 640.0]) else { return };
    settle(&mut h);
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1024.0, 640.0));
    let inside = |rect: egui::Rect, what: &str| {
        assert!(screen.contains_rect(rect), "{what} at {rect:?} is off the 1024x640 window");
    };
    for label in
        ["Open…", "Export…", "Size sweep…", "Parity…", "Tutorial claims…", "Run ×10", "Stop", "Ready"]
    {
        inside(h.get_by_label(label).rect(), label);
    }
    // A narrow dock shows one chart at a time, behind tabs.
    h.get_by_label("By workgroup size").click();
    h.run_steps(2);
    inside(h.get_by_label("Try every size").rect(), "Try every size");
    inside(h.get_by_label("Continuous (re-run as soon as a run ends)").rect(), "Continuous");
    for (button, probe) in [
        ("Export…", "Export"),
        ("Size sweep…", "Run sweep"),
        ("Parity…", "Check the open image"),
        ("Tutorial claims…", "Run (quick)"),
    ] {
        h.get_by_label(button).click_accesskit();
        h.run_steps(3);
        let buttons: Vec<egui::Rect> =
            h.get_all_by_label(probe).map(|n| n.rect()).filter(|r| r.height() < 40.0).collect();
        assert!(!buttons.is_empty(), "{probe} shown");
        for r in buttons {
            inside(r, probe);
        }
    }
}

#[test]
fn charts_are_scoped_to_the_open_image() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (first, _) = photo(dir.path(), "first.png", 90, 60);
    let (second, _) = photo(dir.path(), "second.png", 80, 70);
    let Some(mut h) = harness(Some(first)) else { return };
    settle(&mut h);
    h.state_mut().run_conversion(3);
    settle(&mut h);
    let first_runs: Vec<usize> = h.state().view().runs.iter().map(|r| r.seq).collect();
    assert_eq!(h.state().view().charted_runs, first_runs);
    h.state_mut().open(second);
    settle(&mut h);
    let second_id = h.state().view().runs.last().expect("a run").image_id;
    let second_runs: Vec<usize> =
        h.state().view().runs.iter().filter(|r| r.image_id == second_id).map(|r| r.seq).collect();
    assert_eq!(h.state().view().charted_runs, second_runs, "a new image starts a new series");
    h.get_by_label("keep previous image").click();
    h.run_steps(2);
    let both: Vec<usize> = first_runs.iter().chain(&second_runs).copied().collect();
    assert_eq!(h.state().view().charted_runs, both, "the previous image's runs only when asked");
}

#[test]
fn dropping_a_file_opens_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "dropped.png", 50, 40);
    let Some(mut h) = harness(None) else { return };
    settle(&mut h);
    assert!(h.state().view().input_image.is_none());
    h.input_mut().dropped_files.push(Arc::new(Dropped(path)));
    h.step();
    settle(&mut h);
    assert_eq!(h.state().view().input_image, Some(&img));
    let field = h.get_by_role(Role::TextInput).value().unwrap_or_default();
    assert!(field.ends_with("dropped.png"), "the path field names it: {field}");
}

#[test]
fn fit_shows_previews_and_zooming_in_makes_only_visible_tiles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, _) = photo(dir.path(), "big.png", 3000, 2000);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    h.run_steps(3);
    assert!(h.state().view().fitting);
    assert_eq!(h.state().view().detail_tiles, (0, 0), "Fit draws the preview levels only");
    h.get_by_label("1:1").click();
    for _ in 0..10 {
        h.step();
    }
    assert!(!h.state().view().fitting, "zooming ends Fit");
    let (input, output) = h.state().view().detail_tiles;
    // The 3000 x 2000 image has 6 x 4 tiles of 512; a pane of about 480 x 350 points shows at
    // most 2 x 2 of them.
    assert!((1..=4).contains(&input) && (1..=4).contains(&output), "{input} and {output} tiles");
}

#[test]
fn an_unreadable_file_shows_an_error_and_keeps_the_image() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (good, img) = photo(dir.path(), "good.png", 64, 48);
    let bad = dir.path().join("broken.jpg");
    std::fs::write(&bad, b"\xFF\xD8\xFF\xE0 this is not really a JPEG").expect("write");
    let Some(mut h) = harness(Some(good)) else { return };
    settle(&mut h);
    let runs = h.state().view().runs.len();
    h.state_mut().open(bad);
    settle(&mut h);
    let (text, is_error) = h.state().view().message.expect("a message");
    assert!(is_error && text.contains("broken.jpg"), "{text}");
    assert_eq!(h.state().view().input_image, Some(&img), "the old image stays");
    assert!(h.state().view().output_pixels.is_some());
    assert_eq!(h.state().view().runs.len(), runs);
    assert!(h.query_by_label_contains("broken.jpg").is_some(), "the error is on screen");
}

/// Messages sit at the bottom right of the viewer, above the charts, three at most, over none of
/// the viewer's controls (issue 44: over the charts they hid them); the one saying that no file dialog could be shown, and the failed opens,
/// go once a file opens (issue 25: they piled up over the zoom and the image size, and stayed).
#[test]
fn messages_cover_no_control_and_go_once_moot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (good, _) = photo(dir.path(), "good.png", 64, 48);
    let Some(mut h) = harness(Some(good.clone())) else { return };
    settle(&mut h);
    h.state_mut().open_dialog_found_no_service();
    h.run_steps(2);
    assert!(h.query_by_label_contains("No file dialog could be shown").is_some(), "said on screen");
    for i in 0..4 {
        let bad = dir.path().join(format!("broken{i}.jpg"));
        std::fs::write(&bad, b"\xFF\xD8\xFF\xE0 this is not really a JPEG").expect("write");
        h.state_mut().open(bad);
        settle(&mut h);
    }
    h.run_steps(2);
    let shown =
        h.get_all_by_role(Role::Button).filter(|b| b.accesskit_node().label().as_deref() == Some("×"));
    assert_eq!(shown.count(), 3, "three messages at most at once");
    let newest = h.get_by_label_contains("broken3.jpg").rect();
    let dock = h.get_by_label("Where the time goes").rect();
    assert!(
        newest.bottom() <= dock.top() && newest.bottom() > dock.top() - 80.0,
        "in the viewer, right above the charts (at {dock:?}): {newest:?}"
    );
    assert!(newest.right() > 1280.0 - 40.0, "at the right: {newest:?}");
    for control in ["Fit", "1:1", "64 x 48 px", "Side by side"] {
        let r = h.get_by_label(control).rect();
        assert!(!r.intersects(newest), "{control:?} at {r:?} is under a message at {newest:?}");
    }
    h.state_mut().open(good);
    settle(&mut h);
    h.run_steps(2);
    assert!(h.query_by_label_contains("No file dialog could be shown").is_none(), "gone once a file opened");
    assert!(h.query_by_label_contains("broken").is_none(), "and so are the failed opens");
}

#[test]
fn a_truncated_jpeg_opens_with_its_partial_image_and_a_warning_that_stays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (good, _) = photo(dir.path(), "good.png", 64, 48);
    let whole =
        RgbImage::from_fn(64, 400, |x, y| image::Rgb([(x * 3) as u8, (y / 2) as u8, ((x + y) * 5) as u8]));
    let mut bytes = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90)
        .encode_image(&DynamicImage::ImageRgb8(whole))
        .expect("encode");
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let full = dir.path().join("full.jpg");
    std::fs::write(&full, &bytes).expect("write");
    let Some(mut h) = harness(Some(good)) else { return };
    settle(&mut h);
    h.state_mut().open(cut.clone());
    settle(&mut h);
    // The partial image is open: its top rows are the whole file's, the rest gray.
    let shown = h.state().view().input_image.expect("opened").to_rgb8();
    let reference = graylab::io::decode_file(&full, &graylab::io::DecodeOptions::default())
        .expect("whole")
        .image
        .to_rgb8();
    assert_eq!(shown.dimensions(), (64, 400));
    assert_eq!(shown.as_raw()[..64 * 3 * 16], reference.as_raw()[..64 * 3 * 16]);
    assert!(shown.as_raw()[shown.len() - 64 * 3..].iter().all(|&b| b == 128), "missing rows are gray");
    assert!(h.state().view().output_pixels.is_some(), "and converted");
    // A warning, not an error, that names the file and stays after the conversion.
    let warnings: Vec<String> = h.state().view().warnings.iter().map(|w| (*w).to_owned()).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("truncated") && warnings[0].contains("cut.jpg"), "{warnings:?}");
    assert_eq!(h.state().view().message.map(|(_, error)| error), Some(false));
    assert!(
        h.query_by_label_contains("rows decoded, the rest gray").is_some()
            || h.state().view().warnings.len() == 1
    );
    h.run_steps(5);
    assert_eq!(h.state().view().warnings.len(), 1, "it stays");
    h.get_by_role_and_label(Role::Button, "×").click();
    h.run_steps(2);
    assert!(h.state().view().warnings.is_empty(), "until dismissed");
}

#[test]
fn export_writes_the_converted_image_and_never_clobbers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, img) = photo(dir.path(), "in.png", 120, 80);
    let options =
        AppOptions { initial_path: Some(path), gpu_device: GpuDevice::Window, ..AppOptions::default() };
    let Some(mut h) = harness_with(options, [1280.0, 800.0]) else { return };
    h.state_mut().settings_mut().convert.formula = Formula::Linear;
    settle(&mut h);
    let out = dir.path().join("out.png");
    let runs = h.state().view().runs.len();
    h.state_mut().export_to(out.clone(), false);
    settle(&mut h);
    let written = image::open(&out).expect("exported file");
    let settings = ConvertSettings { formula: Formula::Linear, ..ConvertSettings::default() };
    assert_eq!(written, engine_gray(&img, &settings));
    assert!(h.state().view().message.is_some_and(|(t, e)| !e && t.contains("out.png")));
    // An export is listed as an export, with its encode time, never as a run.
    let export = h.state().view().exports.last().expect("the export is listed");
    assert!(export.encode_ns > 0 && export.path == out, "with its encode time: {export:?}");
    assert_eq!(h.state().view().runs.len(), runs, "an export is not a run");

    // A GPU result that stayed on the GPU is downloaded for export.
    h.state_mut().settings_mut().convert.backend = Backend::Gpu;
    settle(&mut h);
    assert!(h.state().view().output_pixels.is_none());
    let gpu_out = dir.path().join("gpu.tif");
    h.state_mut().export_to(gpu_out.clone(), false);
    settle(&mut h);
    assert_eq!(image::open(&gpu_out).expect("exported"), written);

    // An existing file is not replaced without consent.
    std::fs::write(dir.path().join("taken.png"), b"keep").expect("write");
    h.state_mut().export_to(dir.path().join("taken.png"), false);
    settle(&mut h);
    assert!(h.state().view().message.is_some_and(|(t, e)| e && t.contains("taken.png")));
    assert_eq!(std::fs::read(dir.path().join("taken.png")).expect("read"), b"keep");
}

/// The export window's "Replace it?" holds for the file and format it was asked of: a format
/// that contradicts the name drops it and writes nothing, as does typing another name (a TIFF
/// was once written into a `.png` so).
#[test]
fn replacing_a_file_holds_only_for_what_was_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, _) = photo(dir.path(), "in.png", 60, 40);
    let Some(mut h) = harness(Some(path.clone())) else { return };
    settle(&mut h);
    let taken = dir.path().join("taken.png");
    std::fs::write(&taken, b"keep").expect("write");
    h.state_mut().open_export_window_on(&taken);
    h.run_steps(4);
    h.get_by_role_and_label(Role::Button, "Export").click();
    h.run_steps(4);
    let asked = |h: &egui_kittest::Harness<'_, graylab::app::GraylabApp>| {
        h.query_by_label_contains("This file exists. Replace it?").is_some()
    };
    let field = h.query_by_role_and_label(Role::TextInput, "File").and_then(|n| n.value());
    assert!(asked(&h), "asks first: {field:?} {:?}", h.state().view().message);
    h.state_mut().settings_mut().export.format = Some(graylab::io::ExportFormat::Tiff);
    h.run_steps(2);
    assert!(!asked(&h) && h.query_by_label("Replace").is_none(), "another format: no longer asked");
    assert!(h.query_by_label_contains("contradicts the name").is_some(), "the window says why");
    h.state_mut().settings_mut().export.format = None;
    h.run_steps(2);
    h.get_by_role_and_label(Role::Button, "Export").click();
    h.run_steps(2);
    assert!(asked(&h), "asked again for the PNG");
    h.get_by_role_and_label(Role::TextInput, "File").focus();
    h.run_steps(1);
    h.key_press(egui::Key::End);
    h.get_by_role_and_label(Role::TextInput, "File").type_text("x.png");
    h.run_steps(2);
    assert!(!asked(&h), "another name: no longer asked");
    settle(&mut h);
    assert_eq!(std::fs::read(&taken).expect("read"), b"keep", "nothing written over it");

    // The photo open now is never replaced by its own result: the window says so and offers no
    // Export, and an export asked of it anyway (with consent, spelt another way) writes nothing.
    let original = std::fs::read(&path).expect("read the photo");
    let spelt = dir.path().join(".").join("in.png");
    h.state_mut().open_export_window_on(&spelt);
    h.run_steps(3);
    h.get_by_label_contains("That is the photo open now");
    assert!(
        h.query_by_role_and_label(Role::Button, "Export").is_none_or(|b| b.accesskit_node().is_disabled())
    );
    h.state_mut().export_to(spelt, true);
    settle(&mut h);
    assert!(h.state().view().message.is_some_and(|(t, e)| e && t.contains("would replace the photo")));
    assert_eq!(std::fs::read(&path).expect("read"), original, "the original kept");
}

#[test]
fn sweep_panel_runs_and_draws_every_series() {
    let Some(mut h) = harness(None) else { return };
    let gpu = common::gpu().expect("checked by harness");
    settle(&mut h);
    h.get_by_label("Size sweep…").click();
    h.run_steps(2);
    h.state_mut().set_sweep_sizes("0.01, 0.05, 0.002", 2);
    h.run_steps(2);
    h.get_by_label("Run sweep").click();
    settle(&mut h);
    let result = h.state().view().sweep.expect("a sweep finished").clone();
    let sizes: Vec<f64> = result.points.iter().map(|p| p.megapixels).collect();
    assert_eq!(sizes.len(), 3);
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    for p in &result.points {
        assert_eq!(p.series.len(), 5, "every series at {} MP", p.megapixels);
    }
    // The verdict says what this adapter is, whatever it is.
    assert_eq!(result.software_adapter, gpu.is_software());
    assert_eq!(result.verdict.contains("software adapter"), gpu.is_software(), "{}", result.verdict);
    h.run_steps(3);
    for series in graylab::engine::sweep::Series::ALL {
        assert!(h.query_by_label_contains(series.label()).is_some(), "legend shows {}", series.label());
    }
    assert!(h.query_by_label_contains(&result.verdict).is_some(), "the verdict is on screen");

    // Saved atomically with the usual mode, and never over a file without consent.
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("sweep.json");
    h.state_mut().set_sweep_json_path(&json);
    h.run_steps(2);
    h.get_by_label("Save").click();
    h.run_steps(2);
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("saved")).expect("JSON");
    assert_eq!(saved["points"].as_array().map(Vec::len), Some(3));
    assert_eq!((saved["schema"].as_u64(), saved["kind"].as_str()), (Some(1), Some("sweep")), "stamped");
    assert_eq!(saved["provenance"]["adapter"]["name"].as_str(), Some(gpu.adapter_info().name.as_str()));
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| u32::from_str_radix(v.trim(), 8)))
        })
        .and_then(Result::ok);
    if let Some(umask) = umask {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&json).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask, "mode {mode:o} with umask {umask:o}");
    }
    std::fs::write(&json, b"mine").expect("write");
    h.get_by_label("Save").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("This file exists. Replace it?").is_some(), "asks first");
    h.get_by_label("Keep it").click();
    h.run_steps(2);
    assert_eq!(std::fs::read(&json).expect("read"), b"mine", "kept");
    h.get_by_label("Save").click();
    h.run_steps(2);
    h.get_by_label("Replace").click();
    h.run_steps(2);
    assert!(std::fs::read(&json).expect("read").starts_with(b"{"), "replaced when asked");
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
    let report = h.state().view().parity.expect("a parity report");
    let d = report.cpu_vs_gpu.expect("the GPU ran");
    assert_eq!((d.differing, d.max_diff, d.pixels), (0, 0, 97 * 61));
    assert!(report.formulas.iter().all(|(_, _, f)| f.differing > 0), "the formulas do differ");
    h.run_steps(2);
    assert!(h.query_by_label_contains("0 of 5,917").is_some(), "shown on screen");
    assert!(h.query_by_label("0 of 255 levels").is_some(), "the largest difference on its 8-bit scale");
    // Another image opened: the results stay, named as another image's, until it is checked.
    let (other, _) = photo(dir.path(), "other.png", 40, 30);
    h.state_mut().open(other);
    settle(&mut h);
    let stale = "These results are of in.png, opened before: check the open image for its own.";
    assert!(h.query_by_label(stale).is_some(), "the results say whose they are");
    h.get_by_label("Check the open image").click();
    settle(&mut h);
    assert!(h.query_by_label(stale).is_none() && h.query_by_label_contains("0 of 1,200").is_some());
}

#[test]
fn parity_window_says_a_16_bit_difference_on_its_scale() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("in16.png");
    let img = DynamicImage::ImageRgb16(common::photo(64, 40).to_rgb16());
    img.save(&path).expect("save");
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    h.get_by_label("Parity…").click();
    h.run_steps(2);
    h.get_by_label("Check the open image").click();
    settle(&mut h);
    let report = h.state().view().parity.expect("a parity report").clone();
    let d = report.cpu_vs_gpu.expect("the GPU ran");
    assert_eq!((d.max_diff, d.top_level), (0, 65535), "16-bit outputs: {d:?}");
    h.run_steps(2);
    assert!(h.query_by_label("0 of 65535 levels").is_some(), "CPU vs GPU on the 16-bit scale");
    for (a, b, f) in &report.formulas {
        assert_eq!(f.top_level, 65535, "{a} vs {b}");
        let shown = format!("{} of 65535 levels", f.max_diff);
        assert!(f.max_diff > 255 && h.query_by_label(&shown).is_some(), "{a} vs {b}: {shown}");
    }
}

#[test]
fn main_window_snapshot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness::gradient_app(dir.path()) else { return };
    // No timings on screen: they differ from run to run.
    h.get_by_label("Clear").click();
    h.remove_cursor();
    h.run_steps(3);
    assert_eq!(
        h.get_all_by_label_contains("No run on this image yet").count(),
        2,
        "both run charts are empty"
    );
    harness::mask_what_machines_differ_in(&mut h);
    h.snapshot("main_window_1280x720");
}
