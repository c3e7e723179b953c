//! The compute ceilings of the synthetic work ([`ComputeCeilings`]). The CPU's
//! ([`crate::cpu::compute_ceiling`], a fraction of a second) is measured once per engine and kept
//! in `compute-cpu-….json` in the cache folder, keyed by the CPU's model and thread count; the
//! GPU's is cached with the GPU ceilings ([`super::cache`]). An absurd figure read counts as
//! absent. Every run's report is held against the ceilings already known, measuring nothing.
//! Each figure says where it came from ([`KnownCpuCompute`]: measured now or cached, when, on a
//! busy machine or not); a run that beats the CPU's raises it in the file as the file is then.

use std::path::PathBuf;
use std::sync::PoisonError;

use crate::cpu::{CpuCompute, available_threads, compute_ceiling};
use crate::engine::ceilings::cache::{Origin, PLAUSIBLE_OPS_PER_S, reuse_once};
use crate::engine::ceilings::cache_dir;
use crate::engine::report::RunReport;
use crate::engine::{Backend, Engine, EngineError};
use crate::gpu::GpuCompute;
use crate::system::clock::Clock;

/// Version of the CPU cache file's layout; a file of another version is measured again.
const FORMAT: u32 = 1;

/// This machine's compute ceilings: the synthetic work's integer operations per second on the
/// CPU (all threads, the same SIMD code as the kernel, data in cache) and on the GPU (a kernel
/// that only does the rounds, in registers), each with its clock.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ComputeCeilings {
    /// CPU, all threads: integer operations per second (3 per round).
    pub cpu_ops_per_s: f64,
    /// Threads the CPU figure used.
    pub cpu_threads: usize,
    /// GPU: integer operations per second; `None` without a GPU.
    pub gpu_ops_per_s: Option<f64>,
    /// The clock that timed the GPU figure (timestamps where the adapter has them).
    pub gpu_clock: Option<Clock>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct CpuCacheFile {
    format: u32,
    graylab_version: String,
    cpu_key: String,
    measured_unix_s: u64,
    compute: CpuCompute,
    /// Whether the machine was busy while it was measured (absent in older files: not known to be).
    #[serde(default)]
    busy: bool,
}

impl CpuCacheFile {
    /// The file of `known`, for the CPU `cpu_key`.
    fn of(cpu_key: &str, known: &KnownCpuCompute) -> Self {
        Self {
            format: FORMAT,
            graylab_version: crate::system::host::VERSION.to_owned(),
            cpu_key: cpu_key.to_owned(),
            measured_unix_s: known.origin.measured_unix_s,
            compute: known.compute,
            busy: known.origin.busy,
        }
    }
}

/// The CPU's compute ceiling and where it came from, as [`super::KnownCeilings`] says it of the
/// GPU's.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct KnownCpuCompute {
    /// The figure (raised by a run that beat it, if one did).
    pub compute: CpuCompute,
    /// Where it came from (a raise apart).
    #[serde(flatten)]
    pub origin: Origin,
}

/// This CPU, as the cache knows it: the model name the kernel reports and the thread count.
fn cpu_key() -> String {
    format!("{} | {} threads", crate::system::host::cpu_model(), available_threads())
}

/// The CPU cache file of `key`.
fn cpu_cache_file(key: &str) -> Option<PathBuf> {
    Some(cache_dir()?.join(format!("compute-cpu-{:08x}.json", crc32fast::hash(key.as_bytes()))))
}

/// Why a CPU figure read from the cache cannot be a measurement, if it cannot.
pub(crate) fn implausible_cpu(c: &CpuCompute) -> Option<String> {
    if c.ops == 0 || c.best_ns == 0 || c.median_ns < c.best_ns || c.threads == 0 {
        return Some(format!("cpu compute: {c:?}"));
    }
    (!PLAUSIBLE_OPS_PER_S.contains(&c.ops_per_s())).then(|| format!("cpu compute: {} ops/s", c.ops_per_s()))
}

