//! Finding adapters: the ranking that picks one, opening a device on it with the limits and
//! features graylab wants, and the report `graylab info` prints.

use crate::gpu::{GpuError, WorkgroupSize};

/// The features graylab asks for when the adapter has them: timestamps in compute passes and
/// anywhere in an encoder (around the copies); and on unified memory, mappable storage buffers.
pub(crate) const WANTED_FEATURES: wgpu::Features =
    wgpu::Features::TIMESTAMP_QUERY.union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);

/// Whether an adapter of this type shares its memory with the CPU (an integrated GPU, or a
/// software one): there a storage buffer the host maps (`MAPPABLE_PRIMARY_BUFFERS`) is bytes the
/// GPU reads in place, where on a discrete GPU it would live in slow host memory.
pub(crate) fn unified_memory(device_type: wgpu::DeviceType) -> bool {
    matches!(device_type, wgpu::DeviceType::IntegratedGpu | wgpu::DeviceType::Cpu)
}

/// An instance of the native APIs (Vulkan, Metal, DX12), or of `backends` (the
/// `WGPU_BACKEND` environment variable, e.g. `WGPU_BACKEND=gl`, overrides both).
fn instance_of(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = wgpu::Backends::from_env().unwrap_or(backends);
    wgpu::Instance::new(desc)
}

/// Lower is better: real GPUs before software ones, native APIs before GL.
fn rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let kind = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    };
    let api = u8::from(info.backend == wgpu::Backend::Gl);
    (api, kind)
}

/// Every adapter of the native APIs (Vulkan, Metal, DX12); GL ones only when there is none
/// (a GL instance is only created then: probing EGL makes some drivers print warnings).
fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    let native = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    if native.is_empty() {
        pollster::block_on(instance_of(wgpu::Backends::SECONDARY).enumerate_adapters(wgpu::Backends::all()))
    } else {
        native
    }
}

/// Opens a device on the best adapter (a real GPU before a software one, Vulkan/Metal/DX12
/// before GL) with the adapter's full limits and the timestamp features it has.
pub(crate) fn open_best_device() -> Result<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo), GpuError> {
    let adapters = adapters(&instance_of(wgpu::Backends::PRIMARY));
    let adapter = adapters.into_iter().min_by_key(|a| rank(&a.get_info())).ok_or(GpuError::NoAdapter)?;
    open_device(&adapter)
}

/// Opens a second device, on a new instance, on the adapter `like` describes (the same name,
/// API, type and ids): e.g. a device of graylab's own beside the window's.
pub(crate) fn open_device_like(
    like: &wgpu::AdapterInfo,
) -> Result<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo), GpuError> {
    let same = |a: &wgpu::AdapterInfo| {
        (&a.name, a.backend, a.device_type, a.vendor, a.device)
            == (&like.name, like.backend, like.device_type, like.vendor, like.device)
    };
    let adapter = adapters(&instance_of(like.backend.into()))
        .into_iter()
        .find(|a| same(&a.get_info()))
        .ok_or(GpuError::NoAdapter)?;
    open_device(&adapter)
}

/// The device graylab asks `adapter` for (see `GpuContext::device_descriptor`).
pub(crate) fn device_descriptor(
    adapter: &wgpu::Adapter,
    label: &'static str,
) -> wgpu::DeviceDescriptor<'static> {
    let mut wanted = WANTED_FEATURES;
    if unified_memory(adapter.get_info().device_type) {
        // Measured as a transfer path of its own (`info --probe`), never used by a run.
        wanted |= wgpu::Features::MAPPABLE_PRIMARY_BUFFERS;
    }
    wgpu::DeviceDescriptor {
        label: Some(label),
        required_features: adapter.features() & wanted,
        required_limits: adapter.limits(),
        ..Default::default()
    }
}

fn open_device(adapter: &wgpu::Adapter) -> Result<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo), GpuError> {
    let info = adapter.get_info();
    let desc = device_descriptor(adapter, "graylab");
    let (device, queue) = pollster::block_on(adapter.request_device(&desc))
        .map_err(|source| GpuError::RequestDevice { adapter: info.name.clone(), source })?;
    Ok((device, queue, info))
}

/// What `graylab info` says about one adapter.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AdapterReport {
    /// Adapter name, e.g. `NVIDIA H200` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// Graphics API: `vulkan`, `metal`, `dx12`, `gl`.
    pub backend: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `Cpu` (a software rasteriser), …
    pub device_type: String,
    /// Driver name and version.
    pub driver: String,
    /// Whether graylab would pick this adapter.
    pub selected: bool,
    /// Largest storage buffer binding, bytes: the largest band of an image.
    pub max_storage_buffer_binding_bytes: u64,
    /// Largest buffer, bytes.
    pub max_buffer_bytes: u64,
    /// Largest 2-D texture side, pixels (what the GUI can show without tiles).
    pub max_texture_dimension_2d: u32,
    /// Most invocations in one workgroup.
    pub max_invocations_per_workgroup: u32,
    /// Most workgroups along one dispatch dimension.
    pub max_workgroups_per_dimension: u32,
    /// Compute-pass timestamps available.
    pub timestamps_in_passes: bool,
    /// Encoder timestamps available (for timing the copies on the GPU).
    pub timestamps_in_encoders: bool,
    /// Workgroup sizes graylab offers on this adapter.
    pub valid_workgroups: Vec<String>,
}

impl AdapterReport {
    /// The report of an adapter with `info` and `limits`, its timestamps `(in passes, in
    /// encoders)`, and whether graylab picks it.
    #[must_use]
    pub fn of(
        info: &wgpu::AdapterInfo,
        limits: &wgpu::Limits,
        (passes, encoders): (bool, bool),
        selected: bool,
    ) -> Self {
        Self {
            name: info.name.clone(),
            backend: info.backend.to_string(),
            device_type: format!("{:?}", info.device_type),
            driver: format!("{} {}", info.driver, info.driver_info).trim().to_owned(),
            selected,
            max_storage_buffer_binding_bytes: limits.max_storage_buffer_binding_size,
            max_buffer_bytes: limits.max_buffer_size,
            max_texture_dimension_2d: limits.max_texture_dimension_2d,
            max_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
            max_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            timestamps_in_passes: passes,
            timestamps_in_encoders: encoders,
            valid_workgroups: WorkgroupSize::valid_for(limits).iter().map(ToString::to_string).collect(),
        }
    }

    /// The key its probed ceilings are cached under: its name, driver and backend.
    #[must_use]
    pub fn ceilings_key(&self) -> String {
        format!("{} | {} | {}", self.name, self.driver, self.backend)
    }
}

/// Every adapter this machine has, the one graylab picks marked `selected`.
#[must_use]
pub fn list_adapters() -> Vec<AdapterReport> {
    let adapters = adapters(&instance_of(wgpu::Backends::PRIMARY));
    let best = adapters.iter().map(|a| rank(&a.get_info())).min();
    let mut chosen = false;
    adapters
        .iter()
        .map(|a| {
            let info = a.get_info();
            let features = a.features();
            let selected = !chosen && Some(rank(&info)) == best;
            chosen |= selected;
            let timestamps =
                (features.contains(wgpu::Features::TIMESTAMP_QUERY), features.contains(WANTED_FEATURES));
            AdapterReport::of(&info, &a.limits(), timestamps, selected)
        })
        .collect()
}
