//! Recording one chunk's commands: the upload copy, the kernel's dispatch for each of its slices,
//! the display hook (a copy of the chunk's output into the display store) and the download copy,
//! each optionally between two named timestamps written right before and after it. The pipelined
//! and the step-by-step drivers record the same commands; only how they submit and time them
//! differs.

use crate::gpu::GpuContext;
use crate::gpu::display::{BandOutput, GpuTiles};
use crate::gpu::memory::ring::{BandBuffers, StagingSlot};
use crate::gpu::plan::grid::{Dispatch, PARAMS_STRIDE};
use crate::gpu::plan::run_plan::{Chunk, Slice};
use crate::gpu::timing::timestamps::{Stamp, Timestamps};
use crate::pixel::Kernel;

/// Everything that stays the same for every chunk of a run.
pub(crate) struct RunCommands<'a> {
    /// The device.
    pub ctx: &'a GpuContext,
    /// The kernel.
    pub kernel: Kernel,
    /// Its pipeline.
    pub pipeline: &'a wgpu::ComputePipeline,
    /// Bindings of the input, output and parameter buffers: one for every band, or one that
    /// every band shares (the ring's input buffer).
    pub bind_groups: &'a [wgpu::BindGroup],
    /// The input buffers the chunks are uploaded into, like `bind_groups`: one per band (a
    /// resident input) or one for all.
    pub inputs: &'a [wgpu::Buffer],
    /// Whether the chunks' input is uploaded (not when it is already resident on the GPU).
    pub upload: bool,
    /// The ring's buffers (its output buffer is every band's).
    pub band: &'a BandBuffers,
    /// Image rows per band.
    pub rows_per_band: u32,
    /// One dispatch per slice.
    pub dispatches: &'a [Dispatch],
    /// Where the result is kept for display, if anywhere.
    pub display: Option<&'a GpuTiles>,
    /// Whether results are copied back to the host.
    pub download: bool,
}

impl RunCommands<'_> {
    /// Which of `inputs` and `bind_groups` serves `band`.
    fn band_index(&self, band: u32) -> usize {
        if self.inputs.len() > 1 { band as usize } else { 0 }
    }

    /// Copies the chunk's staged input into its place in the input buffer (nothing when the input
    /// is already resident).
    pub(crate) fn upload(
        &self,
        enc: &mut wgpu::CommandEncoder,
        slot: &StagingSlot,
        chunk: &Chunk,
        ts: Option<&Timestamps>,
    ) {
        let (offset, bytes) = chunk.in_bytes(self.kernel);
        stamp(enc, ts, Stamp::UploadStart);
        if self.upload
            && let Some(input) = self.inputs.get(self.band_index(chunk.band))
        {
            enc.copy_buffer_to_buffer(&slot.upload, 0, input, offset, bytes);
        }
        stamp(enc, ts, Stamp::UploadEnd);
    }

    /// The kernel's compute pass over one slice's words (the chunk's `nth` slice), with pass
    /// timestamps into that slice's pair when given.
    pub(crate) fn kernel(
        &self,
        enc: &mut wgpu::CommandEncoder,
        (slice, nth): (&Slice, u32),
        ts: Option<&Timestamps>,
    ) {
        let (Some(dispatch), Some(bind_group)) =
            (self.dispatches.get(slice.index), self.bind_groups.get(self.band_index(slice.band)))
        else {
            return;
        };
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("grayscale"),
            timestamp_writes: ts
                .map(|t| t.pass_writes(Some(Stamp::KernelStart(nth)), Some(Stamp::KernelEnd(nth)))),
        });
        pass.set_pipeline(self.pipeline);
        let params_offset = (slice.index as u64 * PARAMS_STRIDE) as u32;
        pass.set_bind_group(0, bind_group, &[params_offset]);
        pass.dispatch_workgroups(dispatch.groups.0, dispatch.groups.1, dispatch.groups.2);
    }

    /// Copies the chunk's output words into the display store (nothing without a display
    /// target); the preview is drawn from the store after the last chunk.
    pub(crate) fn display(&self, enc: &mut wgpu::CommandEncoder, chunk: &Chunk, ts: Option<&Timestamps>) {
        stamp(enc, ts, Stamp::DisplayStart);
        if let Some(tiles) = self.display {
            let band = BandOutput {
                buffer: &self.band.output,
                kernel: self.kernel,
                band_row0: chunk.band_row0,
                rows_per_band: self.rows_per_band,
            };
            tiles.store_chunk(enc, &band, chunk.words.clone());
        }
        stamp(enc, ts, Stamp::DisplayEnd);
    }

    /// Copies the chunk's output words to the slot's download staging (nothing when the result
    /// stays on the GPU).
    pub(crate) fn download(
        &self,
        enc: &mut wgpu::CommandEncoder,
        slot: &StagingSlot,
        chunk: &Chunk,
        ts: Option<&Timestamps>,
    ) {
        stamp(enc, ts, Stamp::DownloadStart);
        if self.download {
            let (offset, bytes) = chunk.out_bytes();
            enc.copy_buffer_to_buffer(&self.band.output, offset, &slot.download, 0, bytes);
        }
        stamp(enc, ts, Stamp::DownloadEnd);
    }

    /// The chunk's `nth` submission of `slices.len()`, each step between encoder timestamps
    /// when the slot has them: the first uploads the chunk, each runs the kernel over one slice,
    /// the last copies the chunk into the display store and to download staging and resolves
    /// every stamp of the chunk. A plain run's chunk is usually one slice: one submission.
    pub(crate) fn chunk_submission(
        &self,
        slot: &StagingSlot,
        chunk: &Chunk,
        slices: &[Slice],
        nth: usize,
    ) -> wgpu::CommandBuffer {
        let mut enc = self.ctx.encoder("chunk");
        let ts = slot.timestamps.as_ref();
        if nth == 0 {
            self.upload(&mut enc, slot, chunk, ts);
        }
        if let Some(slice) = slices.get(nth) {
            self.kernel(&mut enc, (slice, nth as u32), ts);
        }
        if nth + 1 >= slices.len() {
            self.display(&mut enc, chunk, ts);
            self.download(&mut enc, slot, chunk, ts);
            if let Some(ts) = ts {
                let last = slices.len().saturating_sub(1) as u32;
                ts.resolve(&mut enc, (Stamp::UploadStart, Stamp::KernelEnd(last)));
            }
        }
        enc.finish()
    }
}

fn stamp(enc: &mut wgpu::CommandEncoder, ts: Option<&Timestamps>, stamp: Stamp) {
    if let Some(ts) = ts {
        ts.write(enc, stamp);
    }
}
