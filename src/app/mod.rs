//! The eframe desktop app: open a photo, compare input and output, switch backend, formula and
//! workgroup size, watch the phase timings live, export.
//!
//! All decoding, converting, sweeps and exports run on one named worker thread (`work`; the
//! device it runs GPU work on: `work/gpu_device.rs`), each job with a cancel flag and progress;
//! the UI thread only draws, and draws images at the size they are seen (`textures`). The rest:
//! `panels` always on screen, `windows` opened on demand, `charts`, the `viewer`, the `session`
//! they share. Depends on [`crate::engine`] (the GPU display textures through it).

mod advice;
#[expect(clippy::module_inception, reason = "the app's own struct, as in egui's demo app")]
mod app;
mod charts;
mod kept_settings;
mod look;
mod panels;
mod session;
mod state;
mod textures;
mod viewer;
mod windows;
mod work;

use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::GpuContext;

pub use app::{AppView, GraylabApp, OpenWindows};
pub use state::{ExportRecord, RunRecord, Settings, ViewMode};
pub use work::gpu_device::GpuDevice;

/// How the app starts.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// The image to open first; `None` opens nothing (`run` passes the bundled sample).
    pub initial_path: Option<PathBuf>,
    /// Ignore saved settings and cached measurements, and keep none (tests start from defaults).
    pub fresh_settings: bool,
    /// Start on this backend instead of the saved one.
    pub backend: Option<crate::engine::Backend>,
    /// Start with Continuous on.
    pub continuous: bool,
    /// Write every frame-to-frame interval (ms) to this file, one per line.
    pub frame_log: Option<PathBuf>,
    /// Close the window after this many seconds.
    pub quit_after_secs: Option<f64>,
    /// Which device GPU work runs on (default: the window's on a hardware GPU, a device of its
    /// own on a software adapter).
    pub gpu_device: GpuDevice,
    /// Input bytes of one GPU submission, fixed instead of learnt (tests: many short
    /// submissions, so that a cancel lands between them).
    pub gpu_chunk_limit_bytes: Option<u64>,
}

/// The bundled sample photo, when it is next to the binary's source tree or the working folder.
#[must_use]
pub fn sample_photo() -> Option<PathBuf> {
    let name = "assets/dandelions-5312x2988.jpg";
    [PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name), PathBuf::from(name)]
        .into_iter()
        .find(|p| p.is_file())
}

/// The window's least inner size, in points, where the screen has room for it.
pub const MIN_INNER_SIZE: [f32; 2] = [960.0, 600.0];

/// The inner size a window of `inner` points should take on a monitor of `monitor` points: at
/// least [`MIN_INNER_SIZE`] where the monitor has room, never larger than the monitor; `None`
/// when it is that already. eframe restores the size saved at the last exit as it was: one saved
/// on an 800x600 screen came back below the minimum on a 1920x1080 one at a scale of 1.5.
#[must_use]
pub fn fitted_inner_size(inner: egui::Vec2, monitor: egui::Vec2) -> Option<egui::Vec2> {
    let least = egui::Vec2::from(MIN_INNER_SIZE).min(monitor);
    let fitted = inner.max(least).min(monitor);
    ((fitted - inner).length() > 0.5).then_some(fitted)
}

/// Fits the window to its monitor once both sizes are known ([`fitted_inner_size`]), at the start
/// of a frame; then never again (the user's resizes stand).
fn fit_window_once(ctx: &egui::Context, done: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    if done.load(Ordering::Relaxed) {
        return;
    }
    let sizes = ctx.input(|i| Some((i.viewport().inner_rect?.size(), i.viewport().monitor_size?)));
    if let Some((inner, monitor)) = sizes {
        done.store(true, Ordering::Relaxed);
        if let Some(size) = fitted_inner_size(inner, monitor) {
            log::debug!("window {inner:?} on a {monitor:?} monitor: resized to {size:?} points");
            ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(size));
        }
    }
}

/// Window, persistence and wgpu settings: the device is created with the adapter's own limits
/// (large storage buffers and textures) and its timestamp features, so the GPU path needs no
/// second device and shows results without a readback. At most one frame is queued for
/// presentation, so input reaches the screen with the least delay.
#[must_use]
pub fn native_options() -> eframe::NativeOptions {
    let wgpu_options = eframe::egui_wgpu::WgpuConfiguration {
        wgpu_setup: wgpu_setup(),
        surface: eframe::egui_wgpu::SurfaceConfig::LOW_LATENCY,
        ..Default::default()
    };
    eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("graylab")
            .with_app_id("graylab")
            .with_inner_size([1440.0, 900.0])
            .with_min_inner_size(MIN_INNER_SIZE)
            .with_drag_and_drop(true),
        wgpu_options,
        persist_window: true,
        ..Default::default()
    }
}

