//! The device's copy bandwidth as a kernel reaches it: a STREAM-like copy kernel
//! (`shaders/copy.wgsl`, 16 bytes an invocation, grid-stride) between two device buffers. A copy
//! command can run far below it: on the H200, `copy_buffer_to_buffer` of 64 MiB reached 820 GB/s
//! (read + write), a CUDA copy 3,027 and graylab's own kernel 2,232, so every report said the
//! kernel ran "above this machine's device-copy ceiling". The probe keeps the faster of the two.

use crate::gpu::GpuContext;

/// Invocations of a workgroup, as `copy.wgsl` declares it.
const WORKGROUP: u32 = 256;

/// Workgroups of the grid at most: enough to hide memory latency on any GPU; the grid strides
/// over the rest.
const MAX_GROUPS: u32 = 16_384;

/// The copy kernel's pipeline, created once and bound to buffers at each size timed.
pub(crate) struct CopyKernel {
    pipeline: wgpu::ComputePipeline,
}

/// The copy kernel bound to two device buffers at one size.
pub(crate) struct BoundCopy {
    bind_group: wgpu::BindGroup,
    groups: u32,
    /// Bytes each run copies (the asked bytes within the binding limit, in whole 16 bytes).
    pub bytes: u64,
}

impl CopyKernel {
    /// The kernel's pipeline on `ctx`.
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        Self {
            pipeline: ctx.auto_layout_pipeline("device copy kernel", crate::shaders::COPY_WGSL, "copy_words"),
        }
    }

    /// The kernel copying the first `bytes` of `from` into `to` (both `STORAGE`, at least
    /// `bytes` long).
    pub(crate) fn bind(
        &self,
        ctx: &GpuContext,
        (from, to): (&wgpu::Buffer, &wgpu::Buffer),
        bytes: u64,
    ) -> BoundCopy {
        let bytes = bytes.min(ctx.limits().max_storage_buffer_binding_size) / 16 * 16;
        let sized = |buffer| crate::gpu::device::context::sized(buffer, bytes.max(16));
        let layout = self.pipeline.get_bind_group_layout(0);
        let bind_group = ctx.bind_group("device copy kernel", &layout, [sized(from), sized(to)]);
        let max = ctx.limits().max_compute_workgroups_per_dimension.clamp(1, MAX_GROUPS);
        let groups = u32::try_from((bytes / 16).div_ceil(u64::from(WORKGROUP))).unwrap_or(max).clamp(1, max);
        BoundCopy { bind_group, groups, bytes }
    }

    /// Records one copy.
    pub(crate) fn record(&self, enc: &mut wgpu::CommandEncoder, copy: &BoundCopy) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("device copy kernel"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &copy.bind_group, &[]);
        pass.dispatch_workgroups(copy.groups, 1, 1);
    }
}
