//! The probed GPU ceilings, kept per adapter (name, driver and backend) and host thread count
//! in graylab's cache folder ([`cache_dir`]) as JSON, written atomically: `bench`, `sweep` and the
//! app reuse them, `graylab info --probe` measures them again. What is read is checked: a regular
//! file, of bounded size, with figures a measurement can give (an absurd compute ceiling, or one
//! absent from older files, is measured alone). Ceilings measured on a busy machine are marked
//! (`busy`) and measured again when next needed on a machine that is not busy. A run that beats a
//! ceiling raises it in the file as the file is then, never in a copy read earlier: what another
//! process measured meanwhile (`info --probe`) is kept.

use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{Engine, EngineError};
use crate::gpu::{Bandwidth, GpuCeilings, GpuCompute, GpuConverter, GpuError};
use crate::io::{IoError, WriteCause};

/// Version of the cache file's layout and meaning; a file of another version is measured again.
/// 2: a ceiling is raised only by a run that moved as many bytes as its probe (files of 1 may
/// hold copy ceilings raised by small runs' in-cache copies, 3x what the machine streams).
/// 3: the plain kernel's own rate (`plain_kernel`), which first estimates price a kernel at.
const FORMAT: u32 = 3;

#[derive(serde::Serialize, serde::Deserialize)]
struct CacheFile {
    format: u32,
    graylab_version: String,
    measured_unix_s: u64,
    ceilings: GpuCeilings,
    /// Whether the machine was busy while they were measured (absent in older files: not known
    /// to be).
    #[serde(default)]
    busy: bool,
}

/// Where a measured ceiling came from: this process or the cache, when, and whether the machine
/// was busy then. The GPU ceilings, the CPU compute ceiling, and the sweeps and claims that rest
/// on them carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Origin {
    /// Whether this process measured it (else it was read from the cache).
    pub measured_now: bool,
    /// When it was measured, seconds since 1970.
    pub measured_unix_s: u64,
    /// Whether the machine was busy while it was measured: then it is measured again the next
    /// time it is needed on a machine that is not.
    pub busy: bool,
}

impl Origin {
    /// How long ago it was measured, in words ("40 s ago", "3 min ago", "2 days ago").
    #[must_use]
    pub fn measured_ago(&self) -> String {
        ago_text(self.measured_unix_s)
    }
}

/// Where the ceilings a sweep's or the claims' figures were held against came from (what their
/// text ends with), kept in their JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HeldAgainst {
    /// The GPU ceilings' (none without a GPU, or where they could not be measured).
    pub gpu: Option<Origin>,
    /// The CPU compute ceiling's.
    pub cpu_compute: Option<Origin>,
}

/// GPU ceilings and where they came from.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KnownCeilings {
    /// The figures.
    pub ceilings: GpuCeilings,
    /// Where they came from.
    #[serde(flatten)]
    pub origin: Origin,
    /// The cache file they were read from or written to.
    pub cache_path: Option<PathBuf>,
    /// Why they could not be cached, when they could not.
    pub cache_error: Option<String>,
}

/// How long ago `unix_s` was, in words ("40 s ago", "3 min ago", "2 days ago").
pub(crate) fn ago_text(unix_s: u64) -> String {
    match crate::system::clock::unix_now_s().saturating_sub(unix_s) {
        s @ 0..120 => format!("{s} s ago"),
        s @ 120..7200 => format!("{} min ago", s / 60),
        s @ 7200..172_800 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86400),
    }
}

/// The folder of graylab's caches: `$XDG_CACHE_HOME/graylab` (an absolute path), else
/// `$HOME/.cache/graylab`; `None` when neither is set.
#[must_use]
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
    var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache"))).map(|d| d.join("graylab"))
}

/// The cache file of an adapter key at a host thread count: readable, and unique through a
/// checksum of the whole key (a run on fewer threads, `taskset -c 0`, keeps its own file
/// rather than replace the others').
fn cache_file(adapter_key: &str, threads: usize) -> Option<PathBuf> {
    let words =
        adapter_key.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).filter(|w| !w.is_empty());
    let name: String = words.collect::<Vec<_>>().join("-").to_ascii_lowercase().chars().take(80).collect();
    let sum = crc32fast::hash(format!("{adapter_key} | {threads} threads").as_bytes());
    Some(cache_dir()?.join(format!("ceilings-{name}-{threads}t-{sum:08x}.json")))
}

