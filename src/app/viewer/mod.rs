//! The image viewer: input and output with one shared pan/zoom, side by side, as a wipe (drag the
//! divider), or flipped with the B key; Fit stays in effect until the user zooms or pans;
//! nearest-neighbour sampling when zoomed in; a readout of the pixel under the cursor in both.

mod panes;

use egui::{Pos2, Rect, Ui, Vec2, pos2, vec2};

use super::session::Session;
use super::state::ViewMode;
use crate::app::textures::TileBudget;
use crate::engine::Backend;

/// New full-resolution tiles made per frame (the rest follow in the next frames).
const TILES_PER_FRAME: u32 = 4;

/// Pan and zoom shared by both images.
#[derive(Clone, Copy, Debug)]
struct ViewState {
    /// Screen points per image pixel (1:1 is 1 / pixels per point).
    zoom: f32,
    /// The image point at the centre of each pane.
    center: Pos2,
    /// Fit is in effect: the image is fitted to the pane every frame until the user zooms or pans.
    fit: bool,
    /// Wipe position, 0 (all output) to 1 (all input), as a share of the pane's width.
    wipe: f32,
    /// Flip mode: show the output (else the input).
    show_output: bool,
}

impl ViewState {
    /// 1:1: one image pixel per physical screen pixel (a point is 1.5 of them at a scale of 1.5,
    /// where one image pixel per point drew image pixels 1 and 2 screen pixels wide in turn).
    fn one_to_one(&mut self, pixels_per_point: f32) {
        self.zoom = 1.0 / pixels_per_point.max(1e-3);
        self.fit = false;
    }
}

impl Default for ViewState {
    fn default() -> Self {
        Self { zoom: 1.0, center: Pos2::ZERO, fit: true, wipe: 0.5, show_output: true }
    }
}

/// The central viewer.
pub struct Viewer {
    view: ViewState,
    /// The image shown last frame (a new one is fitted).
    shown_image: Option<u64>,
    /// The operation of the output shown last frame (a dither newly shown is put at 1:1).
    shown_op: Option<crate::pixel::Op>,
    /// Physical pixels per point when last drawn.
    pixels_per_point: f32,
}

impl Default for Viewer {
    fn default() -> Self {
        Self { view: ViewState::default(), shown_image: None, shown_op: None, pixels_per_point: 1.0 }
    }
}

impl Viewer {
    /// Whether Fit is in effect.
    #[must_use]
    pub fn fitting(&self) -> bool {
        self.view.fit
    }

    /// Flip mode: whether the output is shown (else the input).
    #[must_use]
    pub fn showing_output(&self) -> bool {
        self.view.show_output
    }

    /// Single-key shortcuts (ignored while a text field has focus): B flips, F fits, 1 is 1:1.
    pub fn shortcuts(&mut self, ctx: &egui::Context, mode: ViewMode) {
        if ctx.text_edit_focused() {
            return;
        }
        let (b, f, one) = ctx.input(|i| {
            let plain = i.modifiers.is_none();
            let pressed = |k| plain && i.key_pressed(k);
            (pressed(egui::Key::B), pressed(egui::Key::F), pressed(egui::Key::Num1))
        });
        if b && mode == ViewMode::Flip {
            self.view.show_output = !self.view.show_output;
        }
        if f {
            self.view.fit = true;
        }
        if one {
            self.view.one_to_one(ctx.pixels_per_point());
        }
    }

    /// Screen pixels per image pixel as last drawn (1 at 1:1).
    #[must_use]
    pub fn screen_px_per_image_px(&self) -> f32 {
        self.view.zoom * self.pixels_per_point
    }

