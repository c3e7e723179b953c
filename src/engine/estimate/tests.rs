//! The estimator on made-up observations: one seen run predicts a second identical job, guesses
//! say so, and costs scale with pixels and rounds.

use super::*;
use crate::engine::claims::claims_parts;
use crate::engine::sweep::SweepOptions;

fn within_1_5x(estimate: f64, took: f64) -> bool {
    estimate / took <= 1.5 && took / estimate <= 1.5
}

/// The parts of a plain size sweep of `sizes_mp`, `runs` warm runs a series, with the GPU or not.
fn sweep_parts(sizes_mp: &[f64], runs: usize, gpu: bool) -> Vec<Part> {
    let options = SweepOptions { sizes_mp: sizes_mp.to_vec(), runs, gpu, ..SweepOptions::default() };
    options.parts()
}

/// One run of `lane` at `megapixels` and `rounds`, no op.
fn one_run(lane: Lane, megapixels: f64, rounds: u32) -> Part {
    Part { lane, megapixels, rounds, op: Op::None, runs: 1.0, height_per_width: THREE_TWO }
}

#[test]
fn before_any_run_an_estimate_is_a_guess_and_says_so() {
    let pace = Pace::new("test");
    let e = pace.run(Lane::Gpu, 2.0, 0);
    assert_eq!(e.basis, Basis::Guess);
    assert!(e.is_guess() && e.sentence().contains("rough guess"), "{}", e.sentence());
    // With the lane's ceilings: still a guess, said to come from them.
    let mut roofed = Pace::new("test");
    roofed.set_roof(Lane::Gpu, Roof { bytes_per_s: 5e9, ops_per_s: 3e10, fixed_s: None });
    let e = roofed.run(Lane::Gpu, 2.0, 1000);
    assert_eq!(e.basis, Basis::Ceilings);
    // 0.02 s fixed, 2e6 px x 5 bytes / 5 GB/s, 2e6 px x 1000 rounds x 3 ops / 30 Gop/s.
    assert!((e.seconds - (0.02 + 0.002 + 0.2)).abs() < 1e-9, "{e:?}");
    assert!(e.sentence().contains("ceilings"), "{}", e.sentence());
    // The claims before one was seen: what they run at the rough guess's pace, and says so.
    let claims = pace.job(Task::ClaimsQuick, &claims_parts(true));
    assert_eq!(claims.basis, Basis::Guess);
    assert!(claims.seconds > 1.0 && claims.seconds < 60.0, "{claims:?}");
}

#[test]
fn one_seen_job_predicts_a_second_identical_one_within_1_5x() {
    // A sweep of three sizes took 9 s here, its runs' medians as below.
    let mut pace = Pace::new("test");
    let sizes = [0.25, 1.0, 4.0];
    for (mp, cpu1, cpu_all, gpu) in
        [(0.25, 0.004, 0.002, 0.03), (1.0, 0.016, 0.008, 0.06), (4.0, 0.064, 0.03, 0.2)]
    {
        pace.observe(Lane::CpuOneThread, mp, 0, cpu1);
        pace.observe(Lane::CpuAllThreads, mp, 0, cpu_all);
        pace.observe(Lane::Gpu, mp, 0, gpu);
    }
    let parts = sweep_parts(&sizes, 10, true);
    assert!(pace.job(Task::Sweep, &parts).basis == Basis::Seen);
    pace.finished(Task::Sweep, &parts, 9.0, None);
    // The same sweep again, which took 8.1 s the second time.
    let e = pace.job(Task::Sweep, &parts);
    assert_eq!(e.basis, Basis::Seen);
    assert!(within_1_5x(e.seconds, 8.1), "{e:?}");
    assert!((e.seconds - 9.0).abs() < 1e-6, "{e:?}");
    // One conversion at 96 MP and 4096 rounds, seen once at 166 s: the next is estimated so.
    let mut pace = Pace::new("test");
    pace.observe(Lane::CpuAllThreads, 96.0, 4096, 166.0);
    let e = pace.job(Task::Convert, &[one_run(Lane::CpuAllThreads, 96.0, 4096)]);
    assert!(within_1_5x(e.seconds, 160.0) && e.basis == Basis::Seen, "{e:?}");
    // The claims: the second quick run took about what the first did.
    let mut pace = Pace::new("test");
    pace.observe(Lane::CpuAllThreads, 1.0, 0, 0.01);
    pace.finished(Task::ClaimsQuick, &claims_parts(true), 28.0, None);
    let e = pace.job(Task::ClaimsQuick, &claims_parts(true));
    assert!(within_1_5x(e.seconds, 35.0) && e.basis == Basis::Seen, "{e:?}");
}

