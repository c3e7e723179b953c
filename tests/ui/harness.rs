//! The real app in an `egui_kittest` harness on the wgpu renderer, and stepping it until its
//! worker is idle: the helpers of every UI test. Kept apart from `tests/common/mod.rs` so the other
//! test binaries do not build them.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
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

/// The app at `size` with these options, its settings fresh but its caches (the GPU's ceilings)
/// read and written where `XDG_CACHE_HOME` says: only in a child process whose environment
/// names a temporary folder.
pub fn harness_keeping_caches(options: AppOptions, size: [f32; 2]) -> Option<Harness<'static, GraylabApp>> {
    super::common::gpu()?;
    assert!(
        std::env::var_os("XDG_CACHE_HOME").is_some_and(|d| d.to_string_lossy().contains("tmp")),
        "caches are kept only in a temporary folder"
    );
    // kittest gives the app no storage: its settings are the defaults, as with fresh settings.
    let options = AppOptions { fresh_settings: false, ..options };
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

/// Steps the app until the worker is idle (or fails the test after three minutes: a hang, not a
/// slow machine; quick claims take 33 s alone on lavapipe, and over a minute beside a build).
pub fn settle(h: &mut Harness<'_, GraylabApp>) {
    let deadline = Instant::now() + Duration::from_mins(3);
    let mut idle_frames = 0;
    while idle_frames < 3 {
        assert!(Instant::now() < deadline, "the app did not finish its work in time");
        h.step();
        if h.state().view().busy {
            idle_frames = 0;
            std::thread::sleep(Duration::from_millis(5));
        } else {
            idle_frames += 1;
        }
    }
}

/// The app at 1280x720 on a fixed 640x400 gradient (written into `dir`), settled: the scene of
/// every snapshot.
pub fn gradient_app(dir: &std::path::Path) -> Option<Harness<'static, GraylabApp>> {
    let img = image::RgbImage::from_fn(640, 400, |x, y| {
        image::Rgb([(x * 255 / 640) as u8, (y * 255 / 400) as u8, ((x + y) % 256) as u8])
    });
    let path = dir.join("gradient.png");
    img.save(&path).expect("save");
    let mut h = harness_sized(Some(path), [1280.0, 720.0])?;
    settle(&mut h);
    Some(h)
}

/// Masks what differs between machines in a snapshot: the text fields (temporary paths), the
/// CPU's instruction set and thread count (the threads control), the
/// build and frame meter, the adapter panel and the decode time.
pub fn mask_what_machines_differ_in(h: &mut Harness<'_, GraylabApp>) {
    let mask_row = |h: &mut Harness<'_, GraylabApp>, label: &str, to_x: f32| {
        let r = h.get_by_label_contains(label).rect();
        h.mask(egui::Rect::from_min_max(
            egui::pos2(r.min.x - 2.0, r.min.y - 2.0),
            egui::pos2(to_x, r.max.y + 2.0),
        ));
    };
    for field in h.get_all_by_role(Role::TextInput).map(|f| f.rect()).collect::<Vec<_>>() {
        h.mask(field);
    }
    mask_row(h, "kernel instruction set", 282.0);
    // The slider and the value left of their label: every core by default.
    let threads = h.get_all_by_label("CPU threads").map(|n| n.rect()).reduce(egui::Rect::union);
    let threads = threads.expect("the CPU threads control");
    h.mask(egui::Rect::from_min_max(
        egui::pos2(0.0, threads.min.y - 4.0),
        egui::pos2(threads.max.x + 2.0, threads.max.y + 4.0),
    ));
    mask_row(h, "build max", 1280.0);
    mask_row(h, "decode", 640.0);
    // The workgroup race's estimate is this machine's pace.
    if h.query_by_label_contains("Trying every size takes ").is_some() {
        mask_row(h, "Trying every size takes ", 1280.0);
    }
    let adapter = h.get_by_label("GPU adapter").rect();
    h.mask(egui::Rect::from_min_max(egui::pos2(0.0, adapter.max.y), egui::pos2(312.0, 690.0)));
}

/// Steps the app until its job waits at the hold the test set (`hold_next_job`), or fails the
/// test after a minute.
pub fn until_held(h: &mut Harness<'_, GraylabApp>) {
    let deadline = Instant::now() + Duration::from_mins(1);
    while !h.state().view().job_held {
        assert!(Instant::now() < deadline, "no job reached the hold the test set");
        h.step();
        std::thread::sleep(Duration::from_millis(2));
    }
}
