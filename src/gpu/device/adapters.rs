//! Finding adapters: the one rule that picks one (for the CLI, the engine and the app's window:
//! `WGPU_ADAPTER_NAME`, then the ranking), opening a device on it with the limits and features
//! graylab wants, and the report `graylab info` prints.

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

/// The environment variable that picks the adapter: any part of its name, in any case (as wgpu's
/// own `initialize_adapter_from_env` reads it), e.g. `WGPU_ADAPTER_NAME=llvmpipe`.
pub const ADAPTER_NAME_ENV: &str = "WGPU_ADAPTER_NAME";

/// What [`ADAPTER_NAME_ENV`] asks for, when set to something.
#[must_use]
pub fn wanted_adapter_name() -> Option<String> {
    let wanted = std::env::var(ADAPTER_NAME_ENV).ok()?;
    let wanted = wanted.trim();
    (!wanted.is_empty()).then(|| wanted.to_owned())
}

/// The index in `infos` of the adapter graylab picks: among those whose name contains `wanted`
/// (any case) where it is given, the best by rank (a real GPU before a software one, Vulkan,
/// Metal or DX12 before GL), the first enumerated of equals.
pub fn choose_adapter(infos: &[wgpu::AdapterInfo], wanted: Option<&str>) -> Result<usize, GpuError> {
    let lower = wanted.map(str::to_lowercase);
    let named =
        |info: &wgpu::AdapterInfo| lower.as_ref().is_none_or(|w| info.name.to_lowercase().contains(w));
    let best = infos.iter().enumerate().filter(|(_, info)| named(info)).min_by_key(|(_, info)| rank(info));
    match (best, wanted) {
        (Some((index, _)), _) => Ok(index),
        (None, Some(wanted)) => {
            let listed: Vec<String> =
                infos.iter().map(|i| GpuError::adapter_label(&i.name, &i.backend.to_string())).collect();
            Err(GpuError::no_adapter_named(wanted, listed.iter().map(String::as_str)))
        }
        (None, None) => Err(GpuError::NoAdapter),
    }
}

/// The adapter the app's window renders on, by [`choose_adapter`] among those that can present
/// to its `surface`: the one the CLI measures wherever that adapter can draw the window.
pub fn choose_window_adapter(
    adapters: &[wgpu::Adapter],
    surface: Option<&wgpu::Surface<'_>>,
) -> Result<wgpu::Adapter, GpuError> {
    let usable: Vec<&wgpu::Adapter> =
        adapters.iter().filter(|a| surface.is_none_or(|s| a.is_surface_supported(s))).collect();
    let infos: Vec<wgpu::AdapterInfo> = usable.iter().map(|a| a.get_info()).collect();
    let index = choose_adapter(&infos, wanted_adapter_name().as_deref())?;
    usable.get(index).map(|a| (*a).clone()).ok_or(GpuError::NoAdapter)
}

