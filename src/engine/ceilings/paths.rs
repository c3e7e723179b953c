//! Every transfer path of this GPU as latency plus bandwidth (`graylab info --probe`): the
//! largest size timed is the largest whose buffers take at most a quarter of the memory budget
//! and fit it now, from 256 MiB down.

use crate::engine::{Engine, EngineError};
use crate::gpu::{HELD_BUFFERS, TransferPath};

/// The largest size that is still worth fitting: below it the bandwidth is not reached.
const SMALLEST_LARGEST_BYTES: u64 = 4 << 20;

impl Engine {
    /// Every transfer path ([`crate::gpu::PathKind::ALL`]) timed from 4 KiB up to `largest_bytes`
    /// (or less, in steps of 4, at least 4 MiB: its buffers take at most a quarter of the memory
    /// budget and must fit it now), each fitted with Hockney's model.
    pub fn transfer_paths(&self, largest_bytes: u64) -> Result<Vec<TransferPath>, EngineError> {
        let converter = self.gpu_converter()?;
        let budget = crate::system::memory_budget::budget();
        // A probe takes at most a quarter of the budget: other work (a test's neighbours, the
        // app's image) keeps its room.
        let quarter = budget.capacity().0 / 4;
        let mut largest = largest_bytes.max(SMALLEST_LARGEST_BYTES);
        while largest / 4 >= SMALLEST_LARGEST_BYTES && largest.saturating_mul(HELD_BUFFERS) > quarter {
            largest /= 4;
        }
        let _memory = loop {
            match budget.try_reserve(largest.saturating_mul(HELD_BUFFERS)) {
                Ok(r) => break r,
                Err(e) if largest / 4 < SMALLEST_LARGEST_BYTES => return Err(e.into()),
                Err(_) => largest /= 4,
            }
        };
        Ok(crate::system::one_time::timed(|| converter.measure_paths(largest))?)
    }
}
