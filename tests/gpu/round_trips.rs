//! Operations per round trip (`graylab bench --passes`): the GPU's download after n passes
//! over the kept input equals the CPU's result byte for byte, with the work per pixel in every
//! pass and a forced band split; the per-operation figures are positive and consistent with
//! their totals; each count carries the GPU's speed-up with its interval, sampled in turns until
//! decided, and only a decided win is a win; the CLI's JSON holds every point and its table
//! says each clock and each count's verdict. No speed is asserted (that lives in BENCHMARKS.md).

use crate::common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::common::{full_mask, graylab, reference_with_work, text};
use graylab::engine::round_trip::{RoundTripOptions, round_trip_budget, round_trips};
use graylab::engine::sampling::{MIN_SAMPLES, Stop};
use graylab::engine::sweep::Winner;
use graylab::engine::{ConvertSettings, Engine, EngineError, WorkgroupSize};
use graylab::gpu::{GpuConverter, GpuJob};
use graylab::pixel::{Formula, Kernel, Work};

fn work() -> Work {
    Work { rounds: 4, mask: full_mask(Kernel::Rgb8ToL8), divergent: false }
}

#[test]
fn the_round_trip_downloads_what_the_cpu_computes_after_n_passes() {
    let Some(gpu) = common::gpu() else { return };
    let (w, h) = (97, 61);
    let src = common::noise((w * h * 3) as usize, 18);
    for band_limit in [None, Some(4096)] {
        let mut converter = GpuConverter::new(Arc::clone(&gpu));
        if let Some(bytes) = band_limit {
            converter.set_band_limit_bytes(bytes);
            converter.set_chunk_limit_bytes(Some(2048));
        }
        for shape in [WorkgroupSize::DEFAULT, WorkgroupSize { x: 16, y: 16 }] {
            let job = GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt601, shape, &src, (w, h)).with_work(work());
            let expected = reference_with_work(Kernel::Rgb8ToL8, Formula::Bt601, &src, work());
            for n in [1, 3] {
                let mut dst = vec![0u8; (w * h) as usize];
                // Warm round trips on demand, each one's download checked as it comes.
                let times = converter
                    .with_warm_round_trip(&job, n, &mut dst, |trip| {
                        (0..2)
                            .map(|_| {
                                let t = trip.once()?;
                                Ok((t, trip.output() == expected.as_slice()))
                            })
                            .collect::<Result<Vec<_>, graylab::engine::GpuError>>()
                    })
                    .expect("prepared")
                    .expect("round trips");
                assert!(dst == expected, "n = {n}, {shape}, band limit {band_limit:?}: GPU != CPU");
                // The round trips used the converter's own ring; a conversion after them on it
                // still gives the plain result.
                let mut plain = vec![0u8; (w * h) as usize];
                converter.convert(&job, &mut plain).expect("a conversion after round trips");
                assert!(plain == expected, "n = {n}, {shape}: a conversion after round trips != CPU");
                assert_eq!(times.len(), 2);
                for (t, matched) in times {
                    assert!(matched, "n = {n}, {shape}, band limit {band_limit:?}: a warm round trip != CPU");
                    assert!(t.wall_ns > 0, "{t:?}");
                    // Timestamps, where read, are of the passes inside the round trip.
                    assert!(t.kernel_ns.is_none_or(|k| k > 0 && k <= t.wall_ns), "{t:?}");
                }
            }
        }
    }
}

