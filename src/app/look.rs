//! Shared looks: panel frames, colours, text sizes and the spinner.
//!
//! On a software adapter (llvmpipe) every shaded pixel costs: one full-window fill costs more
//! than everything else in a frame. So panels are drawn without a fill and the window is
//! cleared to the panel colour instead (`clear_colour`); only widgets, text, charts and images
//! are shaded.

use egui::{Color32, Frame, Style};

/// Amber for warnings (software adapter, cold run) on the dark theme; [`warning`] picks the
/// colour for the theme shown.
pub const WARNING: Color32 = Color32::from_rgb(230, 160, 40);

/// A darker amber for warnings on the light theme: [`WARNING`] reads at 2.1:1 on its panels.
const WARNING_ON_LIGHT: Color32 = Color32::from_rgb(160, 90, 0);

/// The warnings' colour on `visuals`' theme: at least 4.5:1 against its panels and windows.
#[must_use]
pub fn warning(visuals: &egui::Visuals) -> Color32 {
    if visuals.dark_mode { WARNING } else { WARNING_ON_LIGHT }
}

/// Green for work done (a "Done" message) on the dark theme; [`success`] picks the colour for
/// the theme shown.
const SUCCESS: Color32 = Color32::from_rgb(120, 200, 120);

/// A darker green for work done on the light theme: [`SUCCESS`] reads at 1.9:1 on its panels.
const SUCCESS_ON_LIGHT: Color32 = Color32::from_rgb(20, 120, 45);

/// The colour of work done on `visuals`' theme: at least 4.5:1 against its panels and windows.
#[must_use]
pub fn success(visuals: &egui::Visuals) -> Color32 {
    if visuals.dark_mode { SUCCESS } else { SUCCESS_ON_LIGHT }
}

/// Where the GPU starts to win, on a chart (the size sweep's crossovers, the roofline's
/// crossing), on `visuals`' theme: yellow on the dark one; a dark amber on the light one, where
/// yellow reads at 1.1:1 against a plot. At least 3:1 against plots, panels and windows.
#[must_use]
pub fn crossover(visuals: &egui::Visuals) -> Color32 {
    if visuals.dark_mode { Color32::YELLOW } else { Color32::from_rgb(150, 110, 0) }
}

/// Where the GPU starts to win with the data kept on it, on `visuals`' theme: light blue on the
/// dark one; a deeper blue on the light one, where light blue reads at 2.9:1 against a plot. At
/// least 3:1 against plots, panels and windows.
#[must_use]
pub fn resident_crossover(visuals: &egui::Visuals) -> Color32 {
    if visuals.dark_mode { Color32::LIGHT_BLUE } else { Color32::from_rgb(40, 90, 200) }
}

/// A colour's relative luminance as WCAG 2 defines it: 0 for black, 1 for white.
#[must_use]
pub fn luminance(c: Color32) -> f32 {
    let lin = |c: u8| {
        let c = f32::from(c) / 255.0;
        if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    };
    0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
}

/// The contrast ratio of two opaque colours as WCAG 2 defines it: 1 (the same) to 21 (black on
/// white). Body text wants 4.5, large text and shapes 3.
#[must_use]
pub fn contrast(a: Color32, b: Color32) -> f32 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// The smallest text the app draws, in points: secondary text (legends, notes, column heads)
/// is small, never below this.
pub const SMALL_TEXT: f32 = 11.0;

/// The app's text styles: egui's, with the small style raised to [`SMALL_TEXT`] (egui's 9 points
/// read about 7 pixels tall on a 96-dpi screen); and the system's CJK font as the last fallback
/// of both families ([`add_fallback_font`]).
pub fn set_text_sizes(ctx: &egui::Context) {
    ctx.all_styles_mut(|style| {
        if let Some(font) = style.text_styles.get_mut(&egui::TextStyle::Small) {
            font.size = font.size.max(SMALL_TEXT);
        }
    });
    add_fallback_font(ctx, FALLBACK_FONTS);
}

/// System fonts with the Chinese, Japanese and Korean glyphs that egui's own fonts lack (a file
/// named "日本 旅行.jpg" showed as empty boxes), tried in order: a path and the face's index in
/// a collection. None is bundled: each is several megabytes.
pub const FALLBACK_FONTS: &[(&str, u32)] = &[
    ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 0),
    ("/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc", 0),
    ("/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc", 0),
    ("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf", 0),
    ("/usr/share/fonts/google-droid-sans-fonts/DroidSansFallbackFull.ttf", 0),
    ("/usr/share/fonts/wenquanyi/wqy-microhei/wqy-microhei.ttc", 0),
    ("/System/Library/Fonts/PingFang.ttc", 0),
    ("/System/Library/Fonts/Hiragino Sans GB.ttc", 0),
    ("C:\\Windows\\Fonts\\msyh.ttc", 0),
    ("C:\\Windows\\Fonts\\YuGothM.ttc", 0),
];

/// Adds the first of `candidates` that reads as a font file as the last fallback of the
/// proportional and monospace families, each file read once; returns its path. Nothing when
/// none exists: the glyphs stay boxes, as before.
pub fn add_fallback_font(ctx: &egui::Context, candidates: &[(&str, u32)]) -> Option<std::path::PathBuf> {
    use egui::{FontInsert, FontPriority, InsertFontFamily};
    let (path, index, bytes) = candidates.iter().find_map(|&(path, index)| {
        let bytes = std::fs::read(path).ok()?;
        // Parsed as egui parses it, which panics on a font it cannot read (a damaged file).
        let font = skrifa::FontRef::from_index(&bytes, index).is_ok();
        font.then_some((path, index, bytes))
    })?;
    log::debug!("fallback font for scripts egui lacks: {path} (face {index})");
    let data = egui::FontData { index, ..egui::FontData::from_owned(bytes) };
    let families = [egui::FontFamily::Proportional, egui::FontFamily::Monospace]
        .map(|family| InsertFontFamily { family, priority: FontPriority::Lowest });
    ctx.add_font(FontInsert::new("graylab system fallback", data, families.to_vec()));
    Some(path.into())
}

