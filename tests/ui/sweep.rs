//! The size-sweep window holds (issue 17, item 3): with a long legend after "Load to compare",
//! at 1440x900 and at 1024x640, the axis titles and the model's note stay inside the window; the
//! estimate learns from the sweep it timed and drops its caveat; a running sweep leaves the cores
//! to the work (the window redraws a few times a second, not at the screen's rate); the last sweep
//! and its sizes and levels are back after a relaunch (issue 25); the map can be drawn over the
//! blur radius (issue 46).

use crate::{common, harness};

use crate::harness::{harness_restored, harness_sized, settle};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use graylab::system::progress::HoldAt;

const TITLE: &str = "Size sweep: when is the GPU worth it?";

#[test]
fn the_sweep_chart_keeps_its_titles_and_note_after_load_to_compare() {
    for size in [[1440.0, 900.0], [1024.0, 640.0]] {
        let Some(mut h) = harness_sized(None, size) else { return };
        settle(&mut h);
        h.state_mut().set_sweep_sizes("0.01, 0.05, 0.002", 2);
        h.run_steps(2);
        assert!(
            h.query_by_label_contains("a rough guess until a run is seen here").is_some(),
            "before any run the estimate says it is a guess"
        );
        h.get_by_label("Run sweep").click();
        settle(&mut h);
        let result = h.state().view().sweep.expect("a sweep finished").clone();
        h.run_steps(2);
        assert!(
            h.query_by_label_contains("rough guess").is_none()
                && h.query_by_label_contains("from runs seen on this machine").is_some(),
            "after a sweep of both backends the estimate is its pace, without the caveat"
        );
        // Saved, then loaded twice to compare: every series three times in the legend.
        let dir = tempfile::tempdir().expect("temp dir");
        h.state_mut().set_sweep_json_path(&dir.path().join("sweep.json"));
        h.run_steps(2);
        h.get_by_label("Save").click();
        h.run_steps(2);
        for _ in 0..2 {
            h.get_by_label("Load to compare").click();
            h.run_steps(2);
        }
        h.run_steps(3);
        let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, size.into());
        // In a short window the notes fold into one line, for the plot's sake: that line is in
        // the window, and opened, the notes are too (the plot gives way).
        if let Some(notes) = h.query_by_label_contains("Notes on this chart") {
            notes.scroll_to_me();
            h.run_steps(20); // the scroll's animation
            let notes = h.get_by_label_contains("Notes on this chart");
            let (line, window) = (notes.rect(), h.get_by_role_and_label(Role::Window, TITLE).rect());
            assert!(window.contains_rect(line), "{size:?}: the notes' line {line:?} in {window:?}");
            notes.click();
            h.run_steps(3);
        }
        let window = h.get_by_role_and_label(Role::Window, TITLE).rect();
        assert!(screen.expand(1.0).contains_rect(window), "{size:?}: the window {window:?} is on screen");
        let mut labels = vec!["image size, megapixels (log)", "median ms (log)"];
        if result.model.is_some() {
            labels.push("Model from this machine's ceilings (dotted), every step at its ceiling:");
        }
        for label in labels {
            // The notes scroll when the plot has given way all it can: scrolled to, each is seen.
            let mut r = h.get_by_label_contains(label).rect();
            for _ in 0..10 {
                if window.contains_rect(r) {
                    break;
                }
                let node = h.get_by_label_contains(label);
                if r.bottom() > window.bottom() {
                    node.scroll_down();
                } else {
                    node.scroll_up();
                }
                h.run_steps(20); // the scroll's animation
                r = h.get_by_label_contains(label).rect();
            }
            assert!(window.contains_rect(r), "{size:?}: {label:?} at {r:?} inside the window {window:?}");
        }
        // Each legend entry is one widget (its swatch cannot wrap apart from it), all inside.
        let entries: Vec<egui::Rect> = h.get_all_by_label_contains("[sweep.json").map(|n| n.rect()).collect();
        assert!(entries.len() >= 2 * 5, "{size:?}: both comparisons in the legend ({})", entries.len());
        assert!(entries.iter().all(|r| window.contains_rect(*r)), "{size:?}: {entries:?} in {window:?}");
        assert!(h.query_by_label_contains("from never").is_none());
    }
}

