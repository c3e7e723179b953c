//! The GPU backend's one error type. Messages say what went wrong; advice on what to do instead
//! (another backend, a command-line flag) belongs to the front ends.

use std::sync::Arc;
use std::time::Duration;

use crate::gpu::WorkgroupSize;

/// Errors of the GPU backend.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// This engine was made to run on the CPU only.
    #[error("this engine runs on the CPU only")]
    NotOpened,
    /// No adapter (GPU or software driver) was found.
    #[error("no GPU adapter found (no Vulkan, Metal or DX12 driver answered)")]
    NoAdapter,
    /// `WGPU_ADAPTER_NAME` names no adapter this machine has.
    #[error(
        "no GPU adapter's name contains \"{wanted}\" (set by WGPU_ADAPTER_NAME); the adapters here: {adapters}"
    )]
    NoAdapterNamed {
        /// What the variable holds.
        wanted: String,
        /// The adapters there are, comma separated, each said once ("none" without any).
        adapters: String,
    },
    /// The adapter refused to create a device.
    #[error("the GPU adapter {adapter} refused to open a device")]
    RequestDevice {
        /// Adapter name.
        adapter: String,
        /// What wgpu said.
        #[source]
        source: wgpu::RequestDeviceError,
    },
    /// The workgroup shape exceeds this device's limits.
    #[error(
        "workgroup size {size} does not fit this GPU (at most {max_invocations} invocations, {max_x} x {max_y}); valid sizes: {valid}"
    )]
    WorkgroupUnsupported {
        /// The requested shape.
        size: WorkgroupSize,
        /// `max_compute_invocations_per_workgroup`.
        max_invocations: u32,
        /// `max_compute_workgroup_size_x`.
        max_x: u32,
        /// `max_compute_workgroup_size_y`.
        max_y: u32,
        /// The valid candidates, comma separated.
        valid: String,
    },
    /// The fewest rows a band must hold at once (one row of a conversion; a blur's row and its
    /// apron, as u32 sums) are larger than one GPU buffer may be.
    #[error(
        "{} of {row_bytes} bytes, the least the GPU must hold at once, exceed its buffer limit of {limit_bytes} bytes",
        if *rows == 1 { "one row".to_owned() } else { format!("{rows} rows") }
    )]
    RowTooLarge {
        /// The rows held at once.
        rows: u64,
        /// Their bytes on the GPU.
        row_bytes: u64,
        /// The per-binding limit in force.
        limit_bytes: u64,
    },
    /// A dispatch would need more workgroups than the device's grid holds, even folded over
    /// two of its dimensions.
    #[error(
        "a {width} px wide image needs {groups} workgroups of {workgroup} across; this GPU's grid holds {max_groups} a dimension, and folded over two of them that is not enough"
    )]
    GridTooLarge {
        /// Image width in pixels.
        width: u32,
        /// The workgroup shape.
        workgroup: WorkgroupSize,
        /// Workgroups needed.
        groups: u64,
        /// `max_compute_workgroups_per_dimension`.
        max_groups: u32,
    },
    /// The input or output buffer does not match the image size.
    #[error("buffer sizes do not match a {width}x{height} image for {kernel}")]
    LengthMismatch {
        /// Image width.
        width: u32,
        /// Image height.
        height: u32,
        /// Kernel name.
        kernel: &'static str,
    },
    /// The GPU ran out of memory while allocating buffers (wgpu's error, shared by every run
    /// that meets it).
    #[error("the GPU is out of memory")]
    OutOfMemory(#[source] Arc<wgpu::Error>),
    /// Waiting for the GPU failed (timeout or a lost device).
    #[error("waiting for the GPU failed")]
    Wait(#[source] wgpu::PollError),
    /// A buffer could not be mapped for reading or writing.
    #[error("mapping a GPU buffer failed")]
    Map(#[source] MapFailure),
    /// wgpu reported a validation or internal error: a bug in graylab, reported instead of
    /// panicking.
    #[error("the GPU rejected a command (a graylab bug, please report it)")]
    Validation(#[source] Arc<wgpu::Error>),
    /// graylab broke one of its own invariants (a state that should not be reachable): a bug,
    /// reported instead of panicking.
    #[error("an internal fault in graylab's GPU code ({0}); please report it")]
    Bug(&'static str),
    /// The job's cancel flag was set; the GPU work already submitted was waited for.
    #[error("the GPU conversion was cancelled")]
    Cancelled,
}

impl From<wgpu::Error> for GpuError {
    /// An error a scope caught: out of memory, or a command the GPU rejected.
    fn from(e: wgpu::Error) -> Self {
        match e {
            e @ wgpu::Error::OutOfMemory { .. } => Self::OutOfMemory(Arc::new(e)),
            e => Self::Validation(Arc::new(e)),
        }
    }
}

/// Why a buffer could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum MapFailure {
    /// The mapped range could not be had.
    #[error(transparent)]
    Range(#[from] wgpu::MapRangeError),
    /// The mapping itself failed (wgpu's callback said so).
    #[error(transparent)]
    Async(#[from] wgpu::BufferAsyncError),
    /// The mapping's callback was dropped without an answer.
    #[error("the mapping was abandoned")]
    Abandoned,
    /// The callback did not answer within this long after the GPU finished.
    #[error("no answer within {0:?} after the GPU finished")]
    NoAnswer(Duration),
}

impl GpuError {
    /// [`Self::NoAdapterNamed`]: `wanted` (from `WGPU_ADAPTER_NAME`) matched none of the adapters
    /// `listed` (each as [`Self::adapter_label`] says it; one listed twice is said once).
    pub fn no_adapter_named<'a>(wanted: &str, listed: impl Iterator<Item = &'a str>) -> Self {
        let mut adapters: Vec<&str> = Vec::new();
        for adapter in listed {
            if !adapters.contains(&adapter) {
                adapters.push(adapter);
            }
        }
        Self::NoAdapterNamed {
            wanted: wanted.to_owned(),
            adapters: if adapters.is_empty() { "none".to_owned() } else { adapters.join(", ") },
        }
    }

    /// An adapter as [`Self::NoAdapterNamed`] lists it: its name and its API (`llvmpipe (LLVM
    /// 15.0.6, 256 bits) on vulkan`), so that one driver under two APIs is told apart.
    #[must_use]
    pub fn adapter_label(name: &str, api: &str) -> String {
        format!("{name} on {api}")
    }
}
