//! The engine: kernel choice per pixel type, CPU = GPU through the public API, honest reports.

use crate::common;
use graylab::system::clock::Clock;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use graylab::engine::ceilings::PhasePart;
use graylab::engine::{
    Backend, ConvertSettings, Engine, EngineError, Phase, RunOptions, RunReport, SpanClock, Track,
    WorkgroupSize, bench, synthetic_rgb, track_overlap,
};
use graylab::gpu::{GpuConverter, TimingMode};
use graylab::pixel::{Formula, Work};
use image::{DynamicImage, ImageBuffer};

fn inputs() -> Vec<DynamicImage> {
    let (w, h) = (67, 29);
    let n = (w * h) as usize;
    let bytes = |ch: usize, seed| common::noise(n * ch, seed);
    let words = |ch: usize, seed| -> Vec<u16> {
        bytes(ch * 2, seed).chunks_exact(2).map(|c| u16::from_ne_bytes([c[0], c[1]])).collect()
    };
    vec![
        DynamicImage::ImageRgb8(ImageBuffer::from_raw(w, h, bytes(3, 1)).expect("size")),
        DynamicImage::ImageRgba8(ImageBuffer::from_raw(w, h, bytes(4, 2)).expect("size")),
        DynamicImage::ImageRgb16(ImageBuffer::from_raw(w, h, words(3, 3)).expect("size")),
        DynamicImage::ImageRgba16(ImageBuffer::from_raw(w, h, words(4, 4)).expect("size")),
        DynamicImage::ImageLuma8(ImageBuffer::from_raw(w, h, bytes(1, 5)).expect("size")),
        DynamicImage::ImageLumaA16(ImageBuffer::from_raw(w, h, words(2, 6)).expect("size")),
    ]
}

#[test]
fn cpu_output_types_and_values() {
    let engine = Engine::cpu_only();
    for img in inputs() {
        for keep_alpha in [true, false] {
            let settings = ConvertSettings { keep_alpha, ..ConvertSettings::default() };
            let out = engine.convert(&img, &settings, RunOptions::default()).expect("converts");
            let has_alpha = img.color().has_alpha() && keep_alpha;
            assert_eq!(out.image.color().has_alpha(), has_alpha, "{:?}", img.color());
            assert_eq!(
                out.image.color().bytes_per_pixel() / out.image.color().channel_count(),
                img.color().bytes_per_pixel() / img.color().channel_count()
            );
            assert_eq!((out.image.width(), out.image.height()), (67, 29));
            if img.color().has_color() {
                let kernel = out.report.phase(Phase::Kernel).expect("kernel timed");
                assert_eq!(kernel.source, Clock::CpuClock);
                assert!(out.report.total_ns >= kernel.ns);
            } else {
                assert!(out.report.notes.iter().any(|n| n.contains("already gray")));
                assert!(out.report.phases.is_empty());
            }
        }
    }
    // The values, for RGB8: OpenCV's formula.
    let img = &inputs()[0];
    let out = engine.convert(img, &ConvertSettings::default(), RunOptions::default()).expect("converts");
    let want: Vec<u8> = img.to_rgb8().pixels().map(|p| Formula::Bt601.luma8(p[0], p[1], p[2])).collect();
    assert_eq!(out.image.as_bytes(), want);
}

#[test]
fn gpu_equals_cpu_for_every_pixel_type_and_labels_its_clocks() {
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu.clone());
    for img in inputs() {
        for formula in Formula::COMPUTED {
            let cpu = ConvertSettings { formula, threads: 2, ..ConvertSettings::default() };
            let gpu_settings =
                ConvertSettings { backend: Backend::Gpu, workgroup: WorkgroupSize { x: 16, y: 16 }, ..cpu };
            let a = engine.convert(&img, &cpu, RunOptions::default()).expect("cpu");
            let b = engine.convert(&img, &gpu_settings, RunOptions::default()).expect("gpu");
            assert_eq!(a.image, b.image, "{:?} {formula}", img.color());
            if img.color().has_color() {
                let kernel = b.report.phase(Phase::Kernel).expect("kernel");
                let want = if gpu.timestamps().passes { Clock::GpuTimestamp } else { Clock::CpuClock };
                assert_eq!(kernel.source, want);
                assert!(b.report.phase(Phase::Upload).is_some() && b.report.phase(Phase::Download).is_some());
                assert_eq!(b.report.adapter.as_deref(), Some(gpu.adapter_info().name.as_str()));
            }
        }
    }
}