/// While a sweep is timed, the window redraws on its own only every
/// `app::redraw_while_working` (a second on a software adapter, a quarter of one elsewhere):
/// no frame asks for the next one at once (egui's spinner did, at
/// the screen's rate, and on lavapipe those frames took the cores the sweep was timed on: its
/// GPU figures came out 3-4x the CLI's). The progress still moves, and Stop still stops.
#[test]
fn a_running_sweep_leaves_the_cores_to_the_work() {
    let Some(mut h) = harness_sized(None, [1440.0, 900.0]) else { return };
    settle(&mut h);
    h.state_mut().set_sweep_sizes("8, 8, 8, 8", 5);
    h.run_steps(2);
    // The sweep waits at its first step until the test lets it go: it runs across every frame
    // below, however fast this machine is.
    h.state_mut().hold_next_job(HoldAt::Step);
    h.get_by_label("Run sweep").click();
    harness::until_held(&mut h);
    assert!(h.state().view().job_progress.is_some_and(|p| p.starts_with("Sweep")), "the sweep is running");
    // The click's own input asks for a frame or two at once, as any input does.
    h.run_steps(3);
    for _ in 0..5 {
        h.step();
        assert!(
            !h.ctx.requested_repaint_last_pass(),
            "a frame during the sweep asked for another at once ({:?}): the window redraws at the screen's rate",
            h.ctx.repaint_causes()
        );
    }
    let per_second = if common::gpu().expect("checked by the harness").is_software() { 1 } else { 4 };
    assert!(
        h.query_by_label_contains(&format!("redrawing {per_second}×/s while work runs")).is_some(),
        "the frame meter says why the window redraws slowly"
    );
    h.get_by_label("Stop").click();
    h.run_steps(2);
    h.state().release_job();
    settle(&mut h);
    assert!(h.state().view().job_progress.is_none(), "Stop ended the sweep");
}

/// Esc with the sweep window open stops the sweep first and says so; the window stays (issue 25:
/// Esc closed the window and left the sweep running). A second Esc, with nothing running, closes
/// the window.
#[test]
fn esc_stops_a_running_sweep_before_it_closes_the_window() {
    let Some(mut h) = harness_sized(None, [1440.0, 900.0]) else { return };
    settle(&mut h);
    h.state_mut().set_sweep_sizes("8, 8, 8, 8", 5);
    h.run_steps(2);
    h.state_mut().hold_next_job(HoldAt::Step);
    h.get_by_label("Run sweep").click();
    harness::until_held(&mut h);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    h.state().release_job();
    settle(&mut h);
    assert!(h.state().view().job_progress.is_none(), "Esc ended the sweep");
    assert!(h.query_by_label_contains("Stopped the sweep").is_some(), "the status bar says it stopped");
    assert!(h.query_by_label(TITLE).is_some(), "the window stays open while Esc stops its work");
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h.query_by_label(TITLE).is_none(), "with nothing running, Esc closes the window");
}

/// The last sweep, and the sizes, runs and work levels it was asked for, are back after a
/// relaunch: egui's memory, serialized as eframe writes it to its storage and read back, given to
/// a new app. (Before, the window said "No sweep yet." after every launch.)
#[test]
fn the_last_sweep_and_its_fields_are_back_after_a_relaunch() {
    let size = [1440.0, 900.0];
    let Some(mut h) = harness_sized(None, size) else { return };
    settle(&mut h);
    h.state_mut().set_sweep_sizes("0.01, 0.002", 1);
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Work per pixel").focus();
    h.run_steps(1);
    h.key_press(egui::Key::End);
    h.get_by_role_and_label(Role::TextInput, "Work per pixel").type_text(", 16");
    h.run_steps(2);
    h.get_by_label("Run sweep").click();
    settle(&mut h);
    h.run_steps(2);
    let result = h.state().view().sweep.expect("a sweep finished").clone();
    assert_eq!(result.work_levels, vec![0, 16]);
    let mut memory = h.ctx.memory(Clone::clone);
    let saved = serde_json::to_string(&memory.data).expect("egui's memory serializes");
    memory.data = serde_json::from_str(&saved).expect("and reads back");
    drop(h);

    let Some(mut h) = harness_restored(None, size, memory) else { return };
    settle(&mut h);
    h.state_mut().open_sweep_window();
    h.run_steps(3);
    assert_eq!(h.state().view().sweep, Some(&result), "the sweep is back");
    assert!(h.query_by_label("No sweep yet.").is_none());
    assert!(h.query_by_label_contains("kept from an earlier launch").is_some(), "and said to be kept");
    assert!(h.query_by_label(&result.verdict).is_some(), "its verdict is on screen");
    // A sweep measured on a busy machine says so in one line, and only then.
    assert_eq!(
        h.query_by_label_contains("Measured on a busy machine (").is_some(),
        result.was_busy(),
        "busy: {:?}",
        result.busy
    );
    let field = |h: &egui_kittest::Harness<'_, graylab::app::GraylabApp>, label: &str| {
        h.get_by_role_and_label(Role::TextInput, label).value()
    };
    assert_eq!(field(&h, "Sizes (MP)").as_deref(), Some("0.01, 0.002"));
    assert_eq!(field(&h, "Work per pixel").as_deref(), Some("0, 16"));
}

