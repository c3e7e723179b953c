//! The GPU context: a device and queue (graylab's own, or borrowed from eframe) and what the
//! adapter can do. A leaf: pipelines, buffers, timing and display are components that borrow it.
//!
//! No error handler is installed on the device: graylab's own GPU work runs inside error scopes
//! ([`crate::gpu::device::scopes`]), so a device handed in keeps its owner's handler.

use crate::gpu::device::adapters::{WANTED_FEATURES, device_descriptor, open_best_device, open_device_like};
use crate::gpu::{GpuError, WorkgroupSize};

/// Which timestamp queries the device has, and their tick length.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TimestampSupport {
    /// Timestamps at the start and end of compute passes (`TIMESTAMP_QUERY`).
    pub passes: bool,
    /// Timestamps anywhere in a command encoder (`TIMESTAMP_QUERY_INSIDE_ENCODERS`), used around
    /// the upload, display and download steps.
    pub encoders: bool,
    /// Nanoseconds per timestamp tick.
    pub period_ns: f32,
}

/// A GPU device ready to be used by graylab's components.
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    timestamps: TimestampSupport,
}

impl GpuContext {
    /// The unit tests' device, or `None` (the test skipped) without an adapter, unless the CI
    /// asks for a GPU (`GRAYLAB_REQUIRE_GPU=1`).
    #[cfg(test)]
    pub(crate) fn for_tests() -> Option<Self> {
        match Self::new() {
            Ok(ctx) => Some(ctx),
            Err(e) if std::env::var("GRAYLAB_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
                panic!("GRAYLAB_REQUIRE_GPU=1 but no GPU adapter: {e}")
            }
            Err(e) => {
                eprintln!("SKIPPED: no GPU adapter ({e})");
                None
            }
        }
    }

    /// Opens the best adapter (a real GPU before a software one, Vulkan/Metal/DX12 before GL)
    /// with its full limits and the timestamp features it has.
    pub fn new() -> Result<Self, GpuError> {
        let (device, queue, info) = open_best_device()?;
        Ok(Self::from_device(device, queue, info))
    }

    /// Opens a device of its own on the adapter `like` describes (found again on a new
    /// instance), with its full limits and the timestamp features it has. The driver's threads
    /// for this device (a software adapter's) are started by, and inherit the priority of, the
    /// calling thread.
    pub fn new_like(like: &wgpu::AdapterInfo) -> Result<Self, GpuError> {
        let (device, queue, info) = open_device_like(like)?;
        Ok(Self::from_device(device, queue, info))
    }

    /// Wraps a device created elsewhere (eframe's), best with [`Self::device_descriptor`].
    #[must_use]
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Self {
        let features = device.features();
        let limits = device.limits();
        let timestamps = TimestampSupport {
            passes: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            encoders: features.contains(WANTED_FEATURES),
            period_ns: queue.get_timestamp_period(),
        };
        Self { device, queue, info, limits, timestamps }
    }

