//! Which wgpu device the app's GPU work runs on, and the engine made on it.
//!
//! On a hardware GPU the work shares the window's device, so a result is drawn from GPU memory
//! without a readback. A software adapter (llvmpipe) runs both on the CPU's cores, one queue
//! after the other: a frame then waits behind the conversion's submissions. There the work gets
//! a device of its own, opened on the worker thread, with its own queue and driver threads, so
//! that a frame never waits for a conversion; results are read back and shown like a CPU result
//! (that adapter's memory is host memory anyway). The work threads run at the UI's priority, as
//! `graylab bench` does: a lower one made the app's figures many times the CLI's on a busy
//! machine (BENCHMARKS.md), and the window stays live without it, since it redraws only a few
//! times a second on its own while work runs (`app::redraw_while_working`).

use std::sync::Arc;

use eframe::egui_wgpu::RenderState;

use crate::engine::{Engine, GpuContext};

/// Which device the app's GPU work runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuDevice {
    /// The window's device on a hardware GPU, a device of its own on a software adapter.
    #[default]
    Auto,
    /// The window's device: results are drawn from GPU memory, with no readback.
    Window,
    /// A device of its own on the window's adapter, opened on the worker thread: every result
    /// is read back.
    Own,
}

impl GpuDevice {
    /// `Window` or `Own`: what `Auto` means on this adapter.
    #[must_use]
    pub fn resolve(self, software_adapter: bool) -> Self {
        match self {
            Self::Auto if software_adapter => Self::Own,
            Self::Auto => Self::Window,
            other => other,
        }
    }
}

/// Makes the worker's engine; called on the worker thread.
pub type EngineMaker = Box<dyn FnOnce() -> Engine + Send>;

/// How the engine is made for the window's device `rs` (whose context is `window_gpu`), on
/// `device` as resolved ([`GpuDevice::resolve`]: `Auto` counts as `Window`). `chunk_limit_bytes`
/// fixes the input bytes of one GPU submission (tests); `fresh` keeps the ceilings out of the
/// cache folder.
pub fn engine_maker(
    rs: &RenderState,
    window_gpu: &Arc<GpuContext>,
    device: GpuDevice,
    chunk_limit_bytes: Option<u64>,
    fresh: bool,
) -> EngineMaker {
    let finish = move |engine: Engine| if fresh { engine.without_ceiling_cache() } else { engine };
    if device == GpuDevice::Own {
        let like = rs.adapter.get_info();
        return Box::new(move || finish(Engine::own_device(&like, chunk_limit_bytes)));
    }
    let engine = finish(Engine::for_window(Arc::clone(window_gpu), chunk_limit_bytes));
    Box::new(move || engine)
}
