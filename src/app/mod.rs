//! The eframe desktop app: open a photo, compare input and output, switch backend, formula and
//! workgroup size, watch the phase timings live, export.
//!
//! All decoding, converting and exporting runs on one named worker thread (`worker.rs`); the UI
//! thread only draws. GPU work runs on eframe's own wgpu device, so a GPU result is shown from
//! a texture the compute pass wrote, without a readback. Depends on [`crate::engine`] only (and
//! on `crate::gpu` display tiles through it).

mod adapter;
#[expect(clippy::module_inception, reason = "the app's own struct, as in egui's demo app")]
mod app;
mod charts;
mod controls;
mod dialogs;
mod export_window;
mod frame_meter;
mod jobs;
mod parity_window;
mod session;
mod state;
mod sweep_window;
mod textures;
mod toasts;
mod top_bar;
mod viewer;
mod worker;

use std::path::PathBuf;
use std::sync::Arc;

pub use app::GraylabApp;
pub use state::{RunRecord, Settings, ViewMode};

/// How the app starts.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// The image to open first; `None` opens nothing (the bundled sample is passed by `run`).
    pub initial_path: Option<PathBuf>,
    /// Ignore saved settings (tests start from defaults).
    pub fresh_settings: bool,
}

/// The bundled sample photo, when it is next to the binary's source tree or the working folder.
#[must_use]
pub fn sample_photo() -> Option<PathBuf> {
    let name = "assets/dandelions-5312x2988.jpg";
    [PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name), PathBuf::from(name)]
        .into_iter()
        .find(|p| p.is_file())
}

/// Window, persistence and wgpu settings: the device is created with the adapter's own limits
/// (large storage buffers and textures) and its timestamp features, so the GPU path needs no
/// second device and shows results without a readback.
#[must_use]
pub fn native_options() -> eframe::NativeOptions {
    let wgpu_options =
        eframe::egui_wgpu::WgpuConfiguration { wgpu_setup: wgpu_setup(), ..Default::default() };
    eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("graylab")
            .with_app_id("graylab")
            .with_inner_size([1440.0, 900.0])
            .with_min_inner_size([900.0, 600.0])
            .with_drag_and_drop(true),
        wgpu_options,
        persist_window: true,
        ..Default::default()
    }
}

/// How eframe (and the UI tests) create the wgpu device: the adapter's own limits and its
/// timestamp features.
#[must_use]
pub fn wgpu_setup() -> eframe::egui_wgpu::WgpuSetup {
    let mut setup = eframe::egui_wgpu::WgpuSetup::without_display_handle();
    if let eframe::egui_wgpu::WgpuSetup::CreateNew(create) = &mut setup {
        create.device_descriptor = Arc::new(|adapter: &wgpu::Adapter| wgpu::DeviceDescriptor {
            label: Some("graylab (eframe)"),
            required_features: adapter.features() & crate::gpu::GpuContext::wanted_features(),
            required_limits: adapter.limits(),
            ..Default::default()
        });
    }
    setup
}

/// Opens the desktop app on `path`, or on the bundled sample photo.
pub fn run(path: Option<PathBuf>) -> anyhow::Result<()> {
    let options = AppOptions { initial_path: path.or_else(sample_photo), fresh_settings: false };
    eframe::run_native(
        "graylab",
        native_options(),
        Box::new(move |cc| Ok(Box::new(GraylabApp::new(cc, options)))),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))
}