#[test]
fn bench_keeps_the_cold_run_apart() {
    let engine = Engine::cpu_only();
    let img = synthetic_rgb(256, 128, 3);
    let r = bench(&engine, &img, &ConvertSettings { threads: 1, ..ConvertSettings::default() }, 5)
        .expect("bench");
    assert_eq!(r.warm.len(), 5);
    assert_eq!(r.total.runs, 5);
    let k = r.phases.iter().find(|p| p.phase == Phase::Kernel).expect("kernel stats");
    assert!(k.stats.min_ns <= k.stats.median_ns && k.stats.median_ns <= k.stats.max_ns);
    let mut kernel_ns: Vec<u64> =
        r.warm.iter().filter_map(|w| w.phase(Phase::Kernel)).map(|p| p.ns).collect();
    kernel_ns.sort_unstable();
    assert_eq!(k.stats.median_ns, kernel_ns[2]);
    // The kernel's rate is the image's pixels over the median kernel time.
    let want = 256.0 * 128.0 / k.stats.median_ns.max(1) as f64 * 1e3;
    assert!((r.kernel_mpix_per_s - want).abs() <= want * 1e-9, "{} against {want}", r.kernel_mpix_per_s);
    assert!((r.kernel_gb_per_s - 256.0 * 128.0 * 4.0 / k.stats.median_ns.max(1) as f64).abs() < 1e-9);
    let gray = DynamicImage::ImageLuma8(image::GrayImage::new(4, 4));
    assert!(bench(&engine, &gray, &ConvertSettings::default(), 1).is_err());
    if let Some(gpu) = common::gpu() {
        let engine = Engine::with_gpu(gpu);
        let s = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
        let r = bench(&engine, &img, &s, 3).expect("gpu bench");
        let phases: Vec<Phase> = r.phases.iter().map(|p| p.phase).collect();
        assert_eq!(phases, [Phase::Setup, Phase::Upload, Phase::Kernel, Phase::Download]);
    }
}

/// CPU vs GPU in turns: at least six warm rounds of each, medians and intervals that agree with
/// the decision, and Stop honoured before the first round. (Which side wins is the machine's.)
#[test]
fn a_comparison_samples_both_sides_in_turns_until_decided() {
    use graylab::engine::sampling::{Budget, Decision, MIN_SAMPLES, decide};
    use graylab::engine::sweep::{Sides, Winner};
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu);
    let img = synthetic_rgb(256, 128, 3);
    let cpu = ConvertSettings { threads: 1, ..ConvertSettings::default() };
    let sides = Sides { cpu, gpu: ConvertSettings { backend: Backend::Gpu, ..cpu }, cpu_series: None };
    let mut rounds_seen = Vec::new();
    let c = graylab::engine::sweep::compare(&engine, &img, &sides, &Budget::QUICK, None, &mut |n| {
        rounds_seen.push(n);
    })
    .expect("compare");
    let ratio = c.speed_up.expect("a speed-up after the rounds");
    assert!(ratio.samples >= MIN_SAMPLES && ratio.samples <= Budget::QUICK.max_rounds, "{ratio:?}");
    // One warm-up round, then the warm ones, each reported once.
    assert_eq!(rounds_seen, (1..=ratio.samples + 1).collect::<Vec<_>>());
    let winner = match decide(Some(&ratio), 1.0) {
        Decision::Above => Winner::GpuFaster,
        Decision::Below => Winner::CpuFaster,
        Decision::Within => Winner::WithinNoise,
    };
    assert_eq!((c.winner, c.rounds), (winner, ratio.samples));
    if c.winner != Winner::WithinNoise {
        assert!(
            ratio.ci_low > 1.0 || ratio.ci_high < 1.0,
            "a decided ratio's interval is clear of 1: {ratio:?}"
        );
    }
    for side in [c.cpu_ns, c.gpu_ns] {
        let s = side.expect("each side's times");
        assert_eq!(s.samples, ratio.samples);
        assert!(s.ci_low <= s.median && s.median <= s.ci_high && s.ci_low > 0.0, "{s:?}");
    }
    // The speed-up is CPU time over GPU time: its median lies near the sides' medians' ratio.
    let of_medians = c.cpu_ns.expect("cpu").median / c.gpu_ns.expect("gpu").median;
    assert!(
        ratio.ci_low <= of_medians * 1.5 && of_medians <= ratio.ci_high * 1.5,
        "{ratio:?} against {of_medians}"
    );
    let stop = AtomicBool::new(true);
    let err =
        graylab::engine::sweep::compare(&engine, &img, &sides, &Budget::QUICK, Some(&stop), &mut |_| {});
    assert!(matches!(err, Err(EngineError::Cancelled)), "Stop before the first round");
}