/// The most bytes a cache file is read for (one is a few KiB); a larger one is not a cache.
const MAX_CACHE_BYTES: u64 = 1 << 20;

/// Rates outside these bounds, in GB/s, are no measurement but a damaged or edited file.
const PLAUSIBLE_GB_PER_S: std::ops::RangeInclusive<f64> = 1e-4..=100_000.0;

/// Why a bandwidth read from the cache cannot be a measurement, if it cannot.
fn implausible(name: &str, b: &Bandwidth) -> Option<String> {
    if b.bytes == 0 || b.best_ns == 0 || b.median_ns < b.best_ns {
        return Some(format!("{name}: {} bytes, best {} ns, median {} ns", b.bytes, b.best_ns, b.median_ns));
    }
    let rate = b.gb_per_s();
    (!PLAUSIBLE_GB_PER_S.contains(&rate)).then(|| format!("{name}: {rate} GB/s"))
}

/// Rates outside these bounds, in integer operations per second, are no measurement but a
/// damaged or edited file (a 2-core laptop does about 1e10, the largest GPUs about 1e14).
pub const PLAUSIBLE_OPS_PER_S: std::ops::RangeInclusive<f64> = 1e6..=1e17;

/// Why a GPU figure read from the cache cannot be a measurement, if it cannot.
pub(crate) fn implausible_gpu(c: &GpuCompute) -> Option<String> {
    if c.ops == 0 || c.best_ns == 0 || c.median_ns < c.best_ns || c.rounds == 0 || c.invocations == 0 {
        return Some(format!("gpu compute: {c:?}"));
    }
    (!PLAUSIBLE_OPS_PER_S.contains(&c.ops_per_s())).then(|| format!("gpu compute: {} ops/s", c.ops_per_s()))
}

/// Why these ceilings cannot have been measured (zero bytes or times, absurd rates), if so.
fn implausible_ceilings(c: &GpuCeilings) -> Option<String> {
    let steps = [
        ("host_to_staging", &c.host_to_staging),
        ("staging_to_device", &c.staging_to_device),
        ("device_copy", &c.device_copy),
        ("device_to_readback", &c.device_to_readback),
        ("readback_to_host", &c.readback_to_host),
        ("host_memcpy", &c.host_memcpy),
    ];
    let steps = steps.into_iter().chain(c.plain_kernel.as_ref().map(|k| ("plain_kernel", k)));
    steps.into_iter().find_map(|(name, b)| implausible(name, b)).or_else(|| {
        (c.submit_latency_ns == 0 || c.submit_latency_ns > 60_000_000_000)
            .then(|| format!("submit_latency_ns: {}", c.submit_latency_ns))
    })
}

/// The cached ceilings of the adapter `adapter_key` for this process's host thread count (read
/// by `load_json`); a file with implausible figures counts as absent.
#[must_use]
pub fn cached_ceilings(adapter_key: &str) -> Option<KnownCeilings> {
    let threads = rayon::current_num_threads();
    let path = cache_file(adapter_key, threads)?;
    let file = read_cache_file(&path, adapter_key, threads)?;
    Some(KnownCeilings {
        ceilings: file.ceilings,
        origin: Origin { measured_now: false, measured_unix_s: file.measured_unix_s, busy: file.busy },
        cache_path: Some(path),
        cache_error: None,
    })
}

/// The cache file at `path` if it holds ceilings of `adapter_key` at `threads` host threads, of
/// this layout, that a measurement can give (an implausible compute ceiling dropped).
fn read_cache_file(path: &Path, adapter_key: &str, threads: usize) -> Option<CacheFile> {
    let mut file: CacheFile = load_json(path, "the ceilings cache")?;
    // Another layout, adapter or thread count is not this machine's: not judged, not used.
    if !(file.format == FORMAT
        && file.ceilings.adapter_key == adapter_key
        && file.ceilings.host_threads == threads)
    {
        return None;
    }
    if let Some(why) = file.ceilings.compute.as_ref().and_then(implausible_gpu) {
        log::debug!(
            "the ceilings cache holds an implausible compute ceiling ({why}), ignored: {}",
            path.display()
        );
        file.ceilings.compute = None;
    }
    if let Some(why) = implausible_ceilings(&file.ceilings) {
        log::debug!(
            "the ceilings cache holds implausible figures ({why}), measuring again: {}",
            path.display()
        );
        return None;
    }
    Some(file)
}

