//! The synthetic work per pixel in the settings panel: the "Work per pixel" control (rounds and
//! the divergent toggle) and the line the Last run panel gives of a run's work.

use egui::Ui;

use crate::app::state::{RunRecord, work_label};
use crate::engine::{Phase, Work, WorkFigures};

/// The work levels offered, in rounds per pixel: 0 (the plain grayscale), then ×4 up to 4096.
pub const WORK_LEVELS: [u32; 8] = [0, 1, 4, 16, 64, 256, 1024, 4096];

/// Why the knob is there and what it does, on hover.
const WORK_HOVER: &str = "Synthetic work, like mixbench's kernel: after the formula, each pixel runs \
    this many rounds of an integer hash, 3 operations per round (shift, xor, multiply). It is a \
    knob on arithmetic intensity (operations per byte moved), to see from how much work per byte \
    the GPU wins over the CPU. The image stays the exact grayscale: the hash is masked out \
    (mask 0); only the time changes.";

/// The divergent toggle's hover.
const DIVERGENT_HOVER: &str = "Only pixels whose gray value is odd run the rounds; the others run \
    none. The tutorial's warning about complex branching: on a GPU the threads of a workgroup \
    that skip the rounds wait for those that run them. Compare with half the rounds for every \
    pixel.";

/// "0 (plain grayscale)", "256 rounds".
fn level_name(rounds: u32) -> String {
    match rounds {
        0 => "0 (plain grayscale)".to_owned(),
        1 => "1 round".to_owned(),
        k => format!("{k} rounds"),
    }
}

/// The "Work per pixel" control: a combo of [`WORK_LEVELS`] and the divergent toggle. It sets
/// the work of the next runs; the mask stays 0, so the image stays the exact grayscale.
pub fn work_ui(ui: &mut Ui, work: &mut Work) {
    egui::ComboBox::from_label("Work per pixel")
        .selected_text(level_name(work.rounds))
        .show_ui(ui, |ui| {
            for k in WORK_LEVELS {
                ui.selectable_value(&mut work.rounds, k, level_name(k));
            }
        })
        .response
        .on_hover_text(WORK_HOVER);
    ui.add_enabled(work.rounds > 0, egui::Checkbox::new(&mut work.divergent, "divergent (odd grays only)"))
        .on_hover_text(DIVERGENT_HOVER)
        .on_disabled_hover_text("At 0 rounds there is no work to branch around.");
    work.mask = 0;
}

/// "192 ops/byte", "0.75 ops/byte".
fn ops_per_byte(ops: f64) -> String {
    if ops >= 10.0 { format!("{ops:.0} ops/byte") } else { format!("{ops:.2} ops/byte") }
}

/// "12.3 Gop/s", "850 Mop/s".
#[must_use]
pub fn ops_per_s(rate: f64) -> String {
    match rate {
        r if r >= 100e9 => format!("{:.0} Gop/s", r / 1e9),
        r if r >= 1e9 => format!("{:.1} Gop/s", r / 1e9),
        r => format!("{:.0} Mop/s", r / 1e6),
    }
}

/// The run's share of this machine's compute ceiling ("41% of compute"), where the engine held
/// the run against one (the ceilings are measured with the bandwidth ones, or by
/// `graylab info --probe`).
#[must_use]
pub fn compute_share(figures: &WorkFigures) -> Option<String> {
    let share = figures.compute_share?;
    Some(if share > 1.05 {
        ">100% of compute (the ceiling was measured low)".to_owned()
    } else {
        format!("{:.0}% of compute", share * 100.0)
    })
}

/// The work line of a run: "256 rounds/px (synthetic) · 192 ops/byte · 12.3 Gop/s [gpu-ts]",
/// with the whole sentence on hover; `None` for the plain grayscale.
#[must_use]
pub fn work_line(run: &RunRecord) -> Option<(String, String)> {
    let figures = &run.report.work;
    let rounds = work_label(figures.work())?;
    let mut parts = vec![format!("{rounds} (synthetic)"), ops_per_byte(figures.ops_per_byte)];
    // The rate is the kernel phase's: its clock is that phase's.
    let clock = run.report.phase(Phase::Kernel).map(|p| p.source.short_label());
    if let (Some(rate), Some(clock)) = (figures.kernel_ops_per_s, clock) {
        parts.push(format!("{} [{clock}]", ops_per_s(rate)));
    }
    parts.extend(compute_share(figures));
    let hover = format!(
        "{}.\n{} integer operations per pixel over the bytes the kernel reads and writes; the \
         operations per second are over the kernel phase. Synthetic: the image stays the exact \
         grayscale.",
        figures.sentence(),
        figures.ops_per_pixel
    );
    Some((parts.join(" · "), hover))
}

/// The Last run panel's work line, under the run's title, when the run had work.
pub fn last_run_work_ui(ui: &mut Ui, run: &RunRecord) {
    if let Some((line, hover)) = work_line(run) {
        ui.label(format!("work: {line}")).on_hover_text(hover);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_named_only_when_there_is_some() {
        assert_eq!(work_label(Work::NONE), None);
        assert_eq!(work_label(Work { rounds: 256, ..Work::NONE }).as_deref(), Some("256 rounds/px"));
        assert_eq!(
            work_label(Work { rounds: 4, divergent: true, mask: 0 }).as_deref(),
            Some("4 rounds/px, odd grays only")
        );
        assert_eq!(ops_per_byte(192.0), "192 ops/byte");
        assert_eq!(ops_per_byte(0.75), "0.75 ops/byte");
        assert_eq!(ops_per_s(12.34e9), "12.3 Gop/s");
        assert_eq!(ops_per_s(850e6), "850 Mop/s");
        assert_eq!(ops_per_s(1234e9), "1234 Gop/s");
        assert!(WORK_LEVELS.windows(2).all(|w| w[0] < w[1]) && WORK_LEVELS[0] == 0);
        let held = |share| WorkFigures { compute_share: share, ..WorkFigures::default() };
        assert_eq!(compute_share(&held(None)), None);
        assert_eq!(compute_share(&held(Some(0.41))).as_deref(), Some("41% of compute"));
        assert!(compute_share(&held(Some(1.3))).is_some_and(|s| s.starts_with(">100%")));
    }
}