#[test]
fn costs_scale_with_pixels_and_rounds() {
    // A calibration: 0.25 MP at 0 and 256 rounds; a fixed 10 ms, 40 ms a megapixel, and
    // 0.1 ms a megapixel-round.
    let truth = |mp: f64, rounds: u32| 0.01 + 0.04 * mp + 0.0001 * mp * f64::from(rounds);
    let mut pace = Pace::new("test");
    pace.observe(Lane::Gpu, 0.25, 0, truth(0.25, 0));
    pace.observe(Lane::Gpu, 1.0, 0, truth(1.0, 0));
    pace.observe(Lane::Gpu, 0.25, 256, truth(0.25, 256));
    for (mp, rounds) in [(2.0, 0), (2.0, 4096), (16.0, 16), (0.25, 4096)] {
        let e = pace.run(Lane::Gpu, mp, rounds);
        assert!((e.seconds - truth(mp, rounds)).abs() < 1e-9, "{mp} MP {rounds}: {e:?}");
    }
    // Twice the pixels cost more, four times the rounds more again.
    let small = pace.run(Lane::Gpu, 1.0, 1024).seconds;
    assert!(pace.run(Lane::Gpu, 2.0, 1024).seconds > 1.9 * small);
    assert!(pace.run(Lane::Gpu, 1.0, 4096).seconds > 2.9 * small);
    // One seen size alone scales the prior's shape: in proportion above its fixed part.
    let mut one = Pace::new("test");
    one.observe(Lane::CpuAllThreads, 1.0, 0, 0.1);
    let (a, b) = (one.run(Lane::CpuAllThreads, 1.0, 0).seconds, one.run(Lane::CpuAllThreads, 8.0, 0).seconds);
    assert!((a - 0.1).abs() < 1e-12 && b > 6.0 * a && b < 8.0 * a, "{a} {b}");
    // The one-thread lane follows from the all-threads one.
    assert_eq!(one.run(Lane::CpuOneThread, 1.0, 0).basis, Basis::Seen);
}

#[test]
fn the_cpu_compute_ceiling_prices_worked_runs_before_one_is_seen() {
    // Measured here (2026-12-02): 15.9 MP at 4096 rounds on 2 AVX-512 threads took 1.8 s; the
    // compute ceiling is about 109 Gop/s. The old guess said 273 s for it.
    let mut pace = Pace::new("test");
    let guess = pace.run(Lane::CpuAllThreads, 15.9, 4096);
    assert_eq!(guess.basis, Basis::Guess);
    assert!(guess.seconds < 10.0, "a guess within an order of magnitude: {guess:?}");
    pace.set_cpu_compute(109e9, 2);
    let e = pace.run(Lane::CpuAllThreads, 15.9, 4096);
    assert_eq!(e.basis, Basis::Ceilings);
    assert!(within_1_5x(e.seconds, 1.8), "{e:?}");
    // One thread: half the operations a second.
    let one = pace.run(Lane::CpuOneThread, 15.9, 4096);
    assert!(one.seconds > 1.8 * e.seconds && one.seconds < 2.2 * e.seconds, "{one:?} against {e:?}");
    // The GPU's (lavapipe here: 10.4 Gop/s measured; 15.9 MP at 4096 rounds took 32.5 s end to
    // end, where the rough guess said 6.8 s).
    assert!(pace.run(Lane::Gpu, 15.9, 4096).seconds < 32.5 / 1.5);
    pace.set_compute(Lane::Gpu, 10.4e9);
    let gpu = pace.run(Lane::Gpu, 15.9, 4096);
    assert_eq!(gpu.basis, Basis::Ceilings);
    assert!(gpu.seconds > 32.5 / 2.0 && gpu.seconds < 32.5, "{gpu:?}");
    // Seen once at 4096 rounds, the GPU's rounds cost what that run took; its plain cost stays
    // the prior's (0.2 s measured), not scaled by the worked run (which said 1.6 s).
    pace.observe(Lane::Gpu, 15.9, 4096, 32.5);
    assert!((pace.run(Lane::Gpu, 15.9, 4096).seconds - 32.5).abs() < 1e-6);
    let plain = pace.run(Lane::Gpu, 15.9, 0);
    assert!(plain.seconds < 0.2 * 2.0, "{plain:?}");
}