/// Reads the cache file `path` (`what`, in the log): only a regular file (a FIFO or a device
/// linked there is not), at most 1 MiB of it; `None` where there is none or it is not readable.
pub(crate) fn load_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Option<T> {
    crate::io::read_json(path, MAX_CACHE_BYTES)
        .map_err(|e| log::debug!("{what} cannot be used: {e}"))
        .ok()
        .flatten()
}

/// Runs `update` (a read, change and write of the cache file `path`, or a write of it) while
/// holding an exclusive lock on a file of its own in `locks/` beside it (made if missing; out of
/// the way of whatever lists the cache files), so that two processes'
/// updates of one file never interleave and lose each other's write (a bench's raise and an
/// `info --probe` at once). Where no lock can be had (a read-only folder, a filesystem without
/// locks) it runs unlocked, as before. Not nested: a process holding the lock must not ask again.
pub(crate) fn under_file_lock<T>(path: &Path, update: impl FnOnce() -> T) -> T {
    let locks = path.parent().unwrap_or_else(|| Path::new(".")).join("locks");
    let _ = std::fs::create_dir_all(&locks);
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(locks.join(name));
    // Released when dropped, after `update`.
    let _held = lock.ok().filter(|f| f.lock().is_ok());
    update()
}

/// Writes `value` to the cache file `path` (none without a cache folder), its folder made
/// first; the file's path.
pub(crate) fn store_json(
    path: Option<PathBuf>,
    value: &impl serde::Serialize,
) -> Result<PathBuf, EngineError> {
    let path = path.ok_or(EngineError::NoCacheFolder)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| IoError::Write { path: dir.to_path_buf(), cause: WriteCause::Os(e) })?;
    }
    crate::io::write_json(&path, true, value)?;
    Ok(path)
}

impl CacheFile {
    /// The file of `ceilings` measured at `measured_unix_s`, on a busy machine or not.
    fn of(ceilings: &GpuCeilings, measured_unix_s: u64, busy: bool) -> Self {
        Self {
            format: FORMAT,
            graylab_version: crate::system::host::VERSION.to_owned(),
            measured_unix_s,
            ceilings: ceilings.clone(),
            busy,
        }
    }
}

/// Writes `ceilings` to the cache; the file's path.
fn store(ceilings: &GpuCeilings, measured_unix_s: u64, busy: bool) -> Result<PathBuf, EngineError> {
    let file = CacheFile::of(ceilings, measured_unix_s, busy);
    let path = cache_file(&ceilings.adapter_key, ceilings.host_threads).ok_or(EngineError::NoCacheFolder)?;
    under_file_lock(&path.clone(), || store_json(Some(path), &file))
}

/// Makes `change` (a raise a run proved, a compute ceiling measured alone) in the cache file at
/// `path` as it is now: another process may have measured the ceilings again since `held` was
/// read (`info --probe` while a long bench ran), and its figures, time and busy mark are kept,
/// each changed only as `change` changes it. Where the file holds no usable ceilings of this
/// adapter, `held` (changed already) is written. Nothing is written when the change changes nothing.
fn change_in_file(
    path: Option<PathBuf>,
    held: &KnownCeilings,
    change: impl Fn(&mut GpuCeilings),
) -> Result<(), EngineError> {
    let path = path.ok_or(EngineError::NoCacheFolder)?;
    let (key, threads) = (&held.ceilings.adapter_key, held.ceilings.host_threads);
    under_file_lock(&path.clone(), || {
        let file = match read_cache_file(&path, key, threads) {
            Some(mut now) => {
                let before = now.ceilings.clone();
                change(&mut now.ceilings);
                if now.ceilings == before {
                    return Ok(());
                }
                now
            }
            None => CacheFile::of(&held.ceilings, held.origin.measured_unix_s, held.origin.busy),
        };
        store_json(Some(path), &file).map(drop)
    })
}

