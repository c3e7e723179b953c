//! Timing a kernel on data already on the GPU: the input is uploaded once, the output is left
//! there, and each run is one submit-and-wait of the compute passes, on the CPU clock (so the
//! fixed cost of a dispatch is included). This is the GPU's best case, as when the image is on
//! the GPU to be shown anyway.

use std::time::Instant;

use wgpu::util::DeviceExt as _;

use super::bands::{BandPlan, band_sizes};
use super::{GpuContext, GpuError, GpuJob};

impl GpuContext {
    /// Uploads `job`'s image once (every band resident at once), runs one cold dispatch, then
    /// returns the wall time of `runs` further submit-and-wait cycles, in nanoseconds.
    pub fn time_resident(&self, job: &GpuJob<'_>, runs: usize) -> Result<Vec<u64>, GpuError> {
        let &GpuJob { kernel, formula, workgroup, src, width, height } = job;
        if src.len() as u64 != u64::from(width) * u64::from(height) * kernel.in_bytes_per_pixel() as u64 {
            return Err(GpuError::LengthMismatch { width, height, kernel: kernel.name() });
        }
        let pipeline = self.pipeline(kernel, formula, workgroup)?;
        let plan = BandPlan::new(kernel, width, height, self.band_limit_bytes())?;
        let in_row = width as usize * kernel.in_bytes_per_pixel();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let mut bands = Vec::new();
        for band in 0..plan.bands {
            let first_row = (band * plan.rows_per_band) as usize;
            let rows = (plan.rows_per_band as usize).min(height as usize - first_row);
            let (words, in_bytes, out_bytes) = band_sizes(kernel, (rows * width as usize) as u64);
            let mut contents = src[first_row * in_row..(first_row + rows) * in_row].to_vec();
            contents.resize(in_bytes as usize, 0);
            let init = |label, contents: &[u8], usage| {
                self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage,
                })
            };
            let input = init("resident input", &contents, wgpu::BufferUsages::STORAGE);
            let params = init(
                "resident params",
                bytemuck::bytes_of(&[words as u32, 0, 0, 0]),
                wgpu::BufferUsages::UNIFORM,
            );
            let output = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("resident output"),
                size: out_bytes,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
            let group = self.bind_group_for(kernel, (&input, in_bytes), (&output, out_bytes), &params);
            bands.push((group, self.grid(words, workgroup)?, input, output));
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::OutOfMemory(e.to_string()));
        }
        let dispatch = || -> Result<u64, GpuError> {
            let mut enc = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("resident") });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("resident"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&pipeline);
                for (group, grid, _, _) in &bands {
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(grid.0, grid.1, 1);
                }
            }
            let buffer = enc.finish();
            let started = Instant::now();
            let submission = self.queue.submit([buffer]);
            self.wait(Some(submission))?;
            Ok(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX))
        };
        // The first, cold dispatch wakes the GPU and its caches; it is not reported.
        self.wait(None)?;
        dispatch()?;
        let times = (0..runs.max(1)).map(|_| dispatch()).collect::<Result<Vec<_>, _>>()?;
        if let Some(e) = self.take_uncaptured_error() {
            return Err(GpuError::Validation(e));
        }
        Ok(times)
    }
}
