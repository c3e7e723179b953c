//! The grayscale compute pipelines: the shader module, the bind group layout, the linear-light
//! lookup tables, and one pipeline per (kernel, formula, workgroup shape), compiled on first use
//! and cached. Borrows a [`GpuContext`] for every call.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::{GpuContext, GpuError, WorkgroupSize};
use crate::gpu::device::context::sized;
use crate::gpu::device::scopes::ErrorScopes;
use crate::gpu::plan::grid::{KernelParams, PARAMS_STRIDE};
use crate::pixel::{Formula, Kernel, luma_tables};

/// The compiled grayscale pipelines of one device.
pub(crate) struct Pipelines {
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    shader: wgpu::ShaderModule,
    cache: Mutex<HashMap<(Kernel, Formula, WorkgroupSize, bool), wgpu::ComputePipeline>>,
    /// `[8-bit to linear, 16-bit to linear, linear to 8-bit, linear to 16-bit]`.
    tables: [wgpu::Buffer; 4],
    /// What wgpu said while creating the above, reported by every [`Self::get`].
    init_error: Option<std::sync::Arc<wgpu::Error>>,
}

impl Pipelines {
    /// Creates the shader module, the layouts and the lookup-table buffers (no pipeline yet).
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        let device = ctx.device();
        let scopes = ErrorScopes::push(device);
        let shader = ctx.shader("grayscale.wgsl", crate::shaders::GRAYSCALE_WGSL);
        // Input, output, the dispatch's parameters, the two lookup tables.
        let layout = buffer_layout(device, "grayscale", &[READ, WRITE, Binding::DynamicUniform, READ, READ]);
        let pipeline_layout = ctx.pipeline_layout("grayscale", &layout);
        let tables = table_buffers(ctx);
        let init_error = scopes.first_error().map(std::sync::Arc::new);
        Self { layout, pipeline_layout, shader, cache: Mutex::default(), tables, init_error }
    }

    /// The pipeline for this combination (`worked`: with the synthetic work compiled in),
    /// compiled on first use and cached. Checks the shape against the device's limits first:
    /// wgpu 30 does not (gfx-rs/wgpu#8946).
    pub(crate) fn get(
        &self,
        ctx: &GpuContext,
        kernel: Kernel,
        formula: Formula,
        size: WorkgroupSize,
        worked: bool,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        if let Some(e) = &self.init_error {
            return Err(GpuError::Validation(std::sync::Arc::clone(e)));
        }
        ctx.check_workgroup(size)?;
        // One pipeline per formula computed (stored luma computes BT.601 on decoded colour).
        let formula = formula.computed();
        let key = (kernel, formula, size, worked);
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let label = format!("{} {formula} {size}{}", kernel.name(), if worked { " worked" } else { "" });
        // Compiled once per kernel, formula and shape: one-time work, which estimates leave out.
        let pipeline = crate::system::one_time::timed(|| {
            let constants = [
                ("WG_X", f64::from(size.x)),
                ("WG_Y", f64::from(size.y)),
                ("FORMULA", f64::from(formula.shader_id())),
                ("WORKED", if worked { 1.0 } else { 0.0 }),
            ];
            let options = wgpu::PipelineCompilationOptions {
                constants: &constants,
                zero_initialize_workgroup_memory: false,
            };
            ctx.pipeline(&label, Some(&self.pipeline_layout), &self.shader, kernel.name(), options)
        });
        cache.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// The bindings of dispatches over one band: input and output buffers (with the bytes
    /// used), a parameter buffer whose [`PARAMS_STRIDE`] slots are picked with a dynamic
    /// offset, and the lookup tables for the kernel's bit depth.
    pub(crate) fn bind_group(
        &self,
        ctx: &GpuContext,
        kernel: Kernel,
        input: (&wgpu::Buffer, u64),
        output: (&wgpu::Buffer, u64),
        params: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let (to_linear, from_linear) = if kernel.is_16bit() {
            (&self.tables[1], &self.tables[3])
        } else {
            (&self.tables[0], &self.tables[2])
        };
        let params_size = std::mem::size_of::<KernelParams>() as u64;
        let bindings = [
            sized(input.0, input.1),
            sized(output.0, output.1),
            sized(params, params_size),
            to_linear.as_entire_binding(),
            from_linear.as_entire_binding(),
        ];
        ctx.bind_group("grayscale band", &self.layout, bindings)
    }
}

/// The parameters of every dispatch, one [`PARAMS_STRIDE`] slot each.
pub(crate) fn params_buffer(ctx: &GpuContext, params: &[KernelParams]) -> wgpu::Buffer {
    ctx.buffer_with("dispatch params", &param_slots(params), wgpu::BufferUsages::UNIFORM)
}

/// `params` laid out one [`PARAMS_STRIDE`] slot each (at least one slot).
pub(crate) fn param_slots<P: bytemuck::Pod>(params: &[P]) -> Vec<u8> {
    let stride = PARAMS_STRIDE as usize;
    let mut bytes = vec![0u8; params.len().max(1) * stride];
    for (slot, p) in bytes.chunks_exact_mut(stride).zip(params) {
        slot[..size_of_val(p)].copy_from_slice(bytemuck::bytes_of(p));
    }
    bytes
}

/// One buffer binding of a compute shader's bind group.
#[derive(Clone, Copy)]
pub(crate) enum Binding {
    /// A storage buffer.
    Storage {
        /// Read only in the shader.
        read_only: bool,
    },
    /// A uniform buffer picked with a dynamic offset.
    DynamicUniform,
}

/// A storage buffer the shader reads.
pub(crate) const READ: Binding = Binding::Storage { read_only: true };
/// A storage buffer the shader writes.
pub(crate) const WRITE: Binding = Binding::Storage { read_only: false };

/// The bind-group layout of a compute shader whose bindings 0, 1, … are `bindings`.
pub(crate) fn buffer_layout(
    device: &wgpu::Device,
    label: &str,
    bindings: &[Binding],
) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = (0_u32..)
        .zip(bindings)
        .map(|(binding, kind)| {
            let (ty, has_dynamic_offset) = match *kind {
                Binding::Storage { read_only } => (wgpu::BufferBindingType::Storage { read_only }, false),
                Binding::DynamicUniform => (wgpu::BufferBindingType::Uniform, true),
            };
            wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset, min_binding_size: None },
                count: None,
            }
        })
        .collect();
    device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(label), entries: &entries })
}

/// Uploads the linear-light tables, one `u32` per entry (see `shaders/grayscale.wgsl`).
fn table_buffers(ctx: &GpuContext) -> [wgpu::Buffer; 4] {
    let t = luma_tables();
    let make = |label: &str, values: Vec<u32>| {
        ctx.buffer_with(label, bytemuck::cast_slice(&values), wgpu::BufferUsages::STORAGE)
    };
    [
        make("srgb8_to_linear", t.srgb8_to_linear.iter().map(|&v| u32::from(v)).collect()),
        make("srgb16_to_linear", t.srgb16_to_linear.iter().map(|&v| u32::from(v)).collect()),
        make("linear_to_srgb8", t.linear_to_srgb8.iter().map(|&v| u32::from(v)).collect()),
        make("linear_to_srgb16", t.linear_to_srgb16.iter().map(|&v| u32::from(v)).collect()),
    ]
}