#[test]
fn a_conversion_learns_the_seconds_beyond_its_run_not_a_share_of_it() {
    // A plain conversion of 16 MP: the run took 58 ms, the job 100 ms (the result shown and
    // passed to the window). As a share, that 1.7x would price a 1.5-s worked run at 2.6 s.
    let mut pace = Pace::new("test");
    pace.set_cpu_compute(135e9, 2);
    pace.observe(Lane::CpuAllThreads, 16.0, 0, 0.058);
    let plain = [one_run(Lane::CpuAllThreads, 16.0, 0)];
    pace.finished(Task::Convert, &plain, 0.100, None);
    assert!((pace.job(Task::Convert, &plain).seconds - 0.100).abs() < 1e-9);
    let worked = [one_run(Lane::CpuAllThreads, 16.0, 4096)];
    let e = pace.job(Task::Convert, &worked);
    let runs_s = pace.parts(&worked).seconds;
    assert!((e.seconds - (runs_s + 0.042)).abs() < 1e-9, "{e:?}, runs {runs_s}");
    // The same job taking less than its runs predict learns no negative time: 0 s, and the
    // mean of the last ones (42 ms and 0) is the next one's.
    pace.finished(Task::Convert, &plain, 0.050, None);
    assert!((pace.job(Task::Convert, &plain).seconds - pace.parts(&plain).seconds - 0.021).abs() < 1e-9);
    // Three more, the oldest forgotten: 30, 30 and 60 ms beyond the run, 40 ms on average.
    for wall_s in [0.088, 0.088, 0.118] {
        pace.finished(Task::Convert, &plain, wall_s, None);
    }
    assert!((pace.job(Task::Convert, &plain).seconds - pace.parts(&plain).seconds - 0.040).abs() < 1e-9);
    // Its runs as they took: a worked run of 31.5 s and then one of 35.6 s (the pace keeps
    // 33.5 s), the second job 35.8 s in all, is 0.2 s beyond its run, not 2.3 s.
    let mut pace = Pace::new("test");
    let worked = [one_run(Lane::Gpu, 16.0, 4096)];
    pace.observe(Lane::Gpu, 16.0, 4096, 31.5);
    pace.observe(Lane::Gpu, 16.0, 4096, 35.6);
    pace.finished(Task::Convert, &worked, 35.8, Some(35.6));
    assert!((pace.job(Task::Convert, &worked).seconds - pace.parts(&worked).seconds - 0.2).abs() < 1e-6);
    // A sweep still learns a share: 9 s for runs predicted at 6 s is 1.5x at any size.
    let sweep = sweep_parts(&[16.0], 5, false);
    let runs_s = pace.parts(&sweep).seconds;
    pace.finished(Task::Sweep, &sweep, runs_s * 1.5, None);
    let twice: Vec<Part> = sweep.iter().map(|p| Part { runs: p.runs * 2.0, ..*p }).collect();
    assert!((pace.job(Task::Sweep, &twice).seconds - 3.0 * runs_s).abs() < 1e-6);
    // Shares average geometrically: 1.5x and then 1.5x / 1.44 and 1.5 x 1.44 give 1.5x.
    pace.finished(Task::Sweep, &sweep, runs_s * 1.5 / 1.44, None);
    pace.finished(Task::Sweep, &sweep, runs_s * 1.5 * 1.44, None);
    assert!((pace.job(Task::Sweep, &sweep).seconds - 1.5 * runs_s).abs() < 1e-6);
}

#[test]
fn a_run_seen_again_is_averaged_with_the_one_before_unless_over_2x_from_it() {
    let mut pace = Pace::new("test");
    pace.observe(Lane::Gpu, 4.0, 16, 1.0);
    // Then, over 2x from the one kept, the machine or the build changed: the new run replaces it.
    for (seen_s, kept_s) in [(1.96, 1.4), (0.2, 0.2), (0.8, 0.8)] {
        pace.observe(Lane::Gpu, 4.0, 16, seen_s);
        assert!((pace.run(Lane::Gpu, 4.0, 16).seconds - kept_s).abs() < 1e-9, "{seen_s} s seen");
    }
    // Another level or lane is a run of its own.
    pace.observe(Lane::Gpu, 4.0, 0, 0.5);
    pace.observe(Lane::CpuAllThreads, 4.0, 16, 3.0);
    assert!((pace.run(Lane::CpuAllThreads, 4.0, 16).seconds - 3.0).abs() < 1e-9);
}

#[test]
fn the_claims_first_estimate_comes_from_the_ceilings_within_2x_of_what_they_took() {
    // lavapipe on 2 threads here (`info --probe`, 2026-12-04): `claims --quick` took 10.4 s.
    let (lavapipe, h200) = lavapipe_and_h200();
    let e = lavapipe.job(Task::ClaimsQuick, &claims_parts(true));
    assert_eq!(e.basis, Basis::Ceilings);
    assert!(e.sentence().contains("ceilings"), "{}", e.sentence());
    assert!(within_2x(e.seconds, 10.4), "lavapipe, quick: {e:?}");
    // An NVIDIA H200 on 16 threads (/work/shared/gpu-h200, 2026-12-04): the quick set took
    // 1.66 s, the full set 1.95 and 1.88 s; the fixed bounds said 45 and 90 s.
    let (quick, full) =
        (h200.job(Task::ClaimsQuick, &claims_parts(true)), h200.job(Task::ClaimsAll, &claims_parts(false)));
    eprintln!(
        "lavapipe quick {:.2} s; H200 quick {:.2} s, full {:.2} s",
        e.seconds, quick.seconds, full.seconds
    );
    assert_eq!((quick.basis, full.basis), (Basis::Ceilings, Basis::Ceilings));
    assert!(within_2x(quick.seconds, 1.66), "H200, quick: {quick:?}");
    assert!(within_2x(full.seconds, 1.95), "H200, full: {full:?}");
}

