//! Every phase against its ceiling: "upload 31 GB/s, 96% of this machine's host→GPU ceiling".
//! GPU phases are held against the probed ceilings ([`GpuCeilings`], see `graylab info
//! --probe`), the GPU kernel against the device's own copy bandwidth, and the CPU kernel against
//! the memory-stream baseline ([`crate::cpu::stream_baseline`]) moving as many bytes on as many
//! threads.

use crate::engine::Backend;
use crate::engine::report::RunReport;
use crate::engine::spans::Phase;
use crate::engine::spans::{Track, time_of};
use crate::gpu::{Bandwidth, GpuCeilings};
use crate::pixel::Kernel;
use crate::system::clock::Clock;
use crate::system::units::gb;

/// A ceiling: the most a step can do on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ceiling {
    /// The host filling mapped upload staging with every thread.
    HostToStaging,
    /// The GPU copying upload staging to device memory.
    StagingToDevice,
    /// The two upload steps one after the other: the upload phase's ceiling.
    HostToGpu,
    /// The device copying its own memory (read + write): the GPU kernel's ceiling.
    DeviceCopy,
    /// The GPU copying device memory to readback memory.
    DeviceToReadback,
    /// The host reading mapped readback memory with every thread.
    ReadbackToHost,
    /// The two download steps one after the other: the download phase's ceiling.
    GpuToHost,
    /// Reading 3 bytes and writing 1 per pixel with no arithmetic, as many bytes as the kernel
    /// moves, on its threads: the CPU kernel's ceiling.
    MemoryStream,
}

pub use crate::system::units::{BEATEN_PERCENT, share_label};

impl Ceiling {
    /// Whether the ceiling is one measured step. The others are two steps one after the other
    /// (which a pipelined run beats by overlapping them) or the CPU's memory-stream baseline.
    #[must_use]
    pub fn is_one_step(self) -> bool {
        !matches!(self, Self::HostToGpu | Self::GpuToHost | Self::MemoryStream)
    }

    /// The probe's one-step ceilings, in the order a round trip takes them.
    pub const STEPS: [Self; 5] = [
        Self::HostToStaging,
        Self::StagingToDevice,
        Self::DeviceCopy,
        Self::DeviceToReadback,
        Self::ReadbackToHost,
    ];

    /// The probe's step that this one-step ceiling is (`None` for the others).
    #[must_use]
    pub fn step(self, g: &GpuCeilings) -> Option<&Bandwidth> {
        Some(match self {
            Self::HostToStaging => &g.host_to_staging,
            Self::StagingToDevice => &g.staging_to_device,
            Self::DeviceCopy => &g.device_copy,
            Self::DeviceToReadback => &g.device_to_readback,
            Self::ReadbackToHost => &g.readback_to_host,
            Self::HostToGpu | Self::GpuToHost | Self::MemoryStream => return None,
        })
    }

    /// What the probe timed for this one-step ceiling, in a few words (`""` for the others): the
    /// same words in `info`, `bench` and the app's adapter panel.
    #[must_use]
    pub fn what(self, g: &GpuCeilings) -> &'static str {
        match self {
            Self::HostToStaging => "every thread writing into mapped upload memory",
            Self::StagingToDevice => "a GPU copy from upload staging to device memory",
            Self::DeviceCopy if g.device_copy_by_kernel => {
                "a copy kernel within device memory, read + write counted"
            }
            Self::DeviceCopy => "a copy command within device memory, read + write counted",
            Self::DeviceToReadback => "a GPU copy into mapped readback memory",
            Self::ReadbackToHost => "every thread reading mapped readback memory",
            Self::HostToGpu | Self::GpuToHost | Self::MemoryStream => "",
        }
    }

    /// Its name in a sentence: "this machine's {name} ceiling".
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::HostToStaging => "host→staging",
            Self::StagingToDevice => "staging→device",
            Self::HostToGpu => "host→GPU",
            Self::DeviceCopy => "device-copy",
            Self::DeviceToReadback => "device→readback",
            Self::ReadbackToHost => "readback→host",
            Self::GpuToHost => "GPU→host",
            Self::MemoryStream => "memory-stream",
        }
    }
}

/// Which part of a phase a rate is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhasePart {
    /// The whole phase.
    Whole,
    /// Its host copy (into or out of mapped staging).
    HostCopy,
    /// Its GPU copy (staging to device, or device to readback).
    GpuCopy,
}