/// Which workgroup shape is fastest: every shape the adapter allows raced in turns, one interval
/// of kernel time per shape with at least six samples, its clock named, the verdict consistent
/// with the speed-up's interval, and Stop honoured before the first round.
#[test]
fn the_workgroup_race_times_every_valid_shape_in_turns() {
    use graylab::engine::sampling::{Budget, Decision, MIN_SAMPLES, decide};
    let Some(gpu) = common::gpu() else { return };
    let valid = gpu.valid_workgroups();
    let engine = Engine::with_gpu(gpu);
    let img = synthetic_rgb(256, 128, 3);
    let settings = ConvertSettings::default();
    let mut rounds_seen = Vec::new();
    let r = graylab::engine::sweep::workgroups(&engine, &img, &settings, &Budget::QUICK, None, &mut |n| {
        rounds_seen.push(n);
    })
    .expect("race");
    let shapes: Vec<WorkgroupSize> = r.shapes.iter().map(|s| s.workgroup).collect();
    assert_eq!(shapes, valid);
    assert!(r.rounds >= MIN_SAMPLES && r.rounds <= Budget::QUICK.max_rounds, "{}", r.rounds);
    // One warm-up round, then the warm ones, each reported once.
    assert_eq!(rounds_seen, (1..=r.rounds + 1).collect::<Vec<_>>());
    for s in &r.shapes {
        let k = s.kernel_ns.expect("an interval per shape");
        assert!(k.samples >= MIN_SAMPLES && k.samples == r.rounds, "{k:?}");
        assert!(k.ci_low <= k.median && k.median <= k.ci_high && k.ci_low > 0.0, "{k:?}");
        assert_ne!(s.clock, Clock::Mixed);
    }
    let fastest = r.fastest.expect("a fastest shape");
    let least = r
        .shapes
        .iter()
        .map(|s| s.kernel_ns.map_or(f64::INFINITY, |k| k.median))
        .fold(f64::INFINITY, f64::min);
    assert_eq!(r.shape(fastest).and_then(|s| s.kernel_ns).map(|k| k.median), Some(least));
    if valid.len() > 1 {
        // Decided only when every other shape is decided slower (dc3641d), the runner-up with
        // them; a runner-up decided slower beside a noisier shape that is not leaves it tied.
        let runner_up_slower = decide(r.speed_up.as_ref(), 1.0) == Decision::Above;
        assert!(!r.decided || runner_up_slower, "{:?}", r.speed_up);
        assert_eq!(r.tied.is_empty(), r.decided, "{:?}", r.tied);
    }
    let stop = AtomicBool::new(true);
    let err = graylab::engine::sweep::workgroups(
        &engine,
        &img,
        &settings,
        &Budget::QUICK,
        Some(&stop),
        &mut |_| {},
    );
    assert!(matches!(err, Err(EngineError::Cancelled)), "Stop before the first round");
}

#[test]
fn no_gpu_gives_a_clear_error_and_the_cpu_still_works() {
    let engine = Engine::without_gpu(graylab::engine::GpuError::NoAdapter);
    let img = synthetic_rgb(8, 8, 1);
    let err = engine
        .convert(
            &img,
            &ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() },
            RunOptions::default(),
        )
        .expect_err("no gpu");
    // The cause is printed once, as the chain's second link.
    let text = graylab::engine::causes::one_line(&err);
    assert_eq!(
        text,
        "the GPU is not available: no GPU adapter found (no Vulkan, Metal or DX12 driver answered)"
    );
    assert!(engine.convert(&img, &ConvertSettings::default(), RunOptions::default()).is_ok());
}

