//! The run history and the state that survives, in the real app under `egui_kittest`: an
//! export is listed apart and never replaces the last run, run numbers agree between the panel
//! and the chart, Esc stops work before it closes the top window, the layout a smaller window
//! left in egui's memory is clamped to the new window, and ← → step through the folder, which
//! the input's caption counts ("2 of 3 in its folder").

use crate::common;

use std::path::{Path, PathBuf};

use crate::harness::{harness, harness_restored, harness_sized, settle};
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use graylab::app::OpenWindows;
use graylab::engine::Phase;

fn photo(dir: &Path, name: &str, w: u32, h: u32) -> PathBuf {
    let path = dir.join(name);
    common::photo(w, h).save(&path).expect("save");
    path
}

/// Whether the last frame painted a text containing `needle` (the viewer's captions are painted,
/// not widgets).
fn painted(h: &egui_kittest::Harness<'_, graylab::app::GraylabApp>, needle: &str) -> bool {
    fn any(shape: &egui::Shape, needle: &str) -> bool {
        match shape {
            egui::Shape::Vec(shapes) => shapes.iter().any(|s| any(s, needle)),
            egui::Shape::Text(t) => t.galley.text().contains(needle),
            _ => false,
        }
    }
    h.output().shapes.iter().any(|c| any(&c.shape, needle))
}

#[test]
fn an_export_is_listed_apart_and_last_run_keeps_the_conversion() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = photo(dir.path(), "in.png", 160, 100);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    h.state_mut().run_conversion(2);
    settle(&mut h);
    let runs: Vec<usize> = h.state().view().runs.iter().map(|r| r.seq).collect();
    let last = *runs.last().expect("runs");
    h.state_mut().export_to(dir.path().join("out.png"), false);
    settle(&mut h);
    h.run_steps(2);
    assert_eq!(h.state().view().runs.iter().map(|r| r.seq).collect::<Vec<_>>(), runs, "no run added");
    assert_eq!(h.state().view().exports.len(), 1);
    assert_eq!(h.state().view().exports[0].seq, 1, "exports are numbered apart");
    assert_eq!(h.state().view().charted_runs, runs, "the chart shows conversions only");
    // Last run still shows the conversion, with its kernel.
    assert!(h.state().view().runs.last().is_some_and(|r| r.report.phase(Phase::Kernel).is_some()));
    h.get_by_label_contains(&format!("run {last}: CPU"));
    h.get_by_label("Exports");
    h.get_by_label_contains("export 1: out.png");
    assert!(painted(&h, "export 1 (PNG)"), "the dock's header names this image's export");
    // A photo opened next is not said to have been exported.
    h.state_mut().open(photo(dir.path(), "next.png", 120, 90));
    settle(&mut h);
    h.run_steps(2);
    assert!(!painted(&h, "export 1 (PNG)"), "another image's export is not this one's");
}

#[test]
fn run_numbers_agree_between_the_panel_and_the_chart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = photo(dir.path(), "first.png", 90, 60);
    let second = photo(dir.path(), "second.png", 80, 70);
    let Some(mut h) = harness(Some(first)) else { return };
    settle(&mut h);
    h.state_mut().run_conversion(2);
    settle(&mut h);
    h.state_mut().open(second);
    settle(&mut h);
    h.run_steps(2);
    let second_runs: Vec<usize> = h.state().view().charted_runs;
    let last = h.state().view().runs.last().expect("a run").seq;
    assert_eq!(second_runs, vec![last], "the new image's first run, at its own number");
    // The panel names the same number the chart puts the bar at.
    h.get_by_label_contains(&format!("run {last}: CPU"));
    assert!(h.query_by_label_contains("run 1: CPU").is_none(), "not an older image's run");
}

