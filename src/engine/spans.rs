//! The timeline of one run: each step's real start and end since the run started, on the CPU
//! clock, in lanes (the decode, a host copy's thread, the GPU's copies, the kernel, display,
//! encode). Steps of different lanes may overlap; steps of one lane never do. Each span says
//! which phase its time counts toward, and a run's phases are derived from its spans here
//! ([`phases_of`]): the one record of what a run measured. Knows nothing of drawing.

use std::fmt;
use std::time::Instant;

use crate::gpu::{GpuSpan, GpuStep};
use crate::system::clock::Clock;

/// A step of a conversion, in the order they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Reading and decoding the file.
    Decode,
    /// GPU only: pipeline compilation and buffer allocation (large on the first, cold run).
    Setup,
    /// GPU only: host to GPU (copy into staging memory, then the copy to the GPU buffer).
    Upload,
    /// The conversion itself.
    Kernel,
    /// The operation on the gray plane after the grayscale (`--op`): on the CPU the op alone,
    /// on the GPU its stage (upload, passes, download; the parts in [`super::RunReport::op`]).
    Op,
    /// Showing the result: on the GPU, copying it into the app's display store and drawing the
    /// preview from it; in the app, making the preview of a CPU result.
    Display,
    /// GPU only: GPU to host (copy to the readback buffer, then out of mapped memory).
    Download,
    /// Encoding and writing the output file.
    Encode,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Self; 8] = [
        Self::Decode,
        Self::Setup,
        Self::Upload,
        Self::Kernel,
        Self::Op,
        Self::Display,
        Self::Download,
        Self::Encode,
    ];

    /// Lower-case name for reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Decode => "decode",
            Self::Setup => "setup",
            Self::Upload => "upload",
            Self::Kernel => "kernel",
            Self::Op => "op",
            Self::Display => "display",
            Self::Download => "download",
            Self::Encode => "encode",
        }
    }

    /// The timeline's track of a step of this phase timed as one span.
    #[must_use]
    pub fn track(self) -> Track {
        match self {
            Self::Decode => Track::Decode,
            Self::Setup => Track::Setup,
            Self::Upload => Track::Upload,
            Self::Kernel => Track::Kernel,
            Self::Op => Track::Op,
            Self::Display => Track::Display,
            Self::Download => Track::Download,
            Self::Encode => Track::Encode,
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One measured phase of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PhaseTiming {
    /// Which step.
    pub phase: Phase,
    /// How long it took.
    pub ns: u64,
    /// Which clock measured it.
    pub source: Clock,
}

/// Where a step is drawn: one lane per kind of step, one per thread for host copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Track {
    /// Reading and decoding the input file (file-to-file conversions).
    Decode,
    /// GPU setup: pipeline lookup or compilation, buffer allocation.
    Setup,
    /// Host copies into and out of mapped GPU memory by one thread: its rayon index, or `None`
    /// for the calling thread outside the pool.
    HostCopy {
        /// The rayon thread index, `None` for the calling thread.
        thread: Option<usize>,
    },
    /// GPU copies from staging to the input buffer.
    Upload,
    /// The conversion itself (a CPU run's kernel, or a GPU compute pass).
    Kernel,
    /// The CPU kernel on one encoder stripe's rows, inside the encode (file-to-file conversions
    /// that convert as they encode), by one thread: its rayon index, or `None` outside the pool.
    KernelStripe {
        /// The rayon thread index, `None` for a thread outside the pool.
        thread: Option<usize>,
    },
    /// The CPU kernel on one chunk of rows just decoded, on the thread that decodes band `band`
    /// of a JPEG (file-to-file conversions that convert as they decode), within the run's
    /// [`Track::Decode`] span.
    DecodeKernel {
        /// The decoded band (one thread each).
        band: usize,
    },
    /// The CPU kernel's chunks run back to back by one thread of a parallel run: its rayon
    /// index, or `None` outside the pool (within the run's [`Track::Kernel`] span).
    KernelThread {
        /// The rayon thread index, `None` for a thread outside the pool.
        thread: Option<usize>,
    },
    /// The operation on the gray plane after the grayscale (its whole stage on the GPU).
    Op,
    /// One submission of the op's passes on the GPU, from its submit to the end of its wait (a
    /// band's blur, a chunk of the dither's wavefront steps), within the run's [`Track::Op`] span.
    OpSubmission,
    /// Showing the result: GPU copies into the display store, the preview drawn from it, or the
    /// app's texture of a CPU result.
    Display,
    /// GPU copies from the output buffer to readback staging.
    Download,
    /// Encoding and writing the output file.
    Encode,
    /// One encoder stripe coded (its rows asked for, converted where the kernel runs inside the
    /// encode, and compressed) by one thread: its rayon index, or `None` outside the pool.
    EncodeStripe {
        /// The rayon thread index, `None` for a thread outside the pool.
        thread: Option<usize>,
    },
}

impl Track {
    /// The lane's name: "kernel", "host copy · thread 2", "host copy · caller".
    #[must_use]
    pub fn name(self) -> String {
        let on = |what: &str, thread: Option<usize>| match thread {
            Some(t) => format!("{what} · thread {t}"),
            None => format!("{what} · caller"),
        };
        match self {
            Self::HostCopy { thread } => on("host copy", thread),
            Self::KernelStripe { thread } => on("kernel stripes", thread),
            Self::DecodeKernel { band } => format!("kernel in decode · band {band}"),
            Self::KernelThread { thread } => on("kernel", thread),
            Self::OpSubmission => "op passes".to_owned(),
            Self::EncodeStripe { thread } => on("encode stripes", thread),
            one_step => one_step.phase().map_or("", Phase::name).to_owned(),
        }
    }

    /// The phase a span of this lane counts toward, unless its maker says otherwise: `None` for
    /// a lane that details another's span (a thread's share of a parallel kernel, one submission
    /// of an op's stage, an encoder stripe), and for host copies, which count toward the upload
    /// or the download as their maker says.
    #[must_use]
    pub fn phase(self) -> Option<Phase> {
        match self {
            Self::KernelStripe { .. } | Self::DecodeKernel { .. } => Some(Phase::Kernel),
            lane => Phase::ALL.into_iter().find(|p| p.track() == lane),
        }
    }

    /// The lane with its thread left out where threads share one step (host copies: the copy of
    /// one chunk is one step, split over threads that run at once).
    fn shared_step(self) -> Self {
        match self {
            Self::HostCopy { .. } => Self::HostCopy { thread: None },
            other => other,
        }
    }
}

/// How a span's start and end were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SpanClock {
    /// The host's monotonic clock around the step.
    #[serde(rename = "cpu-clock")]
    CpuClock,
    /// The host's clock around a submission of the step alone, waited for (so it includes the
    /// submit and the wait).
    #[serde(rename = "cpu-clock, around its submission")]
    AroundSubmission,
    /// The step's GPU timestamps, mapped onto the CPU clock by the run's calibration of the GPU
    /// clock (within the run's `gpu_clock_within_ns`).
    #[serde(rename = "gpu-timestamp, calibrated")]
    GpuTimestampCalibrated,
    /// The step's length from GPU timestamps, placed on the CPU clock at its submission (not
    /// before the GPU's previous step, not after the host saw it finished): the run's GPU clock
    /// could not be calibrated.
    #[serde(rename = "gpu-timestamp, placed at submit")]
    GpuTimestampAtSubmit,
}