/// The CPU compute ceiling saved for this CPU at this thread count, if one was measured and is
/// plausible, with when and whether the machine was busy then (a run measures it again when it
/// needs it on a quiet machine): what `graylab info` shows, as it shows the GPU's.
#[must_use]
pub fn saved_cpu_compute() -> Option<KnownCpuCompute> {
    cached_cpu_file()
}

/// The cached CPU compute ceiling of this CPU at this thread count, if plausible.
fn cached_cpu_file() -> Option<KnownCpuCompute> {
    let key = cpu_key();
    let file = read_cpu_file(&cpu_cache_file(&key)?, &key, available_threads())?;
    Some(KnownCpuCompute {
        compute: file.compute,
        origin: Origin { measured_now: false, measured_unix_s: file.measured_unix_s, busy: file.busy },
    })
}

/// The CPU cache file at `path` if it holds a plausible ceiling of the CPU `key` on `threads`.
fn read_cpu_file(path: &std::path::Path, key: &str, threads: usize) -> Option<CpuCacheFile> {
    let file: CpuCacheFile = super::cache::load_json(path, "the CPU compute cache")?;
    if !(file.format == FORMAT && file.cpu_key == key && file.compute.threads == threads) {
        return None;
    }
    if let Some(why) = implausible_cpu(&file.compute) {
        log::debug!("the CPU compute cache holds implausible figures ({why}): {}", path.display());
        return None;
    }
    Some(file)
}

/// Writes the CPU compute ceiling `known` to its cache file; the file's path.
fn store_cpu(known: &KnownCpuCompute) -> Result<PathBuf, EngineError> {
    let key = cpu_key();
    let path = cpu_cache_file(&key).ok_or(EngineError::NoCacheFolder)?;
    let file = CpuCacheFile::of(&key, known);
    super::cache::under_file_lock(&path.clone(), || super::cache::store_json(Some(path), &file))
}

/// Raises the CPU compute ceiling in its cache file at `path` (of the CPU `key`) to `ops_per_s`,
/// a run's, as the file is now: another process may have measured it again since `held` was
/// read, and its figure, time and busy mark are kept unless the run beat that figure too (then
/// only the figure is raised). Where the file holds no usable ceiling, `held` (raised already)
/// is written. Nothing is written when the file's figure is not below the run's.
fn raise_in_cpu_file(
    path: Option<PathBuf>,
    key: &str,
    held: &KnownCpuCompute,
    ops_per_s: f64,
) -> Result<(), EngineError> {
    let path = path.ok_or(EngineError::NoCacheFolder)?;
    super::cache::under_file_lock(&path.clone(), || {
        let file = match read_cpu_file(&path, key, held.compute.threads) {
            Some(mut now) => {
                let Some(raised) = raised_to(&now.compute, ops_per_s) else { return Ok(()) };
                now.compute = raised;
                now
            }
            None => CpuCacheFile::of(key, held),
        };
        super::cache::store_json(Some(path), &file).map(drop)
    })
}

/// The ceilings of the two parts, as the sweep, the roofline and the reports use them.
#[must_use]
pub fn compute_ceilings_of(cpu: &CpuCompute, gpu: Option<&GpuCompute>) -> ComputeCeilings {
    ComputeCeilings {
        cpu_ops_per_s: cpu.ops_per_s(),
        cpu_threads: cpu.threads,
        gpu_ops_per_s: gpu.map(GpuCompute::ops_per_s),
        gpu_clock: gpu.map(|g| g.clock),
    }
}

impl Engine {
    /// This CPU's compute ceiling on all threads: the one this engine has, else the cached one,
    /// else measured now (0.1 to 0.3 s) and cached, marked when the machine was busy meanwhile.
    /// `remeasure` always measures (`graylab info --probe`).
    pub fn cpu_compute(&self, remeasure: bool) -> Result<CpuCompute, EngineError> {
        self.known_cpu_compute_from(remeasure).map(|k| k.compute)
    }

