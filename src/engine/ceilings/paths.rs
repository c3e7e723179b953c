//! Every transfer path of this GPU as latency plus bandwidth (`graylab info --probe`): the
//! largest size timed is the largest whose buffers take at most a quarter of the memory budget
//! and fit it now, from the size asked for (256 MiB) down in steps of 4, to 4 MiB at least.

use crate::engine::{Engine, EngineError};
use crate::gpu::{HELD_BUFFERS, TransferPath};
use crate::system::clock::Clock;

/// The largest size that is still worth fitting: below it the bandwidth is not reached.
const SMALLEST_LARGEST_BYTES: u64 = 4 << 20;

impl Engine {
    /// Every transfer path ([`crate::gpu::PathKind::ALL`]) timed from 4 KiB up to `largest_bytes`
    /// or less (`room_for_paths`), each fitted with Hockney's model; [`EngineError::Cancelled`]
    /// once `cancel` is set (checked before each size).
    pub fn transfer_paths(
        &self,
        largest_bytes: u64,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Vec<TransferPath>, EngineError> {
        let converter = self.gpu_converter()?;
        let (largest, _memory) = room_for_paths(largest_bytes)?;
        Ok(crate::system::one_time::timed(|| converter.measure_paths(largest, cancel))?)
    }

    /// The copies' fitted latencies ([`CopyLatency`]): the known ceilings' (the probe fits them),
    /// else timed once for this engine (under a second on lavapipe); `None` without a GPU or a
    /// fit.
    pub fn copy_latency(&self) -> Option<CopyLatency> {
        if let Some(known) = self.known_gpu_ceilings().and_then(|k| k.ceilings.copy_latency_ns) {
            return Some(CopyLatency::from_ns(known));
        }
        *self.copy_latency.get_or_init(|| {
            let paths =
                self.transfer_paths(4 << 20, None).map_err(|e| log::warn!("no copy latencies: {e}")).ok()?;
            crate::gpu::copy_latency_ns(&paths).map(CopyLatency::from_ns)
        })
    }
}

/// The largest size to time the paths at (see the module's doc), with the memory reserved for
/// them.
pub(super) fn room_for_paths(
    largest_bytes: u64,
) -> Result<(u64, crate::system::memory_budget::Reservation), EngineError> {
    let budget = crate::system::memory_budget::budget();
    // The rest of the budget is other work's (a test's neighbours, the app's image).
    let quarter = budget.capacity().0 / 4;
    let mut largest = largest_bytes.max(SMALLEST_LARGEST_BYTES);
    while largest / 4 >= SMALLEST_LARGEST_BYTES && largest.saturating_mul(HELD_BUFFERS) > quarter {
        largest /= 4;
    }
    loop {
        match budget.try_reserve(largest.saturating_mul(HELD_BUFFERS)) {
            Ok(r) => return Ok((largest, r)),
            Err(e) if largest / 4 < SMALLEST_LARGEST_BYTES => return Err(e.into()),
            Err(_) => largest /= 4,
        }
    }
}

/// The fixed costs of graylab's own copies, fitted with Hockney's model from 4 KiB up: up
/// through mapped staging filled by every thread, down through readback memory read by every
/// thread. What the crossover's explanation rests on: the CPU's time for that many nanoseconds
/// is a size below which no GPU wins, however fast.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CopyLatency {
    /// The upload's latency, nanoseconds.
    pub up_ns: f64,
    /// The download's latency, nanoseconds.
    pub down_ns: f64,
    /// The clock of both: the CPU's, which times every path end to end (results saved before it
    /// was said were timed on it too).
    #[serde(default)]
    pub clock: Clock,
}

impl CopyLatency {
    /// Up and down together, nanoseconds.
    #[must_use]
    pub fn total_ns(self) -> f64 {
        self.up_ns + self.down_ns
    }

    /// `[up, down]` ns as [`crate::gpu::copy_latency_ns`] fits them from the paths' end-to-end
    /// times, on the CPU clock.
    fn from_ns([up_ns, down_ns]: [f64; 2]) -> Self {
        Self { up_ns, down_ns, clock: Clock::CpuClock }
    }
}
