//! GPU timestamps of one submission, by name: a query set with a slot per [`Stamp`], resolved
//! into a buffer and read back, and the spans between them per [`Span`]; and the check that a
//! device reads its clock where a timestamp is written ([`TimestampCheck`]); which clock measured
//! a ceiling ([`ProbeClock`]).

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::gpu::device::wait::{MapResult, map};
use crate::gpu::{GpuContext, GpuError};

/// Which clock measured a ceiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProbeClock {
    /// GPU timestamps around the copy.
    #[serde(rename = "gpu-timestamp")]
    GpuTimestamp,
    /// The host's monotonic clock (around a host copy, or around a submit-and-wait).
    #[serde(rename = "cpu-clock")]
    CpuClock,
}

impl ProbeClock {
    /// The label printed beside the figure.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::GpuTimestamp => "gpu-timestamp",
            Self::CpuClock => "cpu-clock",
        }
    }
}

/// A point in one submission's commands where the GPU clock is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    /// Before the copy from upload staging to the input buffer.
    UploadStart,
    /// After it.
    UploadEnd,
    /// Start of the kernel's compute pass.
    KernelStart,
    /// End of it.
    KernelEnd,
    /// Before the display hook (the copy into the display store).
    DisplayStart,
    /// After them.
    DisplayEnd,
    /// Before the copy from the output buffer to download staging.
    DownloadStart,
    /// After it.
    DownloadEnd,
}

impl Stamp {
    /// Every stamp, in query-slot order.
    const ALL: [Self; 8] = [
        Self::UploadStart,
        Self::UploadEnd,
        Self::KernelStart,
        Self::KernelEnd,
        Self::DisplayStart,
        Self::DisplayEnd,
        Self::DownloadStart,
        Self::DownloadEnd,
    ];

    /// The query slot.
    pub(crate) fn slot(self) -> u32 {
        self as u32
    }
}

/// A measured step of one submission: the time between two stamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Span {
    /// The upload copy.
    Upload,
    /// The kernel's compute pass.
    Kernel,
    /// The display hook (the copy into the display store).
    Display,
    /// The download copy.
    Download,
    /// The whole submission, first stamp to last.
    Submission,
}

impl Span {
    fn stamps(self) -> (Stamp, Stamp) {
        match self {
            Self::Upload => (Stamp::UploadStart, Stamp::UploadEnd),
            Self::Kernel => (Stamp::KernelStart, Stamp::KernelEnd),
            Self::Display => (Stamp::DisplayStart, Stamp::DisplayEnd),
            Self::Download => (Stamp::DownloadStart, Stamp::DownloadEnd),
            Self::Submission => (Stamp::UploadStart, Stamp::DownloadEnd),
        }
    }
}

const COUNT: u32 = Stamp::ALL.len() as u32;
const BYTES: u64 = COUNT as u64 * 8;

/// A query set with one slot per [`Stamp`], and the buffers that bring it back to the host.
pub(crate) struct Timestamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

/// The ticks read back from one submission.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ticks([u64; COUNT as usize]);

impl Ticks {
    /// Ticks between the two stamps of `span` (0 if the clock went backwards).
    pub(crate) fn span(&self, span: Span) -> u64 {
        let (start, end) = span.stamps();
        self.0[end.slot() as usize].saturating_sub(self.0[start.slot() as usize])
    }
}

impl Timestamps {
    /// Creates the query set and its buffers.
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        let device = ctx.device();
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        Self {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("submission timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: COUNT,
            }),
            resolve: buffer(
                "timestamp resolve",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            readback: buffer(
                "timestamp readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        }
    }

    /// Records a read of the GPU clock into `stamp`'s slot (needs encoder timestamps).
    pub(crate) fn write(&self, encoder: &mut wgpu::CommandEncoder, stamp: Stamp) {
        encoder.write_timestamp(&self.set, stamp.slot());
    }

    /// Timestamp writes for a compute pass into the `start` and `end` slots.
    pub(crate) fn pass_writes(&self, start: Stamp, end: Stamp) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(start.slot()),
            end_of_pass_write_index: Some(end.slot()),
        }
    }

    /// Records the copy of the slots `stamps` (every one written in this submission) to the
    /// readback buffer.
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder, stamps: (Stamp, Stamp)) {
        let range = stamps.0.slot()..stamps.1.slot() + 1;
        let offset = u64::from(range.start) * 8;
        let bytes = u64::from(range.end - range.start) * 8;
        // Resolve offsets must be 256-aligned: resolve to the start, copy into place.
        encoder.resolve_query_set(&self.set, range, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, offset, bytes);
    }

    /// Starts mapping the readback buffer (call after submitting).
    pub(crate) fn map(&self) -> MapResult {
        map(&self.readback, 0..BYTES, wgpu::MapMode::Read)
    }

    /// Reads the mapped readback buffer and unmaps it. Slots not resolved read as 0.
    pub(crate) fn read(&self) -> Result<Ticks, GpuError> {
        let mut ticks = Ticks::default();
        {
            let view = self.readback.get_mapped_range(0..BYTES).map_err(|e| GpuError::Map(e.to_string()))?;
            for (tick, bytes) in ticks.0.iter_mut().zip(view.chunks_exact(8)) {
                let mut word = [0u8; 8];
                word.copy_from_slice(bytes);
                *tick = u64::from_le_bytes(word);
            }
        }
        self.readback.unmap();
        Ok(ticks)
    }
}

