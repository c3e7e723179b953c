//! The synthetic work per pixel in the settings panel: the "Work per pixel" control (rounds and
//! the divergent toggle) and the line the Last run panel gives of a run's work.

use egui::Ui;

use crate::app::state::{RunRecord, work_label};
use crate::engine::{Phase, WorkFigures};
use crate::pixel::Work;
use crate::system::units::ops_per_s;

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

/// A share (1 = all) of a compute ceiling for a narrow column, as every share of a ceiling is
/// written ([`crate::engine::ceilings::share_label`]).
fn share_label(share: f64) -> String {
    crate::engine::ceilings::share_label(share * 100.0)
}

/// The run's share of this machine's compute ceiling, with that ceiling ("41% of compute (225
/// Gop/s)"), where the engine held the run against one (the ceilings are measured before the
/// first run with work, with the GPU's other ceilings, or by `graylab info --probe`).
#[must_use]
pub fn compute_share(figures: &WorkFigures) -> Option<String> {
    let share = figures.compute_share?;
    let ceiling =
        figures.compute_ceiling_ops_per_s.map_or_else(String::new, |c| format!(" ({})", ops_per_s(c)));
    Some(if share * 100.0 > crate::engine::ceilings::BEATEN_PERCENT {
        format!(">100% of compute{ceiling}: the ceiling was measured low")
    } else {
        format!("{} of compute{ceiling}", share_label(share))
    })
}

/// The ridge point of a roofline, operations per byte: where a memory ceiling of
/// `memory_gb_per_s` stops bounding the work and the compute ceiling of `compute_ops_per_s`
/// starts to.
#[must_use]
pub fn ridge_ops_per_byte(compute_ops_per_s: f64, memory_gb_per_s: f64) -> f64 {
    compute_ops_per_s / (memory_gb_per_s * 1e9).max(f64::MIN_POSITIVE)
}

/// Whether a run's kernel is held against its compute ceiling rather than its memory ceiling of
/// `memory_gb_per_s`. The roofline's rule: the lower roof bounds the kernel, so a run with work
/// per pixel (and a compute share the engine gave it) is compute-bound once its operations per
/// byte reach the ridge point, or when no memory ceiling is known; below the ridge (1 round a
/// pixel, 2.5 ops/byte with the formula's) the memory share stays the meaningful one.
#[must_use]
pub fn compute_bound(figures: &WorkFigures, memory_gb_per_s: Option<f64>) -> bool {
    let (Some(_), Some(compute)) = (figures.compute_share, figures.compute_ceiling_ops_per_s) else {
        return false;
    };
    figures.work_rounds > 0
        && memory_gb_per_s.is_none_or(|m| figures.ops_per_byte >= ridge_ops_per_byte(compute, m))
}

/// The kernel row of Last run for a compute-bound run ([`compute_bound`]): "109 Gop/s · 48%"
/// and its sentence; `None` when the kernel is held against `memory_gb_per_s` instead.
#[must_use]
pub fn kernel_compute_rate(run: &RunRecord, memory_gb_per_s: Option<f64>) -> Option<(String, String)> {
    let f = &run.report.work;
    let (rate, share, ceiling) = (f.kernel_ops_per_s?, f.compute_share?, f.compute_ceiling_ops_per_s?);
    if !compute_bound(f, memory_gb_per_s) {
        return None;
    }
    let backend = run.settings.backend.name().to_uppercase();
    let why = match memory_gb_per_s {
        Some(m) => format!(
            "at {} it is past the ridge point ({}), where the {backend}'s memory ceiling ({}) gives way \
             to its compute ceiling: the kernel is compute-bound",
            ops_per_byte(f.ops_per_byte),
            ops_per_byte(ridge_ops_per_byte(ceiling, m)),
            crate::system::units::gb(m)
        ),
        None => "no memory ceiling is known for this kernel".to_owned(),
    };
    let text = format!("{} · {}", ops_per_s(rate), share_label(share));
    let hover = format!(
        "kernel {}, {} of this machine's {backend} compute ceiling ({}); {why}.",
        ops_per_s(rate),
        share_label(share),
        ops_per_s(ceiling)
    );
    Some((text, hover))
}

/// The work line of a run: "256 rounds/px (synthetic) · 194 ops/byte · 12.3 Gop/s [gpu-ts]",
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
        "{}.\n{} integer operations per pixel of work, and the formula's 7, over the bytes the \
         kernel reads and writes; the operations per second are the work's, over the kernel phase. Synthetic: the image stays the exact \
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
    }

    /// Figures of a run at `rounds` held at `share` of a 225 Gop/s ceiling.
    fn held(rounds: u32, share: Option<f64>) -> WorkFigures {
        WorkFigures {
            work_rounds: rounds,
            ops_per_pixel: 3 * u64::from(rounds),
            ops_per_byte: (3.0 * f64::from(rounds) + 7.0) / 4.0,
            compute_share: share,
            compute_ceiling_ops_per_s: share.map(|_| 225e9),
            ..WorkFigures::default()
        }
    }

    #[test]
    fn the_compute_share_names_its_ceiling() {
        assert_eq!(compute_share(&held(4096, None)), None);
        assert_eq!(compute_share(&held(4096, Some(0.484))).as_deref(), Some("48% of compute (225 Gop/s)"));
        assert_eq!(
            compute_share(&held(4096, Some(1.3))).as_deref(),
            Some(">100% of compute (225 Gop/s): the ceiling was measured low")
        );
        assert_eq!(share_label(0.41), "41%");
        assert_eq!(share_label(1.04), "~100%");
        assert_eq!(share_label(1.06), ">100%");
        assert_eq!(
            (share_label(0.004), share_label(0.0004), share_label(0.0096)),
            ("0.4%".into(), "<0.1%".into(), "1%".into())
        );
    }

    #[test]
    fn the_kernel_is_compute_bound_past_the_ridge_point() {
        // 225 Gop/s over a 20 GB/s memory ceiling: the ridge at 11.25 ops/byte.
        assert!((ridge_ops_per_byte(225e9, 20.0) - 11.25).abs() < 1e-9);
        assert!(compute_bound(&held(4096, Some(0.5)), Some(20.0)), "3073.75 ops/byte");
        assert!(compute_bound(&held(16, Some(0.5)), Some(20.0)), "13.75 ops/byte");
        assert!(!compute_bound(&held(4, Some(0.5)), Some(20.0)), "4.75 ops/byte: memory-bound");
        assert!(!compute_bound(&held(1, Some(0.5)), Some(20.0)), "2.5 ops/byte");
        assert!(compute_bound(&held(1, Some(0.5)), None), "no memory ceiling: the compute one");
        assert!(!compute_bound(&held(4096, None), Some(20.0)), "no compute ceiling known");
        assert!(!compute_bound(&held(0, Some(0.5)), None), "no work");
    }
}
