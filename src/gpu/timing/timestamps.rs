//! GPU timestamps of one submission, by name: a query set with a slot per [`Stamp`], resolved
//! into a buffer and read back, and the spans between them per [`StampSpan`]; and the check that a
//! device reads its clock where a timestamp is written ([`TimestampCheck`]).

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::gpu::device::wait::{MapResult, map, mapped};
use crate::gpu::{GpuContext, GpuError};

/// A point in one chunk's commands where the GPU clock is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    /// Before the copy from upload staging to the input buffer.
    UploadStart,
    /// After it.
    UploadEnd,
    /// Before the display hook (the copy into the display store).
    DisplayStart,
    /// After them.
    DisplayEnd,
    /// Before the copy from the output buffer to download staging.
    DownloadStart,
    /// After it.
    DownloadEnd,
    /// Start of the compute pass of the chunk's slice with this index.
    KernelStart(u32),
    /// End of it.
    KernelEnd(u32),
}

/// Query slots before the kernel's pairs.
const FIXED_SLOTS: u32 = 6;

impl Stamp {
    /// The query slot: the copies' six, then a pair per slice of the kernel.
    pub(crate) fn slot(self) -> u32 {
        match self {
            Self::UploadStart => 0,
            Self::UploadEnd => 1,
            Self::DisplayStart => 2,
            Self::DisplayEnd => 3,
            Self::DownloadStart => 4,
            Self::DownloadEnd => 5,
            Self::KernelStart(slice) => FIXED_SLOTS + 2 * slice,
            Self::KernelEnd(slice) => FIXED_SLOTS + 2 * slice + 1,
        }
    }
}

/// A measured step of one chunk: the time between two stamps, or the sum of such times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StampSpan {
    /// The upload copy.
    Upload,
    /// The compute pass of the chunk's slice with this index.
    Slice(u32),
    /// The compute passes of the chunk's first `n` slices, added up (each its own submission:
    /// what lies between them is not the kernel's).
    Kernels(u32),
    /// The display hook (the copy into the display store).
    Display,
    /// The download copy.
    Download,
    /// The whole chunk, first stamp to last (every submission of it, and what lies between).
    Submission,
}

/// A query set with a slot per [`Stamp`] of a chunk of up to `slices` slices, and the buffers
/// that bring it back to the host.
pub(crate) struct Timestamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

/// The ticks read back from one chunk (slots not resolved for it hold older readings).
#[derive(Clone, Debug, Default)]
pub(crate) struct Ticks(Vec<u64>);

impl Ticks {
    /// The GPU clock's reading at `stamp` (0 when it was not read back).
    pub(crate) fn at(&self, stamp: Stamp) -> u64 {
        self.0.get(stamp.slot() as usize).copied().unwrap_or(0)
    }

    fn between(&self, start: Stamp, end: Stamp) -> u64 {
        self.at(end).saturating_sub(self.at(start))
    }

    /// Ticks of `span` (0 for a pair whose clock went backwards).
    pub(crate) fn span(&self, span: StampSpan) -> u64 {
        match span {
            StampSpan::Upload => self.between(Stamp::UploadStart, Stamp::UploadEnd),
            StampSpan::Slice(i) => self.between(Stamp::KernelStart(i), Stamp::KernelEnd(i)),
            StampSpan::Kernels(n) => (0..n).map(|i| self.span(StampSpan::Slice(i))).sum(),
            StampSpan::Display => self.between(Stamp::DisplayStart, Stamp::DisplayEnd),
            StampSpan::Download => self.between(Stamp::DownloadStart, Stamp::DownloadEnd),
            StampSpan::Submission => self.between(Stamp::UploadStart, Stamp::DownloadEnd),
        }
    }
}

impl Timestamps {
    /// Creates the query set and its buffers, with a pair of kernel stamps for each of `slices`
    /// slices (at least one).
    pub(crate) fn new(ctx: &GpuContext, slices: usize) -> Self {
        let most = (wgpu::QUERY_SET_MAX_QUERIES - FIXED_SLOTS) / 2;
        let slices = u32::try_from(slices.max(1)).unwrap_or(most).min(most);
        let count = FIXED_SLOTS + 2 * slices;
        let buffer = |label, usage| ctx.buffer(label, u64::from(count) * 8, usage);
        Self {
            set: ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("chunk timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count,
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

    /// Timestamp writes for a compute pass into the `start` and `end` slots (either may be left
    /// out: a pass among several stamps only the first's start and the last's end).
    pub(crate) fn pass_writes(
        &self,
        start: Option<Stamp>,
        end: Option<Stamp>,
    ) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: start.map(Stamp::slot),
            end_of_pass_write_index: end.map(Stamp::slot),
        }
    }

    /// Records the copy of the slots from `stamps.0` to `stamps.1` (every one written, in this
    /// submission or an earlier one) to the readback buffer.
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder, stamps: (Stamp, Stamp)) {
        let range = stamps.0.slot()..stamps.1.slot() + 1;
        let offset = u64::from(range.start) * 8;
        let bytes = u64::from(range.end - range.start) * 8;
        // Resolve offsets must be 256-aligned: resolve to the start, copy into place.
        encoder.resolve_query_set(&self.set, range, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, offset, bytes);
    }

