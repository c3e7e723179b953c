//! Waiting for the GPU: a submission, or a buffer mapping. wgpu holds a device lock while it
//! waits, which a render thread sharing the device (eframe's) may need; the bounded submissions
//! keep every wait short. Waits are never cut into timed slices: in wgpu-core 30 a timed-out
//! wait racing another thread's poll trips an assertion (fixed upstream in gfx-rs/wgpu#9958).

use std::sync::mpsc;
use std::time::Duration;

use crate::gpu::GpuError;
use crate::gpu::device::error::MapFailure;
pub(crate) use crate::system::clock::nanos;

/// How long to wait for one submission or mapping before calling the GPU hung.
const WAIT_LIMIT: Duration = Duration::from_mins(5);

/// How long a callback may take to arrive once the GPU has finished.
const CALLBACK_LIMIT: Duration = Duration::from_secs(10);

/// The answer of a `map_async` callback.
pub(crate) type MapResult = mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>;

/// Starts mapping `range` of `buffer`; the answer arrives once the GPU is done with it.
pub(crate) fn map(buffer: &wgpu::Buffer, range: std::ops::Range<u64>, mode: wgpu::MapMode) -> MapResult {
    let (tx, rx) = mpsc::channel();
    buffer.map_async(mode, range, move |r| {
        // The receiver only goes away when the run already failed.
        let _ = tx.send(r);
    });
    rx
}

/// Maps `range` of `buffer` for reading, waits for the mapping, hands `read` the bytes, unmaps.
pub(crate) fn read_buffer<T>(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    range: std::ops::Range<u64>,
    read: impl FnOnce(&[u8]) -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    mapped(device, &map(buffer, range.clone(), wgpu::MapMode::Read))?;
    let result = read(&buffer.get_mapped_range(range).map_err(|e| GpuError::Map(e.into()))?);
    buffer.unmap();
    result
}

/// Blocks until `submission` (or everything submitted so far) has finished on the GPU.
pub(crate) fn wait_for(
    device: &wgpu::Device,
    submission: Option<&wgpu::SubmissionIndex>,
) -> Result<(), GpuError> {
    let poll = wgpu::PollType::Wait { submission_index: submission.cloned(), timeout: Some(WAIT_LIMIT) };
    device.poll(poll).map(drop).map_err(GpuError::Wait)
}

/// Waits for a mapping started with [`map`]: it is answered during a poll once the GPU is done
/// with the buffer, at the latest when everything submitted so far has finished.
pub(crate) fn mapped(device: &wgpu::Device, rx: &MapResult) -> Result<(), GpuError> {
    let answer = |rx: &MapResult| match rx.try_recv() {
        Ok(Ok(())) => Some(Ok(())),
        Ok(Err(e)) => Some(Err(GpuError::Map(e.into()))),
        Err(mpsc::TryRecvError::Disconnected) => Some(Err(GpuError::Map(MapFailure::Abandoned))),
        Err(mpsc::TryRecvError::Empty) => None,
    };
    if let Some(result) = answer(rx) {
        return result;
    }
    wait_for(device, None)?;
    // This thread's poll fired the callback, or another thread's poll (eframe's) is firing it.
    match rx.recv_timeout(CALLBACK_LIMIT) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(GpuError::Map(e.into())),
        Err(_) => Err(GpuError::Map(MapFailure::NoAnswer(CALLBACK_LIMIT))),
    }
}
