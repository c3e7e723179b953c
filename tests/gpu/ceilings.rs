//! The input kept on the GPU between runs (byte-identical output across formulas, workgroup
//! shapes, band splits and timing modes; no upload phase once resident; a new image uploads
//! again), the probe of this machine's ceilings and its cache, and every phase against its
//! ceiling in `bench` and `sweep`. Every condition is forced by the test, so it holds on any
//! adapter; see tests/common.

use crate::common;
use graylab::engine::ceilings::PathKind;
use graylab::system::clock::Clock;

use crate::common::{cpu, graylab};

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use graylab::engine::{Backend, ConvertSettings, Engine, ImageKey, Phase, RunOptions, synthetic_rgb};
use graylab::gpu::{GpuConverter, GpuJob, GpuTimings, PROBE_BYTES, TimingMode, WorkgroupSize};
use graylab::pixel::{Formula, Kernel};

fn run(conv: &GpuConverter, job: GpuJob<'_>) -> (Vec<u8>, GpuTimings) {
    let pixels = (job.width * job.height) as usize;
    let mut out = vec![0x5Au8; pixels * job.kernel.out_bytes_per_pixel()];
    let t = conv.convert(&job, &mut out).expect("GPU conversion");
    (out, t)
}

#[test]
fn a_kept_input_gives_the_same_bytes_across_formulas_workgroups_and_bands() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (997, 203);
    for (kernel, seed) in [(Kernel::Rgb8ToL8, 1), (Kernel::Rgba16ToLa16, 2)] {
        let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), seed);
        for mode in [TimingMode::Auto, TimingMode::CpuClock] {
            conv.set_timing_mode(mode);
            // Bands of about 40 rows, submissions of about 7 rows: 5 bands through the ring.
            let row = u64::from(w) * kernel.in_bytes_per_pixel() as u64;
            conv.set_band_limit_bytes(row * 40 + 64);
            conv.set_chunk_limit_bytes(Some(row * 7));
            let key = ImageKey::new().get();
            let mut first = true;
            for formula in Formula::COMPUTED {
                for wg in
                    [WorkgroupSize::DEFAULT, WorkgroupSize { x: 8, y: 8 }, WorkgroupSize { x: 64, y: 1 }]
                {
                    let job = GpuJob::new(kernel, formula, wg, &src, (w, h)).keeping_input(key);
                    let (got, t) = run(&conv, job);
                    let want = cpu(kernel, formula, &src);
                    let what = format!("{kernel:?} {formula} wg {wg} {mode:?}");
                    assert_eq!(got.iter().zip(&want).position(|(a, b)| a != b), None, "{what}");
                    assert!(t.bands >= 5, "{what}: {} bands", t.bands);
                    assert!(t.input_kept, "{what}");
                    assert_eq!(t.input_resident, !first, "{what}: only the first run uploads");
                    if first {
                        assert!(t.upload_host().ns > 0, "{what}: the first run uploads");
                    } else {
                        assert_eq!(
                            (t.upload_host().ns, t.upload_copy().ns),
                            (0, 0),
                            "{what}: nothing uploaded"
                        );
                    }
                    // Without the key: the full round trip, same bytes, and the kept input is freed.
                    let (plain, t) = run(&conv, GpuJob::new(kernel, formula, wg, &src, (w, h)));
                    assert_eq!(plain, want, "{what}: without keeping");
                    assert!(!t.input_kept && !t.input_resident && t.upload_host().ns > 0, "{what}");
                    // So the next run with the key uploads again.
                    let (again, t) = run(&conv, job);
                    assert_eq!(again, want, "{what}: kept again");
                    assert!(!t.input_resident, "{what}: the round trip freed the kept input");
                    first = false;
                }
            }
        }
    }
}

