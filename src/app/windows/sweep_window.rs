//! The size-sweep window: CPU vs GPU over image sizes and work levels, the verdict, and saved
//! sweeps to compare; three tabs: the sizes chart, the roofline and the map of who wins
//! (`sweep_views.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::{RichText, Ui};

use super::json_file::RowAsked;
use super::sweep_views::{self, View};
use crate::app::charts::SweepChart;
use crate::app::session::{JobKind, Session};
use crate::app::work::jobs::{Answer, Job};
use crate::engine::estimate::Estimate;
use crate::engine::sweep::{CellOps, DEFAULT_WORK_SIZES_MP, GridAxis, SweepOptions, SweepResult};
use crate::io::ResultKind;
use crate::pixel::Op;

/// Below this room under the view tabs, in points, the verdict folds into one line.
const FOLD_VERDICT_BELOW: f32 = 420.0;

/// The sweep window's state.
#[derive(Default)]
pub struct SweepWindow {
    /// Whether the window is open.
    pub open: bool,
    /// Sizes, runs and work levels, as typed.
    asked: sweep_views::Asked,
    /// The last sweep and its fields, kept between launches.
    kept: sweep_views::Kept,
    /// Resize the open photo instead of synthetic images.
    use_photo: bool,
    /// Saved sweeps loaded for comparison.
    compare: Vec<(String, SweepResult)>,
    /// Path for saving / loading JSON; empty until first shown (then next to the photo or in
    /// the home folder, never the working folder).
    path: String,
    /// The JSON file exists: ask before replacing it.
    confirm_replace: bool,
    chart: SweepChart,
    /// The tab shown.
    view: View,
    /// The work level the sizes chart shows of a work grid.
    sizes_level: u32,
    /// Which loaded sweep the roofline and the map show (`None`: this machine's).
    shown: Option<usize>,
    /// The options of the latest sweep started from this window.
    sent: Option<SweepOptions>,
    /// This machine's latest sweep (or the one an earlier launch kept).
    result: Option<Arc<SweepResult>>,
    /// The job id of the sweep in flight, whose answer this window takes.
    pending: Option<u64>,
    /// What the sweep in flight was estimated at.
    sent_estimate: Option<Estimate>,
    /// What this machine's latest sweep was estimated at and took, seconds (its JSON says so,
    /// as the CLI's does; unknown for one an earlier launch kept).
    timing: Option<(Estimate, f64)>,
}

impl SweepWindow {
    /// Sets the sizes (megapixels, comma separated) and warm runs per size.
    pub fn set_sizes(&mut self, sizes: &str, runs: u32) {
        sizes.clone_into(&mut self.asked.sizes);
        self.asked.runs = runs;
    }

    /// Sets the JSON file, as if typed.
    pub fn set_path(&mut self, path: &Path) {
        self.path = path.display().to_string();
        self.confirm_replace = false;
    }

    /// The options of the latest sweep started from this window, if any.
    #[must_use]
    pub fn sent(&self) -> Option<&SweepOptions> {
        self.sent.as_ref()
    }

    /// This machine's latest sweep, if any.
    #[must_use]
    pub fn result(&self) -> Option<&SweepResult> {
        self.result.as_deref()
    }

    /// Shows the window when open; takes its sweep's answer every frame, open or not.
    pub fn show(&mut self, ctx: &egui::Context, room: super::Room, session: &mut Session) {
        if let Some((Answer::Swept(answer), took_s)) =
            self.pending.and_then(|id| session.take_timed_answer(id))
        {
            self.pending = None;
            match *answer {
                Ok(result) => {
                    self.result = Some(Arc::new(result));
                    self.timing = self.sent_estimate.zip(took_s);
                }
                Err(e) => session.toasts.error(format!("The sweep failed: {}", e.describe())),
            }
        }
        self.kept.track(ctx, &mut self.result, &mut self.asked);
        let title = "Size sweep: when is the GPU worth it?";
        let window = room.window(title, super::SWEEP_ID, egui::Align2::LEFT_TOP).default_width(760.0);
        self.open = super::show(ctx, window, self.open, |ui| self.ui(ui, session, room.bottom_y()));
    }

