//! The settings panel on the left: backend, formula, work per pixel, workgroup size, threads,
//! the Run and Continuous controls, and the last run's phases and work.

use egui::{RichText, Ui};

use crate::app::look;
use crate::app::session::Session;
use crate::app::work::error::WorkError;
use crate::app::work::jobs::{Answer, Job};
use crate::engine::ceilings::PhasePart;
use crate::engine::sweep::Speedup;
use crate::engine::{Backend, available_threads, simd_level};
use crate::pixel::Formula;
use crate::system::clock::Clock;
use crate::system::units::gb;

/// The conversion settings and the last run, and the CPU vs GPU comparison of the open image.
#[derive(Default)]
pub struct SettingsPanel {
    /// The comparison in flight, until its answer arrives, with the id of the image it runs on.
    pending: Option<(u64, u64)>,
    /// The latest comparison (or why it has none), with the id of the image it was made on.
    shown: Option<(u64, Result<Speedup, WorkError>)>,
}

impl SettingsPanel {
    /// Draws the conversion settings, the measure controls and the last run.
    pub fn ui(&mut self, ui: &mut Ui, session: &mut Session) {
        conversion_ui(ui, session);
        ui.separator();
        measure_ui(ui, session);
        self.compare_ui(ui, session);
        ui.separator();
        last_run_ui(ui, session);
    }
}

fn conversion_ui(ui: &mut Ui, session: &mut Session) {
    ui.heading("Conversion");
    let gpu_usable = session.gpu_usable();
    let gpu_error = session.gpu_error().map_or_else(|| "no GPU".to_owned(), ToOwned::to_owned);
    let valid = session.gpu().map(|g| g.valid_workgroups()).unwrap_or_default();
    let own_device = session.own_gpu_device();
    let settings = session.settings_mut();
    let c = &mut settings.convert;
    ui.horizontal(|ui| {
        ui.label("Backend");
        ui.selectable_value(&mut c.backend, Backend::Cpu, "CPU");
        ui.add_enabled_ui(gpu_usable, |ui| {
            ui.selectable_value(&mut c.backend, Backend::Gpu, "GPU");
        })
        .response
        .on_disabled_hover_text(gpu_error);
    });
    let shown_name = |f: Formula| if f == Formula::StoredLuma { "Luma as stored (JPEG)" } else { f.name() };
    egui::ComboBox::from_label("Formula")
        .selected_text(shown_name(c.formula))
        .show_ui(ui, |ui| {
            for f in Formula::ALL {
                ui.selectable_value(&mut c.formula, f, format!("{} — {}", shown_name(f), f.description()));
            }
        })
        .response
        .on_hover_text(
            "Luma as stored: a JPEG already holds a gray image, its Y plane (BT.601's weights on the \
         original colours). It is decoded alone, and no conversion runs: on the GPU nothing is \
         uploaded. Other files are converted with bt601.",
        );
    super::work::work_ui(ui, &mut c.work);
    super::op::op_ui(ui, &mut c.op);
    match c.backend {
        Backend::Gpu => {
            egui::ComboBox::from_label("Workgroup size")
                .selected_text(c.workgroup.to_string())
                .show_ui(ui, |ui| {
                    for wg in valid {
                        ui.selectable_value(&mut c.workgroup, wg, wg.to_string());
                    }
                })
                .response
                .on_hover_text("Only the sizes this adapter allows are listed");
            if own_device {
                // Every result is read back on a device of its own: the box shows it, ticked.
                ui.add_enabled(
                    false,
                    egui::Checkbox::new(&mut true, "Download the result (full round trip)"),
                )
                .on_disabled_hover_text(
                    "Always on with a software adapter: the conversion runs on a device of its \
                         own, so that the window's frames come first, and its result is read back \
                         to be shown (that adapter's memory is host memory).",
                );
            } else {
                ui.checkbox(&mut settings.round_trip, "Download the result (full round trip)").on_hover_text(
                    "Off: the result is drawn from GPU memory and never copied back, as a viewer \
                     would. On: it is also downloaded, and the chart shows the download phase.",
                );
            }
            ui.checkbox(&mut settings.keep_input_on_gpu, "Keep the input on the GPU").on_hover_text(
                "On: the photo stays in GPU memory after the first run, and runs with another formula \
                 or workgroup size upload nothing (no upload phase), as a real pipeline would. \
                 Off: every run uploads it, and GPU memory is freed.",
            );
        }
        Backend::Cpu => {
            ui.add(egui::Slider::new(&mut c.threads, 1..=available_threads()).text("CPU threads"));
            ui.label(RichText::new(format!("kernel instruction set: {}", simd_level().name())).weak());
        }
    }
    ui.checkbox(&mut settings.convert.keep_alpha, "Keep alpha (gray + alpha output)");
}