/// The adapter graylab picks on this machine ([`choose_adapter`] over every adapter of the
/// native APIs, or of GL where there is none).
pub(crate) fn chosen_adapter() -> Result<wgpu::Adapter, GpuError> {
    let mut adapters = adapters(&instance_of(wgpu::Backends::PRIMARY));
    let infos: Vec<wgpu::AdapterInfo> = adapters.iter().map(wgpu::Adapter::get_info).collect();
    let index = choose_adapter(&infos, wanted_adapter_name().as_deref())?;
    Ok(adapters.swap_remove(index))
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

/// Opens a device on the adapter graylab picks ([`chosen_adapter`]) with the adapter's full
/// limits and the timestamp features it has.
pub(crate) fn open_best_device() -> Result<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo), GpuError> {
    open_device(&chosen_adapter()?)
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

/// Every adapter this machine has, the one graylab picks marked `selected` (none where
/// [`ADAPTER_NAME_ENV`] names none of them).
#[must_use]
pub fn list_adapters() -> Vec<AdapterReport> {
    let adapters = adapters(&instance_of(wgpu::Backends::PRIMARY));
    let infos: Vec<wgpu::AdapterInfo> = adapters.iter().map(wgpu::Adapter::get_info).collect();
    let chosen = choose_adapter(&infos, wanted_adapter_name().as_deref()).ok();
    adapters
        .iter()
        .zip(&infos)
        .enumerate()
        .map(|(index, (a, info))| {
            let features = a.features();
            let timestamps =
                (features.contains(wgpu::Features::TIMESTAMP_QUERY), features.contains(WANTED_FEATURES));
            AdapterReport::of(info, &a.limits(), timestamps, chosen == Some(index))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(name: &str, device_type: wgpu::DeviceType, backend: wgpu::Backend) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo { name: name.to_owned(), ..wgpu::AdapterInfo::new(device_type, backend) }
    }

    #[test]
    fn the_name_asked_for_first_then_a_real_gpu_before_a_software_one() {
        use wgpu::{Backend as B, DeviceType as T};
        let here = [
            adapter("llvmpipe (LLVM 15.0.6, 256 bits)", T::Cpu, B::Vulkan),
            adapter("Intel(R) UHD Graphics 770", T::IntegratedGpu, B::Vulkan),
            adapter("NVIDIA H200", T::DiscreteGpu, B::Gl),
            adapter("NVIDIA H200", T::DiscreteGpu, B::Vulkan),
        ];
        // Unset: the discrete GPU on Vulkan before the same on GL, the integrated, the software.
        assert_eq!(choose_adapter(&here, None).ok(), Some(3));
        // A part of the name, in any case: the best of those it matches.
        assert_eq!(choose_adapter(&here, Some("LLVMpipe")).ok(), Some(0));
        assert_eq!(choose_adapter(&here, Some("uhd")).ok(), Some(1));
        assert_eq!(choose_adapter(&here, Some("h200")).ok(), Some(3));
        // Equals: the first enumerated.
        let twins =
            [adapter("GPU A", T::DiscreteGpu, B::Vulkan), adapter("GPU B", T::DiscreteGpu, B::Vulkan)];
        assert_eq!(choose_adapter(&twins, None).ok(), Some(0));
        assert_eq!(choose_adapter(&twins, Some("b")).ok(), Some(1));
    }

    #[test]
    fn a_name_that_matches_none_says_the_variable_and_the_adapters_there_are() {
        use wgpu::{Backend as B, DeviceType as T};
        let here = [
            adapter("llvmpipe (LLVM 15.0.6, 256 bits)", T::Cpu, B::Vulkan),
            adapter("NVIDIA H200", T::DiscreteGpu, B::Vulkan),
        ];
        let Err(e) = choose_adapter(&here, Some("radeon")) else { panic!("no adapter is a radeon") };
        assert_eq!(
            e.to_string(),
            "no GPU adapter's name contains \"radeon\" (set by WGPU_ADAPTER_NAME); the adapters here: \
             llvmpipe (LLVM 15.0.6, 256 bits) on vulkan, NVIDIA H200 on vulkan"
        );
        // The app sees llvmpipe under Vulkan and GL: told apart, and one listed twice said once.
        let llvmpipe = "llvmpipe (LLVM 15.0.6, 256 bits)";
        let twice = [adapter(llvmpipe, T::Cpu, B::Vulkan), adapter(llvmpipe, T::Cpu, B::Gl)];
        let Err(e) = choose_adapter(&[twice[0].clone(), twice[1].clone(), twice[0].clone()], Some("x"))
        else {
            panic!("no adapter is an x")
        };
        assert!(e.to_string().ends_with(&format!("here: {llvmpipe} on vulkan, {llvmpipe} on gl")), "{e}");
        let Err(none) = choose_adapter(&[], Some("radeon")) else { panic!("no adapter at all") };
        assert!(none.to_string().ends_with("the adapters here: none"), "{none}");
        assert!(matches!(choose_adapter(&[], None), Err(GpuError::NoAdapter)));
    }
}