/// lavapipe's ceilings here and the H200's (`/work/shared/gpu-h200/probe.json`), each with its
/// plain kernel's rate: lavapipe's 1.03 GB/s (`info --probe`, 2026-12-06), the H200's 2,232 GB/s
/// (its 8K kernel in `bench.txt`; its probe predates the kernel's own measurement).
fn lavapipe_and_h200() -> (Pace, Pace) {
    let lavapipe = machine(
        ("lavapipe", 2, 2_038_431_744.0 / 20_979_988e-9),
        [6_099_484, 6_905_432, 6_456_565, 6_859_144, 6_364_458, 6_647_960, 65_154_237],
        (22_063, [25_296.4, 24_407.4]),
        (154_681_344, 19_389_485),
    );
    let h200 = machine(
        ("H200", 16, 11_777_605_632.0 / 24_848_988e-9),
        [2_087_211, 164_096, 164_064, 1_275_104, 769_728, 792_330, 30_067],
        (43_416, [48_710.5, 44_265.1]),
        (125_615_210_496, 18_993_952),
    );
    (lavapipe, h200)
}

/// The pace of a machine (its name, host threads and CPU compute ceiling) given its GPU probe:
/// each step's fastest ns over 64 MiB (the device copy 128 MiB; host to staging, staging to
/// device, device copy, device to readback, readback to host, host memcpy, the plain kernel
/// read and written), the submit latency and the copies' fitted latencies, and the compute
/// kernel's operations and ns.
fn machine(
    (name, threads, cpu_ops_per_s): (&str, usize, f64),
    steps_ns: [u64; 7],
    (submit_ns, copies_ns): (u64, [f64; 2]),
    (ops, compute_ns): (u64, u64),
) -> Pace {
    use crate::system::clock::Clock;
    let b = |i: usize| crate::gpu::Bandwidth {
        bytes: if i == 2 { 134_217_728 } else { 67_108_864 },
        best_ns: steps_ns[i],
        median_ns: steps_ns[i],
        clock: Clock::CpuClock,
    };
    let mut pace = Pace::new(name);
    pace.set_cpu_compute(cpu_ops_per_s, threads);
    pace.set_gpu_ceilings(&crate::gpu::GpuCeilings {
        host_threads: threads,
        host_to_staging: b(0),
        staging_to_device: b(1),
        device_copy: b(2),
        device_to_readback: b(3),
        readback_to_host: b(4),
        host_memcpy: b(5),
        submit_latency_ns: submit_ns,
        compute: Some(crate::gpu::GpuCompute {
            rounds: 1,
            invocations: 1,
            ops,
            best_ns: compute_ns,
            median_ns: compute_ns,
            clock: Clock::GpuTimestamp,
        }),
        copy_latency_ns: Some(copies_ns),
        plain_kernel: Some(b(6)),
        ..crate::engine::ceilings::rates::example_ceilings()
    });
    pace
}

#[test]
fn the_sweeps_first_estimate_comes_from_the_ceilings_within_2x_of_what_it_took() {
    let (lavapipe, h200) = lavapipe_and_h200();
    // lavapipe: the default sweep (10 sizes to 128 MP, 5 runs) took 27.6 s here (2026-12-06),
    // priced at 8 s while its kernel was priced at the copy command's rate.
    let sizes = crate::engine::sweep::DEFAULT_SIZES_MP;
    let e = lavapipe.job(Task::Sweep, &sweep_parts(&sizes, 5, true));
    assert_eq!(e.basis, Basis::Ceilings);
    assert!(within_2x(e.seconds, 27.6), "lavapipe: {e:?}");
    // The H200: 11 sizes to 320 MP, 5 runs, took 14.2 s (sweep.json; priced at 480 s then).
    let sizes = [0.25, 1.0, 4.0, 16.0, 33.0, 64.0, 128.0, 160.0, 192.0, 256.0, 320.0];
    let h = h200.job(Task::Sweep, &sweep_parts(&sizes, 5, true));
    assert!(within_2x(h.seconds, 14.2), "H200: {h:?}");
    eprintln!("default sweep: lavapipe {:.1} s, H200 {:.1} s", e.seconds, h.seconds);
}