fn measure_ui(ui: &mut Ui, session: &mut Session) {
    ui.heading("Measure");
    let enabled = session.input().is_some();
    ui.horizontal(|ui| {
        let repeat = session.settings().repeat;
        if ui
            .add_enabled(enabled, egui::Button::new("Run"))
            .on_hover_text("One conversion with the settings above")
            .clicked()
        {
            session.run_conversion(1);
        }
        let button = ui.add_enabled(enabled, egui::Button::new(format!("Run ×{repeat}")));
        // With what they are estimated to take, and what that rests on.
        let estimate =
            session.conversions_estimate(repeat).map_or_else(String::new, |e| format!(" ({})", e.sentence()));
        if button
            .on_hover_text(format!(
                "This many conversions in a row (set beside), each charted; Stop or Esc ends them{estimate}"
            ))
            .clicked()
        {
            session.run_conversion(repeat);
        }
        let label = ui.label("Runs:");
        ui.add(egui::DragValue::new(&mut session.settings_mut().repeat).range(1..=1000))
            .labelled_by(label.id)
            .on_hover_text("How many conversions \"Run ×N\" queues (1 to 1000)");
    });
    ui.checkbox(&mut session.continuous, "Continuous (re-run as soon as a run ends)")
        .on_hover_text("Stop or Esc ends it");
}

impl SettingsPanel {
    /// "CPU vs GPU": both backends on the open image in turns, with the panel's other settings,
    /// until the interval of their ratio clears 1 (or the budget is spent: within the noise).
    fn compare_ui(&mut self, ui: &mut Ui, session: &mut Session) {
        if let Some((image, Answer::Compared(answer))) =
            self.pending.and_then(|(id, image)| Some((image, session.take_answer(id)?)))
        {
            self.shown = Some((image, answer));
            self.pending = None;
        }
        let running = self.pending.is_some() && session.current_job().is_some();
        let can = session.input().is_some() && session.gpu().is_some() && !running;
        let button = ui.add_enabled(can, egui::Button::new("CPU vs GPU")).on_hover_text(
            "Both backends on this image, end to end (the GPU uploads and downloads), in turns \
                 after a warm-up round, until the 95% interval of their ratio lies clear of 1 \
                 (at most 42 rounds, or 6 s once 6 rounds are in): then one is faster here, else they are within the noise.",
        );
        if button.clicked() {
            self.start(session);
        }
        let image = session.input().map(|i| i.id);
        match &self.shown {
            Some((id, Ok(c))) if Some(*id) == image => {
                let text = format!("{}: the GPU's speed-up over {} rounds in turns", c.label(), c.rounds);
                ui.label(text).on_hover_text(sides_text(c));
            }
            Some((id, Err(why))) if Some(*id) == image => {
                ui.label(RichText::new(why.describe()).weak());
            }
            _ => {}
        }
    }

    fn start(&mut self, session: &mut Session) {
        let Some(input) = session.input().cloned() else { return };
        let asked = session.settings().convert;
        let settings = [
            crate::engine::ConvertSettings { backend: Backend::Cpu, ..asked },
            crate::engine::ConvertSettings { backend: Backend::Gpu, ..asked },
        ];
        self.shown = None;
        // At least the warm-up and the first look's rounds of each side; how many more it takes
        // to decide is learned as the job's overhead.
        let budget = crate::engine::sampling::Budget::FULL;
        let rounds = u32::try_from(budget.warmup_rounds + budget.min_rounds).unwrap_or(u32::MAX);
        let size = (input.image.width(), input.image.height());
        let parts = crate::app::session::pace::convert_parts(&settings, rounds, size);
        let image = input.id;
        let job = Job::Compare { input, settings };
        let id = session.send_estimated(job, crate::engine::estimate::Task::Compare, parts);
        self.pending = Some((id, image));
    }
}