#[test]
fn parity_cpu_equals_gpu_while_formulas_differ() {
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu);
    let img = synthetic_rgb(301, 203, 5);
    let report = engine
        .parity_with_progress(
            &img,
            &ConvertSettings { workgroup: WorkgroupSize { x: 32, y: 8 }, ..ConvertSettings::default() },
            &mut |_, _| true,
        )
        .expect("parity");
    let cpu_gpu = report.cpu_vs_gpu.expect("GPU ran");
    assert_eq!((cpu_gpu.differing, cpu_gpu.max_diff, cpu_gpu.pixels), (0, 0, 301 * 203));
    assert!(report.difference.as_raw().iter().all(|&v| v == 0), "the difference image is black");
    let (a, b, d) =
        report.formulas.iter().find(|(a, b, _)| (*a, *b) == (Formula::Bt601, Formula::Bt709)).expect("pair");
    assert_eq!((*a, *b), (Formula::Bt601, Formula::Bt709));
    assert!(d.differing > d.pixels / 2, "bt601 and bt709 differ on most pixels: {d:?}");
    assert!((20..=40).contains(&d.max_diff), "by up to ~33 levels: {d:?}");
    assert_eq!(report.formulas.len(), 3);
}

/// The phases minus the overlap plus the rest are the wall time, exactly.
fn assert_reconciles(r: &RunReport) {
    let phases: u64 = r.phases.iter().map(|p| p.ns).sum();
    assert_eq!(phases - r.overlap_ns + r.other_ns, r.total_ns, "{r:?}");
    assert!(r.overlap_ns == 0 || r.other_ns == 0, "one of the two remainders: {r:?}");
}

#[test]
fn phases_overlap_and_the_rest_add_up_to_the_wall_time() {
    let img = synthetic_rgb(1500, 1000, 7);
    let engine = Engine::cpu_only();
    let cpu = engine.convert(&img, &ConvertSettings::default(), RunOptions::default()).expect("cpu");
    assert_reconciles(&cpu.report);
    assert!(cpu.report.other_ns > 0, "preparing pixels is no phase: {:?}", cpu.report);
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu);
    let s = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    let r = bench(&engine, &img, &s, 3).expect("gpu bench");
    for report in std::iter::once(&r.cold).chain(&r.warm) {
        assert_reconciles(report);
        // The upload's two parts, from the same spans, add up to the whole.
        let rates = engine.phase_rates(report);
        let upload = |part| rates.iter().find(|x| x.phase == Phase::Upload && x.part == part).map(|x| x.ns);
        let parts = upload(PhasePart::HostCopy).zip(upload(PhasePart::GpuCopy)).map(|(h, g)| h + g);
        assert_eq!(parts, upload(PhasePart::Whole), "{report:?}");
        assert_eq!(parts, report.phase(Phase::Upload).map(|p| p.ns));
    }
}

#[test]
fn a_cancelled_gpu_conversion_says_so() {
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu);
    let img = synthetic_rgb(64, 64, 2);
    let s = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    let cancel = AtomicBool::new(true);
    let err = engine
        .convert(&img, &s, RunOptions { cancel: Some(&cancel), ..RunOptions::default() })
        .expect_err("cancelled");
    assert!(matches!(err, EngineError::Cancelled), "{err:?}");
    assert!(engine.convert(&img, &s, RunOptions::default()).is_ok(), "the next run works");
}

#[test]
fn work_per_pixel_through_the_engine_cpu_equals_gpu_and_reports_its_level() {
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu);
    for img in inputs() {
        for divergent in [false, true] {
            let work = Work { rounds: 16, mask: 0xFFFF, divergent };
            let cpu_settings = ConvertSettings { threads: 2, work, ..ConvertSettings::default() };
            let gpu_settings = ConvertSettings {
                backend: Backend::Gpu,
                workgroup: WorkgroupSize { x: 16, y: 16 },
                ..cpu_settings
            };
            let cpu = engine.convert(&img, &cpu_settings, RunOptions::default()).expect("CPU");
            let gpu = engine.convert(&img, &gpu_settings, RunOptions::default()).expect("GPU");
            assert_eq!(cpu.image, gpu.image, "{:?} {work:?}", img.color());
            let plain =
                engine.convert(&img, &ConvertSettings::default(), RunOptions::default()).expect("plain");
            for r in [&cpu.report, &gpu.report] {
                // The figures say what ran: no rounds where no kernel did.
                let (rounds, mask, ops) = if r.kernel.is_some() { (16, 0xFFFF, 48) } else { (0, 0, 0) };
                let ran = (r.work.work_rounds, r.work.divergent && rounds > 0, r.work.work_mask);
                assert_eq!(ran, (rounds, divergent && rounds > 0, mask));
                assert_eq!(r.work.ops_per_pixel, ops);
            }
            if let Some(kernel) = cpu.report.kernel {
                assert_ne!(cpu.image, plain.image, "{kernel:?}: the work shows with a full mask");
                let bytes = (kernel.in_bytes_per_pixel() + kernel.out_bytes_per_pixel()) as f64;
                assert!((cpu.report.work.ops_per_byte - 55.0 / bytes).abs() < 1e-9, "48 + the formula's 7");
                assert!(cpu.report.work.kernel_ops_per_s.is_some_and(|r| r > 0.0));
                assert!(gpu.report.work.kernel_ops_per_s.is_some_and(|r| r > 0.0));
            } else {
                // A gray input runs no kernel: passed through unchanged by both, and said so.
                assert_eq!(cpu.image, plain.image);
                assert!(cpu.report.notes.iter().any(|n| n.contains("work per pixel was not applied")));
                assert!(gpu.report.notes.iter().any(|n| n.contains("work per pixel was not applied")));
                assert_eq!(cpu.report.work.kernel_ops_per_s, None);
            }
        }
    }
}