#[test]
fn the_transfer_paths_first_estimate_comes_from_the_ceilings_within_2x_of_what_they_took() {
    let (lavapipe, h200) = lavapipe_and_h200();
    // Up to 256 MiB: lavapipe's ten paths took 10 s here; the H200's seven paths took 1.46 s
    // in their timed runs (the sum of each size's median times its runs, probe.json).
    let e = lavapipe.job(Task::TransferPaths, &transfer_paths_parts(256 << 20, 10));
    assert_eq!(e.basis, Basis::Ceilings);
    assert!(within_2x(e.seconds, 10.0), "lavapipe: {e:?}");
    let h = h200.job(Task::TransferPaths, &transfer_paths_parts(256 << 20, 7));
    assert_eq!(h.basis, Basis::Ceilings);
    assert!(within_2x(h.seconds, 1.46), "H200: {h:?}");
    eprintln!("transfer paths to 256 MiB: lavapipe {:.2} s, H200 {:.2} s", e.seconds, h.seconds);
    // A quarter of the size takes about a quarter of the time: the bytes decide.
    let small = lavapipe.job(Task::TransferPaths, &transfer_paths_parts(64 << 20, 10));
    assert!((3.0..5.0).contains(&(e.seconds / small.seconds)), "{e:?} against {small:?}");
    // Once one was seen, its wall time over the ceilings' price is the next one's share.
    let mut seen = lavapipe.clone();
    let parts = transfer_paths_parts(64 << 20, 10);
    seen.finished(Task::TransferPaths, &parts, 3.0, None);
    let next = seen.job(Task::TransferPaths, &parts);
    assert_eq!(next.basis, Basis::Seen);
    assert!((next.seconds - 3.0).abs() < 1e-9, "{next:?}");
    // Conversions are not taught by it: a GPU run still rests on the ceilings.
    assert_eq!(seen.run(Lane::Gpu, 33.0, 0).basis, Basis::Ceilings);
}

#[test]
fn the_workgroup_race_first_estimate_follows_the_ceilings() {
    let (lavapipe, h200) = lavapipe_and_h200();
    let settings = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    let budget = crate::engine::sampling::Budget::FULL;
    // Twelve shapes on an 8K photo (33 MP), each its warm-up and first look.
    let parts = crate::engine::sweep::race_parts(12, &settings, 33.2, &budget);
    let (slow, fast) = (lavapipe.job(Task::Workgroups, &parts), h200.job(Task::Workgroups, &parts));
    assert_eq!((slow.basis, fast.basis), (Basis::Ceilings, Basis::Ceilings));
    eprintln!("a race of 12 shapes at 33 MP: lavapipe {:.2} s, H200 {:.2} s", slow.seconds, fast.seconds);
    // The GPU's runs at each machine's ceilings, times a race's guessed overhead.
    for (pace, e) in [(&lavapipe, slow), (&h200, fast)] {
        let runs = 12.0 * (budget.warmup_rounds + budget.min_rounds) as f64;
        let one = pace.run(Lane::Gpu, 33.2, settings.work.rounds).seconds;
        assert!((e.seconds - 1.2 * runs * one).abs() < 1e-9 * e.seconds, "{e:?}");
    }
    // lavapipe's copies run at a tenth of the H200's and its compute far below: far longer.
    assert!(slow.seconds > 5.0 * fast.seconds, "lavapipe {slow:?}, H200 {fast:?}");
    // Twice the pixels, about twice the time.
    let double =
        lavapipe.job(Task::Workgroups, &crate::engine::sweep::race_parts(12, &settings, 66.4, &budget));
    assert!((1.8..2.05).contains(&(double.seconds / slow.seconds)), "{double:?} against {slow:?}");
}

#[test]
fn plain_runs_leave_the_rounds_to_a_measured_compute_ceiling() {
    let (lavapipe, _) = lavapipe_and_h200();
    let mp = 15.9;
    let worked_before = lavapipe.run(Lane::Gpu, mp, 4096).seconds;
    let rounds_s = worked_before - lavapipe.run(Lane::Gpu, mp, 0).seconds;
    // A plain GPU run seen at 6x what the ceilings priced (the app's copies and display).
    let mut seen = lavapipe.clone();
    let plain_s = 6.0 * lavapipe.run(Lane::Gpu, mp, 0).seconds;
    seen.observe(Lane::Gpu, mp, 0, plain_s);
    assert!((seen.run(Lane::Gpu, mp, 0).seconds / plain_s - 1.0).abs() < 1e-9);
    // The rounds stay at the compute ceiling's price, not six times it.
    let worked = seen.run(Lane::Gpu, mp, 4096);
    assert_eq!(worked.basis, Basis::Seen);
    assert!((worked.seconds - plain_s - rounds_s).abs() < 1e-6 * worked.seconds, "{worked:?}");
    // A worked run seen then teaches the rounds their own price.
    seen.observe(Lane::Gpu, mp, 4096, 2.0 * worked.seconds);
    assert!((seen.run(Lane::Gpu, mp, 4096).seconds / (2.0 * worked.seconds) - 1.0).abs() < 1e-6);
}