    /// Draws the open image and its output.
    pub fn ui(&mut self, ui: &mut Ui, session: &mut Session) {
        self.pixels_per_point = ui.ctx().pixels_per_point();
        let input_id = session.input().map(|i| i.id);
        if input_id != self.shown_image {
            self.shown_image = input_id;
            self.view.fit = true;
        }
        let Some(input) = session.input().cloned() else {
            empty_ui(ui, session.opening());
            return;
        };
        // A dither's pattern is seen only pixel for pixel: a newly shown one is put at 1:1 (F or
        // Fit go back), where any other scale would show its own moiré instead.
        let op = session.output().map(|o| o.settings.op);
        if op != self.shown_op {
            if op == Some(crate::pixel::Op::Dither) {
                self.view.one_to_one(ui.ctx().pixels_per_point());
            }
            self.shown_op = op;
        }
        let size = vec2(input.display.size[0] as f32, input.display.size[1] as f32);
        let mut mode = session.settings().view;
        toolbar_ui(ui, &mut self.view, &mut mode, size);
        session.settings_mut().view = mode;
        let area = ui.available_rect_before_wrap();
        let readout_height = 22.0;
        let panes_area = Rect::from_min_max(area.min, pos2(area.max.x, area.max.y - readout_height));
        let panes: Vec<Rect> = match mode {
            ViewMode::SideBySide => {
                let half = (panes_area.width() - 6.0) / 2.0;
                vec![
                    Rect::from_min_size(panes_area.min, vec2(half, panes_area.height())),
                    Rect::from_min_size(
                        panes_area.min + vec2(half + 6.0, 0.0),
                        vec2(half, panes_area.height()),
                    ),
                ]
            }
            ViewMode::Wipe | ViewMode::Flip => vec![panes_area],
        };
        if self.view.fit {
            fit(&mut self.view, panes[0].size(), size);
        }
        let output = session.output();
        // A conversion held on open for its estimate, or failed, is not under way: the pane says so.
        let pending = if session.converting() { "converting…" } else { "not converted yet (Run)" };
        let converting = session.current_job().is_some();
        let asked = session.settings().convert;
        let caption = output.map_or_else(
            || format!("Gray: {pending}"),
            |o| caption_of(o.settings, asked, converting, o.stored_luma),
        );
        // Where it is in its folder, when there are others to step to.
        let input_caption = match session.folder_place() {
            Some((n, of)) if of > 1 => {
                format!("{} · {n} of {of} in its folder (arrow keys)", input.caption())
            }
            _ => input.caption(),
        };
        let mut budget = TileBudget::new(TILES_PER_FRAME);
        let mut hover_px = None;
        for (i, pane) in panes.iter().enumerate() {
            let response = ui.interact(*pane, ui.scope_id().with(("pane", i)), egui::Sense::click_and_drag());
            interact(ui, &mut self.view, &response, *pane, size);
            let place = placement(ui, &self.view, *pane);
            // The pointer is a physical pixel's corner; the image pixel drawn there is under its centre.
            let half_pixel = egui::Vec2::splat(0.5 / ui.ctx().pixels_per_point());
            if let Some(p) = response.hover_pos() {
                hover_px = Some(place.to_image(p + half_pixel));
            }
            let images = panes::Images {
                input: &input.display,
                input_caption: &input_caption,
                output: output.map(|o| &o.display),
                caption: &caption,
                pending,
            };
            let state = panes::PaneState { wipe: &mut self.view.wipe, show_output: self.view.show_output };
            let at = panes::PaneAt { mode, index: i, rect: *pane };
            panes::draw(ui, state, at, &images, &place, &mut budget);
        }
        if budget.wanted_more {
            ui.ctx().request_repaint();
        }
        let readout_rect = Rect::from_min_max(pos2(area.min.x, panes_area.max.y), area.max);
        let text = match hover_px {
            Some(p) if p.x >= 0.0 && p.y >= 0.0 && p.x < size.x && p.y < size.y => {
                readout(session, p.x as u32, p.y as u32)
            }
            // The whole hint where it fits in one line, else its keys alone (at 1024 px wide the
            // line was cut at "F: f…").
            _ => {
                let full = "Hover over the image to read pixel values. Wheel: zoom · drag: pan · double-click or F: fit · 1: 1:1";
                let chars_fit = readout_rect.width()
                    / ui.fonts_mut(|f| f.glyph_width(&egui::TextStyle::Monospace.resolve(ui.style()), 'x'))
                        .max(1.0);
                if full.chars().count() as f32 <= chars_fit {
                    full.into()
                } else {
                    "Hover: pixel values · wheel: zoom · drag: pan · F: fit · 1: 1:1".into()
                }
            }
        };
        ui.put(readout_rect, egui::Label::new(egui::RichText::new(text).monospace()).truncate());
        ui.advance_cursor_after_rect(area);
    }
}