#[test]
fn another_image_or_size_replaces_the_kept_input() {
    let Some(conv) = common::converter() else { return };
    let (kernel, formula, wg) = (Kernel::Rgb8ToL8, Formula::Bt601, WorkgroupSize::DEFAULT);
    let first = common::noise(640 * 480 * 3, 7);
    let second = common::noise(640 * 480 * 3, 8);
    let (key_a, key_b) = (ImageKey::new().get(), ImageKey::new().get());
    let job_a = GpuJob::new(kernel, formula, wg, &first, (640, 480)).keeping_input(key_a);
    let job_b = GpuJob::new(kernel, formula, wg, &second, (640, 480)).keeping_input(key_b);
    assert!(!run(&conv, job_a).1.input_resident);
    assert!(run(&conv, job_a).1.input_resident);
    // Another key: uploaded, and the result is the new image's.
    let (got, timings) = run(&conv, job_b);
    assert!(!timings.input_resident);
    assert_eq!(got, cpu(kernel, formula, &second));
    // The first image was replaced: it uploads again.
    let (got, timings) = run(&conv, job_a);
    assert!(!timings.input_resident);
    assert_eq!(got, cpu(kernel, formula, &first));
    // The same key with another size (a caller's mistake) is not trusted either.
    let small = &first[..320 * 480 * 3];
    let (got, timings) = run(&conv, GpuJob::new(kernel, formula, wg, small, (320, 480)).keeping_input(key_a));
    assert!(!timings.input_resident);
    assert_eq!(got, cpu(kernel, formula, small));
    conv.release_kept_input().expect("release");
    assert!(
        !run(&conv, GpuJob::new(kernel, formula, wg, small, (320, 480)).keeping_input(key_a))
            .1
            .input_resident
    );
}

#[test]
fn the_engine_report_has_no_upload_phase_once_the_input_is_resident() {
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_converter(Arc::new(GpuConverter::new(gpu)));
    let image = synthetic_rgb(1001, 301, 3);
    let key = ImageKey::new();
    let options = RunOptions { keep_input_on_gpu: Some(key), ..RunOptions::default() };
    let settings = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    let first = engine.convert(&image, &settings, options).expect("first run");
    assert!(first.report.phase(Phase::Upload).is_some());
    assert!(first.report.notes.iter().any(|n| n.contains("stays on the GPU")), "{:?}", first.report.notes);
    let cpu_settings = ConvertSettings { backend: Backend::Cpu, ..settings };
    for formula in Formula::COMPUTED {
        let s = ConvertSettings { formula, workgroup: WorkgroupSize { x: 16, y: 16 }, ..settings };
        let again = engine.convert(&image, &s, options).expect("resident run");
        assert_eq!(again.report.phase(Phase::Upload), None, "{formula}: {:?}", again.report.phases);
        assert!(again.report.phase(Phase::Kernel).is_some_and(|p| p.ns > 0));
        assert!(again.report.gpu.as_ref().is_some_and(|g| g.input_resident));
        assert!(
            again.report.notes.iter().any(|n| n.contains("already on the GPU")),
            "{formula}: {:?}",
            again.report.notes
        );
        let want = engine
            .convert(&image, &ConvertSettings { formula, ..cpu_settings }, RunOptions::default())
            .expect("CPU");
        assert_eq!(again.image.as_bytes(), want.image.as_bytes(), "{formula}");
        // The rates of a resident run: a kernel and a download, no upload.
        let rates = engine.phase_rates(&again.report);
        assert!(rates.iter().all(|r| r.phase != Phase::Upload), "{rates:?}");
        assert!(rates.iter().any(|r| r.phase == Phase::Kernel && r.bytes == 1001 * 301 * 4));
    }
    engine.release_kept_input().expect("release");
    let fresh = engine.convert(&image, &settings, options).expect("after release");
    assert!(fresh.report.phase(Phase::Upload).is_some());
}