/// The ceilings known for a run: the GPU probe's, and the CPU memory-stream rate measured at the
/// run's size and threads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ceilings {
    /// What `graylab info --probe` measured on this adapter (cached per adapter).
    pub gpu: Option<GpuCeilings>,
    /// The memory-stream baseline at the run's size and threads, GB/s (bytes read + written).
    pub cpu_stream_gb_per_s: Option<f64>,
}

impl Ceilings {
    /// A ceiling's rate in GB/s and the clock that measured it, where known.
    #[must_use]
    pub fn rate(&self, ceiling: Ceiling) -> Option<(f64, Clock)> {
        let joined = |a: &Bandwidth, b: &Bandwidth| a.clock.and(b.clock);
        if ceiling == Ceiling::MemoryStream {
            return self.cpu_stream_gb_per_s.map(|r| (r, Clock::CpuClock));
        }
        let g = self.gpu.as_ref()?;
        Some(match ceiling {
            Ceiling::HostToGpu => {
                (g.host_to_device_gb_per_s(), joined(&g.host_to_staging, &g.staging_to_device))
            }
            Ceiling::GpuToHost => {
                (g.device_to_host_gb_per_s(), joined(&g.device_to_readback, &g.readback_to_host))
            }
            one_step => one_step.step(g).map(|b| (b.gb_per_s(), b.clock))?,
        })
    }

    /// The bytes each copy of a one-step copy ceiling's probe moved (`None` for the others: a
    /// two-step ceiling is never raised, and the memory stream is measured at the run's size).
    #[must_use]
    pub fn probe_bytes(&self, ceiling: Ceiling) -> Option<u64> {
        ceiling.step(self.gpu.as_ref()?).map(|b| b.bytes)
    }
}

/// One phase (or part of one) of a run as a rate, against its ceiling where one is known.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PhaseRate {
    /// The phase.
    pub phase: Phase,
    /// The whole phase, or its host or GPU copy.
    pub part: PhasePart,
    /// Bytes the phase moved (the kernel: read + written).
    pub bytes: u64,
    /// Its time.
    pub ns: u64,
    /// The clock of `ns`.
    pub source: Clock,
    /// `bytes / ns`, GB/s (1e9 bytes per second).
    pub gb_per_s: f64,
    /// The ceiling it is held against.
    pub ceiling: Option<Ceiling>,
    /// That ceiling, GB/s.
    pub ceiling_gb_per_s: Option<f64>,
    /// The clock that measured the ceiling.
    pub ceiling_source: Option<Clock>,
    /// `gb_per_s` as a percentage of the ceiling (above 100 when the run beat the probe, e.g. a
    /// copy that stayed in the CPU's cache).
    pub percent_of_ceiling: Option<f64>,
    /// The bytes each copy of a one-step ceiling's probe moved: a run of fewer bytes that beats
    /// it may have stayed in a cache, which proves nothing of the ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling_bytes: Option<u64>,
}

impl PhaseRate {
    /// The same rate for `ns` of its bytes, against `ceiling` (its rate in GB/s and the clock
    /// that measured it) where known.
    #[must_use]
    pub fn at(self, ns: u64, ceiling: Option<(f64, Clock)>) -> Self {
        let gb_per_s = self.bytes as f64 / ns.max(1) as f64;
        Self {
            ns,
            gb_per_s,
            ceiling_gb_per_s: ceiling.map(|k| k.0),
            ceiling_source: ceiling.map(|k| k.1),
            percent_of_ceiling: ceiling.map(|k| gb_per_s / k.0.max(f64::MIN_POSITIVE) * 100.0),
            ..self
        }
    }

    /// Whether the run went faster than its ceiling; a two-step phase beats its own when one of
    /// its steps did.
    #[must_use]
    pub fn beats_ceiling(&self) -> bool {
        self.percent_of_ceiling.is_some_and(|p| p > BEATEN_PERCENT)
    }

    /// Whether the run beat its ceiling moving as many bytes as the ceiling's probe (within
    /// 10%: an 8K kernel moves 132.7 MB, the device-copy probe 134.2): proof that it was
    /// measured low (the machine was busy then). A smaller copy may have stayed in a cache
    /// (small runs raised lavapipe's 64 MiB host-to-staging ceiling from 22 to 65 GB/s, and
    /// every 8K run after read 38% of it).
    #[must_use]
    pub fn proves_ceiling_low(&self) -> bool {
        self.beats_ceiling()
            && self.ceiling_bytes.is_none_or(|probe| u128::from(self.bytes) * 10 >= u128::from(probe) * 9)
    }