impl Engine {
    /// This GPU's ceilings: the ones this engine has, else the cached ones for this adapter and
    /// host thread count, else measured now (a few seconds; about
    /// [`crate::gpu::PROBE_HOLD_BYTES`] held meanwhile) and cached. `remeasure` always measures
    /// (`graylab info --probe`); so do cached ceilings measured on a busy machine when this one
    /// is not busy now (judged over a short watch of the load). Set, `cancel` stops a
    /// measurement between its steps ([`EngineError::Cancelled`]; nothing is kept).
    pub fn gpu_ceilings(
        &self,
        remeasure: bool,
        cancel: Option<&AtomicBool>,
    ) -> Result<KnownCeilings, EngineError> {
        let converter = self.gpu_converter()?;
        let key = converter.context().report().ceilings_key();
        let mut known = self.ceilings.lock().unwrap_or_else(PoisonError::into_inner);
        if !remeasure && let Some(k) = self.known_or_cached(&mut known, &key) {
            return Ok(k);
        }
        self.measure_gpu_ceilings(&mut known, converter, |c| c.measure_ceilings(cancel))
    }

    /// This GPU's ceilings measured now and cached (as [`Self::gpu_ceilings`] with `remeasure`),
    /// and every transfer path up to `largest_bytes` (as [`Self::transfer_paths`] sizes it), from
    /// one reading (`graylab info --probe`): the probe's paths are timed once for both. Where the
    /// memory budget has no room for the paths at the probe's size, one after the other.
    pub fn gpu_ceilings_and_paths(
        &self,
        largest_bytes: u64,
    ) -> Result<(KnownCeilings, Vec<crate::gpu::TransferPath>), EngineError> {
        let (largest, memory) = super::paths::room_for_paths(largest_bytes)?;
        if largest < crate::gpu::PROBE_BYTES {
            drop(memory);
            let known = {
                let _memory =
                    crate::system::memory_budget::budget().try_reserve(crate::gpu::PROBE_HOLD_BYTES)?;
                self.gpu_ceilings(true, None)?
            };
            return Ok((known, self.transfer_paths(largest_bytes, None)?));
        }
        let converter = self.gpu_converter()?;
        let mut known = self.ceilings.lock().unwrap_or_else(PoisonError::into_inner);
        let mut paths = None;
        // A second reading (a busy machine) times the probe's paths alone.
        let measured = self.measure_gpu_ceilings(&mut known, converter, |c| {
            if paths.is_some() {
                return c.measure_ceilings(None);
            }
            let (ceilings, measured) = c.measure_ceilings_and_paths(largest)?;
            paths = Some(measured);
            Ok(ceilings)
        })?;
        Ok((measured, paths.unwrap_or_default()))
    }

    /// Measures this GPU's ceilings with `measure` (twice where they spread as on a busy
    /// machine), keeps them in `known`, caches them and starts the submission budget from them.
    fn measure_gpu_ceilings(
        &self,
        known: &mut Option<KnownCeilings>,
        converter: &GpuConverter,
        mut measure: impl FnMut(&GpuConverter) -> Result<GpuCeilings, GpuError>,
    ) -> Result<KnownCeilings, EngineError> {
        let before = crate::system::load::CpuSnapshot::now();
        let ceilings = crate::system::one_time::timed(|| {
            let ceilings = measure(converter)?;
            // A busy machine shows in the probe's own spread: then it measures once more, and
            // each step keeps its best run of the two.
            if spread(&ceilings) <= BUSY_SPREAD {
                return Ok::<_, GpuError>(ceilings);
            }
            log::info!("the GPU ceilings spread {:.1}x between runs: measuring again", spread(&ceilings));
            let again = measure(converter)?;
            Ok(best_of(ceilings, &again))
        })?;
        let busy = crate::system::load::was_busy_since(before).unwrap_or(false);
        if busy {
            log::info!(
                "the GPU ceilings were measured on a busy machine: they are measured again once it is not"
            );
        }
        let measured_unix_s = crate::system::clock::unix_now_s();
        let (cache_path, cache_error) =
            match self.ceiling_cache.then(|| store(&ceilings, measured_unix_s, busy)) {
                Some(Ok(path)) => (Some(path), None),
                Some(Err(e)) => {
                    log::warn!("the GPU ceilings could not be cached: {e}");
                    (None, Some(e.to_string()))
                }
                None => (None, None),
            };
        converter.start_budget_from(&ceilings);
        let origin = Origin { measured_now: true, measured_unix_s, busy };
        let k = KnownCeilings { ceilings, origin, cache_path, cache_error };
        *known = Some(k.clone());
        Ok(k)
    }

