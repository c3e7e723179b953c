//! The buffers a [`crate::gpu::GpuConverter`] keeps between runs: the ring (band buffers and staging
//! slots) and an input kept on the GPU. Stale ones are freed, and the device waited for, before
//! new ones are allocated, as a fresh process would find the device.

use crate::gpu::device::wait::wait_for;
use crate::gpu::memory::resident_input::{InputLayout, ResidentInput};
use crate::gpu::memory::ring::Ring;
use crate::gpu::plan::bands::BandPlan;
use crate::gpu::plan::run_plan::RingNeeds;
use crate::gpu::{GpuContext, GpuError};

/// What a converter keeps (nothing at first).
#[derive(Default)]
pub(crate) struct Buffers {
    /// The ring, when a run has allocated one.
    pub ring: Option<Ring>,
    /// An input kept on the GPU ([`crate::gpu::GpuJob::keep_input`]).
    pub input: Option<ResidentInput>,
}

impl Buffers {
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
        let keep_bands = self.ring.as_ref().is_some_and(|r| r.bands_serve(&needs));
        let stale_slots = self.ring.as_ref().is_some_and(|r| !r.slots_serve(&needs));
        let mut freed = stale_input && self.input.take().is_some();
        if !keep_bands {
            freed |= self.ring.take().is_some();
        } else if stale_slots && let Some(ring) = self.ring.as_mut() {
            // A larger chunk learnt between runs: new staging, the band buffers kept (freed now,
            // allocated by `Ring::restage` once their work is finished).
            ring.slots.clear();
            freed = true;
        }
        if freed {
            wait_for(ctx.device(), None)?;
        }
        let mut fresh = Vec::new();
        if let Some(layout) = layout
            && self.input.is_none()
        {
            let input = ResidentInput::new(ctx, layout, bands);
            fresh.extend(input.buffers.iter().cloned());
            self.input = Some(input);
        }
        match self.ring.as_mut() {
            Some(ring) if stale_slots => ring.restage(ctx, needs),
            Some(_) => {}
            None => {
                let ring = Ring::new(ctx, needs);
                fresh.extend([ring.band.input.clone(), ring.band.output.clone()]);
                self.ring = Some(ring);
            }
        }
        clear_now(ctx, &fresh)
    }

    /// Frees everything; whether there was anything to free.
    pub(crate) fn release(&mut self) -> bool {
        let ring = self.ring.take().is_some();
        let input = self.input.take().is_some();
        ring || input
    }
}

/// Clears `fresh` buffers on the GPU and waits. wgpu zero-fills a buffer before its first use
/// in a pass, and that wait (about 95 ms for an 8K band on lavapipe, most of it the first touch
/// of new memory) delayed a run's first chunk on the GPU where no step showed it; cleared here,
/// it is part of the setup that allocated them, and wgpu does not clear them again.
fn clear_now(ctx: &GpuContext, fresh: &[wgpu::Buffer]) -> Result<(), GpuError> {
    if fresh.is_empty() {
        return Ok(());
    }
    let mut enc = ctx.encoder("clear new buffers");
    for buffer in fresh {
        enc.clear_buffer(buffer, 0, None);
    }
    ctx.submit_and_wait(enc).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_larger_chunk_restages_the_slots_and_keeps_the_band_buffers() {
        let Some(ctx) = GpuContext::for_tests() else { return };
        let needs = RingNeeds {
            band_in_bytes: 1 << 20,
            band_out_bytes: 1 << 18,
            chunk_in_bytes: 1 << 16,
            chunk_out_bytes: 1 << 14,
            slots: 3,
            slices_per_chunk: 1,
            timestamps: false,
        };
        let bands = BandPlan::new(crate::pixel::Kernel::Rgb8ToL8, 64, 64, 1 << 20).expect("bands");
        let mut buffers = Buffers::default();
        buffers.prepare(&ctx, needs, None, &bands).expect("prepared");
        let ring = |b: &Buffers| b.ring.as_ref().map(|r| (r.band.input.clone(), r.slots[0].upload.clone()));
        let (input, upload) = ring(&buffers).expect("a ring");
        // The same needs: nothing new.
        buffers.prepare(&ctx, needs, None, &bands).expect("prepared");
        assert_eq!(ring(&buffers), Some((input.clone(), upload.clone())));
        // A larger chunk: new staging, the same band buffers.
        let larger = RingNeeds { chunk_in_bytes: 1 << 17, chunk_out_bytes: 1 << 15, ..needs };
        buffers.prepare(&ctx, larger, None, &bands).expect("prepared");
        let (input2, upload2) = ring(&buffers).expect("a ring");
        assert_eq!(input2, input, "the band buffers were kept");
        assert_ne!(upload2, upload, "the staging was replaced");
        assert_eq!(upload2.size(), 1 << 17);
        let slots = buffers.ring.as_ref().map_or(0, |r| r.slots.len());
        assert_eq!(slots, 3);
        // A larger band: everything new.
        let band = RingNeeds { band_in_bytes: 1 << 21, ..larger };
        buffers.prepare(&ctx, band, None, &bands).expect("prepared");
        let (input3, _) = ring(&buffers).expect("a ring");
        assert_ne!(input3, input);
        assert_eq!(input3.size(), 1 << 21);
    }
}
