//! How the app meets the screen and the keyboard: Esc that leaves a text field keeps its window,
//! the light theme's warnings drawn readable, 1:1 at a display scale of 1.5, a file name in
//! Chinese or Japanese drawn with a system font, an 800x600 screen, and the caption of a truncated
//! photo that EXIF orientation turned.

use crate::common;

use std::path::{Path, PathBuf};

use crate::harness::{harness, harness_sized, settle};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use graylab::app::{AppOptions, GraylabApp};

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

#[test]
fn warnings_are_drawn_readable_on_the_light_theme() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness(Some(photo(dir.path(), "in.png"))) else { return };
    h.ctx.set_theme(egui::Theme::Light);
    settle(&mut h);
    h.run_steps(2);
    // The first run's warning (and on a software adapter, the adapter's).
    let warning = h.get_by_label_contains("Cold run (first with these settings)").rect();
    let ppp = h.ctx.pixels_per_point();
    let shot = h.render().expect("render");
    let background = h.ctx.global_style().visuals.panel_fill;
    let luminance = |p: &image::Rgba<u8>| {
        let lin = |c: u8| {
            let c = f32::from(c) / 255.0;
            if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
        };
        0.2126 * lin(p[0]) + 0.7152 * lin(p[1]) + 0.0722 * lin(p[2])
    };
    let bg = luminance(&image::Rgba([background.r(), background.g(), background.b(), 255]));
    // The text's darkest pixel: its stems, drawn in the warning's colour.
    let darkest = (warning.min.y * ppp) as u32..(warning.max.y * ppp) as u32;
    let contrast = darkest
        .flat_map(|y| ((warning.min.x * ppp) as u32..(warning.max.x * ppp) as u32).map(move |x| (x, y)))
        .map(|(x, y)| (bg + 0.05) / (luminance(shot.get_pixel(x, y)) + 0.05))
        .fold(0.0, f32::max);
    // Anti-aliasing leaves the stems a little lighter than the colour's 5:1; the old amber's
    // stems reached 2.2:1 at most.
    assert!(contrast >= 4.0, "the warning's text at {contrast:.2}:1 on the light panel");
}

#[test]
fn one_to_one_is_one_image_pixel_per_screen_pixel_at_a_scale_of_1_5() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let options = AppOptions {
        initial_path: Some(photo(dir.path(), "in.png")),
        fresh_settings: true,
        ..AppOptions::default()
    };
    let mut h = Harness::builder()
        .with_size([1280.0, 800.0])
        .with_pixels_per_point(1.5)
        .wgpu_setup(graylab::app::wgpu_setup())
        .build_eframe(move |cc| GraylabApp::new(cc, options));
    settle(&mut h);
    h.key_press(egui::Key::Num1);
    h.run_steps(2);
    let scale = h.state().view().screen_px_per_image_px;
    assert!((scale - 1.0).abs() < 1e-4, "1 gives {scale} screen pixels per image pixel");
    assert!(h.query_by_label("100%").is_some(), "and says 100%");
    h.key_press(egui::Key::F);
    h.run_steps(2);
    h.get_by_label("1:1").click();
    h.run_steps(2);
    let scale = h.state().view().screen_px_per_image_px;
    assert!((scale - 1.0).abs() < 1e-4, "the 1:1 button gives {scale}");
}

#[test]
fn a_file_name_in_japanese_is_drawn_with_a_system_font() {
    let cjk = [
        "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
        "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    ];
    if !cjk.iter().any(|p| Path::new(p).is_file()) {
        // No CJK font on this system: the app shows boxes, as any app would (CI installs one).
        eprintln!("skipped: no CJK font here ({cjk:?})");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness(Some(photo(dir.path(), "日本 旅行.png"))) else { return };
    settle(&mut h);
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        let font = egui::FontId::new(14.0, family);
        assert!(h.ctx.fonts_mut(|f| f.has_glyphs(&font, "日本旅行")), "{font:?} has the glyphs");
    }
}

#[test]
fn on_an_800x600_screen_the_top_bar_and_the_sweep_window_fit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = harness_sized(Some(photo(dir.path(), "in.png")), [800.0, 600.0]) else { return };
    settle(&mut h);
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(800.0, 600.0));
    for label in ["Open…", "Export…", "Size sweep…", "Tutorial claims…"] {
        let r = h.get_by_label(label).rect();
        assert!(screen.contains_rect(r), "{label} at {r:?} is off the 800x600 window");
    }
    h.get_by_label("Size sweep…").click();
    h.run_steps(4);
    for label in ["Run sweep", "Load to compare"] {
        let r = h.get_by_label(label).rect();
        assert!(screen.contains_rect(r), "{label} at {r:?} is off the 800x600 window");
    }
}

#[test]
fn a_truncated_photo_turned_by_exif_says_its_rows_are_the_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 400x64 as stored, orientation 6: shown 64x400, turned a quarter clockwise.
    let stored = image::RgbImage::from_fn(400, 64, |x, y| {
        image::Rgb([(x / 2) as u8, (y * 3) as u8, ((x + y) * 5) as u8])
    });
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90)
        .encode_image(&image::DynamicImage::ImageRgb8(stored))
        .expect("encode");
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0".to_vec();
    exif.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0]); // orientation, SHORT, 6
    exif.extend_from_slice(&[0, 0, 0, 0]);
    let mut turned = jpeg[..2].to_vec();
    turned.extend_from_slice(&[0xFF, 0xE1]);
    turned.extend_from_slice(&u16::try_from(exif.len() + 2).expect("short").to_be_bytes());
    turned.extend_from_slice(&exif);
    turned.extend_from_slice(&jpeg[2..jpeg.len() / 2]);
    let cut = dir.path().join("turned.jpg");
    std::fs::write(&cut, &turned).expect("write");
    let Some(mut h) = harness(Some(cut)) else { return };
    settle(&mut h);
    let shown = h.state().view().input_image.expect("opened").to_rgb8();
    assert_eq!(shown.dimensions(), (64, 400));
    // The stored rows missing are the shown image's left columns.
    assert!((0..400).all(|y| shown.get_pixel(0, y).0 == [128, 128, 128]), "the left column is gray");
    let caption = h.state().view().input_caption.expect("a caption");
    assert!(caption.contains(" of 64 stored rows decoded (before its rotation), the rest gray"), "{caption}");
}