#[test]
fn a_race_is_capped_by_its_time_budget_whatever_lighter_races_taught() {
    let (lavapipe, _) = lavapipe_and_h200();
    let light = ConvertSettings { backend: Backend::Gpu, ..ConvertSettings::default() };
    let heavy = ConvertSettings { work: crate::pixel::Work { rounds: 4096, ..light.work }, ..light };
    let budget = crate::engine::sampling::Budget::FULL;
    let mut pace = lavapipe.clone();
    // A light race at 1 MP that took 8x its first rounds to decide.
    let light_parts = crate::engine::sweep::race_parts(12, &light, 1.0, &budget);
    let first_s = pace.parts(&light_parts).seconds;
    assert!(first_s * 8.0 < budget.max_time.as_secs_f64(), "{first_s}");
    pace.finished(Task::Workgroups, &light_parts, first_s * 8.0, None);
    assert!((pace.job(Task::Workgroups, &light_parts).seconds / (first_s * 8.0) - 1.0).abs() < 1e-9);
    // At 16 MP and 4096 rounds the first rounds alone outlast the 6 s: the race stops after them.
    let heavy_parts = crate::engine::sweep::race_parts(12, &heavy, 15.9, &budget);
    let heavy_first_s = pace.parts(&heavy_parts).seconds;
    assert!(heavy_first_s > budget.max_time.as_secs_f64(), "{heavy_first_s}");
    let e = pace.job(Task::Workgroups, &heavy_parts);
    assert!((e.seconds / heavy_first_s - 1.2).abs() < 1e-9, "{e:?} for first rounds of {heavy_first_s} s");
    // Such a race, seen, teaches nothing of how long decisions take: the light estimate stays.
    pace.finished(Task::Workgroups, &heavy_parts, heavy_first_s, None);
    assert!((pace.job(Task::Workgroups, &light_parts).seconds / (first_s * 8.0) - 1.0).abs() < 1e-9);
    // A light race that cannot decide stops at the budget and one more round.
    pace.finished(Task::Workgroups, &light_parts, first_s * 100.0, None);
    let capped = pace.job(Task::Workgroups, &light_parts).seconds;
    let round_s = first_s / (budget.warmup_rounds + budget.min_rounds) as f64;
    assert!((capped / (1.2 * (budget.max_time.as_secs_f64() + round_s)) - 1.0).abs() < 1e-9, "{capped}");
}

#[test]
fn a_brief_estimate_says_its_basis_in_a_few_words_and_never_zero_seconds() {
    let e = |seconds, basis| Estimate { seconds, basis }.brief();
    assert_eq!(e(12.4, Basis::Seen), "about 12 s (from runs seen here)");
    assert_eq!(e(0.7, Basis::Ceilings), "about 1 s (from this machine's ceilings)");
    assert_eq!(e(0.2, Basis::Guess), "under a second (a rough guess)");
    let sentence = Estimate { seconds: 0.3, basis: Basis::Ceilings }.sentence();
    assert!(sentence.starts_with("under a second, ") && !sentence.contains("0 s"), "{sentence}");
}

/// A job that stops once decided says its bound once: beside a shorter guess, or instead of a
/// guess that is the bound (before: "about 1 min 09 s (a rough guess), at most 1 min 09 s").
#[test]
fn a_bounded_estimate_says_its_bound_once() {
    let e = |seconds, at_most| Estimate { seconds, basis: Basis::Guess }.brief_within(at_most);
    assert_eq!(e(4.2, Some(8.0)), "about 4 s (a rough guess), at most 8 s until decided");
    assert_eq!(e(69.0, Some(69.2)), "at most 1 min 09 s (a rough guess), less once decided");
    assert_eq!(e(4.2, None), "about 4 s (a rough guess)");
    let seen = Estimate { seconds: 8.0, basis: Basis::Seen }.brief_within(Some(8.0));
    assert_eq!(seen, "at most 8 s (from runs seen here), less once decided");
}

