//! Tests of [`super`]: each count sampled until decided (injected rounds), from which count the
//! GPU wins (decided wins only), and the verdict sentence.

use super::*;
use crate::engine::sampling::{MIN_SAMPLES, Stop};

const MS: u64 = 1_000_000;

/// Rounds of `passes` operations at `gpu_ms` and `cpu_ms` per operation, each side wobbling by a
/// few per cent the opposite way in turn (the medians stay exact).
fn rounds(passes: u32, gpu_ms: u64, cpu_ms: u64) -> impl FnMut(usize) -> Result<Round, EngineError> {
    move |round| {
        let wobble = [97, 101, 99, 103, 98, 102][round % 6];
        let n = u64::from(passes);
        Ok(Round {
            gpu_ns: gpu_ms * MS / 100 * n * (200 - wobble) / 100,
            kernel_ns: None,
            cpu_ns: cpu_ms * MS / 100 * n * wobble / 100,
            matches_cpu: true,
        })
    }
}

/// The point of `passes` at `gpu_ms` and `cpu_ms` per operation, in hundredths of a millisecond.
fn point(passes: u32, gpu_ms: u64, cpu_ms: u64) -> RoundTripPoint {
    sample_point(passes, &round_trip_budget(false, 1), None, rounds(passes, gpu_ms, cpu_ms)).expect("sampled")
}

/// A result of `points` at 8K and 256 rounds, as much as its verdict reads.
fn result(points: Vec<RoundTripPoint>, software: bool) -> RoundTripResult {
    RoundTripResult {
        width: 7680,
        height: 4320,
        work_rounds: 256,
        gpu_wins_from_passes: wins_from(&points),
        points,
        software_adapter: software,
        ..RoundTripResult::default()
    }
}

#[test]
fn a_clear_gpu_win_is_decided_and_a_tie_is_inconclusive() {
    // Twice as fast: decided at the first look, a speed-up of 2 whose interval lies above 1.
    let win = point(4, 500, 1000);
    let c = win.comparison;
    assert_eq!(
        (c.winner, c.stop, c.rounds, win.gpu_wins),
        (Winner::GpuFaster, Stop::Decided, MIN_SAMPLES, true)
    );
    let i = c.speed_up.expect("an interval");
    assert!(i.ci_low > 1.0 && (i.median - 2.0).abs() < 0.05 && i.samples == MIN_SAMPLES, "{i:?}");
    assert_eq!((win.gpu_per_op_ns, win.cpu_per_op_ns.median_ns), (5e6, 10 * MS), "{win:?}");
    assert_eq!((win.gpu_total_ns.median_ns, win.cpu_total_ns.runs), (20 * MS, MIN_SAMPLES));
    // A third as fast: decided the other way.
    let loss = point(1, 3000, 1000);
    assert_eq!((loss.comparison.winner, loss.gpu_wins), (Winner::CpuFaster, false));
    // 1% apart, each round wobbling by 3%: the GPU's median is the faster one, but the interval
    // holds 1 after the whole budget, so it is no win.
    let tie = point(2, 990, 1000);
    let c = tie.comparison;
    assert!(tie.gpu_per_op_ns < tie.cpu_per_op_ns.median_ns as f64, "{tie:?}");
    assert_eq!((c.winner, c.stop, c.rounds, tie.gpu_wins), (Winner::WithinNoise, Stop::Rounds, 42, false));
    let i = c.speed_up.expect("an interval");
    assert!(i.ci_low < 1.0 && i.ci_high > 1.0, "{i:?}");
}

