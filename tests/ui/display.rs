//! How the app meets the screen and the keyboard: Esc that leaves a text field keeps its window.

use std::path::{Path, PathBuf};

use crate::harness::{harness, settle};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use graylab::app::GraylabApp;

/// A small RGB photo written as PNG into `dir`.
fn photo(dir: &Path, name: &str) -> PathBuf {
    let img = image::RgbImage::from_fn(96, 64, |x, y| image::Rgb([(x * 2) as u8, (y * 3) as u8, 90]));
    let path = dir.join(name);
    img.save(&path).expect("save");
    path
}

/// Clicks into the text field labelled `label`, types, then presses Esc: the field lets go and
/// the window stays; a second Esc, with nothing focused, closes it.
fn esc_leaves_the_field(
    h: &mut Harness<'static, GraylabApp>,
    label: &str,
    open: impl Fn(&GraylabApp) -> bool,
) {
    h.get_by_role_and_label(Role::TextInput, label).click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, label).type_text("7");
    h.run_steps(2);
    assert!(h.state().view().input_path.is_some());
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert!(open(h.state()), "Esc in {label} leaves the field, not the window");
    assert!(!h.ctx.text_edit_focused(), "the field let go");
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert!(!open(h.state()), "Esc with nothing focused closes the window");
}

#[test]
fn esc_in_a_windows_text_field_keeps_the_window_open() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness(Some(photo(dir.path(), "in.png"))) else { return };
    settle(&mut h);
    h.state_mut().open_sweep_window();
    h.run_steps(3);
    esc_leaves_the_field(&mut h, "Sizes (MP)", |app| app.view().windows_open.sweep);
    h.state_mut().open_export_window();
    h.run_steps(3);
    esc_leaves_the_field(&mut h, "File", |app| app.view().windows_open.export);
}