/// Where the image lies in `pane`: centred on the view's centre, its corner on a whole physical
/// pixel, so that from 1:1 up each image pixel fills whole screen pixels. Side by side, a pane
/// half a pixel off showed one column twice at each 512-px tile seam, and the two panes' pixels
/// out of step.
fn placement(ui: &Ui, view: &ViewState, pane: Rect) -> crate::app::textures::Placement {
    snapped(pane, view, ui.ctx().pixels_per_point())
}

/// [`placement`] at `ppp` physical pixels per point.
fn snapped(pane: Rect, view: &ViewState, ppp: f32) -> crate::app::textures::Placement {
    let corner = pane.center() - view.center.to_vec2() * view.zoom;
    let snapped = pos2((corner.x * ppp).round() / ppp, (corner.y * ppp).round() / ppp);
    crate::app::textures::Placement {
        pane_center: pane.center() + (snapped - corner),
        center: view.center,
        zoom: view.zoom,
        pixels_per_point: ppp,
    }
}

/// The output's caption: the settings `shown` were made with, and when they are not the panel's
/// (`asked`), whether a conversion to those is on its way (`converting`). The luma a JPEG
/// stores (`stored_luma`) was made by no kernel: no backend, workgroup or threads are named.
fn caption_of(
    shown: crate::engine::ConvertSettings,
    asked: crate::engine::ConvertSettings,
    converting: bool,
    stored_luma: bool,
) -> String {
    let what = match shown.backend {
        _ if stored_luma => "Gray: the luma stored in the JPEG, decoded alone (no conversion)".to_owned(),
        Backend::Cpu => {
            format!("Gray: CPU, {}, {}", shown.formula, crate::system::units::count(shown.threads, "thread"))
        }
        Backend::Gpu => format!("Gray: GPU, {}, workgroup {}", shown.formula, shown.workgroup),
    };
    let what = match crate::app::state::work_label(shown.work) {
        Some(work) if !stored_luma => format!("{what}, {work}"),
        _ => what,
    };
    let what = if shown.op.is_none() { what } else { format!("{what}, then {}", shown.op) };
    if shown == asked {
        what
    } else if converting {
        format!("{what} (not the panel's settings: converting…)")
    } else {
        // Stopped, or failed: nothing is on its way.
        format!("{what} (not the panel's settings: press Run)")
    }
}

fn readout(session: &Session, x: u32, y: u32) -> String {
    let Some(input) = session.input() else { return String::new() };
    let out = match session.output() {
        Some(o) => match &o.pixels {
            Some(px) => samples_at(px, x, y),
            None => "on the GPU (tick \"Download the result\" to read it)".into(),
        },
        None => "not converted yet".into(),
    };
    format!("x {x:5} y {y:5} │ input {} │ output {out}", samples_at(&input.image, x, y))
}

/// An image's samples at a pixel (the input's, or the output's gray and alpha), at the image's own
/// depth (16-bit values for 16-bit images).
fn samples_at(image: &image::DynamicImage, col: u32, row: u32) -> String {
    use image::DynamicImage as D;
    let sixteen = |p: &[u16]| match *p {
        [red, green, blue, alpha] => format!("R {red:5} G {green:5} B {blue:5} A {alpha:5} (16-bit)"),
        [red, green, blue] => format!("R {red:5} G {green:5} B {blue:5} (16-bit)"),
        [gray, alpha] => format!("gray {gray:5} alpha {alpha:5} (16-bit)"),
        [gray] => format!("gray {gray:5} (16-bit)"),
        _ => String::new(),
    };
    match image {
        D::ImageRgb16(b) => sixteen(&b.get_pixel(col, row).0),
        D::ImageRgba16(b) => sixteen(&b.get_pixel(col, row).0),
        D::ImageLuma16(b) => sixteen(&b.get_pixel(col, row).0),
        D::ImageLumaA16(b) => sixteen(&b.get_pixel(col, row).0),
        _ => {
            // Only the channels the image has: a JPEG shows no alpha.
            let p = image::GenericImageView::get_pixel(image, col, row).0;
            match (image.color().has_color(), image.color().has_alpha()) {
                (true, true) => format!("R {:3} G {:3} B {:3} A {:3}", p[0], p[1], p[2], p[3]),
                (true, false) => format!("R {:3} G {:3} B {:3}", p[0], p[1], p[2]),
                (false, true) => format!("gray {:3} alpha {:3}", p[0], p[3]),
                (false, false) => format!("gray {:3}", p[0]),
            }
        }
    }
}