    /// The share for a narrow column: `35%`; `~100%` from 100% up to 105% (the
    /// noise between two measurements of the same copy: "103%" would claim a run beat a
    /// ceiling it only matched); `>100%` when the run beat its ceiling (no share of a ceiling
    /// that was measured low means anything).
    #[must_use]
    pub fn share_label(&self) -> Option<String> {
        self.percent_of_ceiling.map(share_label)
    }

    /// E.g. "upload 31.0 GB/s, 96% of this machine's host→GPU ceiling (32.3 GB/s)"; a ceiling
    /// timed on another clock than the phase names its clock: "(18.7 GB/s on the cpu-clock)".
    #[must_use]
    pub fn sentence(&self) -> String {
        let part = match self.part {
            PhasePart::Whole => "",
            PhasePart::HostCopy => " host copy",
            PhasePart::GpuCopy => " GPU copy",
        };
        let rate = format!("{}{part} {}", self.phase, gb(self.gb_per_s));
        let (Some(c), Some(max), Some(pct)) = (self.ceiling, self.ceiling_gb_per_s, self.percent_of_ceiling)
        else {
            return format!("{rate} (no ceiling measured)");
        };
        // A ceiling timed on another clock than the phase says so (the probe times on the CPU
        // clock where the adapter's timestamps disagree with it, as lavapipe's do).
        let clock = match self.ceiling_source {
            Some(clock) if clock != self.source => format!(" on the {}", clock.label()),
            _ => String::new(),
        };
        let ceiling = format!("this machine's {} ceiling ({}{clock})", c.name(), gb(max));
        if self.proves_ceiling_low() && c.is_one_step() {
            format!("{rate}, above {ceiling}: that ceiling was measured low (raised now); measure again")
        } else if self.beats_ceiling() && c.is_one_step() {
            format!(
                "{rate}, above {ceiling}: {} moved, less than its probe's {}, can stay in a cache",
                crate::system::human_bytes(self.bytes),
                crate::system::human_bytes(self.ceiling_bytes.unwrap_or_default())
            )
        } else if self.beats_ceiling() && c == Ceiling::MemoryStream {
            format!("{rate}, above {ceiling}: the baseline was measured low")
        } else if self.beats_ceiling() {
            format!(
                "{rate}, above {ceiling}, which counts its two steps one after the other: one of its steps beat its own"
            )
        } else if pct > 100.0 {
            format!("{rate}, at {ceiling}: {pct:.0}% of it, within the noise of measuring it")
        } else {
            format!("{rate}, {} of {ceiling}", share_label(pct))
        }
    }
}

/// Raises each one-step ceiling of `gpu` that one of `rates` beat to that rate (the best the
/// machine did is its ceiling); returns the ceilings raised.
pub fn raise_beaten(gpu: &mut GpuCeilings, rates: &[PhaseRate]) -> Vec<Ceiling> {
    let mut raised = Vec::new();
    for r in rates.iter().filter(|r| r.proves_ceiling_low()) {
        let Some(c) = r.ceiling.filter(|c| c.is_one_step()) else { continue };
        let step = match c {
            Ceiling::HostToStaging => &mut gpu.host_to_staging,
            Ceiling::StagingToDevice => &mut gpu.staging_to_device,
            Ceiling::DeviceCopy => &mut gpu.device_copy,
            Ceiling::DeviceToReadback => &mut gpu.device_to_readback,
            _ => &mut gpu.readback_to_host,
        };
        if r.gb_per_s > step.gb_per_s() {
            step.best_ns = ((step.bytes as f64 / r.gb_per_s).floor() as u64).max(1);
            step.median_ns = step.median_ns.max(step.best_ns);
            raised.push(c);
        }
    }
    raised
}

