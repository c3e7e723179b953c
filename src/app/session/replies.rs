//! The worker's answers taken into the session's state: a new image, a run for the charts, an
//! export, the GPU's ceilings, the messages they bring, and every experiment's answer kept for
//! the window that asked (which owns it once taken).

use super::Session;
use super::toasts::Topic;
use crate::app::state::{ExportRecord, RunRecord};
use crate::app::work::jobs::{Answer, Exported, Measured, Output, Reply};
use crate::engine::ConvertSettings;

impl Session {
    pub(super) fn handle(&mut self, reply: Reply) {
        match reply {
            Reply::Loaded(id, loaded) if id == self.book.latest_load => {
                self.opening = None;
                self.failed_open = None;
                self.settings.remember(loaded.path.clone());
                self.toasts.clear_notes();
                // A dialog that could not be shown, an open that failed, the last image's
                // warnings: all moot now.
                self.toasts.resolved(Topic::Opening);
                if let Some(note) = loaded.orientation_note {
                    self.toasts.note(note.into());
                }
                for warning in &loaded.warnings {
                    self.toasts.warning_about(
                        Topic::Opening,
                        format!("{warning}; shown and converted as it is: {}", loaded.path.display()),
                    );
                }
                self.folder_place = super::folder::place_in_folder(&loaded.path);
                self.input = Some(loaded);
                self.output = None;
                self.convert_on_open();
            }
            Reply::LoadFailed(id, path, e) if id == self.book.latest_load => {
                self.opening = None;
                self.failed_opens += 1;
                self.failed_open = (self.stepped_to.as_ref() == Some(&path)).then(|| path.clone());
                self.settings.recent.retain(|p| p != &path);
                self.toasts
                    .error_about(Topic::Opening, format!("Could not open the image: {}", e.describe()));
            }
            Reply::Converted(id, output, measured) => self.converted(id, *output, *measured),
            Reply::Ceilings(result) => self.ceilings_measured(result),
            Reply::CpuCompute(result) => self.cpu_compute_measured(result),
            Reply::RunCancelled(id) => {
                log::debug!("job {id}: a GPU run stopped between its submissions");
                self.book.runs_cut_short += 1;
            }
            Reply::ConvertFailed(id, e) if id == self.book.latest_convert => {
                self.continuous = false;
                self.toasts.error(format!("Conversion failed: {}", e.describe()));
            }
            Reply::Answered(id, answer) => {
                // What every front end learns from an experiment: the pace of a sweep's runs,
                // and of the round trips' (before their job's end teaches its overhead).
                if let Answer::Swept(swept) = &answer
                    && let Ok(result) = &**swept
                {
                    self.learn_sweep(result);
                }
                if let Answer::RoundTrips(Ok(result)) = &answer {
                    self.learn_round_trips(result);
                }
                // An older answer of the same kind was superseded by this one's job.
                let kind = std::mem::discriminant(&answer);
                self.answers.retain(|(_, a, _)| std::mem::discriminant(a) != kind);
                // Its job is still in the book: it ends after its answer.
                let progress =
                    self.book.sent.iter().find(|(_, t)| t.id == id).and_then(|(_, t)| t.progress());
                self.answers.push((id, answer, progress.map(|p| f64::from(p.elapsed_secs()))));
            }
            Reply::Exported(exported) => self.exported(*exported),
            Reply::ExportFailed(path, e) => {
                self.toasts.error(format!(
                    "Export to {} failed, nothing was written. {}",
                    path.display(),
                    e.describe()
                ));
            }
            Reply::Done(id) => {
                let by_user = self.book.stopped_by_user.remove(&id);
                if let Some((kind, ticket)) = self.book.sent.iter().find(|(_, t)| t.id == id).cloned() {
                    self.learn_job_end(&ticket, by_user);
                    if by_user {
                        let runs = (id == self.book.latest_convert).then_some(self.book.latest_convert_runs);
                        self.book.stopped = Some(stopped_text(kind, &ticket, runs));
                    }
                }
                self.book.sent.retain(|(_, t)| t.id != id);
                let shown = self.output.as_ref().map(|o| o.settings);
                if id == self.book.latest_convert
                    && self.book.comparing
                    && shown != Some(self.settings.convert)
                {
                    self.run_conversion(1);
                }
            }
            // Answers to superseded jobs.
            Reply::Loaded(..) | Reply::LoadFailed(..) | Reply::ConvertFailed(..) => {}
        }
    }