/// How eframe (and the UI tests) create the wgpu device: on the adapter the CLI picks
/// (`WGPU_ADAPTER_NAME`, then a real GPU before a software one) among those that can draw the
/// window, with the adapter's own limits and its timestamp features.
#[must_use]
pub fn wgpu_setup() -> eframe::egui_wgpu::WgpuSetup {
    let mut setup = eframe::egui_wgpu::WgpuSetup::without_display_handle();
    if let eframe::egui_wgpu::WgpuSetup::CreateNew(create) = &mut setup {
        create.device_descriptor =
            Arc::new(|adapter: &wgpu::Adapter| GpuContext::device_descriptor(adapter, "graylab (eframe)"));
        create.native_adapter_selector = Some(Arc::new(|adapters, surface| {
            crate::engine::choose_window_adapter(adapters, surface)
                .map_err(|e| crate::engine::causes::one_line(&e))
        }));
    }
    setup
}

/// Opens the desktop app on `options.initial_path`, or on the bundled sample photo. The photo is
/// decoded while the window and the GPU device are created. While the window is open, a first
/// SIGINT, SIGTERM or SIGHUP closes it as its close button does, so that eframe saves the
/// settings, the recent files and the kept sweep; a second ends the process at once. Once the
/// window has closed (while the settings are written and the work winds down), the first ends it
/// at once, as it ends a command.
pub fn run(mut options: AppOptions) -> anyhow::Result<()> {
    let window: Arc<std::sync::OnceLock<egui::Context>> = Arc::default();
    let to_close = Arc::clone(&window);
    let close = move || {
        if let Some(ctx) = to_close.get() {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            ctx.request_repaint();
        }
    };
    // Kept by the app until its window closes; dropped here if it never opens.
    let gentle = crate::system::signals::stop_gently_waking("closing the window, the settings saved", close);
    options.initial_path = options.initial_path.or_else(sample_photo);
    let preload = options
        .initial_path
        .clone()
        // The window's device is not made yet: reserve for GPU work on the adapter it will be
        // made on, found on the preload's thread.
        .and_then(|path| {
            work::preload::Preload::start(
                path,
                textures::PREVIEW_MAX_SIDE,
                work::preload::launch_decode_options,
            )
            .ok()
        });
    let settings = kept_settings::settings_file();
    if let Some(file) = &settings {
        kept_settings::keep_or_restore(file);
    }
    let ran = eframe::run_native(
        "graylab",
        native_options(),
        Box::new(move |cc| {
            let _ = window.set(cc.egui_ctx.clone());
            let fitted = std::sync::atomic::AtomicBool::new(false);
            cc.egui_ctx
                .on_begin_pass("graylab fits the window", Arc::new(move |ctx| fit_window_once(ctx, &fitted)));
            // A signal before the window existed: it closes as soon as it opens.
            if crate::system::signals::stop_asked().load(std::sync::atomic::Ordering::Acquire) {
                cc.egui_ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            let mut app = GraylabApp::with_preload(cc, options, preload);
            app.stop_gently_while_open(gentle);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"));
    // eframe's last save has finished (its thread is joined when the app is dropped): a write cut
    // short is undone now, not at the next launch.
    if let Some(file) = &settings {
        kept_settings::keep_or_restore(file);
    }
    ran
}

#[cfg(test)]
mod tests {
    use egui::vec2;

    #[test]
    fn a_restored_window_is_raised_to_the_least_size_and_kept_on_its_monitor() {
        use super::fitted_inner_size as fitted;
        // Saved on an 800x600 screen, restored on 1920x1080 at a scale of 1.5 (1280x720 points).
        assert_eq!(fitted(vec2(800.0, 600.0), vec2(1280.0, 720.0)), Some(vec2(960.0, 600.0)));
        // Saved on a large screen, restored on a smaller one.
        assert_eq!(fitted(vec2(2400.0, 1300.0), vec2(1440.0, 900.0)), Some(vec2(1440.0, 900.0)));
        // An 800x600 screen: the whole screen, below the least size it has no room for.
        assert_eq!(fitted(vec2(960.0, 600.0), vec2(800.0, 600.0)), Some(vec2(800.0, 600.0)));
        assert_eq!(fitted(vec2(1440.0, 900.0), vec2(1920.0, 1080.0)), None, "fine as it is");
    }
}
