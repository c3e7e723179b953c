//! What each run measured ([`RunReport`]): its spans, the phases derived from them when it is
//! finished, each with its clock, and statistics over repeated runs.

use super::spans::{Phase, PhaseTiming, Span};
use super::{Backend, Formula, Kernel, OpFigures, Work, WorkFigures, WorkgroupSize};
use crate::gpu::GpuTimings;
use crate::system::clock::Clock;
use crate::system::load::Busy;

/// How a decode's warning starts among a report's notes: written by the decode paths
/// (`files.rs`, `decode_while_encode.rs`), read back by `FileReport::warnings`.
pub(super) const WARNING_NOTE: &str = "warning: ";

/// What was measured in one conversion.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RunReport {
    /// Where it ran.
    pub backend: Backend,
    /// The formula.
    pub formula: Formula,
    /// The kernel, or `None` for a gray input passed through.
    pub kernel: Option<Kernel>,
    /// GPU workgroup shape (GPU runs only).
    pub workgroup: Option<WorkgroupSize>,
    /// CPU threads (CPU runs only).
    pub threads: Option<usize>,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The measured phases, in order: derived from `spans` by [`Self::finish`] (a report of
    /// medians has them without spans).
    pub phases: Vec<PhaseTiming>,
    /// Wall time of the whole conversion (CPU clock).
    pub total_ns: u64,
    /// How much the phases add up to more than `total_ns`: time during which two of them ran
    /// at once (the GPU path copies on the host while the GPU works). Net: idle gaps hide more.
    pub overlap_ns: u64,
    /// How much of `total_ns` no phase accounts for (waiting, submitting, preparing pixels).
    /// The phases minus `overlap_ns` plus `other_ns` equal `total_ns` exactly.
    pub other_ns: u64,
    /// How a GPU run was cut and timed (bands, chunks, which clock), GPU runs only. Its own
    /// spans have moved into this report's `spans`, so its step accessors
    /// ([`GpuTimings::step`] and the rest) read 0 here: the steps' times are in `spans`.
    pub gpu: Option<GpuTimings>,
    /// The GPU adapter's name, GPU runs only.
    pub adapter: Option<String>,
    /// The synthetic work per pixel and what the kernel achieved with it (set by
    /// [`Self::finish`] from the kernel phase).
    #[serde(flatten)]
    pub work: WorkFigures,
    /// The op on the gray plane after the grayscale and what it achieved (`op: none` when none
    /// ran).
    pub op: OpFigures,
    /// Things a reader of the numbers must know (passthrough, float input converted, …).
    pub notes: Vec<String>,
    /// When each step really ran, ns since the run started (a timeline): every span lies within
    /// `0..=total_ns`, and spans of one lane do not overlap.
    pub spans: Vec<Span>,
    /// How busy the machine was while this run was measured: other processes' share of the CPU
    /// (absent where it is not known, or the run was too short for the counters to move).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy: Option<Busy>,
}

impl RunReport {
    /// An empty report for a `width` x `height` conversion with these settings.
    #[must_use]
    pub fn new(backend: Backend, formula: Formula, (width, height): (u32, u32), notes: Vec<String>) -> Self {
        Self { backend, formula, width, height, notes, ..Self::default() }
    }

    /// Moves every span `offset_ns` later: the report's run now starts that long before the one
    /// that measured them (an app waiting for the engine's run).
    pub fn shift_spans(&mut self, offset_ns: u64) {
        for s in &mut self.spans {
            s.start_ns += offset_ns;
            s.end_ns += offset_ns;
        }
    }

    /// A step of `phase` timed on the CPU clock from `start_ns` to `end_ns` of the run: its
    /// span on the phase's track, counted toward the phase when the report is finished.
    pub fn add_cpu_step(&mut self, phase: Phase, start_ns: u64, end_ns: u64) {
        self.spans.push(Span::cpu(phase.track(), start_ns, end_ns));
    }

    /// The same report for a run with `work` per pixel.
    #[must_use]
    pub fn with_work(mut self, work: Work) -> Self {
        self.work = WorkFigures::new(work, self.kernel, self.pixels(), None);
        self
    }

    /// "Measured on a busy machine: …" when other processes took enough of the CPU while this
    /// run was measured to disturb its figures, else `None`.
    #[must_use]
    pub fn busy_note(&self) -> Option<String> {
        let b = self.busy.filter(Busy::is_busy)?;
        Some(format!(
            "Measured on a busy machine ({}): these figures may be slow; run again when it is quiet.",
            b.shares_text()
        ))
    }

    /// Pixels of the image.
    #[must_use]
    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// The time of one phase, if it was measured.
    #[must_use]
    pub fn phase(&self, phase: Phase) -> Option<PhaseTiming> {
        self.phases.iter().copied().find(|p| p.phase == phase)
    }

    /// Derives the phases from the spans (`phases_of` in `spans.rs`) and sets the wall time
    /// and the remainders that reconcile it with them; again after more spans are added (a file's
    /// decode and encode around a conversion, the app's display).
    pub fn finish(&mut self, total_ns: u64) {
        self.phases = super::spans::phases_of(&self.spans);
        self.settle(total_ns);
    }