#[test]
fn escape_stops_work_before_it_closes_the_top_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = photo(dir.path(), "in.png", 1200, 900);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    h.state_mut().open_sweep_window();
    h.run_steps(2);
    h.state_mut().open_parity_window();
    h.run_steps(3);
    h.state_mut().settings_mut().repeat = 1000;
    h.run_steps(2);
    h.get_by_label("Run ×1000").click();
    h.run_steps(3);
    assert!(h.state().view().busy);
    h.key_press(egui::Key::Escape);
    settle(&mut h);
    assert!(h.state().view().runs.len() < 1000, "the first Esc stopped the runs");
    assert!(!h.state().view().busy, "nothing left running");
    let open = |export, sweep, parity| OpenWindows { export, sweep, parity };
    assert_eq!(h.state().view().windows_open, open(false, true, true), "and closed no window");
    h.run_steps(2);
    // "after 3 of 1000", or "before the first of 1000 finished" (never "after 0 of").
    let stopped = h.get_by_label_contains("Stopped the runs ").accesskit_node().label().unwrap_or_default();
    assert!(!stopped.contains("after 0 of"), "{stopped}");
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(
        h.state().view().windows_open,
        open(false, true, false),
        "then the parity window, opened last, closed"
    );
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(h.state().view().windows_open, open(false, false, false));
}

#[test]
fn a_layout_left_by_a_small_window_is_clamped_on_relaunch() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = photo(dir.path(), "in.png", 320, 200);
    let Some(mut small) = harness_sized(Some(path.clone()), [1024.0, 640.0]) else { return };
    settle(&mut small);
    // Scroll the settings panel down, as far as it goes.
    small.hover_at(egui::pos2(100.0, 400.0));
    for _ in 0..10 {
        small.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -400.0),
            modifiers: egui::Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        small.step();
    }
    small.run_steps(3);
    let conversion = small.get_by_label("Conversion").rect();
    assert!(conversion.top() < 0.0, "scrolled away: {conversion:?}");
    let memory = small.ctx.memory(Clone::clone);
    drop(small);

    let Some(mut big) = harness_restored(Some(path), [1440.0, 900.0], memory) else { return };
    settle(&mut big);
    big.run_steps(3);
    let conversion = big.get_by_label("Conversion").rect();
    assert!(conversion.top() > 0.0 && conversion.top() < 120.0, "the panel opens at the top: {conversion:?}");
    let backend = big.get_by_label("Backend").rect();
    assert!(backend.bottom() < 900.0, "Backend in sight: {backend:?}");
    // The dock takes its share of the big window, not the height the small one left.
    let dock = big.get_by_label("Where the time goes").rect();
    let status = big.get_by_label("Stop").rect();
    let height = status.top() - dock.top();
    assert!(height > 260.0, "the chart dock is {height} points tall in a 900-point window");
}

#[test]
fn arrow_keys_step_through_the_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = photo(dir.path(), "a.png", 40, 30);
    let b = photo(dir.path(), "b.png", 50, 30);
    let c = photo(dir.path(), "c.png", 60, 30);
    std::fs::write(dir.path().join("b-notes.txt"), b"not an image").expect("write");
    let Some(mut h) = harness(Some(b.clone())) else { return };
    settle(&mut h);
    let at = |h: &egui_kittest::Harness<'_, graylab::app::GraylabApp>| {
        h.state().view().input_path.map(|p| p.file_name().unwrap_or_default().to_owned())
    };
    let name = |p: &Path| p.file_name().map(ToOwned::to_owned);
    h.run_steps(2);
    assert!(painted(&h, "2 of 3 in its folder (arrow keys)"), "the caption says where the image is");
    h.key_press(egui::Key::ArrowRight);
    settle(&mut h);
    assert_eq!(at(&h), name(&c), "→ opens the next image, skipping other files");
    h.run_steps(2);
    assert!(painted(&h, "3 of 3 in its folder") && !painted(&h, "2 of 3"), "and counts on");
    h.key_press(egui::Key::ArrowRight);
    settle(&mut h);
    assert_eq!(at(&h), name(&c), "the last image stays");
    assert!(
        h.state().view().message.is_some_and(|(m, _)| m.contains("last image")),
        "{:?}",
        h.state().view().message
    );
    h.key_press(egui::Key::ArrowLeft);
    settle(&mut h);
    h.key_press(egui::Key::ArrowLeft);
    settle(&mut h);
    assert_eq!(at(&h), name(&a), "← goes back");
    // Not while typing in a text field.
    h.get_by_role(egui::accesskit::Role::TextInput).focus();
    h.run_steps(1);
    h.key_press(egui::Key::ArrowRight);
    settle(&mut h);
    assert_eq!(at(&h), name(&a), "arrows move the text cursor there");
    let _ = b;
}

