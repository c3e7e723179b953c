//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::sync::{Arc, OnceLock};

use graylab::gpu::{GpuContext, GpuConverter};

/// The GPU context for tests, or `None` (test skipped) when there is no adapter.
/// With `GRAYLAB_REQUIRE_GPU=1` (CI) a missing adapter fails the test instead.
pub fn gpu() -> Option<Arc<GpuContext>> {
    static GPU: OnceLock<Result<Arc<GpuContext>, String>> = OnceLock::new();
    let gpu = GPU.get_or_init(|| GpuContext::new().map(Arc::new).map_err(|e| e.to_string()));
    match gpu {
        Ok(g) => Some(Arc::clone(g)),
        Err(e) if std::env::var("GRAYLAB_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("GRAYLAB_REQUIRE_GPU=1 but no GPU adapter: {e}")
        }
        Err(e) => {
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

/// A converter of its own on the shared device, that the test may tune (band limit, submission
/// size, timing mode).
pub fn converter() -> Option<GpuConverter> {
    gpu().map(GpuConverter::new)
}

/// Deterministic pseudo-random bytes.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes()[..(len - out.len()).min(8)]);
    }
    out
}