#[test]
fn round_trips_through_the_engine_match_the_cpu_and_add_up() {
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu.clone());
    let image = common::photo(120, 80);
    let settings = ConvertSettings { work: work(), ..ConvertSettings::default() };
    let budget = round_trip_budget(true, 3);
    let options = RoundTripOptions { passes: vec![4, 1, 3, 1], budget, cancel: None };
    let mut seen = Vec::new();
    let r = round_trips(&engine, &image, &settings, &options, &mut |n, done, total| {
        assert!(done <= total, "{done} of {total}");
        seen.push(n);
    })
    .expect("round trips");
    // Sorted, repeats dropped; the progress names each count, then ends at the last.
    let counts: Vec<u32> = r.points.iter().map(|p| p.passes).collect();
    assert_eq!(counts, [1, 3, 4]);
    assert_eq!(seen, [1, 3, 4, 4]);
    assert_eq!((r.width, r.height, r.work_rounds, r.work_mask, r.divergent), (120, 80, 4, 0xFF, false));
    assert_eq!((r.min_rounds, r.max_rounds, r.software_adapter), (MIN_SAMPLES, 13, gpu.is_software()));
    assert_eq!(r.clocks.gpu_total, "cpu-clock");
    assert_eq!(r.clocks.cpu, "cpu-clock");
    for p in &r.points {
        assert!(p.matches_cpu, "n = {}: the GPU's download differs from the CPU's", p.passes);
        // The GPU and the CPU in turns until decided: every warm round in the figures, and a
        // speed-up with its 95% interval over at least six rounds.
        let cmp = p.comparison;
        assert!((MIN_SAMPLES..=13).contains(&cmp.rounds), "{p:?}");
        assert_eq!(
            (p.gpu_total_ns.runs, p.cpu_total_ns.runs, p.cpu_per_op_ns.runs),
            (cmp.rounds, cmp.rounds, cmp.rounds)
        );
        let speed_up = cmp.speed_up.expect("a speed-up interval");
        assert!(speed_up.samples >= MIN_SAMPLES && speed_up.samples == cmp.rounds, "{p:?}");
        assert!(
            speed_up.ci_low <= speed_up.median
                && speed_up.median <= speed_up.ci_high
                && speed_up.ci_low > 0.0,
            "{p:?}"
        );
        // Only a decided win is a win; a decided point stopped because it was decided.
        assert_eq!(p.gpu_wins, cmp.winner == Winner::GpuFaster, "{p:?}");
        assert_eq!(
            cmp.winner == Winner::WithinNoise,
            (speed_up.ci_low..=speed_up.ci_high).contains(&1.0),
            "{p:?}"
        );
        if cmp.stop == Stop::Decided {
            assert_ne!(cmp.winner, Winner::WithinNoise, "{p:?}");
        }
        // The per-operation figures are the totals divided by n.
        let n = f64::from(p.passes);
        assert!((p.gpu_per_op_ns * n - p.gpu_total_ns.median_ns as f64).abs() < n, "{p:?}");
        assert!(p.cpu_per_op_ns.median_ns > 0 && p.gpu_per_op_ns > 0.0, "{p:?}");
        assert!(p.cpu_per_op_ns.median_ns <= p.cpu_total_ns.median_ns, "{p:?}");
        let s = p.gpu_total_ns;
        assert!(s.min_ns <= s.median_ns && s.median_ns <= s.max_ns, "{p:?}");
        if let Some(k) = p.gpu_kernel_ns {
            assert!(k.median_ns > 0 && k.min_ns <= s.max_ns, "{p:?}");
        }
    }
    assert_eq!(r.clocks.gpu_kernel.is_some(), r.points.iter().all(|p| p.gpu_kernel_ns.is_some()));
    // The verdict names the size and the work, and from where the GPU wins (or that it does not).
    assert!(r.verdict.starts_with("At 0.0096 MP (120x80) and 4 rounds per pixel the GPU "), "{}", r.verdict);
    if let Some(n) = r.gpu_wins_from_passes {
        assert!(r.points.iter().filter(|p| p.passes >= n).all(|p| p.gpu_wins), "{r:?}");
    }
    match r.gpu_wins_from_passes {
        Some(n) => assert!(r.verdict.contains(&format!("wins from {n} operation")), "{}", r.verdict),
        None => assert!(r.verdict.contains("does not win up to 4 operations"), "{}", r.verdict),
    }
    assert_eq!(r.verdict.contains("CPU's own cores"), gpu.is_software());
    // Every point of the JSON loads back.
    let json = serde_json::to_string(&r).expect("serialise");
    let back: graylab::engine::round_trip::RoundTripResult = serde_json::from_str(&json).expect("parse");
    assert_eq!(back.points.len(), 3);
}

#[test]
fn a_cancelled_round_trip_says_so() {
    let Some(gpu) = common::gpu() else { return };
    let engine = Engine::with_gpu(gpu);
    let cancel = AtomicBool::new(true);
    let options =
        RoundTripOptions { passes: vec![1, 2], budget: round_trip_budget(true, 1), cancel: Some(&cancel) };
    let r = round_trips(
        &engine,
        &common::photo(64, 48),
        &ConvertSettings::default(),
        &options,
        &mut |_, _, _| {},
    );
    assert!(matches!(r, Err(EngineError::Cancelled)), "{r:?}");
}