/// The map over the blur's radius (issue 46, item 3): "Blur radius" swaps the work field for the
/// radii, the sweep runs blur:R in every cell at 0 rounds, and the sizes chart and the map of who
/// wins are drawn per radius.
#[test]
fn the_map_can_be_drawn_over_the_blur_radius() {
    let Some(mut h) = harness_sized(None, [1440.0, 900.0]) else { return };
    settle(&mut h);
    h.state_mut().open_sweep_window();
    h.run_steps(2);
    h.get_by_label("Blur radius").click();
    h.run_steps(2);
    // The plain sweep's sizes (up to 128 MP) become a grid's, as `graylab sweep --radii` has them.
    let sizes = h.get_by_role_and_label(Role::TextInput, "Sizes (MP)").value();
    assert_eq!(sizes.as_deref(), Some("0.25, 1, 2"));
    h.state_mut().set_sweep_sizes("0.01, 0.02", 1);
    h.run_steps(2);
    assert!(h.query_by_role_and_label(Role::TextInput, "Work per pixel").is_none(), "the radii replace it");
    let field = h.get_by_role_and_label(Role::TextInput, "Radii (px)");
    assert_eq!(field.value().as_deref(), Some("1, 4, 16, 64"));
    field.focus();
    h.run_steps(1);
    h.key_press(egui::Key::End);
    // "1, 4, 16, 64" less its last 10 characters is "1,"; then " 8".
    for _ in 0..10 {
        h.key_press(egui::Key::Backspace);
    }
    h.get_by_role_and_label(Role::TextInput, "Radii (px)").type_text(" 8");
    h.run_steps(2);
    assert_eq!(h.get_by_role_and_label(Role::TextInput, "Radii (px)").value().as_deref(), Some("1, 8"));
    h.get_by_label("Run sweep").click();
    settle(&mut h);
    h.run_steps(2);
    let ops = h.state().view().sweep_sent.expect("a sweep was started").ops.clone();
    assert_eq!(ops.blur_radii, vec![1, 8]);
    let r = h.state().view().sweep.expect("a sweep finished").clone();
    assert_eq!(r.axis, graylab::engine::sweep::GridAxis::BlurRadius);
    assert_eq!(r.grid_levels(), vec![1, 8]);
    let ops_per_pixel: Vec<u64> = r.levels.iter().map(|l| l.op_ops_per_pixel).collect();
    assert_eq!(ops_per_pixel, vec![12, 68], "4 (2R + 1) a pixel");
    assert_eq!(r.points.len(), 4);
    assert!(r.points.iter().all(|p| p.work_rounds == 0 && p.series.len() >= 2), "{:?}", r.points);
    // The sizes chart picks a radius; the map draws one row per radius.
    assert!(h.query_by_label("Blur radius shown").is_some());
    assert!(h.query_by_label("radius 8").is_some());
    h.get_by_label("Who wins").click();
    h.run_steps(3);
    assert!(h.query_by_label_contains("Sweep more than one work level").is_none(), "the map is drawn");
    assert!(h.query_by_label_contains("measured frontier").is_some(), "with its key");
}

#[test]
fn the_sweep_runs_the_operation_chosen_in_every_cell() {
    use graylab::pixel::Op;
    let Some(mut h) = harness_sized(None, [1440.0, 900.0]) else { return };
    settle(&mut h);
    h.state_mut().settings_mut().convert.op = Op::Blur { radius: 2 };
    h.state_mut().set_sweep_sizes("0.01, 0.02", 1);
    h.run_steps(2);
    assert!(
        h.query_by_label_contains("Each cell runs blur:2 after its rounds").is_some(),
        "the window says so"
    );
    h.get_by_label("Run sweep").click();
    settle(&mut h);
    h.run_steps(2);
    let ops = h.state().view().sweep_sent.expect("a sweep was started").ops.clone();
    assert_eq!((ops.op, ops.blur_radii.len()), (Op::Blur { radius: 2 }, 0));
    let r = h.state().view().sweep.expect("a sweep finished").clone();
    assert_eq!(r.points.len(), 2);
    assert!(r.points.iter().all(|p| p.op == Op::Blur { radius: 2 } && p.series.len() >= 2), "{:?}", r.points);
    // Back to none: the cells run the grayscale alone, and the window says nothing of an op.
    h.state_mut().settings_mut().convert.op = Op::None;
    h.run_steps(2);
    assert!(h.query_by_label_contains("Each cell runs").is_none());
}