impl SpanClock {
    /// The clock of a phase timed by this span.
    #[must_use]
    pub fn clock(self) -> Clock {
        match self {
            Self::CpuClock | Self::AroundSubmission => Clock::CpuClock,
            Self::GpuTimestampCalibrated | Self::GpuTimestampAtSubmit => Clock::GpuTimestamp,
        }
    }

    /// The label printed beside a span.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::CpuClock => "cpu-clock",
            Self::AroundSubmission => "cpu-clock, around its submission",
            Self::GpuTimestampCalibrated => "gpu-timestamp, calibrated",
            Self::GpuTimestampAtSubmit => "gpu-timestamp, placed at submit",
        }
    }
}

impl fmt::Display for SpanClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// When one step of a run really ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Span {
    /// Its lane.
    pub lane: Track,
    /// Its start, ns since the run started.
    pub start_ns: u64,
    /// Its end, ns since the run started.
    pub end_ns: u64,
    /// How its start and end were found.
    pub clock: SpanClock,
    /// The row band of a banded GPU run its step belongs to (`None` outside bands).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band: Option<u32>,
    /// The phase its time counts toward; `None` for a detail of another span's step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
}

impl Span {
    /// A span on the CPU clock, counted toward its lane's phase.
    #[must_use]
    pub fn cpu(lane: Track, start_ns: u64, end_ns: u64) -> Self {
        let end_ns = end_ns.max(start_ns);
        Self { lane, start_ns, end_ns, clock: SpanClock::CpuClock, band: None, phase: lane.phase() }
    }

