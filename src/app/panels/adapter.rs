//! The GPU adapter panel: name, backend, driver, the limits that matter here, timestamps, flags
//! for a software adapter or a debug build, and this machine's ceilings: every step of the GPU
//! path and the compute ceilings of the GPU and the CPU (read from the cache or measured, and
//! measured again on request), and the button that opens the transfer paths.

use egui::{RichText, Ui};

use crate::app::look;
use crate::app::session::Session;

use crate::engine::ceilings::{Ceiling, KnownCeilings};
use crate::engine::{Bandwidth, CpuCompute, GpuContext, SimdLevel};
use crate::system::units::{gb, ops_per_s};

/// Draws the adapter's details (or that there is none) and its ceilings; `true` when the
/// transfer-paths window was asked for.
pub fn adapter_ui(ui: &mut Ui, session: &mut Session) -> bool {
    let gpu = session.gpu().cloned();
    details_ui(ui, gpu.as_deref(), session.gpu_error(), session.own_gpu_device());
    if session.gpu_usable() {
        ui.add_space(6.0);
        ceilings_ui(ui, session);
        return ui
            .button("Transfer paths…")
            .on_hover_text(
                "Every way bytes reach this GPU and come back, timed from 4 KiB up: latency, bandwidth \
                 and n½, the size below which a transfer is mostly its fixed cost",
            )
            .clicked();
    } else if let Some(c) = session.cpu_compute() {
        // Without a GPU the CPU's compute ceiling is the one ceiling measured here.
        ui.add_space(6.0);
        ui.strong("This machine's ceilings");
        egui::Grid::new("ceilings").striped(true).show(ui, |ui| cpu_compute_row(ui, Some(c)));
    }
    false
}

fn details_ui(ui: &mut Ui, gpu: Option<&GpuContext>, gpu_error: Option<&str>, own_device: bool) {
    ui.heading("GPU adapter");
    let Some(gpu) = gpu else {
        ui.colored_label(ui.visuals().error_fg_color, "No GPU: the CPU backend still works.");
        return;
    };
    let info = gpu.adapter_info();
    let limits = gpu.limits();
    let ts = gpu.timestamps();
    // The values end in "…" in a narrow panel (the whole value on hover) rather than widening
    // it: as the last of a known number of columns they get the width that is left.
    egui::Grid::new("adapter").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.add(egui::Label::new(v).truncate());
            ui.end_row();
        };
        row("name", info.name.clone());
        row("backend", info.backend.to_string());
        row("type", format!("{:?}", info.device_type));
        row("driver", format!("{} {}", info.driver, info.driver_info));
        row("storage binding", crate::system::units::human_bytes(limits.max_storage_buffer_binding_size));
        row("max texture", format!("{} px", limits.max_texture_dimension_2d));
        row("invocations", format!("{} per workgroup", limits.max_compute_invocations_per_workgroup));
        let stamps = match (ts.passes, ts.encoders) {
            (true, true) => "kernel and copies",
            (true, false) => "kernel only",
            _ => "none (CPU clock)",
        };
        row("timestamps", format!("{stamps}, {} ns/tick", ts.period_ns));
    });
    let note = if own_device {
        Some(
            "The conversions run on a device of their own, so the window's frames never wait \
             behind them; every result is read back to be shown.",
        )
    } else if gpu.is_software() && ts.passes {
        Some(
            "Its timestamps are not used here: it reads them late once a frame is drawn, so every \
             step is timed on the CPU clock.",
        )
    } else {
        None
    };
    if let Some(note) = note {
        ui.label(RichText::new(note).small().weak());
    }
    if gpu.is_software() {
        ui.colored_label(
            look::warning(ui.visuals()),
            "Software adapter: this \"GPU\" runs on the CPU. Its timings say nothing about real GPUs.",
        );
    }
    if cfg!(debug_assertions) {
        ui.colored_label(
            ui.visuals().error_fg_color,
            "Debug build: timings are meaningless (build with cargo build --release).",
        );
    }
    if let Some(e) = gpu_error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
}