    /// [`Self::cpu_compute`] with where it came from: measured now or cached, when, and whether
    /// the machine was busy then (what `info --probe` says of its own measurement).
    pub fn known_cpu_compute_from(&self, remeasure: bool) -> Result<KnownCpuCompute, EngineError> {
        let mut known = self.cpu_compute.lock().unwrap_or_else(PoisonError::into_inner);
        if !remeasure {
            if let Some(k) = self.with_origin(*known) {
                return Ok(k);
            }
            if let Some(k) = self.cached_cpu_compute() {
                self.hold_cpu_compute(&mut known, &k);
                return Ok(k);
            }
        }
        let before = crate::system::load::CpuSnapshot::now();
        let c = crate::system::one_time::timed(|| compute_ceiling(available_threads()))?;
        let busy = crate::system::load::was_busy_since(before).unwrap_or(false);
        Ok(self.measured_cpu_compute(&mut known, c, busy))
    }

    /// Holds `compute`, measured now on a machine `busy` or not, and caches it.
    fn measured_cpu_compute(
        &self,
        known: &mut Option<CpuCompute>,
        compute: CpuCompute,
        busy: bool,
    ) -> KnownCpuCompute {
        let measured_unix_s = crate::system::clock::unix_now_s();
        let k = KnownCpuCompute { compute, origin: Origin { measured_now: true, measured_unix_s, busy } };
        if self.ceiling_cache
            && let Err(e) = store_cpu(&k)
        {
            log::warn!("the CPU compute ceiling could not be cached: {e}");
        }
        self.hold_cpu_compute(known, &k);
        k
    }

    /// Holds `k` in `known` (this engine's CPU compute ceiling), with where it came from.
    fn hold_cpu_compute(&self, known: &mut Option<CpuCompute>, k: &KnownCpuCompute) {
        *known = Some(k.compute);
        *self.busy_refused.cpu_origin.lock().unwrap_or_else(PoisonError::into_inner) = Some(k.origin);
    }

    /// `compute` with where this engine's came from; `None` without either.
    fn with_origin(&self, compute: Option<CpuCompute>) -> Option<KnownCpuCompute> {
        let origin = *self.busy_refused.cpu_origin.lock().unwrap_or_else(PoisonError::into_inner);
        Some(KnownCpuCompute { compute: compute?, origin: origin? })
    }

    /// The GPU's compute ceiling: with the GPU ceilings ([`Engine::gpu_ceilings`]: known,
    /// cached or measured now), measured alone when they were cached before it existed.
    pub fn gpu_compute(&self) -> Result<GpuCompute, EngineError> {
        let known = self.gpu_ceilings(false, None)?;
        if let Some(c) = known.ceilings.compute {
            return Ok(c);
        }
        let converter = self.gpu_converter()?;
        let c = crate::system::one_time::timed(|| converter.measure_compute())?;
        // Added where the file has none still (an `info --probe` meanwhile measured its own).
        let add = |k: &mut crate::gpu::GpuCeilings| {
            if k.compute.is_none() {
                k.compute = Some(c);
            }
        };
        self.change_known(&known.ceilings.adapter_key, "the GPU compute ceiling", add);
        Ok(c)
    }

    /// This machine's compute ceilings (see [`ComputeCeilings`]): each measured once per engine
    /// or read from the cache; the GPU part `None` without a GPU.
    pub fn compute_ceilings(&self) -> Result<ComputeCeilings, EngineError> {
        let cpu = self.cpu_compute(false)?;
        let gpu = match self.gpu_compute() {
            Ok(g) => Some(g),
            Err(e @ EngineError::GpuUnavailable(_)) => {
                log::debug!("no GPU compute ceiling: {}", crate::engine::causes::one_line(&e));
                None
            }
            Err(e) => return Err(e),
        };
        Ok(compute_ceilings_of(&cpu, gpu.as_ref()))
    }