/// Phase X of this run = N GB/s = P% of ceiling Y, for every phase that moves pixels (upload,
/// kernel, download; the upload and download also split into their host and GPU copies where
/// the report's spans time them). Setup, display, decode and encode have no byte ceiling.
#[must_use]
pub fn phase_rates(report: &RunReport, ceilings: &Ceilings) -> Vec<PhaseRate> {
    let Some(kernel) = report.kernel else { return Vec::new() };
    let (in_bytes, out_bytes) = bytes_of(kernel, report.pixels());
    let rate = |phase, part, bytes, (ns, source): (u64, Clock), ceiling: Ceiling| {
        let rate = PhaseRate {
            phase,
            part,
            bytes,
            ns,
            source,
            gb_per_s: 0.0,
            ceiling: Some(ceiling),
            ceiling_gb_per_s: None,
            ceiling_source: None,
            percent_of_ceiling: None,
            ceiling_bytes: ceilings.probe_bytes(ceiling),
        };
        rate.at(ns, ceilings.rate(ceiling))
    };
    // A copy's part: its host copies on the CPU's threads, or its GPU copies.
    let part = |phase, host: bool| {
        time_of(&report.spans, |s| s.phase == Some(phase) && matches!(s.lane, Track::HostCopy { .. }) == host)
    };
    let mut rates = Vec::new();
    for p in &report.phases {
        let whole = (p.ns, p.source);
        let (bytes, ceiling, parts) = match p.phase {
            Phase::Upload => (
                in_bytes,
                Ceiling::HostToGpu,
                [
                    (PhasePart::HostCopy, Ceiling::HostToStaging),
                    (PhasePart::GpuCopy, Ceiling::StagingToDevice),
                ],
            ),
            Phase::Download => (
                out_bytes,
                Ceiling::GpuToHost,
                [
                    (PhasePart::GpuCopy, Ceiling::DeviceToReadback),
                    (PhasePart::HostCopy, Ceiling::ReadbackToHost),
                ],
            ),
            Phase::Kernel => {
                let ceiling = match report.backend {
                    Backend::Gpu => Ceiling::DeviceCopy,
                    Backend::Cpu => Ceiling::MemoryStream,
                };
                rates.push(rate(p.phase, PhasePart::Whole, in_bytes + out_bytes, whole, ceiling));
                continue;
            }
            Phase::Decode | Phase::Setup | Phase::Op | Phase::Display | Phase::Encode => continue,
        };
        rates.push(rate(p.phase, PhasePart::Whole, bytes, whole, ceiling));
        let timed =
            parts.map(|(part_of, c)| Some((part_of, part(p.phase, part_of == PhasePart::HostCopy)?, c)));
        if let [Some(a), Some(b)] = timed {
            for (part_of, time, c) in [a, b] {
                rates.push(rate(p.phase, part_of, bytes, time, c));
            }
        }
    }
    rates
}

/// Input and output bytes of `pixels` pixels through `kernel`.
pub(crate) fn bytes_of(kernel: Kernel, pixels: u64) -> (u64, u64) {
    (pixels * kernel.in_bytes_per_pixel() as u64, pixels * kernel.out_bytes_per_pixel() as u64)
}

#[cfg(test)]
fn bw(bytes: u64, ns: u64, clock: Clock) -> Bandwidth {
    Bandwidth { bytes, best_ns: ns, median_ns: ns, clock }
}

/// Fixed ceilings for tests: 32 GB/s host→staging, 128 staging→device, 3200 device copy, 64 each
/// way back, 20 µs submit latency.
#[cfg(test)]
pub(crate) fn example_ceilings() -> GpuCeilings {
    let (cpu, gpu) = (Clock::CpuClock, Clock::GpuTimestamp);
    GpuCeilings {
        adapter_key: "Test GPU | 1.0 | vulkan".into(),
        adapter: "Test GPU".into(),
        software_adapter: false,
        host_threads: 16,
        host_to_staging: bw(32_000, 1_000, cpu),
        staging_to_device: bw(128_000, 1_000, gpu),
        device_copy: bw(3_200_000, 1_000, gpu),
        device_copy_by_kernel: true,
        device_to_readback: bw(64_000, 1_000, gpu),
        readback_to_host: bw(64_000, 1_000, cpu),
        host_memcpy: bw(90_000, 1_000, cpu),
        submit_latency_ns: 20_000,
        probe_ns: 500_000_000,
        compute: None,
        copy_latency_ns: None,
        op_rates: None,
        plain_kernel: None,
    }
}

#[cfg(test)]
#[path = "rates_tests.rs"]
mod tests;
