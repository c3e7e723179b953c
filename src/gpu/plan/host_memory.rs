//! The host memory a GPU run allocates, planned before it runs: the staging slots (together at
//! most one band, [`crate::gpu::plan::run_plan::Limits::staging_slots`]) and, where the
//! adapter's memory is the host's (a software or an integrated GPU), the band buffers too. The
//! one rule every front end reserves by: the CLI's and the app's decodes, `bench` and `sweep`.

use crate::gpu::device::adapters::{chosen_adapter, unified_memory};
use crate::gpu::plan::bands::{band_limit_bytes, op_binding_bytes_per_pixel};
use crate::gpu::{GpuContext, GpuError};
use crate::pixel::Op;
use crate::system::memory_budget::{OpCopies, working_copies_bytes};

/// What a GPU run on one adapter holds in host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct GpuHostMemory {
    /// The largest band's input, bytes (the converter's band limit).
    pub band_limit_bytes: u64,
    /// Whether the device's buffers are host memory (a software or an integrated GPU).
    pub device_on_host: bool,
    /// Whether the whole input is kept on the device (in place of one band's).
    pub kept_input: bool,
}

impl GpuHostMemory {
    /// A run on an adapter of `device_type` in bands of at most `band_limit_bytes` of input.
    #[must_use]
    pub fn new(device_type: wgpu::DeviceType, band_limit_bytes: u64) -> Self {
        Self { band_limit_bytes, device_on_host: unified_memory(device_type), kept_input: false }
    }

    /// A run on an adapter of `device_type` with `limits`, in the largest bands it allows (the
    /// converter's own, before one exists).
    #[must_use]
    pub fn of_adapter(device_type: wgpu::DeviceType, limits: &wgpu::Limits) -> Self {
        Self::new(device_type, band_limit_bytes(limits))
    }

    /// A run on `ctx`'s device in the largest bands it allows (a converter's own unless lowered).
    #[must_use]
    pub fn of(ctx: &GpuContext) -> Self {
        Self::of_adapter(ctx.adapter_info().device_type, ctx.limits())
    }

    /// A run on the adapter graylab picks on this machine (found now; no device is opened): what
    /// the app reserves for while its window's device is being made.
    pub fn of_chosen_adapter() -> Result<Self, GpuError> {
        let adapter = chosen_adapter()?;
        Ok(Self::of_adapter(adapter.get_info().device_type, &adapter.limits()))
    }

    /// The same, the whole input kept on the device where `kept`.
    #[must_use]
    pub fn keeping_input(self, kept: bool) -> Self {
        Self { kept_input: kept, ..self }
    }

    /// Copies of one band (its input and its output) a run holds in host memory: the staging
    /// slots together, and the band buffers where the device's memory is the host's.
    #[must_use]
    pub fn copies(self) -> u32 {
        1 + u32::from(self.device_on_host)
    }

    /// Host bytes a run holds besides the image and its result, on an input of `in_bytes` and
    /// an output of `out_bytes` (each band's share of the output in proportion).
    #[must_use]
    pub fn run_bytes(self, in_bytes: u64, out_bytes: u64) -> u64 {
        let banded = working_copies_bytes(in_bytes, out_bytes, self.copies(), Some(self.band_limit_bytes));
        // A kept input is whole on the device, in place of the band buffer's input.
        let kept = if self.kept_input && self.device_on_host {
            in_bytes.saturating_sub(in_bytes.min(self.band_limit_bytes))
        } else {
            0
        };
        banded.saturating_add(kept)
    }