    fn record(&mut self, image_id: u64, settings: ConvertSettings, measured: Measured) {
        let Measured { report, rates } = measured;
        let downloaded = report.gpu.as_ref().is_some_and(|g| g.downloaded);
        let cold = self.history.seen.insert(format!("{image_id}:{settings:?}:{downloaded}"));
        if !cold {
            self.learn_run(&settings, &report);
        }
        self.history.runs_counted += 1;
        let image_name = self.input.as_ref().map(|i| super::file_name(&i.path)).unwrap_or_default();
        self.history.runs.push(RunRecord {
            seq: self.history.runs_counted,
            image_id,
            image_name,
            settings,
            report,
            rates,
            cold,
        });
    }

    fn converted(&mut self, id: u64, output: Output, measured: Measured) {
        if self.input.as_ref().map(|i| i.id) != Some(output.image_id) {
            return;
        }
        // The first GPU run asks for the GPU's ceilings (cached, else measured once), so that
        // the next runs' phases are shown against them; after the run, so its output comes first.
        if output.settings.backend == crate::engine::Backend::Gpu {
            self.ask_ceilings_once();
        }
        log::debug!(
            "run {}: {:?} {:.1} ms",
            self.history.runs_counted + 1,
            output.settings.backend,
            measured.report.total_ns as f64 / 1e6
        );
        self.count_run(id, &measured.report);
        self.record(output.image_id, output.settings, measured);
        // A run of an older job still counts in the charts, but only the newest settings' output
        // is shown.
        if id == self.book.latest_convert || self.output.is_none() {
            self.output = Some(output);
        }
    }

    fn exported(&mut self, e: Exported) {
        let notes = if e.encode.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", e.encode.notes.join("; "))
        };
        let what = crate::app::state::result_label(&e.settings);
        self.toasts.success(format!(
            "Exported {} ({what}; {}, {}, encode {}, cpu-clock){notes}",
            e.path.display(),
            e.encode.format,
            crate::system::units::human_bytes(e.encode.bytes),
            crate::app::look::duration(e.encode.encode_ns)
        ));
        // The folder of the last export that was written (a failed one's is no place to offer).
        self.settings.export_dir = e.path.parent().map(std::path::Path::to_path_buf);
        // An export is listed as an export, never as a run: Last run keeps the last conversion.
        self.history.exports_counted += 1;
        self.history.exports.push(ExportRecord {
            seq: self.history.exports_counted,
            image_id: self.input.as_ref().map(|i| i.id),
            path: e.path,
            format: e.encode.format.to_string(),
            bytes: e.encode.bytes,
            encode_ns: e.encode.encode_ns,
            convert_ns: e.converted.map(|r| r.total_ns),
            wall_ns: e.wall_ns,
            what,
        });
    }
}

/// "Stopped the runs after 5 of 10", or "before the first of 10 finished"; `runs` is a
/// conversion batch's size, for one stopped before its first run reported.
fn stopped_text(kind: super::JobKind, ticket: &crate::app::work::jobs::Ticket, runs: Option<u64>) -> String {
    let what = match kind {
        super::JobKind::Sweep => "the sweep",
        super::JobKind::Parity => "the parity check",
        super::JobKind::RoundTrips => "the round trips",
        super::JobKind::Compare => "the comparison",
        super::JobKind::Workgroups => "the workgroup race",
        super::JobKind::Claims => "the claims",
        super::JobKind::Ceilings => "measuring the ceilings",
        super::JobKind::TransferPaths => "timing the transfer paths",
        _ => "the runs",
    };
    let (done, total) = ticket.progress().map_or((0, runs.unwrap_or(0)), |p| (p.done, p.total));
    match (done, total) {
        (_, total) if total <= 1 => format!("Stopped {what}"),
        (0, total) => format!("Stopped {what} before the first of {total} finished"),
        (done, total) => format!("Stopped {what} after {done} of {total}"),
    }
}
