//! Tests of [`super`]: each phase against its ceiling, and ceilings a run beat.

use super::*;
use crate::engine::spans::{Span, SpanClock};
use crate::engine::{PhaseTiming, Track};
use crate::pixel::Formula;
use crate::system::clock::Clock;

/// A span of `phase` on `lane`, `ns` long from `start_ns`, timed by `clock`.
fn step(lane: Track, phase: Phase, (start_ns, ns): (u64, u64), clock: SpanClock) -> Span {
    Span { clock, phase: Some(phase), ..Span::cpu(lane, start_ns, start_ns + ns) }
}

/// A GPU run's report of 1 MP RGB8 with these spans, finished.
fn gpu_run(spans: Vec<Span>) -> RunReport {
    let mut r = RunReport::new(Backend::Gpu, Formula::Bt601, (1000, 1000), Vec::new());
    r.kernel = Some(Kernel::Rgb8ToL8);
    r.spans = spans;
    r.finish(1_000_000);
    r
}

#[test]
fn each_phase_and_copy_against_its_ceiling() {
    // 1 MP RGB8: 3 MB up, 1 MB down; 32 GB/s host→staging then 128 GB/s: 25.6 GB/s.
    // The upload's host copy on two threads at once counts once (187,500 ns).
    let (cpu, gpu) = (SpanClock::CpuClock, SpanClock::GpuTimestampCalibrated);
    let copy = |thread| Track::HostCopy { thread: Some(thread) };
    let r = gpu_run(vec![
        step(Track::Setup, Phase::Setup, (0, 5_000), cpu),
        step(copy(0), Phase::Upload, (10_000, 187_500), cpu),
        step(copy(1), Phase::Upload, (10_000, 180_000), cpu),
        step(Track::Upload, Phase::Upload, (200_000, 46_875), gpu),
        step(Track::Kernel, Phase::Kernel, (250_000, 2_500), gpu),
        step(Track::Download, Phase::Download, (260_000, 31_250), gpu),
        step(copy(0), Phase::Download, (300_000, 31_250), cpu),
    ]);
    assert_eq!(
        r.phase(Phase::Upload),
        Some(PhaseTiming { phase: Phase::Upload, ns: 234_375, source: Clock::Mixed })
    );
    let rates = phase_rates(&r, &Ceilings { gpu: Some(example_ceilings()), cpu_stream_gb_per_s: None });
    let find = |phase, part| rates.iter().find(|x| x.phase == phase && x.part == part).expect("rate");
    let upload = find(Phase::Upload, PhasePart::Whole);
    assert_eq!((upload.bytes, upload.ceiling), (3_000_000, Some(Ceiling::HostToGpu)));
    assert!((upload.gb_per_s - 12.8).abs() < 1e-9, "{upload:?}");
    assert!((upload.percent_of_ceiling.expect("pct") - 50.0).abs() < 1e-9);
    assert_eq!(upload.ceiling_source, Some(Clock::Mixed));
    let host = find(Phase::Upload, PhasePart::HostCopy);
    assert!((host.percent_of_ceiling.expect("pct") - 50.0).abs() < 1e-9, "{host:?}");
    let copy = find(Phase::Upload, PhasePart::GpuCopy);
    assert!((copy.gb_per_s - 64.0).abs() < 1e-9 && copy.source == Clock::GpuTimestamp);
    let kernel = find(Phase::Kernel, PhasePart::Whole);
    assert_eq!((kernel.bytes, kernel.ceiling), (4_000_000, Some(Ceiling::DeviceCopy)));
    assert!((kernel.percent_of_ceiling.expect("pct") - 50.0).abs() < 1e-9, "{kernel:?}");
    let down = find(Phase::Download, PhasePart::Whole);
    assert!((down.gb_per_s - 16.0).abs() < 1e-9 && (down.ceiling_gb_per_s.expect("c") - 32.0).abs() < 1e-9);
    assert_eq!(rates.len(), 7, "no rate for setup");
    assert_eq!(upload.sentence(), "upload 12.8 GB/s, 50% of this machine's host→GPU ceiling (25.6 GB/s)");
    // A ceiling timed on another clock than the phase names its clock (a software adapter's
    // probe falls back to the CPU clock); on the same clock it goes without saying.
    assert_eq!(
        copy.sentence(),
        "upload GPU copy 64.0 GB/s, 50% of this machine's staging→device ceiling (128 GB/s)"
    );
    assert_eq!(
        copy.at(copy.ns, Some((128.0, Clock::CpuClock))).sentence(),
        "upload GPU copy 64.0 GB/s, 50% of this machine's staging→device ceiling (128 GB/s on the cpu-clock)"
    );
    // Without a probe the rates stand alone.
    let bare = phase_rates(&r, &Ceilings::default());
    assert!(bare.iter().all(|x| x.percent_of_ceiling.is_none()));
    assert_eq!(bare[0].sentence(), "upload 12.8 GB/s (no ceiling measured)");
}

#[test]
fn the_cpu_kernel_against_the_memory_stream() {
    let mut r = RunReport::new(Backend::Cpu, Formula::Bt601, (1000, 1000), Vec::new());
    r.kernel = Some(Kernel::Rgb8ToL8);
    r.add_cpu_step(Phase::Kernel, 100, 400_100);
    r.finish(500_000);
    let c = Ceilings { gpu: None, cpu_stream_gb_per_s: Some(12.5) };
    let rates = phase_rates(&r, &c);
    assert_eq!(rates.len(), 1);
    assert_eq!(rates[0].ceiling, Some(Ceiling::MemoryStream));
    assert!((rates[0].percent_of_ceiling.expect("pct") - 80.0).abs() < 1e-9);
}