#[test]
fn the_probe_measures_every_step_with_its_clock() {
    let Some(conv) = common::converter() else { return };
    let c = conv.measure_ceilings(None).expect("probe");
    assert_eq!(c.adapter_key, conv.context().report().ceilings_key());
    let bytes = PROBE_BYTES.min(conv.context().limits().max_buffer_size) / 256 * 256;
    for (name, b) in [
        ("host→staging", c.host_to_staging),
        ("staging→device", c.staging_to_device),
        ("device→readback", c.device_to_readback),
        ("readback→host", c.readback_to_host),
        ("memcpy", c.host_memcpy),
    ] {
        assert_eq!(b.bytes, bytes, "{name}");
        assert!(b.best_ns > 1 && b.gb_per_s().is_finite(), "{name}: {b:?}");
    }
    assert_eq!(c.device_copy.bytes, 2 * bytes, "a device copy reads and writes");
    for host in [c.host_to_staging, c.readback_to_host, c.host_memcpy] {
        assert_eq!(host.clock, Clock::CpuClock);
    }
    let gpu_clock = conv.context().timestamps().encoders;
    for copy in [c.staging_to_device, c.device_copy, c.device_to_readback] {
        assert!(gpu_clock || copy.clock == Clock::CpuClock, "{copy:?}");
    }
    assert!(c.submit_latency_ns > 0);
    // The copies' latencies are fitted with the ceilings (and cached with them): the sweep's
    // model and claims 5 and 9 read them from there.
    let [up_ns, down_ns] = c.copy_latency_ns.expect("the copies' fitted latencies");
    assert!(up_ns >= 0.0 && down_ns >= 0.0 && (up_ns + down_ns).is_finite(), "{up_ns} {down_ns}");
    // The two steps of an upload together are slower than either alone.
    assert!(c.host_to_device_gb_per_s() < c.host_to_staging.gb_per_s().min(c.staging_to_device.gb_per_s()));
    // The ops' stages are measured with the ceilings: the blur a pixel and tap, the dither a
    // wavefront step (each waits for the one before).
    let r = c.op_rates.expect("the ops' rates");
    assert!(r.blur_ns_per_pixel_tap > 0.0 && r.dither_ns_per_step > 0.0, "{r:?}");
    assert!(r.dither_ns_per_pixel.abs() < f64::EPSILON, "{r:?}");
    // The plain kernel is measured with them, on 16 Mpx read (3 bytes) and written (1 byte), on
    // the GPU's clock where passes are stamped: the price of a kernel before one is seen.
    let k = c.plain_kernel.expect("the plain kernel's rate");
    assert_eq!(k.bytes, 4096 * 4096 * 4);
    assert!(k.best_ns > 1 && k.best_ns <= k.median_ns && k.gb_per_s().is_finite(), "{k:?}");
    assert!(conv.context().timestamps().passes || k.clock == Clock::CpuClock, "{k:?}");
}

fn json(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn ceilings_measured_on_a_busy_machine_are_measured_again_once_it_is_quiet() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path();
    // The machine's load is injected (GRAYLAB_BUSY), not made.
    let run = |busy: &str, args: &[&str]| {
        json(&common::graylab_cmd(cache).env("GRAYLAB_BUSY", busy).args(args).output().expect("run graylab"))
    };
    let bench = ["bench", "--synthetic", "64x64", "--runs", "1", "--json"];
    let info = run("1", &["info", "--probe", "--json"]);
    assert_eq!((&info["ceilings"]["measured_now"], &info["ceilings"]["busy"]), (&true.into(), &true.into()));
    let path = info["ceilings"]["cache_path"].as_str().expect("cached");
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("the cache file")).expect("JSON");
    assert_eq!(file["busy"], true, "{file}");
    // Still busy: the busy ones are used as they are.
    let b = run("1", &bench);
    assert_eq!(
        (&b["ceilings"]["measured_now"], &b["ceilings"]["busy"]),
        (&false.into(), &true.into()),
        "{b}"
    );
    // Quiet: measured again and cached as quiet, then read from the cache.
    let b = run("0", &bench);
    assert_eq!(
        (&b["ceilings"]["measured_now"], &b["ceilings"]["busy"]),
        (&true.into(), &false.into()),
        "{b}"
    );
    let b = run("0", &bench);
    assert_eq!(
        (&b["ceilings"]["measured_now"], &b["ceilings"]["busy"]),
        (&false.into(), &false.into()),
        "{b}"
    );
}