    /// A span on the CPU clock from `started` to `ended`, in ns since `origin` (its run's start;
    /// 0 for an instant before it).
    pub(crate) fn between(lane: Track, origin: Instant, (started, ended): (Instant, Instant)) -> Self {
        let since = |t: Instant| crate::system::clock::nanos(t.saturating_duration_since(origin));
        Self::cpu(lane, since(started), since(ended))
    }

    /// Its length.
    #[must_use]
    pub fn ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// A GPU run's spans as the report's, `offset_ns` later (the GPU run started that long after
/// the report's run); `calibrated` when the run mapped its GPU clock onto the CPU's.
pub(crate) fn from_gpu(spans: &[GpuSpan], offset_ns: u64, calibrated: bool) -> Vec<Span> {
    spans
        .iter()
        .map(|s| {
            let lane = match s.step {
                GpuStep::Setup => Track::Setup,
                GpuStep::HostCopy { thread, .. } => Track::HostCopy { thread },
                GpuStep::Upload => Track::Upload,
                GpuStep::Kernel => Track::Kernel,
                GpuStep::Display | GpuStep::Preview => Track::Display,
                GpuStep::Download => Track::Download,
            };
            let phase = match s.step {
                GpuStep::HostCopy { into_gpu: true, .. } => Some(Phase::Upload),
                GpuStep::HostCopy { into_gpu: false, .. } => Some(Phase::Download),
                _ => lane.phase(),
            };
            let clock = match (s.step, s.clock) {
                (GpuStep::Setup | GpuStep::HostCopy { .. }, _) => SpanClock::CpuClock,
                (_, Clock::GpuTimestamp) if calibrated => SpanClock::GpuTimestampCalibrated,
                (_, Clock::GpuTimestamp) => SpanClock::GpuTimestampAtSubmit,
                (_, Clock::CpuClock | Clock::Mixed) => SpanClock::AroundSubmission,
            };
            let (start_ns, end_ns) = (s.start_ns + offset_ns, s.end_ns + offset_ns);
            Span { lane, start_ns, end_ns, clock, band: s.band, phase }
        })
        .collect()
}

/// A run's phases, derived from its spans, in [`Phase`] order: each phase that has a span, its
/// time the sum over its lanes of the time they were busy with it (the host copies of one chunk
/// run on several threads at once and count once; a lane's spans never overlap, so they add),
/// on the clock of the spans that took time (mixed where host copies join GPU copies).
#[must_use]
pub fn phases_of(spans: &[Span]) -> Vec<PhaseTiming> {
    Phase::ALL
        .into_iter()
        .filter_map(|phase| {
            let (ns, source) = time_of(spans, |s| s.phase == Some(phase))?;
            Some(PhaseTiming { phase, ns, source })
        })
        .collect()
}

/// The time of the spans `pick` takes, counted as [`phases_of`] counts a phase's, and its clock;
/// `None` when it takes none.
#[must_use]
pub fn time_of(spans: &[Span], pick: impl Fn(&Span) -> bool) -> Option<(u64, Clock)> {
    let pieces = spans.iter().filter(|s| pick(s));
    crate::system::clock::busy_time(
        pieces.map(|s| (s.lane.shared_step(), s.start_ns, s.end_ns, s.clock.clock())).collect(),
    )
}

/// The first pair of spans of one lane that overlap, if any (spans of a lane are steps one
/// after another: two at once is a bug in how they were timed or placed).
#[must_use]
pub fn track_overlap(spans: &[Span]) -> Option<(Span, Span)> {
    let mut sorted = spans.to_vec();
    sorted.sort_by_key(|s| (s.lane, s.start_ns, s.end_ns));
    sorted.windows(2).find_map(|w| match w {
        [a, b] if a.lane == b.lane && b.start_ns < a.end_ns => Some((*a, *b)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_of_one_lane_one_after_another_do_not_overlap() {
        let a = Span::cpu(Track::Kernel, 0, 10);
        let b = Span::cpu(Track::Kernel, 10, 20);
        let c = Span::cpu(Track::Upload, 5, 15);
        assert_eq!(track_overlap(&[a, b, c]), None);
        let d = Span::cpu(Track::Kernel, 15, 25);
        assert_eq!(track_overlap(&[d, a, b]), Some((b, d)));
    }

    #[test]
    fn phases_come_from_the_spans_that_count_toward_them() {
        let spans = [
            Span::cpu(Track::Decode, 0, 100),
            Span::cpu(Track::DecodeKernel { band: 0 }, 10, 20),
            Span::cpu(Track::DecodeKernel { band: 1 }, 15, 30),
            // Encoder stripes detail the encode; the kernel inside them is CPU time, thread by thread.
            Span::cpu(Track::Encode, 50, 200),
            Span::cpu(Track::EncodeStripe { thread: Some(0) }, 60, 120),
            Span::cpu(Track::KernelStripe { thread: Some(0) }, 60, 70),
            Span::cpu(Track::KernelStripe { thread: Some(1) }, 60, 75),
            Span::cpu(Track::KernelThread { thread: Some(0) }, 0, 1_000),
            Span::cpu(Track::OpSubmission, 0, 1_000),
        ];
        let phases = phases_of(&spans);
        let ns: Vec<(Phase, u64)> = phases.iter().map(|p| (p.phase, p.ns)).collect();
        assert_eq!(ns, [(Phase::Decode, 100), (Phase::Kernel, 10 + 15 + 10 + 15), (Phase::Encode, 150)]);
        assert!(phases.iter().all(|p| p.source == Clock::CpuClock));
        // A host copy counts toward the phase its maker names, threads at once counted once.
        let copy = |thread, (start_ns, end_ns)| Span {
            phase: Some(Phase::Download),
            ..Span::cpu(Track::HostCopy { thread: Some(thread) }, start_ns, end_ns)
        };
        let gpu_copy = Span { clock: SpanClock::GpuTimestampCalibrated, ..Span::cpu(Track::Download, 0, 40) };
        let download = phases_of(&[gpu_copy, copy(0, (40, 90)), copy(1, (45, 100))]);
        assert_eq!(download, [PhaseTiming { phase: Phase::Download, ns: 100, source: Clock::Mixed }]);
        assert_eq!(time_of(&[copy(0, (40, 90))], |s| s.lane == Track::Upload), None);
    }

    #[test]
    fn gpu_spans_take_their_lane_clock_and_offset() {
        let gpu = [
            GpuSpan { step: GpuStep::Preview, start_ns: 5, end_ns: 9, clock: Clock::CpuClock, band: None },
            GpuSpan { step: GpuStep::Kernel, start_ns: 1, end_ns: 4, clock: Clock::GpuTimestamp, band: None },
        ];
        let spans = from_gpu(&gpu, 100, false);
        assert_eq!(spans[0].lane, Track::Display);
        assert_eq!(spans[0].clock, SpanClock::AroundSubmission);
        assert_eq!((spans[1].start_ns, spans[1].end_ns), (101, 104));
        assert_eq!(spans[1].clock.label(), "gpu-timestamp, placed at submit");
        let calibrated = from_gpu(&gpu, 100, true);
        assert_eq!(calibrated[0].clock, SpanClock::AroundSubmission);
        assert_eq!(calibrated[1].clock.label(), "gpu-timestamp, calibrated");
    }
}