    /// The cached CPU compute ceiling where this engine reads the cache, unless refused (as
    /// [`crate::engine::ceilings::cache::reuse_once`] says).
    fn cached_cpu_compute(&self) -> Option<KnownCpuCompute> {
        let k = self.ceiling_cache.then(cached_cpu_file).flatten()?;
        reuse_once(&self.busy_refused.cpu, k.origin.busy, "CPU compute ceiling was").then_some(k)
    }

    /// The CPU compute ceiling this engine holds now (measured, read or raised by a run); reads
    /// and measures nothing.
    #[must_use]
    pub fn held_cpu_compute(&self) -> Option<CpuCompute> {
        *self.cpu_compute.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`Self::held_cpu_compute`] with where it came from (measured now or cached, when, on a
    /// busy machine or not); reads and measures nothing.
    #[must_use]
    pub fn held_known_cpu_compute(&self) -> Option<KnownCpuCompute> {
        let known = self.cpu_compute.lock().unwrap_or_else(PoisonError::into_inner);
        self.with_origin(*known)
    }

    /// This CPU's compute ceiling if this engine knows it or the cache has it (kept from then
    /// on); measures nothing.
    #[must_use]
    pub fn known_cpu_compute(&self) -> Option<CpuCompute> {
        let mut known = self.cpu_compute.lock().unwrap_or_else(PoisonError::into_inner);
        if known.is_none()
            && let Some(k) = self.cached_cpu_compute()
        {
            self.hold_cpu_compute(&mut known, &k);
        }
        *known
    }

    /// The compute ceiling of `backend` in operations per second if this engine knows it or the
    /// cache has it; measures nothing (the GPU's is only looked for once the GPU is open).
    #[must_use]
    pub fn known_compute_ceiling(&self, backend: Backend) -> Option<f64> {
        match backend {
            Backend::Cpu => self.known_cpu_compute().map(|c| c.ops_per_s()),
            Backend::Gpu => {
                matches!(self.gpu.get(), Some(Ok(_))).then_some(())?;
                self.cached_gpu_ceilings()?.ceilings.compute.map(|c| c.ops_per_s())
            }
        }
    }

    /// Ends a run's report: its wall time `total_ns`, the overlap and other time that reconcile
    /// it with the phases, the work figures, and the kernel's (and the op's) rate held against
    /// its backend's compute ceiling, when known. The one way every run is finished, by the
    /// engine or by a front end that timed more of it (the app's display).
    pub fn finish_report(&self, report: &mut RunReport, total_ns: u64) {
        report.finish(total_ns);
        if report.op.op_ops_per_s.is_some() {
            report.op = report.op.held_against(self.known_compute_ceiling(report.backend));
        }
        let Some(ops_per_s) = report.work.kernel_ops_per_s else { return };
        let before = self.known_compute_ceiling(report.backend);
        let mut ceiling = before;
        if report.backend == Backend::Cpu && ceiling.is_some_and(|c| ops_per_s > c) {
            ceiling = self.raise_beaten_cpu_compute(ops_per_s).or(ceiling);
        }
        report.work = report.work.held_against_raised(report.backend, (before, ceiling));
    }

    /// Raises the known CPU compute ceiling to `ops_per_s` where a run of the work kernel beat
    /// it (the best the machine did is its ceiling: the ceiling's short bursts can miss what
    /// longer runs reach, as on the H200's host, 550 Gop/s against a run's 808), in this engine
    /// and in the cache file as it is now (re-read under this engine's lock:
    /// [`raise_in_cpu_file`]); the raised ceiling, operations per second.
    fn raise_beaten_cpu_compute(&self, ops_per_s: f64) -> Option<f64> {
        let mut known = self.cpu_compute.lock().unwrap_or_else(PoisonError::into_inner);
        let c = known.as_mut()?;
        let raised = raised_to(c, ops_per_s)?;
        log::info!(
            "a run beat the CPU compute ceiling ({:.1} Gop/s): raised to what it did, {:.1} Gop/s",
            c.ops_per_s() / 1e9,
            ops_per_s / 1e9
        );
        *c = raised;
        if self.ceiling_cache
            && let Some(held) = self.with_origin(Some(raised))
        {
            let key = cpu_key();
            if let Err(e) = raise_in_cpu_file(cpu_cache_file(&key), &key, &held, ops_per_s) {
                log::warn!("the raised CPU compute ceiling could not be cached: {e}");
            }
        }
        Some(raised.ops_per_s())
    }
}

/// `c` raised to `ops_per_s`, if that beats it and is a plausible figure.
fn raised_to(c: &CpuCompute, ops_per_s: f64) -> Option<CpuCompute> {
    if !(ops_per_s > c.ops_per_s() && PLAUSIBLE_OPS_PER_S.contains(&ops_per_s)) {
        return None;
    }
    let best_ns = ((c.ops as f64 / ops_per_s * 1e9).floor() as u64).max(1);
    let raised_from_best_ns = c.raised_from_best_ns.or(Some(c.best_ns));
    Some(CpuCompute { best_ns, median_ns: c.median_ns.max(best_ns), raised_from_best_ns, ..*c })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ceilings::cache::implausible_gpu;
    use crate::system::clock::Clock;

    /// A CPU compute ceiling of `ops` in `best_ns` (median `median_ns`) on `threads`.
    fn cpu(threads: usize, ops: u64, best_ns: u64, median_ns: u64) -> CpuCompute {
        let simd = crate::cpu::SimdLevel::Avx2;
        let clock = Clock::CpuClock;
        CpuCompute {
            threads,
            simd,
            ops,
            best_ns,
            median_ns,
            clock,
            op_rates: None,
            raised_from_best_ns: None,
        }
    }

    #[test]
    fn a_run_that_beats_the_cpu_ceiling_raises_it_to_what_it_did() {
        // The H200's host: a ceiling of 550 Gop/s, a run of the work kernel at 808.
        let c = cpu(16, 55_000_000_000, 100_000_000, 101_000_000);
        assert!((c.ops_per_s() - 550e9).abs() < 1.0);
        let raised = raised_to(&c, 808e9).expect("beaten");
        assert!((raised.ops_per_s() / 808e9 - 1.0).abs() < 1e-6, "{raised:?}");
        assert!(raised.median_ns >= raised.best_ns && raised.threads == 16 && raised.ops == c.ops);
        // The probe's own best is kept, through a second raise too, for `info` to say.
        assert_eq!(raised.raised_from_best_ns, Some(100_000_000));
        let again = raised_to(&raised, 900e9).expect("beaten again");
        assert_eq!((again.raised_from_best_ns, again.median_ns), (Some(100_000_000), 101_000_000));
        assert_eq!(raised_to(&c, 500e9), None, "not beaten");
        assert_eq!(raised_to(&c, 1e30), None, "not plausible");
    }

    #[test]
    fn a_raised_cpu_ceiling_is_merged_into_the_file_as_it_is_now() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("compute-cpu.json");
        let key = "Test CPU | 16 threads";
        let read = |path: &std::path::Path| read_cpu_file(path, key, 16).expect("readable");
        // A read a ceiling of 550 Gop/s measured long ago on a quiet machine; its run did 808.
        let probed = cpu(16, 55_000_000_000, 100_000_000, 101_000_000);
        let raised = raised_to(&probed, 808e9).expect("beaten");
        let origin = Origin { measured_now: false, measured_unix_s: 1_000, busy: false };
        let held = KnownCpuCompute { compute: raised, origin };
        // Meanwhile B (`info --probe`) measured 600 Gop/s on a busy machine.
        let b = KnownCpuCompute {
            compute: cpu(16, 60_000_000_000, 100_000_000, 120_000_000),
            origin: Origin { measured_now: true, measured_unix_s: 2_000_000, busy: true },
        };
        super::super::cache::store_json(Some(path.clone()), &CpuCacheFile::of(key, &b)).expect("B's");
        raise_in_cpu_file(Some(path.clone()), key, &held, 808e9).expect("merged");
        let now = read(&path);
        assert_eq!((now.measured_unix_s, now.busy), (2_000_000, true), "B's time and busy mark kept");
        assert!((now.compute.ops_per_s() / 808e9 - 1.0).abs() < 1e-6, "{:?}", now.compute);
        assert_eq!(
            (now.compute.raised_from_best_ns, now.compute.median_ns),
            (Some(100_000_000), 120_000_000)
        );
        // B measured more than the run did (900 Gop/s): the file is left as B wrote it.
        let fast = KnownCpuCompute { compute: cpu(16, 90_000_000_000, 100_000_000, 100_000_000), ..b };
        super::super::cache::store_json(Some(path.clone()), &CpuCacheFile::of(key, &fast)).expect("B's");
        let before = std::fs::read(&path).expect("read");
        raise_in_cpu_file(Some(path.clone()), key, &held, 808e9).expect("nothing to merge");
        assert_eq!(std::fs::read(&path).expect("read"), before, "not rewritten");
        // No usable file: A's figure as raised, with A's own time, not stamped now.
        std::fs::remove_file(&path).expect("remove");
        raise_in_cpu_file(Some(path.clone()), key, &held, 808e9).expect("written");
        let now = read(&path);
        assert_eq!((now.measured_unix_s, now.busy, now.compute), (1_000, false, raised));
    }