#[test]
fn an_op_is_priced_from_its_measured_rates_else_as_synthetic_rounds() {
    use crate::pixel::OpRates;
    let mut pace = Pace::new("test");
    pace.set_cpu_compute(100e9, 2);
    let part =
        |lane, op| Part { lane, megapixels: 1.0, rounds: 0, op, runs: 1.0, height_per_width: THREE_TWO };
    let blur = Op::Blur { radius: 8 };
    // Before the rates: the blur's 68 operations a pixel as 23 rounds at the compute ceiling.
    let as_rounds = pace.op_run(Lane::CpuAllThreads, 1.0, 0, blur);
    let rounds =
        pace.run(Lane::CpuAllThreads, 1.0, 23).seconds - pace.run(Lane::CpuAllThreads, 1.0, 0).seconds;
    assert!((as_rounds.seconds - rounds).abs() < 1e-12 && as_rounds.seconds > 0.0, "{as_rounds:?}");
    // lavapipe's rates, measured with its ceilings on 2026-12-04: the GPU's blur 1.79 ns a pixel
    // and tap, its dither 37.6 µs a wavefront step; the CPU's blur 0.029 ns, its dither 2.39 ns a
    // pixel.
    pace.set_op_rates(
        Lane::Gpu,
        OpRates { blur_ns_per_pixel_tap: 1.79, dither_ns_per_step: 37_600.0, dither_ns_per_pixel: 0.0 },
    );
    pace.set_cpu_op_rates(
        OpRates { blur_ns_per_pixel_tap: 0.029, dither_ns_per_step: 0.0, dither_ns_per_pixel: 2.39 },
        2,
    );
    // 1224 x 816: the GPU's dither 2854 steps, 107 ms (claim 10 measured 122 ms); a radius-32
    // blur, 65 taps a pixel: 116 ms.
    let dither = pace.op_run(Lane::Gpu, 1224.0 * 816.0 / 1e6, 0, Op::Dither);
    assert!(
        (dither.seconds - 2854.0 * 37.6e-6).abs() < 1e-4 && dither.basis == Basis::Ceilings,
        "{dither:?}"
    );
    let wide = pace.op_run(Lane::Gpu, 1.0, 0, Op::Blur { radius: 32 }).seconds;
    assert!((wide - 1e6 * 65.0 * 1.79e-9).abs() < 1e-9, "{wide}");
    // One CPU thread blurs at half the pair's rate; the dither is one loop on either.
    let one = pace.op_run(Lane::CpuOneThread, 1.0, 0, blur).seconds;
    let all = pace.op_run(Lane::CpuAllThreads, 1.0, 0, blur).seconds;
    assert!((one / all - 2.0).abs() < 1e-9, "{one} {all}");
    let loop_s = |lane| pace.op_run(lane, 1.0, 0, Op::Dither).seconds;
    assert!((loop_s(Lane::CpuOneThread) - loop_s(Lane::CpuAllThreads)).abs() < 1e-15);
    // A part's run is its grayscale and its op; no op, no transfer adds nothing.
    let whole = pace.parts(&[part(Lane::Gpu, Op::Dither)]).seconds;
    let plain = pace.parts(&[part(Lane::Gpu, Op::None)]).seconds;
    assert!((whole - plain - pace.op_run(Lane::Gpu, 1.0, 0, Op::Dither).seconds).abs() < 1e-12);
    assert!(pace.op_run(Lane::Transfer, 1.0, 0, Op::Dither).seconds.abs() < f64::EPSILON);
}

#[test]
fn a_job_far_from_the_overheads_kept_starts_them_afresh() {
    let mut pace = Pace::new("test");
    let parts = claims_parts(true);
    let runs_s = pace.parts(&parts).seconds;
    let share = |pace: &Pace| pace.job(Task::ClaimsQuick, &parts).seconds / runs_s;
    for _ in 0..3 {
        pace.finished(Task::ClaimsQuick, &parts, 6.0 * runs_s, None);
    }
    assert!((share(&pace) - 6.0).abs() < 1e-9);
    // Within 2x of them: noise, averaged with them (the geometric mean of 6, 6 and 4).
    pace.finished(Task::ClaimsQuick, &parts, 4.0 * runs_s, None);
    assert!((share(&pace) - 144.0_f64.cbrt()).abs() < 1e-9, "{}", share(&pace));
    // Over 2x below: the machine changed, and the next estimate is the run just seen.
    pace.finished(Task::ClaimsQuick, &parts, runs_s, None);
    assert!((share(&pace) - 1.0).abs() < 1e-9, "{}", share(&pace));
}