#[test]
fn work_per_pixel_in_bench_results_and_old_settings_load() {
    let engine = Engine::cpu_only();
    let img = synthetic_rgb(101, 37, 1);
    let work = Work { rounds: 8, mask: 0, divergent: false };
    let r = bench(&engine, &img, &ConvertSettings { threads: 1, work, ..ConvertSettings::default() }, 2)
        .expect("bench");
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["work_rounds"], 8);
    assert_eq!(json["divergent"], false);
    assert_eq!(json["ops_per_byte"], 7.75, "(24 + the formula's 7) / 4");
    assert!(json["kernel_ops_per_s"].as_f64().is_some_and(|v| v > 0.0), "{json}");
    assert_eq!(json["cold"]["work_rounds"], 8);
    // Settings saved before the work existed still load, with no work.
    let mut old = serde_json::to_value(ConvertSettings::default()).expect("json");
    old.as_object_mut().expect("object").remove("work");
    let loaded: ConvertSettings = serde_json::from_value(old).expect("old settings load");
    assert_eq!(loaded.work, Work::NONE);
}

/// Every span of `report` lies within its run's wall time, and spans of one lane do not overlap.
fn assert_timeline(report: &RunReport, what: &str) {
    assert!(
        report.spans.iter().any(|s| s.lane == Track::Kernel),
        "{what}: no kernel span in {:?}",
        report.spans
    );
    for s in &report.spans {
        assert!(
            s.start_ns <= s.end_ns && s.end_ns <= report.total_ns,
            "{what}: {s:?} is not within [0, {}] ns",
            report.total_ns
        );
    }
    assert_eq!(track_overlap(&report.spans), None, "{what}: two spans of one lane overlap");
}