    /// Sets the wall time and the overlap / other remainders that reconcile it with the phases
    /// as they stand (a report of medians, which has no spans to derive them from).
    pub fn settle(&mut self, total_ns: u64) {
        let phases_ns: u64 = self.phases.iter().map(|p| p.ns).sum();
        self.total_ns = total_ns;
        self.overlap_ns = phases_ns.saturating_sub(total_ns);
        self.other_ns = total_ns.saturating_sub(phases_ns);
        let kernel_ns = self.phase(Phase::Kernel).map(|p| p.ns);
        self.work = WorkFigures::new(self.work.work(), self.kernel, self.pixels(), kernel_ns);
    }

    /// Megapixels of the image.
    #[must_use]
    pub fn megapixels(&self) -> f64 {
        crate::system::units::megapixels(self.width, self.height)
    }
}

/// min / median / max of one figure over the warm runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Fastest run.
    pub min_ns: u64,
    /// Median run (the mean of the middle two for an even count).
    pub median_ns: u64,
    /// Slowest run.
    pub max_ns: u64,
    /// How many runs.
    pub runs: usize,
    /// The clock that timed them, where it is said (absent in results saved before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
}

impl Stats {
    /// Statistics of a non-empty set of durations, their clock unsaid ([`Self::on`]); `None`
    /// when empty.
    #[must_use]
    pub fn of(values: &[u64]) -> Option<Self> {
        let mut v = values.to_vec();
        v.sort_unstable();
        let median_ns = crate::system::median::median_of_sorted(&v)?;
        Some(Self { min_ns: *v.first()?, median_ns, max_ns: *v.last()?, runs: v.len(), clock: None })
    }

    /// The same figures, timed on `clock`.
    #[must_use]
    pub fn on(self, clock: Clock) -> Self {
        Self { clock: Some(clock), ..self }
    }
}

/// Adds a GPU run's spans (the GPU run started `offset_ns` after the report's run), notes and
/// details to a report.
pub(crate) fn add_gpu_timings(report: &mut RunReport, mut t: GpuTimings, offset_ns: u64) {
    // The spans move into the report's timeline, their one record there.
    let spans = std::mem::take(&mut t.spans);
    report.spans.extend(super::spans::from_gpu(&spans, offset_ns, t.gpu_clock_within_ns.is_some()));
    if t.bands > 1 {
        report.notes.push(format!("processed in {} row bands (GPU buffer limit)", t.bands));
    }
    if t.input_resident {
        report.notes.push(
            "the input was already on the GPU (kept from an earlier run of the same image): nothing was uploaded"
                .to_owned(),
        );
    } else if t.input_kept {
        report.notes.push("the input stays on the GPU for the next run of the same image".to_owned());
    }
    if t.timestamps_read_late {
        report.notes.push(
            "this device reads its GPU timestamps late (llvmpipe once a render target is bound), so every GPU \
             step was submitted and timed on its own with the CPU clock"
                .to_owned(),
        );
    }
    if t.suspect_timestamps > 0 {
        report.notes.push(format!(
            "{} of {} GPU chunks had timestamps that cannot be right (longer than the CPU clock saw, or zero); \
             their GPU figures were left out, so the gpu-timestamp phases are too low",
            t.suspect_timestamps, t.chunks
        ));
    }
    report.gpu = Some(t);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_take_the_middle() {
        assert_eq!(Stats::of(&[]), None);
        let s = Stats::of(&[5, 1, 9]).expect("non-empty");
        assert_eq!((s.min_ns, s.median_ns, s.max_ns, s.runs), (1, 5, 9, 3));
        assert_eq!(Stats::of(&[4, 1, 3, 10]).map(|s| s.median_ns), Some(3)); // (3 + 4) / 2 rounded down
        assert_eq!(Stats::of(&[u64::MAX, u64::MAX]).map(|s| s.median_ns), Some(u64::MAX));
    }

    #[test]
    fn a_run_on_a_busy_machine_says_so_and_a_quiet_one_says_nothing() {
        let mut r = RunReport::new(Backend::Cpu, Formula::default(), (4, 4), Vec::new());
        assert_eq!(r.busy_note(), None, "nothing known, nothing claimed");
        r.busy = Some(Busy { others_share: 0.1, steal_share: 0.0 });
        assert_eq!(r.busy_note(), None, "10% of the CPU is quiet");
        r.busy = Some(Busy { others_share: 0.45, steal_share: 0.0 });
        let note = r.busy_note().expect("45% of the CPU is busy");
        assert!(
            note.starts_with("Measured on a busy machine (other processes took 45% of the CPU)"),
            "{note}"
        );
        r.busy = Some(Busy { others_share: 0.05, steal_share: 0.2 });
        let note = r.busy_note().expect("a hypervisor took a fifth");
        assert!(note.contains("a hypervisor 20%"), "{note}");
    }
}