/// A side or top panel's frame, without a fill (the window's clear colour shows through).
pub fn panel_frame(style: &Style) -> Frame {
    Frame::side_top_panel(style).fill(Color32::TRANSPARENT)
}

/// The central panel's frame, without a fill.
pub fn central_frame(style: &Style) -> Frame {
    Frame::central_panel(style).fill(Color32::TRANSPARENT)
}

/// The window's clear colour: the panel colour of the current theme.
#[must_use]
pub fn clear_colour(visuals: &egui::Visuals) -> [f32; 4] {
    visuals.panel_fill.to_normalized_gamma_f32()
}

/// What a job will take, said before it starts: weak, wrapped and whole (cut short, it hid its
/// figures, and a hover with the whole text stacked a second tooltip on egui's own).
pub fn estimate_line(ui: &mut egui::Ui, text: String) {
    ui.add(egui::Label::new(egui::RichText::new(text).weak()).wrap());
}

/// A busy indicator like egui's spinner, but one that asks for no frame of its own: it turns as
/// often as the window redraws while work runs (`app::redraw_while_working`), where egui's spinner
/// would redraw the window at the screen's rate for as long as it is shown.
pub fn spinner(ui: &mut egui::Ui) -> egui::Response {
    let side = ui.style().spacing.interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(side, side), egui::Sense::hover());
    if ui.is_rect_visible(rect) {
        let radius = rect.height() * 0.5 - 2.0;
        let time = ui.input(|i| i.time);
        let start = time * std::f64::consts::TAU;
        let end = start + 240f64.to_radians() * time.sin();
        let points: Vec<egui::Pos2> = (0..16)
            .map(|i| {
                let angle = egui::emath::lerp(start..=end, f64::from(i) / 16.0);
                let (sin, cos) = angle.sin_cos();
                rect.center() + radius * egui::vec2(cos as f32, sin as f32)
            })
            .collect();
        ui.painter().add(egui::Shape::line(points, egui::Stroke::new(3.0, ui.visuals().strong_text_color())));
    }
    response
}

pub use crate::system::units::{SECONDS_FROM_NS, duration};

/// A chart's time unit for values up to `max_ns`: ("ms", 1e6 ns per unit), or ("s", 1e9) from
/// 10 s on, so that no axis reads "200000 ms".
#[must_use]
pub fn time_unit(max_ns: u64) -> (&'static str, f64) {
    if max_ns >= SECONDS_FROM_NS { ("s", 1e9) } else { ("ms", 1e6) }
}

/// `33,177,600`: digits grouped by thousands.
#[must_use]
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn chart_axes_from_ten_seconds_on_are_in_seconds() {
        assert_eq!(super::time_unit(200_000_000_000), ("s", 1e9));
        assert_eq!(super::time_unit(2_000_000), ("ms", 1e6));
    }

    #[test]
    fn warnings_and_successes_read_and_crossovers_show_on_both_themes() {
        // Text wants 4.5:1, a line on a chart 3:1 (WCAG 2), against every background it is on.
        type Look = fn(&egui::Visuals) -> egui::Color32;
        let looks: [(&str, Look, f32); 4] = [
            ("warning", super::warning, 4.5),
            ("success", super::success, 4.5),
            ("crossover", super::crossover, 3.0),
            ("resident crossover", super::resident_crossover, 3.0),
        ];
        for visuals in [egui::Visuals::dark(), egui::Visuals::light()] {
            for (name, look, least) in looks {
                let colour = look(&visuals);
                for bg in [visuals.panel_fill, visuals.window_fill, visuals.extreme_bg_color] {
                    let ratio = super::contrast(colour, bg);
                    assert!(ratio >= least, "{name} {colour:?} on {bg:?}: {ratio:.2}");
                }
            }
        }
        // The dark theme's colours as they were (its snapshots unchanged).
        let dark = egui::Visuals::dark();
        assert_eq!(super::warning(&dark), super::WARNING);
        assert_eq!(super::success(&dark), egui::Color32::from_rgb(120, 200, 120));
        assert_eq!(super::crossover(&dark), egui::Color32::YELLOW);
        assert_eq!(super::resident_crossover(&dark), egui::Color32::LIGHT_BLUE);
        // What the light theme had before: unreadable on it.
        let light = egui::Visuals::light();
        for old in [egui::Color32::from_rgb(120, 200, 120), egui::Color32::YELLOW, egui::Color32::LIGHT_BLUE]
        {
            assert!(super::contrast(old, light.extreme_bg_color) < 3.0, "{old:?}");
        }
        let black_on_white = super::contrast(egui::Color32::BLACK, egui::Color32::WHITE);
        assert!((black_on_white - 21.0).abs() < 1e-3, "{black_on_white}");
    }

    #[test]
    fn a_missing_or_foreign_fallback_font_is_passed_over() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = dir.path().join("not-a-font.ttf");
        std::fs::write(&text, "plain text").expect("write");
        let text = text.to_string_lossy().into_owned();
        let ctx = egui::Context::default();
        assert_eq!(super::add_fallback_font(&ctx, &[("/no/such/font.ttc", 0), (&text, 0)]), None);
    }

    #[test]
    fn thousands_are_grouped() {
        for (n, text) in [(0, "0"), (999, "999"), (1000, "1,000"), (33_177_600, "33,177,600")] {
            assert_eq!(super::thousands(n), text);
        }
    }
}