    #[test]
    fn a_cpu_ceiling_measured_on_a_busy_machine_says_so_and_keeps_saying_it() {
        let engine = Engine::cpu_only().without_ceiling_cache();
        let c = cpu(2, 1_000_000_000, 100_000_000, 110_000_000);
        let k = {
            let mut known = engine.cpu_compute.lock().expect("not poisoned");
            engine.measured_cpu_compute(&mut known, c, true)
        };
        assert!(k.origin.busy && k.origin.measured_now && k.compute == c, "{k:?}");
        // What `info --probe` reports of its own measurement, and `bench` of the one it used.
        assert_eq!(engine.known_cpu_compute_from(false).expect("held"), k);
        assert_eq!(engine.held_known_cpu_compute(), Some(k));
        // A run that beats it raises the figure; where it came from stays.
        assert!(engine.raise_beaten_cpu_compute(2e10).is_some_and(|r| (r - 2e10).abs() < 1e3));
        let after = engine.held_known_cpu_compute().expect("held");
        assert_eq!(after.origin, k.origin);
        assert!((after.compute.ops_per_s() - 2e10).abs() < 1e3, "{after:?}");
    }

    #[test]
    fn absurd_figures_are_no_measurement() {
        let cpu = cpu(2, 1_000_000_000, 100_000_000, 110_000_000);
        assert_eq!(implausible_cpu(&cpu), None);
        assert!(implausible_cpu(&CpuCompute { best_ns: 1, ..cpu }).is_some(), "1e18 ops/s");
        assert!(implausible_cpu(&CpuCompute { median_ns: 1, ..cpu }).is_some());
        let gpu = GpuCompute {
            rounds: 4096,
            invocations: 1 << 20,
            ops: 3 << 32,
            best_ns: 2_000_000,
            median_ns: 2_100_000,
            clock: Clock::GpuTimestamp,
        };
        assert_eq!(implausible_gpu(&gpu), None);
        assert!(implausible_gpu(&GpuCompute { ops: 1, ..gpu }).is_some(), "500 ops/s");
        assert!(implausible_gpu(&GpuCompute { rounds: 0, ..gpu }).is_some());
        let c = compute_ceilings_of(&cpu, Some(&gpu));
        assert!((c.cpu_ops_per_s - 1e10).abs() < 1.0 && c.cpu_threads == 2, "{c:?}");
        assert_eq!(c.gpu_clock, Some(Clock::GpuTimestamp));
        assert!(compute_ceilings_of(&cpu, None).gpu_ops_per_s.is_none());
    }
}
