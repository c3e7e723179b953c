//! The timeline of one run: each step's real start and end since the run started, on the CPU
//! clock, in lanes (the decode, a host copy's thread, the GPU's copies, the kernel, display, encode). Steps of
//! different lanes may overlap; steps of one lane never do. Knows nothing of drawing.

use std::fmt;

use crate::gpu::{GpuSpan, GpuStep};
use crate::system::clock::Clock;

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
        match self {
            Self::Decode => "decode".to_owned(),
            Self::Setup => "setup".to_owned(),
            Self::HostCopy { thread: Some(t) } => format!("host copy · thread {t}"),
            Self::HostCopy { thread: None } => "host copy · caller".to_owned(),
            Self::Upload => "upload".to_owned(),
            Self::Kernel => "kernel".to_owned(),
            Self::KernelStripe { thread: Some(t) } => format!("kernel stripes · thread {t}"),
            Self::KernelStripe { thread: None } => "kernel stripes · caller".to_owned(),
            Self::KernelThread { thread: Some(t) } => format!("kernel · thread {t}"),
            Self::KernelThread { thread: None } => "kernel · caller".to_owned(),
            Self::Op => "op".to_owned(),
            Self::OpSubmission => "op passes".to_owned(),
            Self::Display => "display".to_owned(),
            Self::Download => "download".to_owned(),
            Self::Encode => "encode".to_owned(),
            Self::EncodeStripe { thread: Some(t) } => format!("encode stripes · thread {t}"),
            Self::EncodeStripe { thread: None } => "encode stripes · caller".to_owned(),
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
}

impl Span {
    /// A span on the CPU clock.
    #[must_use]
    pub fn cpu(lane: Track, start_ns: u64, end_ns: u64) -> Self {
        Self { lane, start_ns, end_ns: end_ns.max(start_ns), clock: SpanClock::CpuClock, band: None }
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
                GpuStep::HostCopy { thread } => Track::HostCopy { thread },
                GpuStep::Upload => Track::Upload,
                GpuStep::Kernel => Track::Kernel,
                GpuStep::Display | GpuStep::Preview => Track::Display,
                GpuStep::Download => Track::Download,
            };
            let clock = match (s.step, s.clock) {
                (GpuStep::Setup | GpuStep::HostCopy { .. }, _) => SpanClock::CpuClock,
                (_, Clock::GpuTimestamp) if calibrated => SpanClock::GpuTimestampCalibrated,
                (_, Clock::GpuTimestamp) => SpanClock::GpuTimestampAtSubmit,
                (_, Clock::CpuClock | Clock::Mixed) => SpanClock::AroundSubmission,
            };
            Span { lane, start_ns: s.start_ns + offset_ns, end_ns: s.end_ns + offset_ns, clock, band: s.band }
        })
        .collect()
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