#[test]
fn the_gpu_wins_from_the_first_decided_count_after_its_last_non_win() {
    let (loss, tie, win) = (point(1, 3000, 1000), point(2, 990, 1000), point(4, 800, 1000));
    let mut win8 = point(8, 500, 1000);
    assert_eq!(wins_from(&[loss.clone(), tie.clone(), win.clone(), win8.clone()]), Some(4));
    assert_eq!(wins_from(std::slice::from_ref(&win)), Some(4));
    // A tie is never a win, however its medians fall: not after a loss, not at the end.
    assert_eq!(wins_from(&[loss.clone(), tie.clone()]), None);
    assert_eq!(wins_from(&[win.clone(), tie.clone()]), None);
    assert_eq!(wins_from(&[]), None);
    let r = result(vec![loss.clone(), tie.clone(), win, win8.clone()], false);
    let v = verdict(&r);
    assert!(
        v.starts_with(
            "At 33 MP (7680x4320) and 256 rounds per pixel the GPU wins from 4 operations per round trip: \
             8.000 ms per operation on the GPU against the CPU's 10.00 ms there; GPU faster: 1.2"
        ),
        "{v}"
    );
    // The last count within the noise: no win up to it, said with its interval.
    let r = result(vec![loss, tie], false);
    let v = verdict(&r);
    assert!(v.contains("the GPU does not win up to 2 operations per round trip"), "{v}");
    assert!(v.contains("at 2; within the noise (±"), "{v}");
    win8.matches_cpu = false;
    assert!(verdict(&result(vec![win8], false)).contains("differed from the CPU's at n = 8"));
}

#[test]
fn the_verdict_says_when_the_gpu_never_wins_and_what_it_is() {
    let r = result(vec![point(1, 3000, 1000), point(16, 1200, 1000)], true);
    let v = verdict(&r);
    assert!(v.contains("the GPU does not win up to 16 operations per round trip"), "{v}");
    assert!(
        v.contains("12.00 ms per operation on the GPU against the CPU's 10.00 ms at 16; CPU faster"),
        "{v}"
    );
    assert!(v.ends_with("this CPU's own cores)."), "{v}");
    assert_eq!(megapixels(64, 48), "0.0031 MP");
    assert_eq!(megapixels(1920, 1080), "2.1 MP");
    // The image, its staging, and on a software GPU its buffers too (it fits one band).
    let gpu = |t| crate::gpu::GpuHostMemory::new(t, 1 << 20);
    assert_eq!(round_trip_bytes(300, 100, true, gpu(wgpu::DeviceType::Cpu)), 300 + 100 + 800 + 100);
    assert_eq!(round_trip_bytes(300, 100, true, gpu(wgpu::DeviceType::DiscreteGpu)), 300 + 100 + 400 + 100);
    // The budget: the set's, with at least the rounds asked.
    assert_eq!(round_trip_budget(true, 3), Budget::QUICK);
    let b = round_trip_budget(false, 50);
    assert_eq!((b.min_rounds, b.max_rounds, b.max_time), (50, 50, Budget::FULL.max_time));
}

#[test]
fn round_trips_teach_the_pace_their_runs_so_the_next_estimate_rests_on_them() {
    use crate::engine::estimate::{Basis, Roof, Task, round_trip_parts};
    let mut pace = Pace::new("test machine");
    for lane in [Lane::CpuOneThread, Lane::CpuAllThreads, Lane::Gpu] {
        pace.set_roof(lane, Roof { bytes_per_s: 1e9, ops_per_s: 1e10, fixed_s: None });
    }
    let mut r = result(vec![point(1, 3000, 1000), point(4, 800, 1000)], true);
    r.cpu_threads = 2;
    let cpu = Lane::of(&ConvertSettings { threads: 2, ..ConvertSettings::default() });
    let mp = crate::system::units::megapixels(r.width, r.height);
    let parts = round_trip_parts(&[1, 4], 7, cpu, mp, r.work_rounds);
    assert_eq!(pace.job(Task::RoundTrips, &parts).basis, Basis::Ceilings, "nothing seen yet");
    teach_pace(&mut pace, &r);
    pace.finished(Task::RoundTrips, &parts, 5.0, None);
    let next = pace.job(Task::RoundTrips, &parts);
    assert_eq!(next.basis, Basis::Seen, "{next:?}");
    assert!(next.sentence().ends_with("from runs seen on this machine"), "{}", next.sentence());
    // The GPU's round trip of one operation is one conversion end to end: 30 ms; each CPU pass 10.
    let gpu = pace.run(Lane::Gpu, mp, r.work_rounds);
    assert!((gpu.seconds - 0.030).abs() < 1e-6 && gpu.basis == Basis::Seen, "{gpu:?}");
    assert!((pace.run(cpu, mp, r.work_rounds).seconds - 0.010).abs() < 1e-6);
    // The job as taught: what it took, 5 s.
    assert!((next.seconds - 5.0).abs() < 1e-6, "{next:?}");
}
