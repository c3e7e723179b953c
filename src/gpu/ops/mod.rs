//! The operations on the gray plane after the grayscale ([`crate::pixel::Op`]) on the GPU, as a
//! stage of their own: the plane is uploaded in row bands that fit one storage binding, the op's
//! kernels run on each band, and the result is read back, each step timed with its clock
//! ([`OpTimings`]). Byte-identical to the CPU (`crate::cpu::ops`). `plan.rs` cuts the bands,
//! `kernels.rs` holds the pipelines, `stage.rs` runs a band's commands.

mod kernels;
mod plan;
mod stage;

pub(crate) use kernels::OpKernels;
pub(crate) use plan::op_bands;
pub(crate) use stage::{OpJob, Plane, run_op};

use crate::gpu::StepTime;

/// How the GPU runs the dither's wavefront (pixel (x, y) at step x + 2y). Neither is faster
/// everywhere, so each device times both once, on its first dither, and keeps the faster
/// ([`crate::gpu::GpuConverter::dither_wavefront`]). lavapipe (2 shared cores,
/// `GRAYLAB_DITHER_WAVEFRONT=steps|persistent graylab bench --synthetic 1000x1000 --op dither
/// --backend gpu`, the op's passes): steps 85.8 ms, persistent 48.4 ms at 1 MP; 186.6 and
/// 161.9 ms at 4 MP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DitherWavefront {
    /// One small dispatch a step (a uniform slot per step, picked by a dynamic offset).
    #[default]
    Steps,
    /// One workgroup of 256 invocations walks a chunk of steps, a storage barrier between
    /// steps, a dispatch a chunk.
    Persistent,
}

impl DitherWavefront {
    /// The wavefront named by `GRAYLAB_DITHER_WAVEFRONT` (`steps` or `persistent`; a
    /// measurement knob), else none: the device picks.
    #[must_use]
    pub fn from_env() -> Option<Self> {
        match std::env::var("GRAYLAB_DITHER_WAVEFRONT").ok().as_deref() {
            Some("steps") => Some(Self::Steps),
            Some("persistent") => Some(Self::Persistent),
            _ => None,
        }
    }
}

/// What one op stage on the GPU measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct OpTimings {
    /// The whole stage, from its setup to its result on the host (CPU clock).
    pub wall_ns: u64,
    /// Buffers and pipelines made for the stage (CPU clock).
    pub setup_ns: u64,
    /// The plane's bands handed to the queue (`write_buffer`, CPU clock).
    pub upload: StepTime,
    /// The op's passes: GPU timestamps where the device has them, else the CPU clock around
    /// each submit-and-wait (which then includes the copy to the readback buffer).
    pub kernel: StepTime,
    /// Waiting for the readback buffer and the host copy out of it (CPU clock).
    pub download: StepTime,
    /// Row bands the plane was cut into.
    pub bands: u32,
    /// Submissions (a dither by steps submits a chunk of steps at a time).
    pub submissions: u32,
    /// The wavefront the dither ran as (`None` for the blur).
    pub wavefront: Option<DitherWavefront>,
    /// Each submission of the op's passes (a band's blur, a chunk of the dither's steps), on the
    /// CPU clock from its submit to the end of its wait, for a trace's events.
    #[serde(skip)]
    pub submitted: Vec<(std::time::Instant, std::time::Instant)>,
}
