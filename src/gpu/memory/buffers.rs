//! The buffers a [`crate::gpu::GpuConverter`] keeps between runs: the ring (band buffers and staging
//! slots) and an input kept on the GPU. Stale ones are freed, and the device waited for, before
//! new ones are allocated, as a fresh process would find the device.

use crate::gpu::device::wait::wait_for;
use crate::gpu::memory::resident_input::{InputLayout, ResidentInput};
use crate::gpu::memory::ring::Ring;
use crate::gpu::plan::bands::BandPlan;
use crate::gpu::plan::run_plan::RingNeeds;
use crate::gpu::{GpuContext, GpuError};

/// What a converter keeps.
pub(crate) struct Buffers {
    /// The ring, when a run has allocated one.
    pub ring: Option<Ring>,
    /// An input kept on the GPU ([`crate::gpu::GpuJob::keep_input`]).
    pub input: Option<ResidentInput>,
}

impl Buffers {
    /// Nothing allocated.
    pub(crate) fn new() -> Self {
        Self { ring: None, input: None }
    }

    /// Makes the ring serve `needs` and the kept input be `layout`'s (none without a layout),
    /// reusing what fits. The ring's own input buffer is not needed when the input is kept.
    pub(crate) fn prepare(
        &mut self,
        ctx: &GpuContext,
        mut needs: RingNeeds,
        layout: Option<InputLayout>,
        bands: &BandPlan,
    ) -> Result<(), GpuError> {
        if layout.is_some() {
            needs.band_in_bytes = 4;
        }
        let stale_input = self.input.as_ref().is_some_and(|i| layout.is_none_or(|l| !i.is(&l)));
        let stale_ring = !self.ring.as_ref().is_some_and(|r| r.serves(&needs));
        let freed = (stale_input && self.input.take().is_some()) | (stale_ring && self.ring.take().is_some());
        if freed {
            wait_for(ctx.device(), None)?;
        }
        if let Some(layout) = layout
            && self.input.is_none()
        {
            self.input = Some(ResidentInput::new(ctx, layout, bands));
        }
        if self.ring.is_none() {
            self.ring = Some(Ring::new(ctx, needs));
        }
        Ok(())
    }

    /// Frees everything; whether there was anything to free.
    pub(crate) fn release(&mut self) -> bool {
        let ring = self.ring.take().is_some();
        let input = self.input.take().is_some();
        ring || input
    }
}
