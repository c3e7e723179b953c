//! The operation after the grayscale in the settings panel: none, a blur of a chosen radius, or
//! Floyd–Steinberg dither to 1 bit ([`Op`]). Real work per pixel beside the synthetic knob: the
//! blur's grows with its radius, the dither's is a chain each pixel waits on.

use egui::Ui;

use crate::pixel::{MAX_BLUR_RADIUS, MIN_BLUR_RADIUS, Op};

/// What each choice does, on hover.
const OP_HOVER: &str = "An operation on the gray image after the formula, on the same backend, \
    byte-identical on both. Blur: a separable Gaussian in integer arithmetic, 4 × (2R + 1) \
    operations a pixel, every pixel independent (the GPU's kind of work). Dither: Floyd–Steinberg \
    error diffusion to black and white; each pixel waits for its left and upper neighbours, so \
    the GPU can only run it as a wavefront of x + 2y steps (the tutorial's \"sequential \
    operations\"). A GPU run with an operation reads its result back to show it.";

/// The radius a blur starts at when chosen.
const DEFAULT_RADIUS: u32 = 8;

/// The "Operation" control: a combo of none, blur and dither, and the blur's radius.
pub fn op_ui(ui: &mut Ui, op: &mut Op) {
    let name = |op: Op| match op {
        Op::None => "none".to_owned(),
        Op::Blur { .. } => "blur".to_owned(),
        Op::Dither => "dither (1 bit)".to_owned(),
    };
    let radius = match *op {
        Op::Blur { radius } => radius,
        _ => DEFAULT_RADIUS,
    };
    egui::ComboBox::from_label("Operation")
        .selected_text(name(*op))
        .show_ui(ui, |ui| {
            for choice in [Op::None, Op::Blur { radius }, Op::Dither] {
                let selected = std::mem::discriminant(op) == std::mem::discriminant(&choice);
                if ui.selectable_label(selected, name(choice)).clicked() {
                    *op = choice;
                }
            }
        })
        .response
        .on_hover_text(OP_HOVER);
    if let Op::Blur { radius } = op {
        ui.add(
            egui::Slider::new(radius, MIN_BLUR_RADIUS..=MAX_BLUR_RADIUS)
                .logarithmic(true)
                .text("blur radius"),
        )
        .on_hover_text("Taps on each side of the centre: 2R + 1 in each direction");
        ui.label(egui::RichText::new(format!("{} operations a pixel", op.ops_per_pixel())).weak());
    }
}