#[test]
fn the_claims_estimate_is_the_wall_seen_whatever_other_jobs_teach_their_runs() {
    let mut pace = Pace::new("test");
    let parts = claims_parts(true);
    pace.finished(Task::ClaimsQuick, &parts, 6.5, None);
    let e = pace.job(Task::ClaimsQuick, &parts);
    assert!(e.basis == Basis::Seen && (e.seconds - 6.5).abs() < 1e-9, "{e:?}");
    // Runs that price the claims' parts far from before (16 MP runs kept at 29x and 3x what the
    // engine's take): the claims were seen to take 6.5 s, and are estimated so.
    let price_s = pace.parts(&parts).seconds;
    pace.observe(Lane::CpuAllThreads, 16.0, 0, 0.066);
    pace.observe(Lane::Gpu, 16.0, 0, 0.078);
    let moved = pace.parts(&parts).seconds / price_s;
    assert!(!(0.5..=2.0).contains(&moved), "the price moved {moved}x");
    let e = pace.job(Task::ClaimsQuick, &parts);
    assert!(e.basis == Basis::Seen && (e.seconds - 6.5).abs() < 1e-9, "{e:?}");
    // The next run averages in; one over 2x away starts afresh.
    pace.finished(Task::ClaimsQuick, &parts, 8.0, None);
    assert!((pace.job(Task::ClaimsQuick, &parts).seconds - 52.0_f64.sqrt()).abs() < 1e-9);
    pace.finished(Task::ClaimsQuick, &parts, 30.0, None);
    assert!((pace.job(Task::ClaimsQuick, &parts).seconds - 30.0).abs() < 1e-9);
    // The full set is another job, not estimated from the quick one's wall.
    assert!(!pace.has_seen(Task::ClaimsAll));
}

#[test]
fn a_grids_overhead_is_learned_a_cell_not_as_a_share_of_its_runs() {
    // A small grid (2 sizes x 0, 16 rounds: 4 cells) whose runs take 0.3 s took 1.1 s: its
    // calibration and its cells' images, 0.2 s a cell. As a share (3.7x) it priced the default
    // grid, 12 cells whose runs take 19 s, at 5 min 44 s; it took 22 s (lavapipe, the CLI).
    let (mut pace, _) = lavapipe_and_h200();
    let grid = |sizes: &[f64], levels: &[u32]| {
        let options = SweepOptions {
            sizes_mp: sizes.to_vec(),
            work_levels: levels.to_vec(),
            runs: 2,
            gpu: true,
            ..SweepOptions::default()
        };
        options.parts()
    };
    let small = grid(&[0.25, 1.0], &[0, 16]);
    let runs_s = pace.parts(&small).seconds;
    pace.finished(Task::Grid, &small, runs_s + 4.0 * 0.2, None);
    let big = grid(&[0.25, 1.0, 2.0], &[0, 16, 256, 4096]);
    let e = pace.job(Task::Grid, &big);
    let want = pace.parts(&big).seconds + 12.0 * 0.2;
    assert!((e.seconds - want).abs() < 1e-6 * want, "{e:?}, want {want}");
    // A size sweep's overhead stays a share of its runs.
    let sizes = sweep_parts(&[0.25, 1.0], 2, true);
    let runs_s = pace.parts(&sizes).seconds;
    pace.finished(Task::Sweep, &sizes, 2.0 * runs_s, None);
    let e = pace.job(Task::Sweep, &sweep_parts(&[4.0], 2, true));
    assert!((e.seconds / pace.parts(&sweep_parts(&[4.0], 2, true)).seconds - 2.0).abs() < 1e-9, "{e:?}");
}

#[test]
fn a_batch_learns_its_decode_and_encode_a_megapixel_and_rests_on_it() {
    // Six 16-MP photos and two 1-MP ones, converted on one thread each.
    let file = |mp: f64| one_run(Lane::CpuOneThread, mp, 0);
    let parts: Vec<Part> = [16.0; 6].into_iter().chain([1.0; 2]).map(file).collect();
    let mut pace = Pace::new("test");
    pace.observe(Lane::CpuOneThread, 16.0, 0, 0.016);
    pace.observe(Lane::CpuOneThread, 1.0, 0, 0.001);
    let runs_s = pace.parts(&parts).seconds;
    assert!((runs_s - 0.098).abs() < 1e-3, "{runs_s}");
    // Before a batch was seen: its runs and a guessed decode and encode, a guess.
    let first = pace.job(Task::Batch, &parts);
    assert_eq!(first.basis, Basis::Guess);
    let cores = available_threads().max(1) as f64;
    let units = 6.0 * 16.1 + 2.0 * 1.1;
    assert!((first.seconds - (runs_s + 0.015 / cores * units)).abs() < 1e-9, "{first:?}");
    // It took 3.0 s: the seconds beyond its runs are learned a unit (98.8 of them), and a
    // batch of other files is priced from them, resting on what was seen.
    pace.finished(Task::Batch, &parts, 3.0, None);
    let per_unit = (3.0 - runs_s) / units;
    let other: Vec<Part> = [4.0; 10].into_iter().map(file).collect();
    let e = pace.job(Task::Batch, &other);
    assert_eq!(e.basis, Basis::Seen);
    let want = pace.parts(&other).seconds + per_unit * 10.0 * 4.1;
    assert!((e.seconds - want).abs() < 1e-9, "{e:?}, want {want}");
    // Its lanes are not taught by it: a conversion is priced as before.
    assert!((pace.run(Lane::CpuOneThread, 16.0, 0).seconds - 0.016).abs() < 1e-9);
}