    /// This GPU's ceilings if known or cached (kept from then on); measures nothing (cached ones
    /// measured on a busy machine count as absent once it is quiet). Opens the GPU if needed;
    /// `None` without one.
    pub fn cached_gpu_ceilings(&self) -> Option<KnownCeilings> {
        let key = self.gpu().ok()?.report().ceilings_key();
        let mut known = self.ceilings.lock().unwrap_or_else(PoisonError::into_inner);
        self.known_or_cached(&mut known, &key)
    }

    /// The ceilings of `key` in `known`, else the usable cached ones (then kept in `known`, and
    /// the GPU's submissions sized from them).
    fn known_or_cached(&self, known: &mut Option<KnownCeilings>, key: &str) -> Option<KnownCeilings> {
        if let Some(k) = known.as_ref().filter(|k| k.ceilings.adapter_key == key) {
            return Some(k.clone());
        }
        let k = self.ceiling_cache.then(|| usable_cached(key, &self.busy_refused.gpu)).flatten()?;
        self.start_gpu_budget_from(&k.ceilings);
        *known = Some(k.clone());
        Some(k)
    }

    /// Sizes the GPU's first submissions from the ceilings known or cached for it, once per
    /// engine, before its first run: a process's first heavy run on a fast GPU is then cut into
    /// a few submissions, not a thousand one-row slivers. Measures nothing.
    pub(crate) fn start_gpu_budget(&self) {
        self.gpu_budget_started.call_once(|| {
            if let Some(k) = self.cached_gpu_ceilings() {
                self.start_gpu_budget_from(&k.ceilings);
            }
        });
    }

    /// Hands `ceilings` to the GPU converter, whose submissions they size until runs measured.
    fn start_gpu_budget_from(&self, ceilings: &GpuCeilings) {
        if let Some(Ok(converter)) = self.gpu.get() {
            converter.start_budget_from(ceilings);
        }
    }

    /// Changes the known ceilings of `adapter_key` (if they are known) with `change` (ceilings a
    /// run beat raised, a compute ceiling measured alone added), in this engine and in the cache
    /// file as it is now (re-read under the file's lock: see [`change_in_file`]); `what` names
    /// the change in a warning when it cannot be cached.
    pub(super) fn change_known(&self, adapter_key: &str, what: &str, change: impl Fn(&mut GpuCeilings)) {
        let mut known = self.ceilings.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(k) = known.as_mut().filter(|k| k.ceilings.adapter_key == adapter_key) else { return };
        change(&mut k.ceilings);
        self.start_gpu_budget_from(&k.ceilings);
        if !self.ceiling_cache {
            return;
        }
        let path = cache_file(adapter_key, k.ceilings.host_threads);
        // The file is changed from what it holds, not replaced by `k`: `k` was read earlier.
        if let Err(e) = change_in_file(path, k, change) {
            log::warn!("{what} could not be cached: {e}");
        }
    }