/// A file that fails to open is stepped past: the next → goes on from it (before, each press
/// tried the same damaged file again, and the images beyond it could not be reached).
#[test]
fn arrow_keys_step_past_a_file_that_cannot_open() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = photo(dir.path(), "a.png", 40, 30);
    let b = photo(dir.path(), "b.png", 300, 200);
    let c = photo(dir.path(), "c.png", 60, 30);
    let bytes = std::fs::read(&b).expect("read");
    std::fs::write(&b, &bytes[..bytes.len() / 2]).expect("cut b.png short");
    let Some(mut h) = harness(Some(a.clone())) else { return };
    settle(&mut h);
    let at = |h: &egui_kittest::Harness<'_, graylab::app::GraylabApp>| {
        h.state().view().input_path.map(Path::to_path_buf)
    };
    h.key_press(egui::Key::ArrowRight);
    settle(&mut h);
    assert_eq!(at(&h), Some(a), "b.png fails: the image on screen stays");
    h.key_press(egui::Key::ArrowRight);
    settle(&mut h);
    assert_eq!(at(&h), Some(c.clone()), "the next → goes on past b.png");
    // A failed file opened by name (typed, dropped, the dialog) is no step: ← and → go on from
    // the image on screen (before, they went on from the failed file: → reopened c.png).
    let last = photo(dir.path(), "d.png", 50, 40);
    h.state_mut().open(b.clone());
    settle(&mut h);
    assert_eq!(at(&h), Some(c), "b.png opened by name fails: c.png stays");
    h.key_press(egui::Key::ArrowRight);
    settle(&mut h);
    assert_eq!(at(&h), Some(last), "→ steps from c.png, on screen");
}

/// Last run quotes the median of the warm runs of its settings on this image, with the fastest
/// and the slowest, once there are three: the cold first run is left out, and a run of other
/// settings starts its own count.
#[test]
fn last_run_quotes_the_median_of_the_warm_runs_of_its_settings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = photo(dir.path(), "in.png", 160, 100);
    let Some(mut h) = harness(Some(path)) else { return };
    settle(&mut h);
    let warm = |h: &egui_kittest::Harness<'_, graylab::app::GraylabApp>| {
        let view = h.state().view();
        let last = view.runs.last().expect("a run");
        view.runs.iter().filter(|r| r.settings == last.settings && !r.cold).count()
    };
    h.state_mut().run_conversion(2);
    settle(&mut h);
    h.run_steps(2);
    assert!(warm(&h) < 3, "{} warm runs", warm(&h));
    assert!(h.query_by_label_contains("warm runs with these settings").is_none(), "too few to quote");
    h.state_mut().run_conversion(3);
    settle(&mut h);
    h.run_steps(2);
    let n = warm(&h);
    assert!(n >= 3, "{n} warm runs");
    let node = h.get_by_label_contains("warm runs with these settings");
    let label = node.accesskit_node().label().or_else(|| node.value()).unwrap_or_default();
    assert!(label.starts_with(&format!("{n} warm runs with these settings: median wall ")), "{label}");
    assert!(label.contains("), kernel ") && label.matches('–').count() == 2, "{label}");
    // Another thread count is other settings: its first run is cold, and nothing is quoted.
    h.state_mut().settings_mut().convert.threads = 1;
    h.state_mut().run_conversion(1);
    settle(&mut h);
    h.run_steps(2);
    assert!(h.query_by_label_contains("warm runs with these settings").is_none(), "a new count");
}