fn empty_ui(ui: &mut Ui, opening: Option<&std::path::Path>) {
    ui.vertical_centered(|ui| {
        ui.add_space(ui.available_height() / 3.0);
        if let Some(path) = opening {
            ui.heading(format!("Opening {}…", crate::app::session::file_name(path)));
            ui.add_space(6.0);
            crate::app::look::spinner(ui);
            ui.label("Decoding the file; the image appears as soon as it is ready.");
            return;
        }
        ui.heading("No image open");
        ui.label("Press Ctrl+O, drop an image file on this window, or type a path above and press Enter.");
    });
}

fn toolbar_ui(ui: &mut Ui, view: &mut ViewState, mode: &mut ViewMode, size: Vec2) {
    ui.horizontal(|ui| {
        ui.selectable_value(mode, ViewMode::SideBySide, "Side by side");
        ui.selectable_value(mode, ViewMode::Wipe, "Wipe").on_hover_text("Drag the divider to compare");
        ui.selectable_value(mode, ViewMode::Flip, "A/B flip")
            .on_hover_text("Shows one image; press B to flip between input and output");
        ui.separator();
        if ui
            .selectable_label(view.fit, "Fit")
            .on_hover_text("F or double-click: fit the image to the pane")
            .clicked()
        {
            view.fit = true;
        }
        let pixels_per_point = ui.ctx().pixels_per_point();
        if ui.button("1:1").on_hover_text("1: one image pixel per screen pixel").clicked() {
            view.one_to_one(pixels_per_point);
        }
        // Of the screen's pixels: 100% is 1:1 at any display scale.
        ui.label(format!("{:.0}%", view.zoom * pixels_per_point * 100.0));
        if *mode == ViewMode::Flip {
            ui.separator();
            let shown =
                if view.show_output { "showing OUTPUT (B: input)" } else { "showing INPUT (B: output)" };
            if ui.button(shown).clicked() {
                view.show_output = !view.show_output;
            }
        }
        ui.separator();
        ui.label(format!("{} x {} px", size.x, size.y));
    });
}

fn fit(view: &mut ViewState, pane: Vec2, size: Vec2) {
    view.zoom = (pane.x / size.x).min(pane.y / size.y).max(1e-4);
    view.center = (size / 2.0).to_pos2();
}