/// The ceilings, where they came from, and a button to measure them (again).
fn ceilings_ui(ui: &mut Ui, session: &mut Session) {
    ui.strong("This machine's ceilings").on_hover_text(
        "The fastest each step of the GPU path runs on this machine, measured with plain copies, \
         and the most integer operations per second the GPU and the CPU do. The last run's \
         phases are shown against them.",
    );
    let measuring = session.measuring_ceilings();
    // The probe's own time where it ran before: about a second on a GPU, several on a busy
    // software adapter.
    let takes = session.ceilings().map_or_else(
        || "a few seconds".to_owned(),
        |k| format!("{:.1} s the last time", k.ceilings.probe_ns as f64 / 1e9),
    );
    if let Some(k) = session.ceilings() {
        known_ui(ui, k, session.cpu_compute());
    } else {
        if measuring {
            ui.horizontal(|ui| {
                crate::app::look::spinner(ui);
                ui.label("measuring (a few seconds)…");
            });
        } else {
            ui.label("Not measured yet on this adapter.");
        }
        // The CPU's compute ceiling may be known before the GPU's (a CPU run with work).
        if let Some(c) = session.cpu_compute() {
            egui::Grid::new("ceilings").striped(true).show(ui, |ui| cpu_compute_row(ui, Some(c)));
        }
    }
    if let Some(e) = session.ceilings_error() {
        ui.colored_label(ui.visuals().error_fg_color, format!("Could not measure them: {e}"));
    }
    if session.ceilings_stopped() && !measuring {
        let kept = if session.ceilings().is_some() {
            "the ceilings measured before are kept"
        } else {
            "none are known"
        };
        ui.label(RichText::new(format!("Stopped before the end: {kept}.")).weak());
    }
    if let Some(e) = session.cpu_compute_error() {
        ui.colored_label(ui.visuals().error_fg_color, format!("Could not measure the CPU's compute: {e}"));
    }
    let label = if session.ceilings().is_some() { "Measure again" } else { "Measure now" };
    let button = ui.add_enabled(!measuring, egui::Button::new(label)).on_hover_text(format!(
        "Runs the copies and the GPU's compute kernel again ({takes}), then the CPU's compute \
         kernel (a fraction of a second), and keeps the results for this adapter and CPU"
    ));
    if button.clicked() {
        session.measure_ceilings(true);
    }
}

/// The two compute rows' hover: what the kernel does.
const COMPUTE_HOVER: &str = "Hash rounds in registers, 3 integer operations each (shift, xor, \
    multiply), no memory traffic: the most the work per pixel can run at";

/// A row of the ceilings' grid: its name (`what` it is on hover), the figure and its clock.
fn ceiling_row(ui: &mut Ui, name: &str, what: &str, figure: String, clock: &str) {
    ui.label(name).on_hover_text(what);
    ui.label(RichText::new(figure).monospace());
    ui.label(RichText::new(clock).weak());
    ui.end_row();
}

/// A compute ceiling's row before it is measured: `when` it will be.
fn not_measured_row(ui: &mut Ui, name: &str, when: &str) {
    ui.label(name).on_hover_text(COMPUTE_HOVER);
    ui.label(RichText::new("not measured yet").weak()).on_hover_text(when);
    ui.end_row();
}

/// The CPU's compute ceiling as a row of the ceilings' grid (or that it is not measured yet).
fn cpu_compute_row(ui: &mut Ui, cpu: Option<&CpuCompute>) {
    let Some(c) = cpu else {
        let when = "Measured before the first run with work per pixel, or with Measure again";
        return not_measured_row(ui, "CPU compute", when);
    };
    let what = format!("{COMPUTE_HOVER}; on {} threads with {}", c.threads, SimdLevel::name(c.simd));
    ceiling_row(ui, "CPU compute", &what, ops_per_s(c.ops_per_s()), "cpu-clock");
}

fn known_ui(ui: &mut Ui, k: &KnownCeilings, cpu: Option<&CpuCompute>) {
    let c = &k.ceilings;
    egui::Grid::new("ceilings").striped(true).show(ui, |ui| {
        let mut row = |name: &str, b: &Bandwidth, what: &str| {
            ceiling_row(ui, name, what, gb(b.gb_per_s()), b.clock.label());
        };
        for step in Ceiling::STEPS {
            if let Some(b) = step.step(c) {
                // The app's font has no arrows: "host→staging" reads "host to staging".
                row(&step.name().replace('→', " to "), b, step.what(c));
            }
        }
        row("host memcpy", &c.host_memcpy, "reference: a plain parallel memcpy on the same threads");
        if let Some(k) = &c.plain_kernel {
            let what = "graylab's grayscale kernel on data kept on the GPU, read + write counted: \
                        what estimates price a kernel at before one is seen";
            row("plain kernel", k, what);
        }
        let latency = crate::app::look::duration(c.submit_latency_ns);
        let what = "Submit-and-wait of a 4 KiB copy: the fixed cost of one submission";
        ceiling_row(ui, "submit latency", what, latency, "cpu-clock");
        if let Some(g) = &c.compute {
            ceiling_row(ui, "GPU compute", COMPUTE_HOVER, ops_per_s(g.ops_per_s()), g.clock.label());
        } else {
            let when = "Measured before the first GPU run with work per pixel, or with Measure again";
            not_measured_row(ui, "GPU compute", when);
        }
        cpu_compute_row(ui, cpu);
    });
    let (when, kept) = if k.origin.measured_now {
        ("in this session".to_owned(), "")
    } else {
        (format!("earlier ({})", k.origin.measured_ago()), "; kept for this adapter")
    };
    let seconds = c.probe_ns as f64 / 1e9;
    let origin = format!("Measured {when} in {seconds:.2} s on {} threads{kept}.", c.host_threads);
    ui.label(RichText::new(origin).small().weak());
}