#[test]
fn every_step_is_placed_within_its_run_and_one_at_a_time_per_lane() {
    let image = DynamicImage::ImageRgb8(common::photo(1024, 1024).to_rgb8());
    let cpu = Engine::cpu_only();
    let report = cpu.convert(&image, &ConvertSettings::default(), RunOptions::default()).expect("cpu").report;
    assert_timeline(&report, "cpu");
    // A CPU run is one kernel span, and on more than one thread each thread's stretches of
    // chunks within it, every chunk in one.
    let kernel = report.spans.iter().find(|s| s.lane == Track::Kernel).expect("kernel span");
    let threads: Vec<_> =
        report.spans.iter().filter(|s| matches!(s.lane, Track::KernelThread { .. })).collect();
    assert_eq!(report.spans.len(), 1 + threads.len(), "{:?}", report.spans);
    assert_eq!(threads.is_empty(), report.threads == Some(1), "{:?}", report.spans);
    for s in &threads {
        assert!(kernel.start_ns <= s.start_ns && s.end_ns <= kernel.end_ns, "{s:?} outside {kernel:?}");
    }
    let Some(gpu) = common::gpu() else { return };
    let gpu_settings = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    for mode in [TimingMode::Auto, TimingMode::CpuClock] {
        let mut converter = GpuConverter::new(gpu.clone());
        converter.set_timing_mode(mode);
        // Several chunks, so that host copies run beside the GPU's work when pipelined.
        converter.set_chunk_limit_bytes(Some(512 * 1024));
        let engine = Engine::with_converter(Arc::new(converter));
        for _ in 0..2 {
            let report = engine.convert(&image, &gpu_settings, RunOptions::default()).expect("gpu").report;
            let what = format!("gpu {mode:?}");
            assert_timeline(&report, &what);
            for lane in [Track::Setup, Track::Upload, Track::Download] {
                assert!(report.spans.iter().any(|s| s.lane == lane), "{what}: no {lane:?} span");
            }
            assert!(
                report.spans.iter().any(|s| matches!(s.lane, Track::HostCopy { .. })),
                "{what}: no host copy span"
            );
            let pipelined = report.gpu.as_ref().is_some_and(|g| g.pipelined);
            let stamped = |clock| report.spans.iter().filter(|s| s.clock == clock).count();
            let (calibrated, placed) =
                (stamped(SpanClock::GpuTimestampCalibrated), stamped(SpanClock::GpuTimestampAtSubmit));
            assert_eq!(calibrated + placed > 0, pipelined, "{what}: GPU-timestamp spans only when pipelined");
            let within_ns = report.gpu.as_ref().and_then(|g| g.gpu_clock_within_ns);
            // A run's GPU steps are all mapped by its calibration, or all placed at submit.
            assert_eq!((calibrated > 0, placed > 0), (within_ns.is_some(), pipelined && within_ns.is_none()));
            assert!(
                within_ns.is_none_or(|ns| ns <= report.total_ns),
                "{what}: calibrated within {within_ns:?}"
            );
            // llvmpipe's timestamps read the host's monotonic clock: one offset always fits.
            if pipelined && gpu.adapter_info().name.contains("llvmpipe") {
                assert!(within_ns.is_some(), "{what}: llvmpipe's GPU clock was not calibrated");
            }
            let tiles = engine
                .gpu_converter()
                .expect("converter")
                .create_display((1024, 1024), (256, 256))
                .expect("tiles");
            let (_, shown) = engine
                .convert_for_display(&image, &gpu_settings, &tiles, RunOptions::default())
                .expect("display run");
            assert_timeline(&shown, &format!("{what}, for display"));
            assert!(shown.spans.iter().any(|s| s.lane == Track::Display), "{what}: no display span");
        }
    }
}

#[test]
fn a_file_conversion_is_one_timeline_from_the_decode_to_the_encode() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in.png");
    common::photo(640, 480).to_rgb8().save(&input).expect("write the input");
    let engine = match common::gpu() {
        Some(gpu) => Engine::with_converter(Arc::new(GpuConverter::new(gpu))),
        None => Engine::cpu_only(),
    };
    let gpu = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    // PNG from the CPU is converted inside the encode, stripe by stripe; BMP is not; the GPU never.
    let mut cases = vec![("cpu.png", ConvertSettings::default()), ("cpu.bmp", ConvertSettings::default())];
    if engine.gpu().is_ok() {
        cases.push(("gpu.png", gpu));
    }
    for (name, settings) in cases {
        let output = dir.path().join(name);
        let r = graylab::engine::convert_file(
            &engine,
            (&input, &output),
            &settings,
            (&graylab::io::DecodeOptions::default(), &graylab::io::ExportOptions::default()),
            None,
        )
        .expect("convert the file")
        .run;
        let first = r.spans.iter().min_by_key(|s| s.start_ns).expect("spans");
        let last = r.spans.iter().max_by_key(|s| s.end_ns).expect("spans");
        assert_eq!((first.lane, last.lane), (Track::Decode, Track::Encode), "{name}: {:?}", r.spans);
        let phase = |p: Phase| r.phase(p).map(|t| t.ns).expect("the phase");
        assert_eq!(
            first.end_ns - first.start_ns,
            phase(Phase::Decode),
            "{name}: the decode span is the phase"
        );
        assert_eq!(last.end_ns - last.start_ns, phase(Phase::Encode), "{name}: the encode span is the phase");
        assert!(
            r.total_ns >= phase(Phase::Decode) + phase(Phase::Encode),
            "{name}: the wall is the file's: {r:?}"
        );
        let phases: u64 = r.phases.iter().map(|p| p.ns).sum();
        assert_eq!(phases - r.overlap_ns + r.other_ns, r.total_ns, "{name}: {r:?}");
        for s in &r.spans {
            assert!(s.start_ns <= s.end_ns && s.end_ns <= r.total_ns, "{name}: {s:?} past {} ns", r.total_ns);
        }
        assert_eq!(track_overlap(&r.spans), None, "{name}: two spans of one lane overlap");
    }
}