    /// What `op` after the grayscale holds in host memory on this adapter besides the image and
    /// its gray plane: its output plane, and for each band (as many rows as fit one binding)
    /// its upload's staging and its readback, plus, where the device's memory is the host's,
    /// the band's input, output and (for the blur, four bytes a pixel) sums.
    #[must_use]
    pub fn op_copies(self, op: Op) -> OpCopies {
        if op.is_none() {
            return OpCopies::default();
        }
        let sums = if matches!(op, Op::Blur { .. }) { 4 } else { 0 };
        let device = if self.device_on_host { 2 + sums } else { 0 };
        let band_bytes = self.band_limit_bytes / op_binding_bytes_per_pixel(op);
        OpCopies { whole: 1, banded: 2 + device, band_bytes: Some(band_bytes) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// lavapipe's binding: 128 MiB.
    const BAND: u64 = 128 << 20;
    /// A 12000x10000 RGB8 photo and its gray.
    const IMAGE: (u64, u64) = (360_000_000, 120_000_000);
    /// One 128 MiB band's input and its third of gray.
    const ONE_BAND: u64 = BAND + 44_739_243;

    #[test]
    fn a_discrete_gpu_holds_the_staging_and_a_software_one_the_buffers_too() {
        let discrete = GpuHostMemory::new(wgpu::DeviceType::DiscreteGpu, BAND);
        let software = GpuHostMemory::new(wgpu::DeviceType::Cpu, BAND);
        let integrated = GpuHostMemory::new(wgpu::DeviceType::IntegratedGpu, BAND);
        assert_eq!((discrete.copies(), software.copies(), integrated.copies()), (1, 2, 2));
        assert_eq!(discrete.run_bytes(IMAGE.0, IMAGE.1), ONE_BAND);
        assert_eq!(software.run_bytes(IMAGE.0, IMAGE.1), 2 * ONE_BAND);
        // An image within one band: its whole input and output, each copy.
        assert_eq!(software.run_bytes(3_000, 1_000), 8_000);
        // A kept input is the whole input on the device: host memory only on a software GPU.
        assert_eq!(discrete.keeping_input(true).run_bytes(IMAGE.0, IMAGE.1), ONE_BAND);
        assert_eq!(software.keeping_input(true).run_bytes(IMAGE.0, IMAGE.1), 2 * ONE_BAND + IMAGE.0 - BAND);
    }

    #[test]
    fn an_op_holds_its_output_and_a_bands_staging_and_readback() {
        let discrete = GpuHostMemory::new(wgpu::DeviceType::DiscreteGpu, BAND);
        let software = GpuHostMemory::new(wgpu::DeviceType::Cpu, BAND);
        let blur = Op::Blur { radius: 8 };
        assert_eq!(discrete.op_copies(Op::None), OpCopies::default());
        assert_eq!(discrete.op_copies(Op::Dither), OpCopies { whole: 1, banded: 2, band_bytes: Some(BAND) });
        // On the host too: the band's input and output, and the blur's u32 sums (bands of a
        // quarter of the binding's bytes).
        assert_eq!(software.op_copies(Op::Dither), OpCopies { whole: 1, banded: 4, band_bytes: Some(BAND) });
        assert_eq!(software.op_copies(blur), OpCopies { whole: 1, banded: 8, band_bytes: Some(BAND / 4) });
        // 8K gray (33,177,600 bytes) fits a band: a blur on lavapipe holds 9 planes.
        assert_eq!(software.op_copies(blur).bytes(33_177_600), 9 * 33_177_600);
    }

    #[test]
    fn the_band_is_the_devices_binding_within_u32_indices() {
        let mut limits = wgpu::Limits { max_storage_buffer_binding_size: BAND, ..wgpu::Limits::default() };
        limits.max_buffer_size = 1 << 31;
        let lavapipe = GpuHostMemory::of_adapter(wgpu::DeviceType::Cpu, &limits);
        assert_eq!((lavapipe.band_limit_bytes, lavapipe.device_on_host), (BAND, true));
        // An H200's 4 GiB binding is planned just under 4 GiB.
        limits.max_storage_buffer_binding_size = 1 << 32;
        limits.max_buffer_size = 1 << 40;
        let h200 = GpuHostMemory::of_adapter(wgpu::DeviceType::DiscreteGpu, &limits);
        assert_eq!((h200.band_limit_bytes, h200.device_on_host), ((1 << 32) - 256, false));
    }
}
