//! The image viewer: input and output with one shared pan/zoom, side by side, as a wipe, or
//! flipped with the B key; nearest-neighbour sampling when zoomed in; a readout of the pixel
//! under the cursor in both images.

use egui::{Color32, Pos2, Rect, Sense, Stroke, Ui, Vec2, pos2, vec2};

use super::session::Session;
use super::state::ViewMode;
use super::textures::DisplayImage;
use crate::engine::Backend;

/// Zoom factor at and above which pixels are drawn sharp.
const NEAREST_FROM_ZOOM: f32 = 2.0;

/// Pan and zoom shared by both images.
#[derive(Clone, Copy, Debug)]
struct ViewState {
    /// Screen points per image pixel.
    pub zoom: f32,
    /// The image point at the centre of each pane.
    pub center: Pos2,
    /// Fit the image on the next frame.
    pub fit_pending: bool,
    /// Wipe position, 0 (all output) to 1 (all input).
    pub wipe: f32,
    /// Flip mode: show the output (else the input).
    pub show_output: bool,
}

impl Default for ViewState {
    fn default() -> Self {
        Self { zoom: 1.0, center: Pos2::ZERO, fit_pending: true, wipe: 0.5, show_output: true }
    }
}

/// The central viewer: pan/zoom state and the image it was fitted to.
#[derive(Default)]
pub struct Viewer {
    view: ViewState,
    /// The image shown last frame (a new one is fitted).
    shown_image: Option<u64>,
}

impl Viewer {
    /// Draws the open image and its output.
    pub fn ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let input_id = session.input().map(|i| i.id);
        if input_id != self.shown_image {
            self.shown_image = input_id;
            self.view.fit_pending = true;
        }
        let output_label = session.output().map_or_else(String::new, |o| {
            let s = o.settings;
            match s.backend {
                Backend::Cpu => format!("Gray: CPU, {}", s.formula),
                Backend::Gpu => format!("Gray: GPU, {}, workgroup {}", s.formula, s.workgroup),
            }
        });
        let input = session.input().cloned();
        let output_pixels = session.output().and_then(|o| o.pixels.clone());
        let on_gpu = session.output().is_some() && output_pixels.is_none();
        let readout = move |x: u32, y: u32| {
            let Some(input) = &input else { return String::new() };
            let p = image::GenericImageView::get_pixel(&input.image, x, y).0;
            let out = match &output_pixels {
                Some(o) => {
                    let q = image::GenericImageView::get_pixel(o.as_ref(), x, y).0;
                    if o.color().has_alpha() {
                        format!("gray {:3} alpha {:3}", q[0], q[3])
                    } else {
                        format!("gray {:3}", q[0])
                    }
                }
                None if on_gpu => "on the GPU (tick \"Download the result\" to read it)".into(),
                None => "not converted yet".into(),
            };
            format!(
                "x {x:5} y {y:5} │ input R {:3} G {:3} B {:3} A {:3} │ output {out}",
                p[0], p[1], p[2], p[3]
            )
        };
        let mut mode = session.settings().view;
        let images = ViewerInput {
            input: session.input().map(|i| &i.display),
            output: session.output().map(|o| &o.display),
            output_label: &output_label,
            readout: &readout,
        };
        viewer_ui(ui, &mut self.view, &mut mode, &images);
        session.settings_mut().view = mode;
    }
}

/// What the viewer needs to draw one frame.
struct ViewerInput<'a> {
    /// The input image as shown.
    pub input: Option<&'a DisplayImage>,
    /// The output image as shown.
    pub output: Option<&'a DisplayImage>,
    /// Caption of the output pane.
    pub output_label: &'a str,
    /// Text for the pixel under the cursor, at image coordinates.
    pub readout: &'a dyn Fn(u32, u32) -> String,
}

/// Draws the viewer and handles pan, zoom, fit and the A/B key.
fn viewer_ui(ui: &mut Ui, view: &mut ViewState, mode: &mut ViewMode, images: &ViewerInput<'_>) {
    let Some(size) = images.input.map(|i| vec2(i.size[0] as f32, i.size[1] as f32)) else {
        empty_ui(ui);
        return;
    };
    toolbar_ui(ui, view, mode, size);
    let readout_height = 22.0;
    let area = ui.available_rect_before_wrap();
    let panes_area = Rect::from_min_max(area.min, pos2(area.max.x, area.max.y - readout_height));
    let panes: Vec<Rect> = match mode {
        ViewMode::SideBySide => {
            let half = (panes_area.width() - 6.0) / 2.0;
            vec![
                Rect::from_min_size(panes_area.min, vec2(half, panes_area.height())),
                Rect::from_min_size(panes_area.min + vec2(half + 6.0, 0.0), vec2(half, panes_area.height())),
            ]
        }
        ViewMode::Wipe | ViewMode::Flip => vec![panes_area],
    };
    if view.fit_pending {
        fit(view, panes[0].size(), size);
    }
    let mut hover_px = None;
    for (i, pane) in panes.iter().enumerate() {
        let response = ui.interact(*pane, ui.scope_id().with(("pane", i)), Sense::click_and_drag());
        interact(ui, view, &response, *pane, size);
        if let Some(p) = response.hover_pos() {
            hover_px = Some(view.center + (p - pane.center()) / view.zoom);
        }
        draw_pane(ui, view, *mode, i, *pane, images);
    }
    if ui.input(|i| i.key_pressed(egui::Key::B)) && *mode == ViewMode::Flip {
        view.show_output = !view.show_output;
    }
    let readout_rect = Rect::from_min_max(pos2(area.min.x, panes_area.max.y), area.max);
    let text = match hover_px {
        Some(p) if p.x >= 0.0 && p.y >= 0.0 && p.x < size.x && p.y < size.y => {
            (images.readout)(p.x as u32, p.y as u32)
        }
        _ => "Hover over the image to read pixel values. Wheel: zoom · drag: pan · double-click: fit".into(),
    };
    ui.put(readout_rect, egui::Label::new(egui::RichText::new(text).monospace()).truncate());
    ui.advance_cursor_after_rect(area);
}