#[test]
fn info_probe_caches_and_bench_and_sweep_show_each_phase_against_its_ceiling() {
    let Some(gpu) = common::gpu() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path();
    // Nothing cached yet: info says so without measuring.
    let info = json(&graylab(&["info", "--json"], cache));
    assert!(info["ceilings"].is_null(), "{info}");
    let info = json(&graylab(&["info", "--probe", "--json"], cache));
    let c = &info["ceilings"];
    assert_eq!(c["measured_now"], true, "{c}");
    assert!(c["ceilings"]["host_to_staging"]["best_ns"].as_u64().is_some_and(|v| v > 0), "{c}");
    let path = c["cache_path"].as_str().expect("cached");
    assert!(Path::new(path).starts_with(cache.join("graylab")) && Path::new(path).is_file(), "{path}");
    // With the probe, every transfer path as latency, bandwidth and n½.
    let paths = info["transfer_paths"].as_array().expect("transfer paths");
    // Eight paths, and the two mapped storage buffers on unified memory.
    let (features, device_type) = (gpu.device().features(), gpu.adapter_info().device_type);
    let measurable = PathKind::ALL.iter().filter(|k| k.measured_on(features, device_type)).count();
    assert_eq!((paths.len(), measurable), (measurable, if gpu.is_software() { 10 } else { measurable }));
    for p in paths {
        let fit = &p["fit"];
        assert!(fit["gb_per_s"].as_f64().is_some_and(|b| b > 0.0), "{p}");
        assert!(fit["n_half_bytes"].as_f64().is_some_and(|n| n >= 0.0), "{p}");
        assert_eq!(p["points"][0]["bytes"].as_u64().map(|b| b % 4096), Some(0), "{p}");
        // Every figure names its clock: each size end to end on the CPU's.
        assert_eq!(p["points"][0]["clock"], "cpu-clock", "{p}");
    }
    // The CPU's compute ceiling too.
    assert_eq!(info["cpu_compute"]["clock"], "cpu-clock", "{}", info["cpu_compute"]);

    // Read back from the cache, not measured again.
    let info = json(&graylab(&["info", "--json"], cache));
    assert_eq!(info["ceilings"]["measured_now"], false, "{info}");
    assert_eq!(info["ceilings"]["ceilings"], c["ceilings"]);
    let bench = json(&graylab(
        &[
            "bench",
            "--synthetic",
            "640x480",
            "--runs",
            "2",
            "--threads",
            "2",
            "--keep-input-on-gpu",
            "--json",
        ],
        cache,
    ));
    assert_eq!(bench["ceilings"]["measured_now"], false);
    for r in bench["results"].as_array().expect("results") {
        let rates = r["rates"].as_array().expect("rates");
        let find = |phase: &str, part: &str| rates.iter().find(|x| x["phase"] == phase && x["part"] == part);
        let kernel = find("kernel", "whole").expect("kernel rate");
        assert!(kernel["percent_of_ceiling"].as_f64().is_some_and(|p| p > 0.0), "{kernel}");
        if r["settings"]["backend"] == "cpu" {
            assert_eq!(kernel["ceiling"], "memory_stream");
            assert!(r["cpu_stream_baseline"]["median_ns"].as_u64().is_some_and(|v| v > 0));
        } else {
            assert_eq!(kernel["ceiling"], "device_copy");
            // The input was kept: the warm runs uploaded nothing, so no upload phase or rate.
            assert_eq!(r["input_kept_on_gpu"], true);
            assert!(find("upload", "whole").is_none(), "{rates:?}");
            let down = find("download", "host_copy").expect("download host copy");
            assert_eq!(down["ceiling"], "readback_to_host");
            assert!(down["percent_of_ceiling"].as_f64().is_some_and(|p| p > 0.0));
        }
    }
    // In the table, the cold run's upload has a row of its own, so that its column adds up.
    let args = ["bench", "--synthetic", "640x480", "--runs", "2", "--backend", "gpu", "--keep-input-on-gpu"];
    let o = graylab(&args, cache);
    let table = String::from_utf8_lossy(&o.stdout);
    let upload = table.lines().find(|l| l.split_whitespace().nth(3) == Some("upload")).expect("upload row");
    let fields: Vec<&str> = upload.split_whitespace().collect();
    assert_eq!(fields.get(4..7), Some(&["-", "-", "-"][..]), "{upload}");
    assert!(upload.ends_with("(cold run only)"), "{upload}");
    let o = graylab(&["sweep", "--sizes", "0.02,0.1", "--runs", "2", "--json", "-"], cache);
    let sweep = json(&o);
    let model = &sweep["model"];
    assert!(model["cost"]["gpu_ns_per_pixel"].as_f64().is_some_and(|v| v > 0.0), "{model}");
    assert!(model["cost"]["cpu_ns_per_pixel"].as_f64().is_some_and(|v| v > 0.0), "{model}");
    for p in sweep["points"].as_array().expect("points") {
        assert!(p["modelled"]["gpu_total_ns"].as_u64().is_some_and(|v| v > 0), "{p}");
        assert!(p["cpu_stream"]["median_ns"].as_u64().is_some_and(|v| v > 0), "{p}");
        let rates = p["rates"].as_array().expect("rates");
        for phase in ["upload", "kernel", "download"] {
            assert!(rates.iter().any(|r| r["phase"] == phase && r["part"] == "whole"), "{phase}: {p}");
        }
    }
    assert!(sweep["verdict"].as_str().is_some_and(|v| v.contains("From this machine's ceilings")), "{sweep}");
    // The text says the same (measured again: the cache above is done with).
    let text = crate::common::text(&graylab(&["info", "--probe"], cache));
    assert!(text.contains("up: queue.write_buffer") && text.contains("n½"), "{text}");
}