/// Bytes the probe copies between its two stamps.
const PROBE_BYTES: u64 = 4 << 20;

/// A check that the device's timestamps are taken where they are written.
///
/// Mesa's llvmpipe (lavapipe) bins a timestamp into its current render scene once a render
/// target has been bound on the device (eframe's frames do that) and reads the clock only when
/// that scene is flushed, at the *next* timestamp: every reading then belongs one stamp later,
/// and a kernel's span shrinks to almost nothing. The probe writes stamps 0 and 1 back to back,
/// then a copy, then stamp 2. Taken in place, 0..1 is nothing and 1..2 is the copy; deferred,
/// 0..1 is the copy and 1..2 is nothing.
pub(crate) struct TimestampProbe {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    from: wgpu::Buffer,
    to: wgpu::Buffer,
}

impl TimestampProbe {
    /// Allocates the probe's query set and buffers (needs encoder timestamps).
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        use wgpu::BufferUsages as U;
        let device = ctx.device();
        let buffer = |label, size, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        Self {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamp probe"),
                ty: wgpu::QueryType::Timestamp,
                count: 3,
            }),
            resolve: buffer("timestamp probe resolve", 24, U::QUERY_RESOLVE | U::COPY_SRC),
            readback: buffer("timestamp probe readback", 24, U::MAP_READ | U::COPY_DST),
            from: buffer("timestamp probe source", PROBE_BYTES, U::COPY_SRC),
            to: buffer("timestamp probe target", PROBE_BYTES, U::COPY_DST),
        }
    }

    /// Whether the device's timestamps are read where they are written (submits and waits).
    pub(crate) fn in_place(&self, ctx: &GpuContext) -> Result<bool, GpuError> {
        let mut enc =
            ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("probe") });
        enc.write_timestamp(&self.set, 0);
        enc.write_timestamp(&self.set, 1);
        enc.copy_buffer_to_buffer(&self.from, 0, &self.to, 0, PROBE_BYTES);
        enc.write_timestamp(&self.set, 2);
        enc.resolve_query_set(&self.set, 0..3, &self.resolve, 0);
        enc.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, 24);
        ctx.queue().submit([enc.finish()]);
        crate::gpu::device::wait::mapped(ctx.device(), &map(&self.readback, 0..24, wgpu::MapMode::Read))?;
        let mut ticks = [0u64; 3];
        {
            let view = self.readback.get_mapped_range(0..24).map_err(|e| GpuError::Map(e.to_string()))?;
            for (tick, bytes) in ticks.iter_mut().zip(view.chunks_exact(8)) {
                let mut word = [0u8; 8];
                word.copy_from_slice(bytes);
                *tick = u64::from_le_bytes(word);
            }
        }
        self.readback.unmap();
        let before_copy = ticks[1].saturating_sub(ticks[0]);
        let copy = ticks[2].saturating_sub(ticks[1]);
        Ok(before_copy <= copy)
    }
}

/// Late readings in a row the timestamp probe needs before it believes them.
const PROBE_ATTEMPTS: usize = 3;

/// Whether a device's timestamps are read where they are written: probed on first use, and
/// before every use on a software adapter, where it is known to change (see [`TimestampProbe`]).
/// Devices without encoder timestamps are not probed.
pub(crate) struct TimestampCheck {
    probe: OnceLock<TimestampProbe>,
    /// What the probe last found.
    known: Mutex<Option<bool>>,
}

impl TimestampCheck {
    /// Nothing probed yet.
    pub(crate) fn new() -> Self {
        Self { probe: OnceLock::new(), known: Mutex::new(None) }
    }

    /// Whether `ctx`'s timestamps can be trusted where they are written (submits and waits when
    /// it probes).
    pub(crate) fn in_place(&self, ctx: &GpuContext) -> Result<bool, GpuError> {
        if !ctx.timestamps().encoders {
            return Ok(true);
        }
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(in_place) = *known
            && !ctx.is_software()
        {
            return Ok(in_place);
        }
        // A thread preempted between the probe's first two stamps looks like a late clock:
        // only three late readings in a row count.
        let probe = self.probe.get_or_init(|| TimestampProbe::new(ctx));
        let mut in_place = false;
        for _ in 0..PROBE_ATTEMPTS {
            if probe.in_place(ctx)? {
                in_place = true;
                break;
            }
        }
        *known = Some(in_place);
        Ok(in_place)
    }
}