/// Each side's median wall time and its interval, for the comparison's hover.
fn sides_text(c: &Speedup) -> String {
    let side = |name: &str, i: Option<&crate::engine::sampling::Interval>| match i {
        Some(i) => format!(
            "{name}: {} per run ({}–{}, cpu-clock)",
            look::duration(i.median as u64),
            look::duration(i.ci_low as u64),
            look::duration(i.ci_high as u64)
        ),
        None => format!("{name}: too few rounds"),
    };
    format!("{}\n{}", side("CPU", c.cpu_ns.as_ref()), side("GPU end to end", c.gpu_ns.as_ref()))
}

fn last_run_ui(ui: &mut Ui, session: &Session) {
    ui.heading("Last run");
    let Some(run) = session.last_run() else {
        ui.label("No conversion of this image yet.");
        exports_ui(ui, session);
        return;
    };
    let r = &run.report;
    let what = match run.settings.backend {
        // A gray input, or the luma a JPEG stores: passed through, on neither backend.
        _ if r.kernel.is_none() => "no kernel (gray as decoded)".to_owned(),
        Backend::Cpu => {
            format!(
                "CPU, {}",
                crate::system::units::count(r.threads.unwrap_or(run.settings.threads), "thread")
            )
        }
        Backend::Gpu => format!("GPU, workgroup {}", r.workgroup.map(|w| w.to_string()).unwrap_or_default()),
    };
    ui.label(format!("run {}: {what}, {}, {} x {} px", run.seq, r.formula, r.width, r.height));
    super::work::last_run_work_ui(ui, run);
    egui::Grid::new("last run").striped(true).spacing([6.0, 2.0]).show(ui, |ui| {
        for head in ["phase", "time", "clock", "rate · ceiling"] {
            ui.label(RichText::new(head).weak());
        }
        ui.end_row();
        for p in &r.phases {
            ui.label(p.phase.name());
            ui.label(RichText::new(look::duration(p.ns)).monospace());
            clock_ui(ui, p.source);
            rate_ui(ui, run, p.phase);
            ui.end_row();
        }
        if run.overlap_ns() > 0 {
            ui.label("− overlap")
                .on_hover_text("Steps that ran at the same time (host copies beside GPU work)");
            ui.label(RichText::new(format!("−{}", look::duration(run.overlap_ns()))).monospace());
            clock_ui(ui, Clock::CpuClock);
            ui.end_row();
        }
        ui.label("other").on_hover_text("Wall time no phase accounts for: waiting, submitting, bookkeeping");
        ui.label(RichText::new(look::duration(run.other_ns())).monospace());
        clock_ui(ui, Clock::CpuClock);
        ui.end_row();
        ui.strong("wall");
        ui.label(RichText::new(look::duration(run.wall_ns())).monospace().strong());
        clock_ui(ui, Clock::CpuClock);
        ui.end_row();
    });
    warm_runs_ui(ui, session, run);
    if let Some(note) = r.busy_note() {
        ui.label(RichText::new(note).color(look::warning(ui.visuals())).small());
    }
    if !run.rates.is_empty() && !run.rates.iter().any(|r| r.ceiling_gb_per_s.is_some()) {
        let why = match run.settings.backend {
            // The CPU's only ceiling is the memory-stream baseline, measured with each new size.
            Backend::Cpu => {
                "Rates without a % of ceiling: the memory-stream baseline could not be measured for this size (no room in the memory budget now)."
            }
            Backend::Gpu if session.ceilings().is_some() => {
                "Rates without a % of ceiling: this run came before the GPU's ceilings were known; the next run shows them."
            }
            Backend::Gpu => {
                "Rates without a % of ceiling: this GPU's ceilings are not measured yet (GPU adapter below)."
            }
        };
        ui.label(RichText::new(why).weak());
    }
    if run.cold && r.kernel.is_some() {
        let why = match run.settings.backend {
            Backend::Gpu => "pipeline compilation and buffer allocation",
            Backend::Cpu => "starting the thread pool and first-touch page faults",
        };
        ui.colored_label(
            look::warning(ui.visuals()),
            format!("Cold run (first with these settings): includes {why}."),
        );
    }
    for note in &r.notes {
        ui.label(RichText::new(note).italics());
    }
    exports_ui(ui, session);
}