#[test]
fn every_transfer_path_is_latency_plus_bandwidth_over_its_sizes() {
    let Some(gpu) = common::gpu() else { return };
    let paths = Engine::new().transfer_paths(4 << 20, None).expect("the transfer paths");
    let kinds: Vec<_> = paths.iter().map(|p| p.path).collect();
    // Every path, the mapped storage buffers only on unified memory (a software adapter's is).
    let (features, device_type) = (gpu.device().features(), gpu.adapter_info().device_type);
    let measurable: Vec<_> =
        PathKind::ALL.into_iter().filter(|k| k.measured_on(features, device_type)).collect();
    assert_eq!(kinds, measurable);
    if gpu.is_software() {
        assert!(kinds.contains(&PathKind::MappedStorageUp) && kinds.contains(&PathKind::MappedStorageDown));
    }
    for p in &paths {
        // 4 KiB to 4 MiB by fours; both directions at once count their bytes twice.
        let bytes: Vec<u64> = p.points.iter().map(|q| q.bytes).collect();
        let once: Vec<u64> = (0..6).map(|k| 4096 << (2 * k)).collect();
        let twice: Vec<u64> = once.iter().map(|b| 2 * b).collect();
        assert_eq!(bytes, if p.path == PathKind::Both { twice } else { once });
        assert!(p.points.iter().all(|q| q.best_ns > 0 && q.best_ns <= q.median_ns), "{p:?}");
        // Where time grows with size, a fit with a fixed cost and a bandwidth. A path may stay
        // within its fixed cost up to 4 MiB (an H200's device copy: 50 µs of latency, 10 µs of
        // copying at 405 GB/s), where the noise decides the slope: no bandwidth is claimed then.
        let (smallest, largest) = (p.points[0].median_ns, p.points[p.points.len() - 1].median_ns);
        let Some(fit) = p.fit else {
            assert!(largest < 2 * smallest, "time doubled over the sizes, yet no fit: {p:?}");
            continue;
        };
        assert!(fit.latency_ns >= 0.0 && fit.gb_per_s > 0.0 && fit.rms_relative_error.is_finite(), "{p:?}");
        let n_half = fit.latency_ns * fit.gb_per_s;
        assert!(
            (fit.n_half_bytes - n_half).abs() <= 1e-6 * n_half.max(1.0),
            "n½ = latency × bandwidth: {fit:?}"
        );
    }
}