fn interact(ui: &Ui, view: &mut ViewState, response: &egui::Response, pane: Rect, size: Vec2) {
    if response.dragged() && response.drag_delta() != Vec2::ZERO {
        view.center -= response.drag_delta() / view.zoom;
        view.fit = false;
    }
    if response.double_clicked() {
        view.fit = true;
        fit(view, pane.size(), size);
    }
    if let Some(cursor) = response.hover_pos() {
        let (scroll, pinch) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
        let factor = (scroll * 0.002).exp() * pinch;
        if (factor - 1.0).abs() > 1e-4 {
            // Keep the image point under the cursor where it is.
            let anchor = view.center + (cursor - pane.center()) / view.zoom;
            view.zoom = (view.zoom * factor).clamp(1e-3, 64.0);
            view.center = anchor - (cursor - pane.center()) / view.zoom;
            view.fit = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use egui::{Rect, pos2};
    use image::{DynamicImage, GrayAlphaImage, GrayImage, LumaA, Rgb, RgbImage, Rgba, RgbaImage};

    #[test]
    fn from_1_to_1_up_every_tile_edge_falls_on_a_whole_physical_pixel() {
        // Side by side at 1440 px, each pane is 562.5 points wide: its centre is half a pixel off.
        let pane = Rect::from_min_max(pos2(307.0, 56.0), pos2(869.5, 506.0));
        for (zoom, ppp, center) in
            [(1.0, 1.0, (10000.0, 1500.0)), (2.0, 1.0, (333.3, 71.9)), (1.0, 1.5, (4097.5, 1.25))]
        {
            let view =
                super::ViewState { zoom, center: pos2(center.0, center.1), ..super::ViewState::default() };
            let place = super::snapped(pane, &view, ppp);
            for edge in [0.0, 512.0, 9728.0, 10240.0] {
                let x =
                    place.to_screen(Rect::from_min_max(pos2(edge, edge), pos2(edge + 1.0, edge + 1.0))).min;
                let px = (x.x * ppp, x.y * ppp);
                assert!((px.0 - px.0.round()).abs() < 1e-3 && (px.1 - px.1.round()).abs() < 1e-3, "{px:?}");
            }
            // Within half a physical pixel of where the view asked, and the readout agrees.
            let asked = pane.center();
            let moved = place.to_screen(Rect::from_min_size(view.center, egui::Vec2::ZERO)).min - asked;
            assert!(moved.x.abs() <= 0.5 / ppp + 1e-4 && moved.y.abs() <= 0.5 / ppp + 1e-4, "{moved:?}");
            assert!(
                (place
                    .to_image(place.to_screen(Rect::from_min_size(pos2(700.0, 9.0), egui::Vec2::ZERO)).min)
                    - pos2(700.0, 9.0))
                .length()
                    < 1e-2
            );
        }
    }

    #[test]
    fn the_readout_shows_only_the_channels_the_input_has() {
        let rgb = DynamicImage::ImageRgb8(RgbImage::from_pixel(2, 2, Rgb([13, 25, 3])));
        assert_eq!(super::samples_at(&rgb, 1, 1), "R  13 G  25 B   3");
        let rgba = DynamicImage::ImageRgba8(RgbaImage::from_pixel(2, 2, Rgba([13, 25, 3, 128])));
        assert_eq!(super::samples_at(&rgba, 0, 1), "R  13 G  25 B   3 A 128");
        let gray = DynamicImage::ImageLuma8(GrayImage::from_pixel(2, 2, image::Luma([7])));
        assert_eq!(super::samples_at(&gray, 1, 0), "gray   7");
        let gray_alpha = DynamicImage::ImageLumaA8(GrayAlphaImage::from_pixel(2, 2, LumaA([7, 9])));
        assert_eq!(super::samples_at(&gray_alpha, 0, 0), "gray   7 alpha   9");
    }

    #[test]
    fn the_output_caption_names_the_work_and_says_when_nothing_is_on_its_way() {
        use super::caption_of;
        use crate::engine::{Backend, ConvertSettings};
        use crate::pixel::Work;
        let plain = ConvertSettings { backend: Backend::Cpu, threads: 2, ..ConvertSettings::default() };
        let heavy = ConvertSettings { work: Work { rounds: 4096, ..Work::NONE }, ..plain };
        assert_eq!(
            caption_of(plain, plain, false, false),
            format!("Gray: CPU, {}, 2 threads", plain.formula)
        );
        assert_eq!(
            caption_of(heavy, heavy, false, false),
            format!("Gray: CPU, {}, 2 threads, 4096 rounds/px", plain.formula)
        );
        // The panel asks for more work: converting while a run is on its way, else stale.
        assert!(caption_of(plain, heavy, true, false).ends_with("(not the panel's settings: converting…)"));
        assert!(caption_of(plain, heavy, false, false).ends_with("(not the panel's settings: press Run)"));
        // The luma a JPEG stores: no kernel, so neither backend nor work is named.
        let luma =
            ConvertSettings { backend: Backend::Gpu, formula: crate::pixel::Formula::StoredLuma, ..heavy };
        assert_eq!(
            caption_of(luma, luma, false, true),
            "Gray: the luma stored in the JPEG, decoded alone (no conversion)"
        );
    }
}