/// The median and the spread of the warm runs of `run`'s settings on its image, once there are
/// three (a single run is one sample: the figure to quote is the median of several).
fn warm_runs_ui(ui: &mut Ui, session: &Session, run: &crate::app::state::RunRecord) {
    let warm: Vec<_> = session
        .runs()
        .iter()
        .filter(|r| r.image_id == run.image_id && r.settings == run.settings && !r.cold)
        .collect();
    if warm.len() < 3 {
        return;
    }
    let spread = |values: Vec<u64>| {
        crate::engine::Stats::of(&values).map(|s| {
            format!(
                "{} ({}–{})",
                look::duration(s.median_ns),
                look::duration(s.min_ns),
                look::duration(s.max_ns)
            )
        })
    };
    let wall = spread(warm.iter().map(|r| r.wall_ns()).collect());
    let phase = crate::engine::Phase::Kernel;
    let kernel = spread(warm.iter().filter_map(|r| r.report.phase(phase).map(|p| p.ns)).collect());
    let Some(wall) = wall else { return };
    let kernel = kernel.map_or_else(String::new, |k| format!(", kernel {k}"));
    ui.label(format!("{} warm runs with these settings: median wall {wall}{kernel}", warm.len()))
        .on_hover_text(
            "The median of every run of these settings on this image but the first (the cold one), \
             with the fastest and the slowest: one run is one sample, and the same run varies \
             from one to the next.",
        );
}

/// The exports, apart from the runs: the newest few, each with its file, format and times.
fn exports_ui(ui: &mut Ui, session: &Session) {
    let exports = session.exports();
    if exports.is_empty() {
        return;
    }
    ui.separator();
    ui.heading("Exports");
    for e in exports.iter().rev().take(3) {
        let name = crate::app::session::file_name(&e.path);
        let convert =
            e.convert_ns.map_or_else(String::new, |ns| format!(", read back {}", look::duration(ns)));
        ui.label(format!("export {}: {name}", e.seq)).on_hover_text(e.path.display().to_string());
        ui.label(
            RichText::new(format!(
                "{}; {}, {}: encode {}{convert}, wall {} (cpu-clock)",
                e.what,
                e.format,
                crate::system::units::human_bytes(e.bytes),
                look::duration(e.encode_ns),
                look::duration(e.wall_ns)
            ))
            .weak(),
        );
    }
}

/// The clock a figure came from, in the charts' short form, the full name on hover.
fn clock_ui(ui: &mut Ui, clock: Clock) {
    let what = match clock {
        Clock::GpuTimestamp => "timestamps written by the GPU around its work",
        Clock::CpuClock => "the CPU's clock, around the work and its wait",
        Clock::Mixed => "the host part on the CPU clock, the GPU part from GPU timestamps",
    };
    // Small: the column must leave the rate room in a narrow panel.
    ui.label(RichText::new(clock.short_label()).weak().small())
        .on_hover_text(format!("{}: {what}", clock.label()));
}

/// The phase's rate and its share of this machine's ceiling ("2.10 GB/s · 35%"), with the whole
/// sentence and the host and GPU parts on hover; nothing for phases that move no pixels.
fn rate_ui(ui: &mut Ui, run: &crate::app::state::RunRecord, phase: crate::engine::Phase) {
    let rates = || run.rates.iter().filter(move |r| r.phase == phase);
    let Some(whole) = rates().find(|r| r.part == PhasePart::Whole) else {
        ui.label("");
        return;
    };
    // A compute-bound kernel is held against its compute ceiling; the memory share then only
    // comes on hover.
    let compute = (phase == crate::engine::Phase::Kernel)
        .then(|| super::work::kernel_compute_rate(run, whole.ceiling_gb_per_s))
        .flatten();
    let memory = match whole.share_label() {
        Some(share) => format!("{} · {share}", gb(whole.gb_per_s)),
        None => gb(whole.gb_per_s),
    };
    let (text, first) = match compute {
        Some((text, sentence)) => (text, vec![sentence, format!("Against memory: {}", whole.sentence())]),
        None => (memory, vec![whole.sentence()]),
    };
    // The app's font has no arrows: "host→GPU" reads "host to GPU".
    let hover = first
        .into_iter()
        .chain(
            rates().filter(|r| r.part != PhasePart::Whole).map(crate::engine::ceilings::PhaseRate::sentence),
        )
        .map(|s| s.replace('→', " to "))
        .collect::<Vec<_>>()
        .join("\n");
    // Proportional digits: the four columns fit the panel's default width.
    ui.label(text).on_hover_text(hover);
}