    /// The content, reaching down to `bottom_y` at the most.
    fn ui(&mut self, ui: &mut Ui, session: &mut Session, bottom_y: f32) {
        if self.path.is_empty() {
            self.path = default_json_path(session).display().to_string();
        }
        ui.label(
            "Converts images of each size on the CPU (1 thread, all threads) and the GPU (end to end, kernel \
             only, data already on the GPU), warm runs after one cold run, and draws the medians.",
        );
        // Wrapped: in a narrow room (an 800x600 screen) Run sweep goes under the field, where in
        // one row it widened the window past the screen's edge.
        ui.horizontal_wrapped(|ui| {
            let label = ui.label("Sizes (MP)");
            ui.add(egui::TextEdit::singleline(&mut self.asked.sizes).desired_width(260.0))
                .labelled_by(label.id);
            ui.add(egui::DragValue::new(&mut self.asked.runs).range(1..=100).prefix("runs "));
            ui.checkbox(&mut self.use_photo, "resize the open photo");
            let running = session.current_job().is_some_and(|(k, _)| k == JobKind::Sweep);
            if ui.add_enabled(!running, egui::Button::new("Run sweep")).clicked() {
                self.start(ui.ctx(), session);
            }
        });
        self.levels_ui(ui, session.settings().convert.op);
        ui.label(RichText::new(self.estimate(session)).weak());
        self.file_ui(ui, session);
        ui.separator();
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.view, View::Sizes, "Sizes");
            ui.selectable_value(&mut self.view, View::Roofline, "Roofline");
            ui.selectable_value(&mut self.view, View::WhoWins, "Who wins");
        });
        if self.view != View::Sizes {
            let own = self.result.clone();
            let views = sweep_views::views_ui(
                ui,
                self.view,
                bottom_y,
                own.as_deref(),
                &self.compare,
                &mut self.shown,
            );
            if views {
                // The map's grid: its levels, at the sizes a work grid runs by default (about 3
                // minutes on two cores and a software adapter).
                sweep_views::MAP_LEVELS.clone_into(&mut self.asked.work.levels);
                self.asked.sizes = DEFAULT_WORK_SIZES_MP.map(|mp| mp.to_string()).join(", ");
            }
            return;
        }
        let Some(r) = self.result.clone() else {
            let text = if self.compare.is_empty() {
                "No sweep yet."
            } else {
                "No sweep of this machine yet: the loaded ones are drawn beside it once you run one (Roofline \
                 and Who wins show them now)."
            };
            ui.label(text);
            return;
        };
        if self.kept.restored {
            ui.label(RichText::new("The last sweep, kept from an earlier launch.").weak());
        }
        let verdict = |ui: &mut Ui| {
            super::verdict_ui(ui, &r.verdict, r.software_adapter);
            super::debug_build_ui(ui, &r.build);
            if let Some(busy) = r.busy_text() {
                ui.colored_label(
                    crate::app::look::warning(ui.visuals()),
                    format!("Measured on a busy machine ({busy}): these figures are noisier."),
                );
            }
        };
        // On a short window (1024x640) the verdict's paragraphs fold into one line that opens
        // on a click: unfolded they left the plot 50 points and no axis numbers.
        if bottom_y - ui.cursor().top() < FOLD_VERDICT_BELOW {
            egui::CollapsingHeader::new(RichText::new("The verdict (click to read)").strong())
                .id_salt("sweep verdict")
                .show(ui, verdict);
        } else {
            verdict(ui);
        }
        let rates: Vec<String> = r
            .points
            .last()
            .map(|p| {
                [("upload", p.upload_gb_per_s), ("download", p.download_gb_per_s)]
                    .iter()
                    .filter_map(|(n, v)| v.map(|v| format!("{n} {v:.2} GB/s")))
                    .collect()
            })
            .unwrap_or_default();
        let latency = r
            .dispatch_latency_ns
            .map_or_else(String::new, |ns| format!(", dispatch latency {}", crate::app::look::duration(ns)));
        ui.label(format!("At the largest size: {}{latency}.", rates.join(", ")));
        let (r, compare) = self.one_level(ui, &r);
        // The chart gives way to fit above `bottom_y`; what its least height cannot fit (a long
        // legend of loaded sweeps, opened notes, on a short screen) scrolls, rather than push
        // the window off the screen.
        let room = (bottom_y - ui.cursor().top()).max(sweep_views::MIN_CHART_ROOM);
        // (`min_scrolled_height`: the window's height is last frame's, which alone would never
        // let it grow to the chart.)
        egui::ScrollArea::vertical()
            .max_height(room)
            .min_scrolled_height(room)
            .auto_shrink([false, true])
            .show(ui, |ui| {
                // The chart's bottom where it is unscrolled: scrolled down, the plot must not
                // grow into the room the scroll made (the notes would never come into view).
                let bottom_y = ui.cursor().top() + room;
                self.chart.ui(ui, &r, &compare, 360.0, bottom_y);
            });
    }

    /// A work grid's sizes chart shows one work level at a time (picked here): its points, and
    /// the loaded sweeps' points at the same level.
    fn one_level(&mut self, ui: &mut Ui, r: &SweepResult) -> (SweepResult, Vec<(String, SweepResult)>) {
        if !r.is_grid() {
            return (r.clone(), self.compare.clone());
        }
        let levels = r.grid_levels();
        if !levels.contains(&self.sizes_level) {
            self.sizes_level = levels.first().copied().unwrap_or_default();
        }
        ui.horizontal(|ui| {
            ui.label(match r.axis {
                GridAxis::WorkRounds => "Work per pixel shown",
                GridAxis::BlurRadius => "Blur radius shown",
            });
            for &k in &levels {
                ui.selectable_value(&mut self.sizes_level, k, r.axis.short(k));
            }
        });
        let (level, axis) = (self.sizes_level, r.axis);
        let only = |r: &SweepResult| {
            let mut r = r.clone();
            r.points.retain(|p| p.level(axis) == level);
            r
        };
        (only(r), self.compare.iter().map(|(n, c)| (n.clone(), only(c))).collect())
    }

    /// The map's second axis and its levels: work rounds (and divergence, and the panel's
    /// Operation `op` after them) or blur radii.
    fn levels_ui(&mut self, ui: &mut Ui, op: Op) {
        ui.horizontal_wrapped(|ui| {
            ui.label("Map over");
            ui.selectable_value(&mut self.asked.axis, GridAxis::WorkRounds, "Work rounds")
                .on_hover_text(sweep_views::WORK_HOVER);
            let radius = ui
                .selectable_value(&mut self.asked.axis, GridAxis::BlurRadius, "Blur radius")
                .on_hover_text(sweep_views::RADII_HOVER);
            // The plain sweep's sizes become a grid's, as `graylab sweep --radii` defaults them.
            if radius.clicked() && self.asked.sizes == sweep_views::Asked::default().sizes {
                self.asked.sizes = DEFAULT_WORK_SIZES_MP.map(|mp| mp.to_string()).join(", ");
            }
            ui.separator();
            if self.asked.axis == GridAxis::BlurRadius {
                let label = ui.label("Radii (px)").on_hover_text(sweep_views::RADII_HOVER);
                ui.add(egui::TextEdit::singleline(&mut self.asked.radii).desired_width(160.0))
                    .labelled_by(label.id)
                    .on_hover_text(sweep_views::RADII_HOVER);
                ui.label(RichText::new("each cell runs blur:R, 0 rounds").weak());
                return;
            }
            let label = ui.label("Work per pixel").on_hover_text(sweep_views::WORK_HOVER);
            ui.add(egui::TextEdit::singleline(&mut self.asked.work.levels).desired_width(160.0))
                .labelled_by(label.id)
                .on_hover_text(sweep_views::WORK_HOVER);
            ui.label(RichText::new("rounds, synthetic").weak()).on_hover_text(sweep_views::WORK_HOVER);
            ui.checkbox(&mut self.asked.work.divergent, "divergent")
                .on_hover_text(sweep_views::DIVERGENT_HOVER);
        });
        if self.asked.axis == GridAxis::WorkRounds && !op.is_none() {
            ui.label(
                RichText::new(format!("Each cell runs {op} after its rounds (the Operation chosen).")).weak(),
            )
            .on_hover_text(sweep_views::OP_HOVER);
        }
    }

    /// The JSON file: save this sweep, load one to compare (above the results, so it stays on
    /// screen however tall they grow).
    fn file_ui(&mut self, ui: &mut Ui, session: &mut Session) {
        let sweep = self.result.clone();
        let clear = (!self.compare.is_empty()).then_some("Clear comparisons");
        let field = (&mut self.path, &mut self.confirm_replace);
        let (_, asked) = super::json_file::file_row(ui, field, sweep.is_some(), 300.0, clear);
        let path = PathBuf::from(self.path.trim());
        match asked {
            Some(RowAsked::Save(overwrite)) => {
                if let Some(sweep) = &sweep {
                    let timing = self.timing.map(|(estimate, took_s)| (estimate, Some(took_s)));
                    let file = (path.as_path(), overwrite);
                    super::json_file::save_timed_result(session, file, ResultKind::Sweep, &**sweep, timing);
                }
            }
            Some(RowAsked::Load) => self.load(session, &path),
            Some(RowAsked::Clear) => {
                self.compare.clear();
                self.shown = None;
            }
            None => {}
        }
    }

    fn start(&mut self, ctx: &egui::Context, session: &mut Session) {
        let sizes: Result<Vec<f64>, _> =
            self.asked.sizes.split(',').map(|s| s.trim().parse::<f64>()).collect();
        let sizes = match sizes {
            Ok(s) if !s.is_empty() && s.iter().all(|v| v.is_finite() && *v > 0.0) => s,
            _ => {
                session.toasts.error(format!(
                    "Sizes must be positive megapixel counts separated by commas, not {:?}.",
                    self.asked.sizes
                ));
                return;
            }
        };
        let (work_levels, ops) = match self.cells_asked(session.settings().convert.op) {
            Ok(asked) => asked,
            Err(e) => {
                session.toasts.error(e.to_string());
                return;
            }
        };
        let photo = if self.use_photo { session.input().cloned() } else { None };
        if self.use_photo && photo.is_none() {
            session.toasts.error("Open a photo first, or untick \"resize the open photo\".".into());
            return;
        }
        let options = self.options(session, sizes, (work_levels, ops));
        self.sent = Some(options.clone());
        self.kept.started(ctx, &self.asked);
        let (task, parts) = (options.task(), options.parts_at(session.pace()));
        let pace = Box::new(session.pace().clone());
        let (id, estimate) = session.send_in_steps(Job::Sweep { options, photo, pace }, task, vec![parts]);
        (self.pending, self.sent_estimate) = (Some(id), Some(estimate));
    }

    /// The work levels and what each cell runs, from the fields: the work rounds typed, then
    /// the panel's Operation `op` (as `graylab sweep --op`), or on the blur radius's axis the
    /// radii typed at 0 rounds.
    fn cells_asked(&self, op: Op) -> Result<(Vec<u32>, CellOps), sweep_views::BadField> {
        match self.asked.axis {
            GridAxis::WorkRounds => Ok((
                sweep_views::parse_work_levels(&self.asked.work.levels)?,
                CellOps { op, blur_radii: Vec::new() },
            )),
            GridAxis::BlurRadius => {
                Ok((vec![0], CellOps::blur_radii(sweep_views::parse_radii(&self.asked.radii)?)))
            }
        }
    }

    /// How long the sweep will take (the one estimator: from the sweeps, grids and runs seen on
    /// this machine, else a guess, saying which); a work grid's estimate is refined by its
    /// calibration once it starts.
    fn estimate(&self, session: &Session) -> String {
        let (work_levels, ops) = self.cells_asked(session.settings().convert.op).unwrap_or_default();
        let sizes_mp: Vec<f64> = self
            .asked
            .sizes
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .filter(|v: &f64| *v > 0.0)
            .collect();
        let mp: f64 = sizes_mp.iter().sum();
        let options = self.options(session, sizes_mp, (work_levels, ops));
        let (task, pace) = (options.task(), session.pace());
        let estimate = pace.job(task, &options.parts_at(pace));
        // Until a grid ran to its end here: from then on its estimate is the pace's.
        let calibrates = options.is_grid() && !pace.has_seen(task);
        let grid = if calibrates { " (a grid calibrates first and says better)" } else { "" };
        format!("{} sizes, {mp:.1} MP in all: {}{grid}.", options.sizes().len(), estimate.sentence())
    }

    /// The sweep asked for: `sizes_mp`, `work_levels` and the cells' `ops` (from the fields), the
    /// runs and divergence typed, the panel's workgroup and formula.
    fn options(
        &self,
        session: &Session,
        sizes_mp: Vec<f64>,
        (work_levels, ops): (Vec<u32>, CellOps),
    ) -> SweepOptions {
        SweepOptions {
            sizes_mp,
            runs: self.asked.runs as usize,
            workgroup: session.settings().convert.workgroup,
            // Stored luma is a way of decoding a file: the sweep's images are computed with bt601.
            formula: session.settings().convert.formula.computed(),
            gpu: session.gpu_usable(),
            work_levels,
            divergent: self.asked.work.divergent,
            keep_runs: false,
            ops,
        }
    }

    fn load(&mut self, session: &mut Session, path: &Path) {
        if let Some((file, r)) =
            super::json_file::load_result::<SweepResult>(session, path, ResultKind::Sweep)
        {
            let adapter = r.adapter.clone().unwrap_or_else(|| "CPU only".into());
            self.compare.push((format!("{file} · {adapter}"), r));
        }
    }
}

/// Next to the open photo, else (no photo, or the bundled sample's) in the user's documents.
fn default_json_path(session: &Session) -> PathBuf {
    let photo_dir = session.input().and_then(|i| i.path.parent().map(Path::to_path_buf));
    super::json_file::default_save_folder(&[photo_dir.as_deref()]).join("graylab-sweep.json")
}