    /// The GPU ceilings this engine has measured or read, without measuring or reading anything.
    #[must_use]
    pub fn known_gpu_ceilings(&self) -> Option<KnownCeilings> {
        self.ceilings.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Where the ceilings this engine holds came from, for a result's JSON.
    #[must_use]
    pub fn held_against(&self) -> HeldAgainst {
        HeldAgainst {
            gpu: self.known_gpu_ceilings().map(|k| k.origin),
            cpu_compute: self.held_known_cpu_compute().map(|k| k.origin),
        }
    }
}

/// How long the machine's load is watched before ceilings measured on a busy machine are
/// measured again (or kept, when it is still busy).
pub const QUIET_WINDOW: std::time::Duration = std::time::Duration::from_millis(200);

/// The cached ceilings of `adapter_key` unless they were measured on a busy machine and this
/// one is quiet now (then they are to be measured again; see [`reuse_once`] for `refused`).
fn usable_cached(adapter_key: &str, refused: &AtomicBool) -> Option<KnownCeilings> {
    let k = cached_ceilings(adapter_key)?;
    reuse_once(refused, k.origin.busy, "GPU ceilings were").then_some(k)
}

/// Whether ceilings measured with `measured_busy` may be used as they are: always when they
/// were measured on a quiet machine; else only while the machine is busy now, or its load is not
/// known (`busy_now`, asked only then). When not, says so of the cached `what`.
pub(crate) fn reuse(measured_busy: bool, what: &str, busy_now: impl FnOnce() -> Option<bool>) -> bool {
    let reused = !measured_busy || busy_now() != Some(false);
    if !reused {
        log::info!(
            "the cached {what} measured on a busy machine and this one is quiet now: measured again when needed"
        );
    }
    reused
}

/// [`reuse`] with the load watched over [`QUIET_WINDOW`] (one-time work), at most once per
/// engine: once busy ones were refused (`refused` set), busy ones are refused at once. Without
/// it every run held against a ceiling this engine has not measured since watched the load
/// again, 200 ms each.
pub(crate) fn reuse_once(refused: &AtomicBool, measured_busy: bool, what: &str) -> bool {
    if measured_busy && refused.load(Ordering::Relaxed) {
        return false;
    }
    let busy_now = || crate::system::one_time::timed(|| crate::system::load::is_busy_now(QUIET_WINDOW));
    let kept = reuse(measured_busy, what, busy_now);
    refused.store(!kept, Ordering::Relaxed);
    kept
}

/// The caches an engine refused as measured on a busy machine while this one was quiet
/// ([`reuse_once`]), and where the CPU compute ceiling it holds came from (its GPU ceilings say
/// it in [`KnownCeilings`]).
#[derive(Default)]
pub(crate) struct BusyRefused {
    /// The GPU's ceilings.
    pub gpu: AtomicBool,
    /// The CPU's compute ceiling.
    pub cpu: AtomicBool,
    /// Where the CPU compute ceiling held came from (locked after the figure's own lock).
    pub cpu_origin: std::sync::Mutex<Option<Origin>>,
}

/// A probe whose slowest step's median is this many times its best run was measured on a busy
/// machine.
const BUSY_SPREAD: f64 = 1.5;

/// The largest median-to-best ratio of the probe's steps.
fn spread(c: &GpuCeilings) -> f64 {
    [&c.host_to_staging, &c.staging_to_device, &c.device_copy, &c.device_to_readback, &c.readback_to_host]
        .iter()
        .map(|b| b.median_ns as f64 / b.best_ns.max(1) as f64)
        .fold(1.0, f64::max)
}

/// Each step's better measurement of two probes.
fn best_of(mut a: GpuCeilings, b: &GpuCeilings) -> GpuCeilings {
    let pick = |x: &mut Bandwidth, y: &Bandwidth| {
        if y.best_ns < x.best_ns {
            *x = *y;
        }
    };
    pick(&mut a.host_to_staging, &b.host_to_staging);
    pick(&mut a.staging_to_device, &b.staging_to_device);
    pick(&mut a.device_copy, &b.device_copy);
    pick(&mut a.device_to_readback, &b.device_to_readback);
    pick(&mut a.readback_to_host, &b.readback_to_host);
    pick(&mut a.host_memcpy, &b.host_memcpy);
    a.submit_latency_ns = a.submit_latency_ns.min(b.submit_latency_ns);
    a.copy_latency_ns = a.copy_latency_ns.or(b.copy_latency_ns);
    a.op_rates = a.op_rates.or(b.op_rates);
    if let Some(y) = b.compute
        && a.compute.is_none_or(|x| y.ops_per_s() > x.ops_per_s())
    {
        a.compute = Some(y);
    }
    a.probe_ns += b.probe_ns;
    a
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
