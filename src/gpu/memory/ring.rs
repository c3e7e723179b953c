//! The buffers of a conversion: one input and one output buffer as large as the largest band
//! (every band reuses them, in queue order), and a ring of staging slots, each holding one
//! chunk's upload and download staging buffers and its timestamp queries, so the host can fill
//! chunk i+1 and read chunk i-1 while the GPU works on chunk i.

use crate::gpu::device::host_copy::{ThreadCopy, fill_mapped, read_mapped};
use crate::gpu::device::wait::{MapResult, map, mapped};
use crate::gpu::plan::run_plan::RingNeeds;
use crate::gpu::timing::timestamps::Timestamps;
use crate::gpu::{GpuContext, GpuError};

/// The input and output buffers the kernel binds.
pub(crate) struct BandBuffers {
    /// Input pixels of one band (storage, copy destination).
    pub input: wgpu::Buffer,
    /// Output words of one band (storage, copy source).
    pub output: wgpu::Buffer,
}

/// One chunk's staging buffers and timestamps.
pub(crate) struct StagingSlot {
    /// Host-written upload staging (`MAP_WRITE | COPY_SRC`).
    pub upload: wgpu::Buffer,
    /// Host-read download staging (`MAP_READ | COPY_DST`).
    pub download: wgpu::Buffer,
    /// The slot's timestamp queries, when timing on the GPU clock.
    pub timestamps: Option<Timestamps>,
    upload_state: UploadState,
}

/// Every buffer of a conversion, kept between runs of the same or a smaller size (a larger chunk
/// alone replaces the staging slots, not the band buffers).
pub(crate) struct Ring {
    needs: RingNeeds,
    /// The band buffers.
    pub band: BandBuffers,
    /// The staging slots.
    pub slots: Vec<StagingSlot>,
}

impl Ring {
    /// Allocates every buffer. The upload staging buffers start mapped.
    pub(crate) fn new(ctx: &GpuContext, needs: RingNeeds) -> Self {
        use wgpu::BufferUsages as U;
        // Allocation order is fixed (band buffers, then each slot) so every run of a size
        // starts from the same memory layout, in a sweep as in a fresh process.
        let band = BandBuffers {
            input: ctx.buffer("input band", needs.band_in_bytes, U::STORAGE | U::COPY_DST),
            output: ctx.buffer("output band", needs.band_out_bytes, U::STORAGE | U::COPY_SRC | U::COPY_DST),
        };
        Self { needs, band, slots: slots(ctx, &needs) }
    }

    /// Whether the band buffers serve a run with `needs`.
    pub(crate) fn bands_serve(&self, needs: &RingNeeds) -> bool {
        self.needs.band_in_bytes >= needs.band_in_bytes && self.needs.band_out_bytes >= needs.band_out_bytes
    }

    /// Whether the staging slots serve a run with `needs`.
    pub(crate) fn slots_serve(&self, needs: &RingNeeds) -> bool {
        let have = &self.needs;
        have.chunk_in_bytes >= needs.chunk_in_bytes
            && have.chunk_out_bytes >= needs.chunk_out_bytes
            && have.slots >= needs.slots
            && have.slices_per_chunk >= needs.slices_per_chunk
            && have.timestamps == needs.timestamps
            && !self.slots.is_empty()
    }

    /// New staging slots for `needs`, the band buffers kept (they serve it).
    pub(crate) fn restage(&mut self, ctx: &GpuContext, needs: RingNeeds) {
        self.slots = slots(ctx, &needs);
        self.needs = RingNeeds {
            band_in_bytes: self.needs.band_in_bytes,
            band_out_bytes: self.needs.band_out_bytes,
            ..needs
        };
    }

    /// Bytes of the input buffer (bound whole).
    pub(crate) fn band_in_bytes(&self) -> u64 {
        self.needs.band_in_bytes
    }

    /// Bytes of the output buffer (bound whole).
    pub(crate) fn band_out_bytes(&self) -> u64 {
        self.needs.band_out_bytes
    }
}

impl StagingSlot {
    /// Waits until the upload staging buffer is mapped for writing (mapping it if needed).
    pub(crate) fn upload_ready(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        let state = std::mem::replace(&mut self.upload_state, UploadState::Mapped);
        let rx = match state {
            UploadState::Mapped => return Ok(()),
            UploadState::Mapping(rx) => rx,
            UploadState::Unmapped => map(&self.upload, 0..self.upload.size(), wgpu::MapMode::Write),
        };
        let result = mapped(ctx.device(), &rx);
        if result.is_err() {
            self.upload_state = UploadState::Unmapped;
        }
        result
    }

    /// Copies `src` into the upload staging (mapped first if needed), zero-padded to `bytes`;
    /// when each thread that took part copied. Unmap it before submitting the copy out of it.
    pub(crate) fn fill_upload(
        &mut self,
        ctx: &GpuContext,
        src: &[u8],
        bytes: u64,
    ) -> Result<Vec<ThreadCopy>, GpuError> {
        self.upload_ready(ctx)?;
        let mut view = self.upload.get_mapped_range_mut(0..bytes).map_err(|e| GpuError::Map(e.into()))?;
        fill_mapped(&mut view, src)
    }

    /// Copies the start of the mapped download staging (`bytes` mapped) into all of `dst` and
    /// unmaps it; when each thread that took part copied.
    pub(crate) fn read_download(&self, bytes: u64, dst: &mut [u8]) -> Result<Vec<ThreadCopy>, GpuError> {
        let copies = {
            let view = self.download.get_mapped_range(0..bytes).map_err(|e| GpuError::Map(e.into()))?;
            read_mapped(&view, dst)?
        };
        self.download.unmap();
        Ok(copies)
    }

    /// Unmaps the upload staging buffer before a submission reads it.
    pub(crate) fn unmap_upload(&mut self) {
        if matches!(self.upload_state, UploadState::Mapped) {
            self.upload.unmap();
            self.upload_state = UploadState::Unmapped;
        }
    }

    /// Starts mapping the upload staging buffer again (call after submitting the copy out of
    /// it); it is answered once the GPU is done with it.
    pub(crate) fn remap_upload(&mut self) {
        if matches!(self.upload_state, UploadState::Unmapped) {
            let size = self.upload.size();
            self.upload_state = UploadState::Mapping(map(&self.upload, 0..size, wgpu::MapMode::Write));
        }
    }
}

/// The staging slots of `needs` (the upload staging mapped).
fn slots(ctx: &GpuContext, needs: &RingNeeds) -> Vec<StagingSlot> {
    use wgpu::BufferUsages as U;
    (0..needs.slots)
        .map(|_| StagingSlot {
            upload: ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("upload staging"),
                size: needs.chunk_in_bytes,
                usage: U::MAP_WRITE | U::COPY_SRC,
                mapped_at_creation: true,
            }),
            download: ctx.buffer("download staging", needs.chunk_out_bytes, U::MAP_READ | U::COPY_DST),
            timestamps: needs.timestamps.then(|| Timestamps::new(ctx, needs.slices_per_chunk)),
            upload_state: UploadState::Mapped,
        })
        .collect()
}

/// Where the upload staging buffer's mapping stands.
enum UploadState {
    /// Mapped for writing.
    Mapped,
    /// Unmapped (written, or handed to the GPU).
    Unmapped,
    /// A write mapping requested, not yet answered.
    Mapping(MapResult),
}