/// `jpeg` with an APP1 EXIF block giving orientation `value` (a SHORT) after its SOI.
fn with_orientation(jpeg: &[u8], value: u8) -> Vec<u8> {
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0".to_vec();
    exif.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0, value, 0, 0, 0, 0, 0, 0, 0]);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((exif.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&exif);
    out.extend_from_slice(&jpeg[2..]);
    out
}

#[test]
fn an_oriented_jpeg_converts_as_decoded_whole_then_turned_on_either_backend() {
    use graylab::io::{DecodeOptions, ExportOptions, decode_file};
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = match common::gpu() {
        Some(gpu) => Engine::with_converter(Arc::new(GpuConverter::new(gpu))),
        None => Engine::cpu_only(),
    };
    let backends: &[Backend] =
        if engine.gpu().is_ok() { &[Backend::Cpu, Backend::Gpu] } else { &[Backend::Cpu] };
    // Odd sizes, a row, a column, and 300 rows: three of the decode's bands of 128, the last short.
    for (w, h) in [(7, 5), (1, 9), (9, 1), (37, 300)] {
        let photo = common::photo(w, h);
        let (mut colour, mut gray) = (Vec::new(), Vec::new());
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut colour, 90)
            .encode_image(&photo.to_rgb8())
            .expect("colour jpeg");
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut gray, 90)
            .encode_image(&photo.to_luma8())
            .expect("gray jpeg");
        for (kind, jpeg) in [("rgb", colour), ("gray", gray)] {
            let plain = dir.path().join(format!("{kind}-{w}x{h}.jpg"));
            std::fs::write(&plain, &jpeg).expect("write");
            for value in 1..=8u8 {
                let input = dir.path().join(format!("{kind}-{w}x{h}-o{value}.jpg"));
                std::fs::write(&input, with_orientation(&jpeg, value)).expect("write");
                let orientation = image::metadata::Orientation::from_exif(value).expect("1 to 8");
                for formula in [Formula::Bt601, Formula::StoredLuma] {
                    let what = format!("{kind} {w}x{h}, orientation {value}, {formula}");
                    // Today's: the file decoded whole as stored, turned by `image`, converted.
                    let decode =
                        DecodeOptions { stored_luma: formula == Formula::StoredLuma, ..Default::default() };
                    let mut whole = decode_file(&plain, &decode).expect("decodes").image;
                    whole.apply_orientation(orientation);
                    let decoded = decode_file(&input, &decode).expect("decodes");
                    assert_eq!(decoded.image, whole, "{what}: the decode");
                    assert_eq!(decoded.orientation, orientation, "{what}");
                    let want = match &whole {
                        DynamicImage::ImageLuma8(gray) => gray.clone(),
                        rgb => engine
                            .convert(rgb, &ConvertSettings::default(), RunOptions::default())
                            .expect("converts")
                            .image
                            .to_luma8(),
                    };
                    for &backend in backends {
                        let output =
                            dir.path().join(format!("{kind}-{w}x{h}-o{value}-{formula}-{backend:?}.png"));
                        let settings = ConvertSettings { backend, formula, ..ConvertSettings::default() };
                        graylab::engine::convert_file(
                            &engine,
                            (&input, &output),
                            &settings,
                            (&DecodeOptions::default(), &ExportOptions::default()),
                            None,
                        )
                        .expect("converts the file");
                        let got = image::open(&output).expect("the output").to_luma8();
                        assert_eq!(got, want, "{what} on {backend:?}");
                        // A JPEG's encoder reads rows as they are decoded: the same pixels as the
                        // image turned beforehand gives it.
                        let turned = dir.path().join(format!("{kind}-{w}x{h}-o{value}-{formula}-turned.png"));
                        if !turned.exists() {
                            whole.save(&turned).expect("the turned input");
                        }
                        let jpegs = [(&input, "jpg"), (&turned, "turned.jpg")].map(|(from, to)| {
                            let to = dir
                                .path()
                                .join(format!("{kind}-{w}x{h}-o{value}-{formula}-{backend:?}.{to}"));
                            graylab::engine::convert_file(
                                &engine,
                                (from, &to),
                                &settings,
                                (&DecodeOptions::default(), &ExportOptions::default()),
                                None,
                            )
                            .expect("converts to JPEG");
                            image::open(&to).expect("the JPEG").to_luma8()
                        });
                        assert_eq!(jpegs[0], jpegs[1], "{what} on {backend:?}, as JPEG");
                    }
                }
            }
        }
    }
}
