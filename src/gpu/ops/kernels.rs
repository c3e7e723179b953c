//! The op pipelines of one device: one explicit bind-group layout shared by the blur's two
//! passes (`shaders/blur.wgsl`) and the dither's two wavefronts (`shaders/dither.wgsl`), whose
//! parameters are a uniform slot picked with a dynamic offset. Made once, on the first op.

use crate::gpu::GpuContext;

/// The parameters of one dispatch, as both shaders declare `OpParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct OpParams {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The blur's radius.
    pub radius: u32,
    /// Rows uploaded for the band.
    pub rows_in: u32,
    /// Rows the band outputs.
    pub rows_out: u32,
    /// Image row of the first uploaded row.
    pub in_y0: u32,
    /// Image row of the band's first output row.
    pub band_y0: u32,
    /// The dither's step (by steps) or first step of the dispatch (persistent).
    pub step: u32,
    /// The persistent dither's last step in the dispatch.
    pub step_last: u32,
}

/// The op pipelines and their layout.
pub(crate) struct OpKernels {
    /// The bind-group layout every op pipeline shares.
    pub layout: wgpu::BindGroupLayout,
    /// The blur's horizontal pass.
    pub blur_rows: wgpu::ComputePipeline,
    /// The blur's vertical pass.
    pub blur_cols: wgpu::ComputePipeline,
    /// The dither, one dispatch a step.
    pub dither_step: wgpu::ComputePipeline,
    /// The dither, one workgroup over every step.
    pub dither_persistent: wgpu::ComputePipeline,
}

impl OpKernels {
    /// Compiles the op shaders on `ctx`.
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        use crate::gpu::pipelines::{Binding::DynamicUniform, READ, WRITE, buffer_layout};
        // Parameters; the input band; the blur's sums or the dither's error ring; the output
        // band; the blur's weights.
        let layout =
            buffer_layout(ctx.device(), "gray-plane op", &[DynamicUniform, READ, WRITE, WRITE, READ]);
        let pipeline_layout = ctx.pipeline_layout("gray-plane op", &layout);
        let blur = ctx.shader("blur.wgsl", crate::shaders::BLUR_WGSL);
        let dither = ctx.shader("dither.wgsl", crate::shaders::DITHER_WGSL);
        let pipeline = |module: &wgpu::ShaderModule, entry: &str| {
            ctx.pipeline(
                entry,
                Some(&pipeline_layout),
                module,
                entry,
                wgpu::PipelineCompilationOptions::default(),
            )
        };
        Self {
            blur_rows: pipeline(&blur, "blur_rows"),
            blur_cols: pipeline(&blur, "blur_cols"),
            dither_step: pipeline(&dither, "dither_step"),
            dither_persistent: pipeline(&dither, "dither_persistent"),
            layout,
        }
    }
}
