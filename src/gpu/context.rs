//! The GPU context: a device and queue (owned, or borrowed from eframe), what the adapter can do,
//! the compiled pipelines and the lookup-table buffers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use wgpu::util::DeviceExt as _;

use super::convert::RingSlot;
use super::{GpuError, WorkgroupSize};
use crate::pixel::{Formula, Kernel, luma_tables};

/// Which timestamp queries the device has, and their tick length.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TimestampSupport {
    /// Timestamps at the start and end of compute passes (`TIMESTAMP_QUERY`).
    pub passes: bool,
    /// Timestamps anywhere in a command encoder (`TIMESTAMP_QUERY_INSIDE_ENCODERS`), used around
    /// the upload and download copies.
    pub encoders: bool,
    /// Nanoseconds per timestamp tick.
    pub period_ns: f32,
}

/// How the GPU phases are timed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimingMode {
    /// GPU timestamps where the device has them, the CPU clock otherwise.
    #[default]
    Auto,
    /// The CPU clock around each submit-and-wait, even where timestamps exist (for comparison,
    /// and to test the fallback path).
    CpuClock,
}

/// The features graylab asks for when the adapter has them.
pub(crate) const WANTED_FEATURES: wgpu::Features =
    wgpu::Features::TIMESTAMP_QUERY.union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);

/// A GPU device ready to convert images.
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    timestamps: TimestampSupport,
    timing_mode: TimingMode,
    band_limit_bytes: u64,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    shader: wgpu::ShaderModule,
    pipelines: Mutex<HashMap<(Kernel, Formula, WorkgroupSize), wgpu::ComputePipeline>>,
    /// `[8-bit to linear, 16-bit to linear, linear to 8-bit, linear to 16-bit]`.
    tables: [wgpu::Buffer; 4],
    pub(crate) ring: Mutex<Vec<RingSlot>>,
    pub(crate) display: std::sync::OnceLock<super::display::DisplayPipeline>,
    uncaptured: Arc<Mutex<Option<String>>>,
}

impl GpuContext {
    /// Opens the best adapter (a real GPU before a software one, Vulkan/Metal/DX12 before GL)
    /// with its full limits and the timestamp features it has.
    pub fn new() -> Result<Self, GpuError> {
        let instance = super::adapters::instance();
        let adapter = super::adapters::best_adapter(&instance).ok_or(GpuError::NoAdapter)?;
        let info = adapter.get_info();
        let desc = wgpu::DeviceDescriptor {
            label: Some("graylab"),
            required_features: adapter.features() & WANTED_FEATURES,
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| GpuError::RequestDevice { adapter: info.name.clone(), reason: e.to_string() })?;
        Ok(Self::from_device(device, queue, info))
    }

    /// Wraps a device created elsewhere (eframe's). Request the adapter's limits and
    /// [`Self::wanted_features`] when creating it, or big images need many bands and the
    /// timings fall back to the CPU clock.
    #[must_use]
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Self {
        let uncaptured = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&uncaptured);
        // wgpu's default handler panics; keep the first error and report it from the next call.
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut slot = sink.lock().unwrap_or_else(PoisonError::into_inner);
            slot.get_or_insert_with(|| e.to_string());
        }));
        let features = device.features();
        let limits = device.limits();
        let timestamps = TimestampSupport {
            passes: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            encoders: features.contains(WANTED_FEATURES),
            period_ns: queue.get_timestamp_period(),
        };
        let band_limit_bytes = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("grayscale.wgsl"),
            source: wgpu::ShaderSource::Wgsl(crate::shaders::GRAYSCALE_WGSL.into()),
        });
        let layout = bind_group_layout(&device);
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("grayscale"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let tables = table_buffers(&device);
        Self {
            device,
            queue,
            info,
            limits,
            timestamps,
            timing_mode: TimingMode::Auto,
            band_limit_bytes,
            layout,
            pipeline_layout,
            shader,
            pipelines: Mutex::default(),
            tables,
            ring: Mutex::default(),
            display: std::sync::OnceLock::new(),
            uncaptured,
        }
    }

    /// The features graylab would like on a device it is handed (see [`Self::from_device`]).
    #[must_use]
    pub fn wanted_features() -> wgpu::Features {
        WANTED_FEATURES
    }

    /// The adapter's name, backend, type and driver.
    #[must_use]
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
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

    /// How phases are timed from now on.
    pub fn set_timing_mode(&mut self, mode: TimingMode) {
        self.timing_mode = mode;
    }

    /// The timing mode in force.
    #[must_use]
    pub fn timing_mode(&self) -> TimingMode {
        self.timing_mode
    }

    /// The largest input band in bytes (one storage binding).
    #[must_use]
    pub fn band_limit_bytes(&self) -> u64 {
        self.band_limit_bytes
    }

    /// Lowers the band limit below the device's (for tests and demonstrations of banding).
    /// Values are rounded down to a multiple of 16 bytes; at least 16 bytes.
    pub fn set_band_limit_bytes(&mut self, bytes: u64) {
        let device_max = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        self.band_limit_bytes = (bytes / 16 * 16).clamp(16, device_max);
        self.ring.lock().unwrap_or_else(PoisonError::into_inner).clear();
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

    /// The pipeline for this combination, compiled on first use and cached.
    pub(crate) fn pipeline(
        &self,
        kernel: Kernel,
        formula: Formula,
        size: WorkgroupSize,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        self.check_workgroup(size)?;
        let key = (kernel, formula, size);
        let mut cache = self.pipelines.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let label = format!("{} {formula} {size}", kernel.name());
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(&self.pipeline_layout),
            module: &self.shader,
            entry_point: Some(kernel.name()),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &[
                    ("WG_X", f64::from(size.x)),
                    ("WG_Y", f64::from(size.y)),
                    ("FORMULA", f64::from(formula.shader_id())),
                ],
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Validation(e.to_string()));
        }
        cache.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// The bind group layout shared by every pipeline.
    pub(crate) fn layout(&self) -> &wgpu::BindGroupLayout {
        &self.layout
    }

    /// The `(to_linear, from_linear)` tables for this kernel's bit depth.
    pub(crate) fn tables_for(&self, kernel: Kernel) -> (&wgpu::Buffer, &wgpu::Buffer) {
        if kernel.is_16bit() {
            (&self.tables[1], &self.tables[3])
        } else {
            (&self.tables[0], &self.tables[2])
        }
    }

    /// Returns (and clears) an error that wgpu reported outside any error scope.
    pub(crate) fn take_uncaptured_error(&self) -> Option<String> {
        self.uncaptured.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

fn bind_group_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let uniform = wgpu::BindGroupLayoutEntry {
        binding: 2,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("grayscale"),
        entries: &[storage(0, true), storage(1, false), uniform, storage(3, true), storage(4, true)],
    })
}

/// Uploads the linear-light tables, one `u32` per entry (see `shaders/grayscale.wgsl`).
fn table_buffers(device: &wgpu::Device) -> [wgpu::Buffer; 4] {
    let t = luma_tables();
    let make = |label: &str, values: Vec<u32>| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(&values),
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    [
        make("srgb8_to_linear", t.srgb8_to_linear.iter().map(|&v| u32::from(v)).collect()),
        make("srgb16_to_linear", t.srgb16_to_linear.iter().map(|&v| u32::from(v)).collect()),
        make("linear_to_srgb8", t.linear_to_srgb8.iter().map(|&v| u32::from(v)).collect()),
        make("linear_to_srgb16", t.linear_to_srgb16.iter().map(|&v| u32::from(v)).collect()),
    ]
}