#[test]
fn a_run_that_beats_a_one_step_ceiling_is_flagged_and_raises_it() {
    // A GPU copy at 256 GB/s against a probed staging→device ceiling of 128 GB/s, after a host
    // copy at its ceiling: the whole upload at 28.4 GB/s, above the two steps' 25.6.
    let r = gpu_run(vec![
        step(Track::HostCopy { thread: None }, Phase::Upload, (0, 93_750), SpanClock::CpuClock),
        step(Track::Upload, Phase::Upload, (93_750, 11_719), SpanClock::GpuTimestampAtSubmit),
    ]);
    let mut gpu = example_ceilings();
    let rates = phase_rates(&r, &Ceilings { gpu: Some(gpu.clone()), cpu_stream_gb_per_s: None });
    let copy = rates.iter().find(|x| x.part == PhasePart::GpuCopy).expect("the GPU copy");
    assert!(copy.beats_ceiling() && copy.percent_of_ceiling.is_some_and(|p| p > 199.0), "{copy:?}");
    assert_eq!(copy.share_label().as_deref(), Some(">100%"));
    assert!(
        copy.sentence().ends_with("that ceiling was measured low (raised now); measure again"),
        "{}",
        copy.sentence()
    );
    // The whole upload beats its two steps' ceiling because one step beat its own: nothing is
    // raised for the whole.
    let whole = rates.iter().find(|x| x.part == PhasePart::Whole).expect("the upload");
    assert!(
        whole.beats_ceiling() && whole.sentence().ends_with("one of its steps beat its own"),
        "{}",
        whole.sentence()
    );
    let host = rates.iter().find(|x| x.part == PhasePart::HostCopy).expect("the host copy");
    assert_eq!(host.share_label().as_deref(), Some("100%"));
    // Up to 5% over a ceiling is the noise of measuring it: "at the ceiling", not "103%".
    let matched = PhaseRate { percent_of_ceiling: Some(103.0), ..*host };
    assert!(!matched.beats_ceiling());
    assert_eq!(matched.share_label().as_deref(), Some("~100%"));
    assert!(matched.sentence().contains("at this machine's"), "{}", matched.sentence());
    // Only the beaten one-step ceiling is raised, to what the run did.
    assert_eq!(raise_beaten(&mut gpu, &rates), vec![Ceiling::StagingToDevice]);
    assert!((gpu.staging_to_device.gb_per_s() - copy.gb_per_s).abs() / copy.gb_per_s < 1e-3);
    assert_eq!(gpu.host_to_staging, example_ceilings().host_to_staging);
    let again = phase_rates(&r, &Ceilings { gpu: Some(gpu), cpu_stream_gb_per_s: None });
    let copy = again.iter().find(|x| x.part == PhasePart::GpuCopy).expect("the GPU copy");
    assert!(!copy.beats_ceiling(), "held against the raised ceiling: {copy:?}");
}

#[test]
fn a_copy_smaller_than_the_probe_that_beats_it_raises_nothing() {
    // lavapipe: host→staging measured at 22 GB/s over 64 MiB; a 1 MP run's 3 MB host copy at
    // 65 GB/s stayed in the CPU's cache.
    let mut gpu = example_ceilings();
    gpu.host_to_staging = bw(64 << 20, 3_050_000, Clock::CpuClock);
    let r = gpu_run(vec![
        step(Track::HostCopy { thread: None }, Phase::Upload, (0, 46_154), SpanClock::CpuClock),
        step(Track::Upload, Phase::Upload, (46_154, 23_438), SpanClock::GpuTimestampAtSubmit),
    ]);
    let rates = phase_rates(&r, &Ceilings { gpu: Some(gpu.clone()), cpu_stream_gb_per_s: None });
    let host = rates.iter().find(|x| x.part == PhasePart::HostCopy).expect("the host copy");
    assert!(host.beats_ceiling() && !host.proves_ceiling_low(), "{host:?}");
    assert_eq!(host.share_label().as_deref(), Some(">100%"));
    assert!(
        host.sentence().ends_with("2.9 MiB moved, less than its probe's 64.0 MiB, can stay in a cache"),
        "{}",
        host.sentence()
    );
    let before = gpu.clone();
    assert!(raise_beaten(&mut gpu, &rates).is_empty());
    assert_eq!(gpu, before);
    // The same rate over as many bytes as the probe's proves the probe low, and raises it.
    let big = PhaseRate { bytes: 64 << 20, ..*host };
    let big = big.at((64u64 << 20) * host.ns / host.bytes, Some((22.0, Clock::CpuClock)));
    let big = PhaseRate { ceiling_bytes: Some(64 << 20), ..big };
    assert!(big.proves_ceiling_low(), "{big:?}");
    assert_eq!(raise_beaten(&mut gpu, &[big]), vec![Ceiling::HostToStaging]);
    assert!((gpu.host_to_staging.gb_per_s() - big.gb_per_s).abs() / big.gb_per_s < 1e-3);
}