    /// `span`'s length in ns, once the readback is mapped (call after submitting).
    pub(crate) fn span_ns(&self, ctx: &GpuContext, span: StampSpan) -> Result<u64, GpuError> {
        mapped(ctx.device(), &self.map())?;
        Ok(ctx.ticks_to_ns(self.read()?.span(span)))
    }

    /// Starts mapping the readback buffer (call after submitting).
    pub(crate) fn map(&self) -> MapResult {
        map(&self.readback, 0..self.readback.size(), wgpu::MapMode::Read)
    }

    /// Reads the mapped readback buffer and unmaps it. Slots never resolved read as 0.
    pub(crate) fn read(&self) -> Result<Ticks, GpuError> {
        let ticks = {
            let view = self.readback.get_mapped_range(..).map_err(|e| GpuError::Map(e.into()))?;
            view.chunks_exact(8).map(|b| b.first_chunk().map_or(0, |w| u64::from_le_bytes(*w))).collect()
        };
        self.readback.unmap();
        Ok(Ticks(ticks))
    }
}

/// Whether a GPU reading of `gpu_ns` can be right beside `cpu_ns`, the CPU clock from the
/// same work's submit until it was seen finished: the GPU cannot have taken longer (give or
/// take a tenth and 0.2 ms).
pub(crate) fn within_cpu_clock(gpu_ns: u64, cpu_ns: u64) -> bool {
    gpu_ns <= cpu_ns + cpu_ns / 10 + 200_000
}

/// Bytes the probe copies between its two stamps.
const PROBE_BYTES: u64 = 4 << 20;

/// A check that the device's timestamps are taken where they are written.
///
/// Mesa's llvmpipe (lavapipe) bins a timestamp into its current render scene once a render
/// target has been bound on the device (eframe's frames do that) and reads the clock only when
/// that scene is flushed, at the *next* timestamp: every reading then belongs one stamp later,
/// and a kernel's span shrinks to almost nothing. The probe writes two stamps back to back,
/// then a copy, then a third. Taken in place, the first span is nothing and the second is the
/// copy; deferred, the first is the copy and the second is nothing.
pub(crate) struct TimestampProbe {
    stamps: Timestamps,
    from: wgpu::Buffer,
    to: wgpu::Buffer,
}

impl TimestampProbe {
    /// Allocates the probe's query set and buffers (needs encoder timestamps).
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        use wgpu::BufferUsages as U;
        Self {
            stamps: Timestamps::new(ctx, 1),
            from: ctx.buffer("timestamp probe source", PROBE_BYTES, U::COPY_SRC),
            to: ctx.buffer("timestamp probe target", PROBE_BYTES, U::COPY_DST),
        }
    }

    /// Whether the device's timestamps are read where they are written (submits and waits).
    pub(crate) fn in_place(&self, ctx: &GpuContext) -> Result<bool, GpuError> {
        let (first, second, third) = (Stamp::UploadStart, Stamp::UploadEnd, Stamp::DisplayStart);
        let mut enc = ctx.encoder("probe");
        self.stamps.write(&mut enc, first);
        self.stamps.write(&mut enc, second);
        enc.copy_buffer_to_buffer(&self.from, 0, &self.to, 0, PROBE_BYTES);
        self.stamps.write(&mut enc, third);
        self.stamps.resolve(&mut enc, (first, third));
        ctx.queue().submit([enc.finish()]);
        mapped(ctx.device(), &self.stamps.map())?;
        let ticks = self.stamps.read()?;
        Ok(ticks.between(first, second) <= ticks.between(second, third))
    }
}

/// Late readings in a row the timestamp probe needs before it believes them.
const PROBE_ATTEMPTS: usize = 3;

/// Whether a device's timestamps are read where they are written: probed on first use, and
/// before every use on a software adapter, where it is known to change (see [`TimestampProbe`]).
/// Devices without encoder timestamps are not probed. Nothing is probed at first.
#[derive(Default)]
pub(crate) struct TimestampCheck {
    probe: OnceLock<TimestampProbe>,
    /// What the probe last found.
    known: Mutex<Option<bool>>,
}

impl TimestampCheck {
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