#[test]
fn bench_passes_json_holds_every_point_and_the_table_says_each_clock() {
    let Some(gpu) = common::gpu() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let args = ["bench", "--passes", "1,2", "--synthetic", "64x48", "--runs", "2", "--work", "4"];
    let o = graylab(&[&args[..], &["--work-mask", "0xff", "--json"]].concat(), dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["image"], "synthetic 64x48 Rgb8");
    assert_eq!((v["width"].as_u64(), v["height"].as_u64()), (Some(64), Some(48)));
    assert_eq!((v["work_rounds"].as_u64(), v["work_mask"].as_u64()), (Some(4), Some(0xFF)));
    assert_eq!(v["software_adapter"], gpu.is_software());
    // What the one estimator said before it started, and what it took.
    for key in ["estimate_s", "took_s"] {
        assert!(v[key].as_f64().is_some_and(|s| s > 0.0 && s.is_finite()), "{key}: {}", v[key]);
    }
    assert_eq!(v["estimate_basis"], "guess", "a fresh cache folder holds no pace: a guess, said so");
    let points = v["points"].as_array().expect("points");
    let counts: Vec<u64> = points.iter().filter_map(|p| p["passes"].as_u64()).collect();
    assert_eq!(counts, [1, 2]);
    for p in points {
        assert_eq!(p["matches_cpu"], true, "{p}");
        assert!(p["gpu_per_op_ns"].as_f64().is_some_and(|ns| ns > 0.0), "{p}");
        assert!(p["cpu_per_op_ns"]["median_ns"].as_u64().is_some_and(|ns| ns > 0), "{p}");
        // Each count sampled in turns until decided: its speed-up with the interval, the winner,
        // why it stopped and the rounds, every round in the figures.
        let rounds = p["rounds"].as_u64().expect("rounds");
        assert!((6..=42).contains(&rounds), "{p}");
        assert_eq!(p["gpu_total_ns"]["runs"].as_u64(), Some(rounds), "{p}");
        let s = &p["speed_up"];
        assert_eq!(s["samples"].as_u64(), Some(rounds), "{p}");
        let [lo, median, hi] = ["ci_low", "median", "ci_high"].map(|k| s[k].as_f64().expect(k));
        assert!(0.0 < lo && lo <= median && median <= hi, "{p}");
        let winner = p["winner"].as_str().expect("winner");
        let expected = if lo > 1.0 {
            "gpu_faster"
        } else if hi < 1.0 {
            "cpu_faster"
        } else {
            "within_noise"
        };
        assert_eq!(winner, expected, "{p}");
        assert!(["decided", "rounds", "time"].contains(&p["stop"].as_str().expect("stop")), "{p}");
        assert_eq!(p["gpu_wins"], winner == "gpu_faster", "{p}");
    }
    assert_eq!((v["min_rounds"].as_u64(), v["max_rounds"].as_u64()), (Some(6), Some(42)));
    assert!(v["verdict"].as_str().is_some_and(|s| s.contains("operations per round trip")), "{v}");
    // The table: one row per count, the clocks, the byte check and the verdict.
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("GPU per op ms") && out.contains("CPU per op ms"), "{out}");
    assert!(
        out.contains("GPU total, GPU per op: cpu-clock") && out.contains("CPU per op: cpu-clock"),
        "{out}"
    );
    assert!(out.contains("every GPU result equals the CPU's byte for byte"), "{out}");
    // Each count's row ends with its verdict: the speed-up with its interval, or the noise.
    assert!(out.contains("GPU speed-up per op (95% interval)"), "{out}");
    let verdicts = out
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .filter(|l| ["GPU faster: ", "CPU faster: ", "within the noise (±"].iter().any(|v| l.contains(v)))
        .count();
    assert_eq!(verdicts, 2, "{out}");
    assert!(out.contains("x ("), "{out}");
    assert_eq!(out.matches("verdict: At ").count(), 1, "{out}");
    // One workgroup shape, and counts from 1.
    let o = graylab(&["bench", "--passes", "1", "--synthetic", "64x48", "--workgroup", "all"], dir.path());
    assert!(!o.status.success() && text(&o).contains("one workgroup shape"), "{}", text(&o));
    let o = graylab(&["bench", "--passes", "0,2", "--synthetic", "64x48"], dir.path());
    assert!(!o.status.success() && text(&o).contains("count of operations"), "{}", text(&o));
}
