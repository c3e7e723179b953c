//! One snapshot per window the app opens on demand (export, size sweep, parity, the tutorial's
//! claims before a run), as egui's demo app keeps one per demo window: a moved or missing
//! control, label or layout fails it. Each window is opened from the top bar over a fixed
//! gradient, with nothing measured on screen; what differs between machines (the temporary path,
//! the adapter, the CPU and the frame meter) is masked, as in `main_window_snapshot` of
//! `tests/ui.rs`.

mod common;
#[path = "common/ui.rs"]
mod ui_common;

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use graylab::app::GraylabApp;
use image::{DynamicImage, RgbImage};
use ui_common::{harness_sized, settle};

/// Opens the gradient, clears the charts, opens the window `button` names and snapshots it as
/// `name`; `mask_in_window` names labels inside the window whose rows differ between machines.
fn window_snapshot(button: &str, name: &str, mask_in_window: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let img = DynamicImage::ImageRgb8(RgbImage::from_fn(640, 400, |x, y| {
        image::Rgb([(x * 255 / 640) as u8, (y * 255 / 400) as u8, ((x + y) % 256) as u8])
    }));
    let path = dir.path().join("gradient.png");
    img.save(&path).expect("save");
    let Some(mut h) = harness_sized(Some(path), [1280.0, 720.0]) else { return };
    settle(&mut h);
    h.get_by_label("Clear").click();
    h.get_by_label(button).click();
    h.remove_cursor();
    h.run_steps(4);
    let mask_row = |h: &mut Harness<'_, GraylabApp>, label: &str, to_x: f32| {
        let r = h.get_by_label_contains(label).rect();
        h.mask(egui::Rect::from_min_max(
            egui::pos2(r.min.x - 2.0, r.min.y - 2.0),
            egui::pos2(to_x, r.max.y + 2.0),
        ));
    };
    for field in h.get_all_by_role(Role::TextInput).map(|f| f.rect()).collect::<Vec<_>>() {
        h.mask(field);
    }
    mask_row(&mut h, "kernel instruction set", 282.0);
    mask_row(&mut h, "build max", 1280.0);
    mask_row(&mut h, "decode", 640.0);
    let adapter = h.get_by_label("GPU adapter").rect();
    h.mask(egui::Rect::from_min_max(egui::pos2(0.0, adapter.max.y), egui::pos2(312.0, 690.0)));
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