fn empty_ui(ui: &mut Ui) {
    ui.vertical_centered(|ui| {
        ui.add_space(ui.available_height() / 3.0);
        ui.heading("No image open");
        ui.label("Press Ctrl+O, drop an image file on this window, or type a path above and press Enter.");
    });
}

fn toolbar_ui(ui: &mut Ui, view: &mut ViewState, mode: &mut ViewMode, size: Vec2) {
    ui.horizontal(|ui| {
        ui.selectable_value(mode, ViewMode::SideBySide, "Side by side");
        ui.selectable_value(mode, ViewMode::Wipe, "Wipe");
        ui.selectable_value(mode, ViewMode::Flip, "A/B flip")
            .on_hover_text("Shows one image; press B to flip between input and output");
        ui.separator();
        if ui.button("Fit").clicked() {
            view.fit_pending = true;
        }
        if ui.button("1:1").on_hover_text("One image pixel per screen point").clicked() {
            view.zoom = 1.0;
        }
        ui.label(format!("{:.0}%", view.zoom * 100.0));
        match mode {
            ViewMode::Wipe => {
                ui.separator();
                ui.add(egui::Slider::new(&mut view.wipe, 0.0..=1.0).show_value(false).text("wipe"));
            }
            ViewMode::Flip => {
                ui.separator();
                let shown =
                    if view.show_output { "showing OUTPUT (B: input)" } else { "showing INPUT (B: output)" };
                if ui.button(shown).clicked() {
                    view.show_output = !view.show_output;
                }
            }
            ViewMode::SideBySide => {}
        }
        ui.separator();
        ui.label(format!("{} x {} px", size.x, size.y));
    });
}

fn fit(view: &mut ViewState, pane: Vec2, size: Vec2) {
    view.zoom = (pane.x / size.x).min(pane.y / size.y).max(1e-4);
    view.center = (size / 2.0).to_pos2();
    view.fit_pending = false;
}

fn interact(ui: &Ui, view: &mut ViewState, response: &egui::Response, pane: Rect, size: Vec2) {
    if response.dragged() {
        view.center -= response.drag_delta() / view.zoom;
    }
    if response.double_clicked() {
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
        }
    }
}

fn draw_image(ui: &Ui, view: &ViewState, pane: Rect, clip: Rect, image: &DisplayImage) {
    let painter = ui.painter_at(clip);
    let uv = Rect::from_min_max(Pos2::ZERO, pos2(1.0, 1.0));
    for tile in &image.tiles {
        let min = pane.center() + (tile.rect.min - view.center) * view.zoom;
        let rect = Rect::from_min_size(min, tile.rect.size() * view.zoom);
        if rect.intersects(clip) {
            let id = if view.zoom >= NEAREST_FROM_ZOOM { tile.nearest } else { tile.linear };
            painter.image(id, rect, uv, Color32::WHITE);
        }
    }
}

fn draw_pane(ui: &Ui, view: &ViewState, mode: ViewMode, index: usize, pane: Rect, images: &ViewerInput<'_>) {
    ui.painter().rect_filled(pane, 0.0, ui.visuals().extreme_bg_color);
    let caption = |text: &str, at: Pos2| {
        ui.painter().text(at, egui::Align2::LEFT_TOP, text, egui::FontId::proportional(13.0), Color32::WHITE);
    };
    let output_or_note = |clip: Rect| match images.output {
        Some(out) => draw_image(ui, view, pane, clip, out),
        None => {
            ui.painter().text(
                clip.center(),
                egui::Align2::CENTER_CENTER,
                "converting…",
                egui::FontId::proportional(16.0),
                Color32::GRAY,
            );
        }
    };
    let Some(input) = images.input else { return };
    match (mode, index) {
        (ViewMode::SideBySide, 0) => {
            draw_image(ui, view, pane, pane, input);
            caption("Original", pane.min + vec2(6.0, 4.0));
        }
        (ViewMode::SideBySide, _) => {
            output_or_note(pane);
            caption(images.output_label, pane.min + vec2(6.0, 4.0));
        }
        (ViewMode::Wipe, _) => {
            let x = pane.min.x + pane.width() * view.wipe;
            draw_image(ui, view, pane, Rect::from_min_max(pane.min, pos2(x, pane.max.y)), input);
            output_or_note(Rect::from_min_max(pos2(x, pane.min.y), pane.max));
            ui.painter()
                .line_segment([pos2(x, pane.min.y), pos2(x, pane.max.y)], Stroke::new(2.0, Color32::YELLOW));
            caption("Original", pane.min + vec2(6.0, 4.0));
            caption(images.output_label, pos2(x + 6.0, pane.min.y + 22.0));
        }
        (ViewMode::Flip, _) => {
            if view.show_output {
                output_or_note(pane);
                caption(images.output_label, pane.min + vec2(6.0, 4.0));
            } else {
                draw_image(ui, view, pane, pane, input);
                caption("Original", pane.min + vec2(6.0, 4.0));
            }
        }
    }
}