    /// How graylab creates a device on `adapter`, named `label`: the adapter's full limits (or big
    /// images need many bands) and the timestamp features it has (or the timings fall back to the
    /// CPU clock). eframe is handed this for the window's device, and [`Self::new`] uses it.
    #[must_use]
    pub fn device_descriptor(
        adapter: &wgpu::Adapter,
        label: &'static str,
    ) -> wgpu::DeviceDescriptor<'static> {
        device_descriptor(adapter, label)
    }

    /// The device.
    #[must_use]
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// A new buffer, unmapped: `label`, `size` bytes, `usage`.
    pub(crate) fn buffer(&self, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    }

    /// A new command encoder named `label`.
    pub(crate) fn encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    /// The device's one queue (shared with eframe's renderer in the app).
    #[must_use]
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter's name, backend, type and driver.
    #[must_use]
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// The adapter as `graylab info` reports it, with this device's limits and timestamps.
    #[must_use]
    pub fn report(&self) -> super::adapters::AdapterReport {
        let timestamps = (self.timestamps.passes, self.timestamps.encoders);
        super::adapters::AdapterReport::of(&self.info, &self.limits, timestamps, true)
    }

    /// The device's limits.
    #[must_use]
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// Which timestamp queries this device has.
    #[must_use]
    pub fn timestamps(&self) -> TimestampSupport {
        self.timestamps
    }

    /// Whether the adapter is a software rasteriser (e.g. llvmpipe): its timings say nothing
    /// about GPUs.
    #[must_use]
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The workgroup sizes this device accepts, in menu order.
    #[must_use]
    pub fn valid_workgroups(&self) -> Vec<WorkgroupSize> {
        WorkgroupSize::valid_for(&self.limits)
    }

    /// Checks a workgroup shape against the device's limits.
    pub fn check_workgroup(&self, size: WorkgroupSize) -> Result<(), GpuError> {
        if size.fits(&self.limits) {
            return Ok(());
        }
        let valid: Vec<String> = self.valid_workgroups().iter().map(ToString::to_string).collect();
        Err(GpuError::WorkgroupUnsupported {
            size,
            max_invocations: self.limits.max_compute_invocations_per_workgroup,
            max_x: self.limits.max_compute_workgroup_size_x,
            max_y: self.limits.max_compute_workgroup_size_y,
            valid: valid.join(", "),
        })
    }

    /// The WGSL `source` compiled into a shader module named `label`.
    pub(crate) fn shader(&self, label: &str, source: &str) -> wgpu::ShaderModule {
        self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        })
    }

    /// A compute pipeline of `entry` in the WGSL `source`, its bind-group layout taken from the
    /// shader (the probes' small kernels; the converter's own share one explicit layout).
    pub(crate) fn auto_layout_pipeline(
        &self,
        label: &str,
        source: &str,
        entry: &str,
    ) -> wgpu::ComputePipeline {
        let module = self.shader(label, source);
        self.pipeline(label, None, &module, entry, wgpu::PipelineCompilationOptions::default())
    }

    /// A compute pipeline of `entry` in `module` named `label`, on `layout` (`None`: the layout
    /// is taken from the shader), compiled with `options`.
    pub(crate) fn pipeline(
        &self,
        label: &str,
        layout: Option<&wgpu::PipelineLayout>,
        module: &wgpu::ShaderModule,
        entry: &str,
        compilation_options: wgpu::PipelineCompilationOptions<'_>,
    ) -> wgpu::ComputePipeline {
        self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout,
            module,
            entry_point: Some(entry),
            compilation_options,
            cache: None,
        })
    }

    /// A pipeline layout named `label` of the one bind-group layout `layout`.
    pub(crate) fn pipeline_layout(
        &self,
        label: &str,
        layout: &wgpu::BindGroupLayout,
    ) -> wgpu::PipelineLayout {
        self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &[Some(layout)],
            immediate_size: 0,
        })
    }

    /// A bind group named `label` of `layout`, its bindings 0, 1, … `resources`.
    pub(crate) fn bind_group<'r>(
        &self,
        label: &str,
        layout: &wgpu::BindGroupLayout,
        resources: impl IntoIterator<Item = wgpu::BindingResource<'r>>,
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = (0..)
            .zip(resources)
            .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout,
            entries: &entries,
        })
    }

    /// A new buffer named `label` holding `contents`, for `usage`.
    pub(crate) fn buffer_with(
        &self,
        label: &str,
        contents: &[u8],
        usage: wgpu::BufferUsages,
    ) -> wgpu::Buffer {
        wgpu::util::DeviceExt::create_buffer_init(
            &self.device,
            &wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage },
        )
    }

    /// Submits `enc`'s commands and blocks until the GPU has finished them: when they were
    /// submitted (after the encoder was finished, so a caller's clock starts at the submit).
    pub(crate) fn submit_and_wait(&self, enc: wgpu::CommandEncoder) -> Result<std::time::Instant, GpuError> {
        let commands = enc.finish();
        let submitted = std::time::Instant::now();
        let submission = self.queue.submit([commands]);
        crate::gpu::device::wait::wait_for(&self.device, Some(&submission))?;
        Ok(submitted)
    }

    /// Converts timestamp ticks to nanoseconds.
    #[must_use]
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        (ticks as f64 * f64::from(self.timestamps.period_ns)).round() as u64
    }
}

/// The first `size` bytes of a buffer as a binding.
pub(crate) fn sized(buffer: &wgpu::Buffer, size: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset: 0,
        size: std::num::NonZero::new(size),
    })
}
