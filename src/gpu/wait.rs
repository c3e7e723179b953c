//! Waiting for the GPU without holding wgpu's device lock for long: submissions and buffer
//! mappings are awaited in short polls, so a render thread sharing the device (eframe's) can
//! submit its frames in between.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::GpuError;

/// How long to wait for one submission or mapping before calling the GPU hung.
const WAIT_LIMIT: Duration = Duration::from_mins(5);

/// One poll's longest block; wgpu holds a device lock while it waits.
const POLL_SLICE: Duration = Duration::from_millis(4);

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

/// Blocks until `submission` (or everything submitted so far) has finished on the GPU.
pub(crate) fn wait_for(
    device: &wgpu::Device,
    submission: Option<&wgpu::SubmissionIndex>,
) -> Result<(), GpuError> {
    let started = Instant::now();
    loop {
        let poll = wgpu::PollType::Wait { submission_index: submission.cloned(), timeout: Some(POLL_SLICE) };
        match device.poll(poll) {
            Ok(_) => return Ok(()),
            Err(wgpu::PollError::Timeout) if started.elapsed() < WAIT_LIMIT => {}
            Err(e) => return Err(GpuError::Wait(e.to_string())),
        }
    }
}

/// Waits for a mapping started with [`map`], polling the device meanwhile.
pub(crate) fn mapped(device: &wgpu::Device, rx: &MapResult) -> Result<(), GpuError> {
    let started = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => return Err(GpuError::Map(e.to_string())),
            Err(mpsc::TryRecvError::Disconnected) => {
                return Err(GpuError::Map("the mapping was abandoned".to_owned()));
            }
            Err(mpsc::TryRecvError::Empty) if started.elapsed() < WAIT_LIMIT => {
                let poll = wgpu::PollType::Wait { submission_index: None, timeout: Some(POLL_SLICE) };
                match device.poll(poll) {
                    Ok(_) | Err(wgpu::PollError::Timeout) => {}
                    Err(e) => return Err(GpuError::Wait(e.to_string())),
                }
            }
            Err(mpsc::TryRecvError::Empty) => {
                return Err(GpuError::Map(format!("no answer from the GPU within {WAIT_LIMIT:?}")));
            }
        }
    }
}

/// Nanoseconds of a duration, saturating.
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
