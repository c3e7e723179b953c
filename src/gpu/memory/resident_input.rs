//! An image's input kept on the GPU between runs ("keep the input on the GPU"): one input
//! buffer per row band, each as large as that band, filled by the run that uploads it and bound
//! directly by later runs of the same image (another formula or workgroup shape), which then
//! upload nothing. One image at a time: a different one replaces it.

use crate::gpu::GpuContext;
use crate::gpu::plan::bands::{BandPlan, band_sizes};
use crate::pixel::Kernel;

/// What a resident input is: the caller's key for the pixels, and how they were laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InputLayout {
    /// The caller's identity of the input pixels (the same key promises the same pixels).
    pub key: u64,
    /// The kernel, which decides the padding of each band.
    pub kernel: Kernel,
    /// Image width and height.
    pub size: (u32, u32),
    /// Rows per band.
    pub rows_per_band: u32,
}

/// An input kept on the GPU.
pub(crate) struct ResidentInput {
    layout: InputLayout,
    /// One buffer per band.
    pub buffers: Vec<wgpu::Buffer>,
    /// Bytes of each buffer (its band's padded input).
    pub bytes: Vec<u64>,
    /// Whether a run has filled every buffer (until then, nothing may be reused).
    pub uploaded: bool,
}

impl InputLayout {
    /// The layout of a job's input planned into `bands`.
    pub(crate) fn new(key: u64, kernel: Kernel, size: (u32, u32), bands: &BandPlan) -> Self {
        Self { key, kernel, size, rows_per_band: bands.rows_per_band }
    }
}

impl ResidentInput {
    /// Allocates one buffer per band of `layout` (nothing uploaded yet).
    pub(crate) fn new(ctx: &GpuContext, layout: InputLayout, bands: &BandPlan) -> Self {
        let (width, height) = layout.size;
        let bytes: Vec<u64> = (0..bands.bands)
            .map(|band| {
                let rows = layout.rows_per_band.min(height - band * layout.rows_per_band);
                band_sizes(layout.kernel, u64::from(rows) * u64::from(width)).1.max(4)
            })
            .collect();
        let buffers = bytes
            .iter()
            .map(|&size| {
                ctx.buffer(
                    "resident input band",
                    size,
                    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                )
            })
            .collect();
        Self { layout, buffers, bytes, uploaded: false }
    }

    /// Whether this is `layout`'s input, complete on the GPU.
    pub(crate) fn holds(&self, layout: &InputLayout) -> bool {
        self.uploaded && self.layout == *layout
    }

    /// Whether this is `layout`'s input (uploaded or not).
    pub(crate) fn is(&self, layout: &InputLayout) -> bool {
        self.layout == *layout
    }
}
