//! Helpers of the app's UI tests (`tests/ui.rs`, `tests/ui_windows.rs`, `tests/ui_claims.rs`):
//! the real app in an `egui_kittest` harness on the wgpu renderer, and stepping it until its
//! worker is idle. Kept apart from `tests/common/mod.rs` so the other test binaries do not build
//! them.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use graylab::app::{AppOptions, GraylabApp};

/// The app at `size`, opening `initial` (or nothing), with fresh settings; `None` (test skipped)
/// when there is no GPU adapter.
pub fn harness_sized(initial: Option<PathBuf>, size: [f32; 2]) -> Option<Harness<'static, GraylabApp>> {
    harness_with(AppOptions { initial_path: initial, ..AppOptions::default() }, size)
}

/// The app at `size` with these options (and fresh settings).
pub fn harness_with(options: AppOptions, size: [f32; 2]) -> Option<Harness<'static, GraylabApp>> {
    super::common::gpu()?;
    let options = AppOptions { fresh_settings: true, ..options };
    Some(
        Harness::builder()
            .with_size(size)
            .wgpu_setup(graylab::app::wgpu_setup())
            .build_eframe(move |cc| GraylabApp::new(cc, options)),
    )
}

/// The app at `size` opening `initial`, with egui's memory (panel sizes, scroll offsets) as a
/// previous session left it, as eframe restores it on relaunch.
pub fn harness_restored(
    initial: Option<PathBuf>,
    size: [f32; 2],
    memory: egui::Memory,
) -> Option<Harness<'static, GraylabApp>> {
    super::common::gpu()?;
    let options = AppOptions { initial_path: initial, fresh_settings: true, ..AppOptions::default() };
    Some(
        Harness::builder()
            .with_size(size)
            .wgpu_setup(graylab::app::wgpu_setup())
            .with_context_setup(move |ctx| ctx.memory_mut(|m| *m = memory))
            .build_eframe(move |cc| GraylabApp::new(cc, options)),
    )
}

/// The app at 1280x800.
pub fn harness(initial: Option<PathBuf>) -> Option<Harness<'static, GraylabApp>> {
    harness_sized(initial, [1280.0, 800.0])
}

/// Steps the app until the worker is idle (or fails the test after a minute).
pub fn settle(h: &mut Harness<'_, GraylabApp>) {
    let deadline = Instant::now() + Duration::from_mins(1);
    let mut idle_frames = 0;
    while idle_frames < 3 {
        assert!(Instant::now() < deadline, "the app did not finish its work in time");
        h.step();
        if h.state().is_busy() {
            idle_frames = 0;
            std::thread::sleep(Duration::from_millis(5));
        } else {
            idle_frames += 1;
        }
    }
}
