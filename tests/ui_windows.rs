//! One snapshot per window the app opens on demand (export, size sweep, parity, the tutorial's
//! claims before a run), as egui's demo app keeps one per demo window: a moved or missing
//! control, label or layout fails it. Each window is opened from the top bar over a fixed
//! gradient, with nothing measured on screen; what differs between machines (the temporary path,
//! the adapter, the CPU and the frame meter) is masked, as in `main_window_snapshot` of
//! `tests/ui.rs`.

mod common;
#[path = "common/ui.rs"]
mod ui_common;

use egui_kittest::kittest::Queryable as _;

/// Opens the gradient, clears the charts, opens the window `button` names and snapshots it as
/// `name`; `mask_in_window` names labels inside the window whose rows differ between machines.
fn window_snapshot(button: &str, name: &str, mask_in_window: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = ui_common::gradient_app(dir.path()) else { return };
    h.get_by_label("Clear").click();
    h.get_by_label(button).click();
    h.remove_cursor();
    h.run_steps(4);
    ui_common::mask_what_machines_differ_in(&mut h);
    for label in mask_in_window {
        let r = h.get_by_label_contains(label).rect();
        h.mask(r.expand(2.0));
    }
    h.snapshot(name);
}

#[test]
fn export_window_snapshot() {
    window_snapshot("Export…", "export_window_1280x720", &[]);
}

#[test]
fn sweep_window_snapshot() {
    // The estimate of how long the sweep takes depends on the machine.
    window_snapshot("Size sweep…", "sweep_window_1280x720", &["MP in all"]);
}

#[test]
fn parity_window_snapshot() {
    window_snapshot("Parity…", "parity_window_1280x720", &[]);
}

#[test]
fn claims_window_snapshot() {
    // Before a run: nothing measured, the JSON path (next to the photo) masked with the fields.
    window_snapshot("Tutorial claims…", "claims_window_1280x720", &[]);
}
