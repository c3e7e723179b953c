//! One conversion on the GPU: bands of rows through a ring of buffer sets, with timestamps.
//!
//! Per band: the host copies the band into a mapped staging buffer (CPU clock), then one command
//! buffer copies it to the storage buffer, runs the kernel and copies the result to a readback
//! buffer, with timestamps around each step where the device has them. With a ring of up to
//! [`RING_LEN`] buffer sets, staging of band i+1 on the CPU overlaps GPU work on band i. wgpu has
//! one queue per device, so copies and compute on the GPU itself do not overlap.
//!
//! Without encoder timestamps (or in [`TimingMode::CpuClock`]) each step is its own submission
//! timed with the CPU clock around submit-and-wait, with no overlap, and the timings say so.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::bands::{BandPlan, band_sizes};
use super::context::{GpuContext, TimingMode};
use super::display::GpuTiles;
use super::{GpuError, WorkgroupSize};
use crate::pixel::{Formula, Kernel};

/// Buffer sets in flight at once.
pub const RING_LEN: usize = 3;

/// How long to wait for one submission before calling the GPU hung.
const WAIT_LIMIT: Duration = Duration::from_mins(5);

/// Timestamp slots per band: upload start/end, kernel start/end, download start/end.
const QUERIES: u32 = 6;

/// Where the time of one GPU conversion went, summed over its bands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuTimings {
    /// Host copy of the input into mapped staging memory (CPU clock).
    pub upload_host_ns: u64,
    /// Copy from staging to the GPU storage buffer (GPU timestamps or CPU clock, see
    /// `copies_on_gpu_clock`).
    pub upload_copy_ns: u64,
    /// The compute pass (GPU timestamps or CPU clock, see `kernel_on_gpu_clock`).
    pub kernel_ns: u64,
    /// Copy from the GPU storage buffer to the readback buffer.
    pub download_copy_ns: u64,
    /// Host copy out of mapped readback memory (CPU clock).
    pub download_host_ns: u64,
    /// Pipeline lookup or compilation and buffer allocation before the first band (CPU clock);
    /// large on a cold run.
    pub setup_ns: u64,
    /// Wall time of the whole conversion, setup included (CPU clock).
    pub wall_ns: u64,
    /// Whether `upload_copy_ns` and `download_copy_ns` come from GPU timestamps.
    pub copies_on_gpu_clock: bool,
    /// Whether `kernel_ns` comes from GPU timestamps.
    pub kernel_on_gpu_clock: bool,
    /// Row bands the image was cut into.
    pub bands: u32,
    /// Whether the result was copied back to the host (else it stayed on the GPU for display).
    pub downloaded: bool,
}

/// One set of buffers for one band in flight.
pub(crate) struct RingSlot {
    in_capacity: u64,
    out_capacity: u64,
    staging_in: wgpu::Buffer,
    input: wgpu::Buffer,
    output: wgpu::Buffer,
    staging_out: wgpu::Buffer,
    params: wgpu::Buffer,
    queries: Option<Queries>,
    /// Whether `staging_in` is mapped for writing right now.
    staging_mapped: bool,
    /// The last submission that used this slot.
    last_submission: Option<wgpu::SubmissionIndex>,
}

struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

/// A band submitted and not yet read back.
struct Pending {
    /// Where the band's pixels go in the output, when downloading.
    out_range: Option<std::ops::Range<usize>>,
    out_bytes: u64,
    submission: wgpu::SubmissionIndex,
    /// The readback buffer's mapping (when downloading).
    mapped: Vec<MapResult>,
    /// The timestamp readback's mapping (overlapped mode).
    timestamps: Option<MapResult>,
}

/// Everything one band's commands need.
struct BandWork<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    grid: (u32, u32),
    in_bytes: u64,
    out_bytes: u64,
    out_range: Option<std::ops::Range<usize>>,
    display: Option<BandDisplay<'a>>,
}

/// Where a band is drawn for display.
struct BandDisplay<'a> {
    tiles: &'a GpuTiles,
    kernel: Kernel,
    row0: u32,
    rows: u32,
}

/// What to convert on the GPU.
#[derive(Clone, Copy)]
pub struct GpuJob<'a> {
    /// The conversion.
    pub kernel: Kernel,
    /// The formula.
    pub formula: Formula,
    /// The workgroup shape.
    pub workgroup: WorkgroupSize,
    /// Packed input pixels, `width * height * kernel.in_bytes_per_pixel()` bytes.
    pub src: &'a [u8],
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
}

type MapResult = mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>;

fn map(buffer: &wgpu::Buffer, bytes: u64, mode: wgpu::MapMode) -> MapResult {
    let (tx, rx) = mpsc::channel();
    buffer.map_async(mode, 0..bytes, move |r| {
        // The receiver only goes away when the conversion already failed.
        let _ = tx.send(r);
    });
    rx
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl GpuContext {
    /// Converts a `width` x `height` image of packed `kernel` input pixels in `src` into `dst`.
    ///
    /// The output is byte-identical to [`crate::cpu::par_convert`] for every kernel, formula,
    /// workgroup size and band split.
    #[expect(clippy::too_many_arguments, reason = "one plain call for every front end")]
    pub fn convert(
        &self,
        kernel: Kernel,
        formula: Formula,
        workgroup: WorkgroupSize,
        src: &[u8],
        width: u32,
        height: u32,
        dst: &mut [u8],
    ) -> Result<GpuTimings, GpuError> {
        let job = GpuJob { kernel, formula, workgroup, src, width, height };
        self.run(&job, Some(dst), None)
    }

    /// Converts and draws the result into display tiles on the GPU; downloads it into `dst` too
    /// when given (the full round trip), else leaves it on the GPU (no download phase).
    pub fn convert_for_display(
        &self,
        job: &GpuJob<'_>,
        tiles: &GpuTiles,
        dst: Option<&mut [u8]>,
    ) -> Result<GpuTimings, GpuError> {
        if (tiles.width, tiles.height) != (job.width, job.height) {
            return Err(GpuError::LengthMismatch {
                width: job.width,
                height: job.height,
                kernel: "display tiles",
            });
        }
        self.run(job, dst, Some(tiles))
    }

    fn run(
        &self,
        job: &GpuJob<'_>,
        mut dst: Option<&mut [u8]>,
        tiles: Option<&GpuTiles>,
    ) -> Result<GpuTimings, GpuError> {
        let &GpuJob { kernel, formula, workgroup, src, width, height } = job;
        let started = Instant::now();
        let pixels = u64::from(width) * u64::from(height);
        if src.len() as u64 != pixels * kernel.in_bytes_per_pixel() as u64
            || dst.as_ref().is_some_and(|d| d.len() as u64 != pixels * kernel.out_bytes_per_pixel() as u64)
        {
            return Err(GpuError::LengthMismatch { width, height, kernel: kernel.name() });
        }
        if let Some(e) = self.take_uncaptured_error() {
            return Err(GpuError::Validation(e));
        }
        let pipeline = self.pipeline(kernel, formula, workgroup)?;
        let plan = BandPlan::new(kernel, width, height, self.band_limit_bytes())?;
        let ts = self.timestamps();
        let auto = self.timing_mode() == TimingMode::Auto;
        let overlapped = auto && ts.encoders;
        let mut t = GpuTimings {
            copies_on_gpu_clock: overlapped,
            kernel_on_gpu_clock: auto && ts.passes,
            bands: plan.bands,
            downloaded: dst.is_some(),
            ..GpuTimings::default()
        };
        if plan.bands == 0 {
            t.wall_ns = nanos(started.elapsed());
            return Ok(t);
        }
        let ring_len = if overlapped { (plan.bands as usize).min(RING_LEN) } else { 1 };
        let mut ring = self.ring.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.prepare_ring(&mut ring, ring_len, &plan, t.kernel_on_gpu_clock)?;
        t.setup_ns = nanos(started.elapsed());

        let in_row = width as usize * kernel.in_bytes_per_pixel();
        let out_row = width as usize * kernel.out_bytes_per_pixel();
        let mut pending: Vec<Option<Pending>> = (0..ring_len).map(|_| None).collect();
        for band in 0..plan.bands {
            let slot_index = band as usize % ring_len;
            if let Some(p) = pending[slot_index].take() {
                self.finish(&mut ring[slot_index], p, dst.as_deref_mut(), &mut t)?;
            }
            let first_row = (band * plan.rows_per_band) as usize;
            let rows = (plan.rows_per_band as usize).min(height as usize - first_row);
            let band_src = &src[first_row * in_row..(first_row + rows) * in_row];
            let (words, in_bytes, out_bytes) = band_sizes(kernel, (rows * width as usize) as u64);
            let slot = &mut ring[slot_index];
            self.stage(slot, band_src, in_bytes, &mut t)?;
            self.queue.write_buffer(&slot.params, 0, bytemuck::bytes_of(&[words as u32, 0, 0, 0]));
            let work = BandWork {
                pipeline: &pipeline,
                group: self.band_bind_group(kernel, slot, in_bytes, out_bytes),
                grid: self.grid(words, workgroup)?,
                in_bytes,
                out_bytes,
                out_range: dst.is_some().then(|| first_row * out_row..(first_row + rows) * out_row),
                display: tiles.map(|tiles| BandDisplay {
                    tiles,
                    kernel,
                    row0: first_row as u32,
                    rows: rows as u32,
                }),
            };
            let p = if overlapped {
                self.submit_overlapped(slot, &work)
            } else {
                self.submit_stepwise(slot, &work, &mut t)?
            };
            if let Some(e) = self.take_uncaptured_error() {
                return Err(GpuError::Validation(e));
            }
            pending[slot_index] = Some(p);
        }
        // Drain in band order: the oldest band sits in the slot after the last one used.
        let last = (plan.bands as usize - 1) % ring_len;
        for k in 1..=ring_len {
            let slot_index = (last + k) % ring_len;
            if let Some(p) = pending[slot_index].take() {
                self.finish(&mut ring[slot_index], p, dst.as_deref_mut(), &mut t)?;
            }
        }
        t.wall_ns = nanos(started.elapsed());
        Ok(t)
    }

    /// The bindings of one band: its input and output ranges, parameters and tables.
    fn band_bind_group(
        &self,
        kernel: Kernel,
        slot: &RingSlot,
        in_bytes: u64,
        out_bytes: u64,
    ) -> wgpu::BindGroup {
        self.bind_group_for(kernel, (&slot.input, in_bytes), (&slot.output, out_bytes), &slot.params)
    }

    /// The bindings of one dispatch: input and output buffers (with the bytes used), parameters
    /// and the lookup tables for the kernel's bit depth.
    pub(crate) fn bind_group_for(
        &self,
        kernel: Kernel,
        input: (&wgpu::Buffer, u64),
        output: (&wgpu::Buffer, u64),
        params: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let (lin_in, lin_out) = self.tables_for(kernel);
        let entry = |binding, resource| wgpu::BindGroupEntry { binding, resource };
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("grayscale band"),
            layout: self.layout(),
            entries: &[
                entry(0, sized(input.0, input.1)),
                entry(1, sized(output.0, output.1)),
                entry(2, params.as_entire_binding()),
                entry(3, lin_in.as_entire_binding()),
                entry(4, lin_out.as_entire_binding()),
            ],
        })
    }

    /// Makes sure the ring has `len` slots big enough for `plan`, reusing what it can.
    fn prepare_ring(
        &self,
        ring: &mut Vec<RingSlot>,
        len: usize,
        plan: &BandPlan,
        queries: bool,
    ) -> Result<(), GpuError> {
        ring.retain(|s| s.in_capacity >= plan.max_in_bytes && s.out_capacity >= plan.max_out_bytes);
        ring.retain(|s| s.queries.is_some() == queries);
        if ring.len() >= len {
            return Ok(());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        while ring.len() < len {
            ring.push(self.new_slot(plan.max_in_bytes, plan.max_out_bytes, queries));
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            ring.clear();
            return Err(GpuError::OutOfMemory(e.to_string()));
        }
        Ok(())
    }

    fn new_slot(&self, in_bytes: u64, out_bytes: u64, queries: bool) -> RingSlot {
        use wgpu::BufferUsages as U;
        let buffer = |label: &str, size: u64, usage: U, mapped: bool| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: mapped,
            })
        };
        let queries = queries.then(|| Queries {
            set: self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("band timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES,
            }),
            resolve: buffer(
                "timestamp resolve",
                u64::from(QUERIES) * 8,
                U::QUERY_RESOLVE | U::COPY_SRC,
                false,
            ),
            readback: buffer("timestamp readback", u64::from(QUERIES) * 8, U::MAP_READ | U::COPY_DST, false),
        });
        RingSlot {
            in_capacity: in_bytes,
            out_capacity: out_bytes,
            staging_in: buffer("upload staging", in_bytes, U::MAP_WRITE | U::COPY_SRC, true),
            input: buffer("input band", in_bytes, U::STORAGE | U::COPY_DST, false),
            output: buffer("output band", out_bytes, U::STORAGE | U::COPY_SRC, false),
            staging_out: buffer("download staging", out_bytes, U::MAP_READ | U::COPY_DST, false),
            params: buffer("params", 16, U::UNIFORM | U::COPY_DST, false),
            queries,
            staging_mapped: true,
            last_submission: None,
        }
    }

    /// Blocks until `submission` (or everything) has finished on the GPU.
    pub(crate) fn wait(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: submission, timeout: Some(WAIT_LIMIT) })
            .map(drop)
            .map_err(|e| GpuError::Wait(e.to_string()))
    }

    /// Copies one band into the slot's staging buffer, zero-padding it to whole words.
    fn stage(
        &self,
        slot: &mut RingSlot,
        band: &[u8],
        in_bytes: u64,
        t: &mut GpuTimings,
    ) -> Result<(), GpuError> {
        if !slot.staging_mapped {
            let rx = map(&slot.staging_in, slot.in_capacity, wgpu::MapMode::Write);
            self.wait(slot.last_submission.clone())?;
            recv_map(&rx)?;
            slot.staging_mapped = true;
        }
        let started = Instant::now();
        {
            let mut view = slot
                .staging_in
                .get_mapped_range_mut(0..in_bytes)
                .map_err(|e| GpuError::Map(e.to_string()))?;
            view.slice(..band.len()).copy_from_slice(band);
            view.slice(band.len()..).fill(0);
        }
        slot.staging_in.unmap();
        slot.staging_mapped = false;
        t.upload_host_ns += nanos(started.elapsed());
        Ok(())
    }

    /// The 2-D dispatch grid for `words` invocations: as wide as the per-dimension limit allows,
    /// then more rows (the shader turns the 2-D id back into a word index).
    pub(crate) fn grid(&self, words: u64, wg: WorkgroupSize) -> Result<(u32, u32), GpuError> {
        let max_dim = u64::from(self.limits().max_compute_workgroups_per_dimension.max(1));
        let groups = words.div_ceil(u64::from(wg.invocations()));
        let x = groups.clamp(1, max_dim);
        let rows = words.div_ceil(x * u64::from(wg.x));
        let y = rows.div_ceil(u64::from(wg.y)).max(1);
        if y > max_dim {
            return Err(GpuError::Validation(format!("{words} words need more than {max_dim}^2 workgroups")));
        }
        Ok((x as u32, y as u32))
    }

    fn compute_pass(encoder: &mut wgpu::CommandEncoder, queries: Option<&Queries>, work: &BandWork<'_>) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("grayscale"),
            timestamp_writes: queries.map(|q| wgpu::ComputePassTimestampWrites {
                query_set: &q.set,
                beginning_of_pass_write_index: Some(2),
                end_of_pass_write_index: Some(3),
            }),
        });
        pass.set_pipeline(work.pipeline);
        pass.set_bind_group(0, &work.group, &[]);
        pass.dispatch_workgroups(work.grid.0, work.grid.1, 1);
    }

    /// One submission per band with timestamps around every step; returns without waiting.
    fn submit_overlapped(&self, slot: &mut RingSlot, work: &BandWork<'_>) -> Pending {
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("band") });
        let q = slot.queries.as_ref();
        let stamp = |enc: &mut wgpu::CommandEncoder, i| {
            if let Some(q) = q {
                enc.write_timestamp(&q.set, i);
            }
        };
        stamp(&mut enc, 0);
        enc.copy_buffer_to_buffer(&slot.staging_in, 0, &slot.input, 0, work.in_bytes);
        stamp(&mut enc, 1);
        Self::compute_pass(&mut enc, q, work);
        if let Some(d) = &work.display {
            self.encode_band_display(&mut enc, &slot.output, work.out_bytes, d);
        }
        stamp(&mut enc, 4);
        if work.out_range.is_some() {
            enc.copy_buffer_to_buffer(&slot.output, 0, &slot.staging_out, 0, work.out_bytes);
        }
        stamp(&mut enc, 5);
        if let Some(q) = q {
            enc.resolve_query_set(&q.set, 0..QUERIES, &q.resolve, 0);
            enc.copy_buffer_to_buffer(&q.resolve, 0, &q.readback, 0, u64::from(QUERIES) * 8);
        }
        let submission = self.queue.submit([enc.finish()]);
        let mut mapped = Vec::new();
        if work.out_range.is_some() {
            mapped.push(map(&slot.staging_out, work.out_bytes, wgpu::MapMode::Read));
        }
        let timestamps = q.map(|q| map(&q.readback, u64::from(QUERIES) * 8, wgpu::MapMode::Read));
        slot.last_submission = Some(submission.clone());
        Pending {
            out_range: work.out_range.clone(),
            out_bytes: work.out_bytes,
            submission,
            mapped,
            timestamps,
        }
    }

    /// Three submissions per band (upload copy, kernel, download copy), each waited for and
    /// timed with the CPU clock; the kernel uses pass timestamps where the device has them.
    fn submit_stepwise(
        &self,
        slot: &mut RingSlot,
        work: &BandWork<'_>,
        t: &mut GpuTimings,
    ) -> Result<Pending, GpuError> {
        let timed =
            |f: &dyn Fn(&mut wgpu::CommandEncoder)| -> Result<(u64, wgpu::SubmissionIndex), GpuError> {
                let mut enc = self
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("step") });
                f(&mut enc);
                let buffer = enc.finish();
                let started = Instant::now();
                let submission = self.queue.submit([buffer]);
                self.wait(Some(submission.clone()))?;
                Ok((nanos(started.elapsed()), submission))
            };
        let (upload_ns, _) =
            timed(&|enc| enc.copy_buffer_to_buffer(&slot.staging_in, 0, &slot.input, 0, work.in_bytes))?;
        let q = slot.queries.as_ref();
        let (kernel_ns, mut submission) = timed(&|enc| {
            Self::compute_pass(enc, q, work);
            if let Some(q) = q {
                enc.resolve_query_set(&q.set, 2..4, &q.resolve, 0);
                enc.copy_buffer_to_buffer(&q.resolve, 0, &q.readback, 0, 16);
            }
        })?;
        if let Some(d) = &work.display {
            // Display work is not a phase: submitted on its own, not timed.
            let mut enc = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("display") });
            self.encode_band_display(&mut enc, &slot.output, work.out_bytes, d);
            submission = self.queue.submit([enc.finish()]);
        }
        t.upload_copy_ns += upload_ns;
        if work.out_range.is_some() {
            let (download_ns, s) = timed(&|enc| {
                enc.copy_buffer_to_buffer(&slot.output, 0, &slot.staging_out, 0, work.out_bytes);
            })?;
            t.download_copy_ns += download_ns;
            submission = s;
        }
        if let Some(q) = q {
            let rx = map(&q.readback, 16, wgpu::MapMode::Read);
            self.wait(Some(submission.clone()))?;
            recv_map(&rx)?;
            let ticks = read_ticks(&q.readback, 16)?;
            t.kernel_ns += self.ticks_to_ns(ticks[1].saturating_sub(ticks[0]));
        } else {
            t.kernel_ns += kernel_ns;
        }
        slot.last_submission = Some(submission.clone());
        let mapped = if work.out_range.is_some() {
            vec![map(&slot.staging_out, work.out_bytes, wgpu::MapMode::Read)]
        } else {
            Vec::new()
        };
        Ok(Pending {
            out_range: work.out_range.clone(),
            out_bytes: work.out_bytes,
            submission,
            mapped,
            timestamps: None,
        })
    }

    fn encode_band_display(
        &self,
        enc: &mut wgpu::CommandEncoder,
        output: &wgpu::Buffer,
        out_bytes: u64,
        d: &BandDisplay<'_>,
    ) {
        let layout = match d.kernel {
            Kernel::Rgb8ToL8 | Kernel::Rgba8ToL8 => 1,
            Kernel::Rgba8ToLa8 => 2,
            Kernel::Rgb16ToL16 | Kernel::Rgba16ToL16 => 3,
            Kernel::Rgba16ToLa16 => 4,
        };
        self.encode_display(enc, d.tiles, output, out_bytes, layout, d.row0..d.row0 + d.rows);
    }

    /// Waits for a band, copies its pixels out (when downloading) and adds its timestamps.
    fn finish(
        &self,
        slot: &mut RingSlot,
        p: Pending,
        dst: Option<&mut [u8]>,
        t: &mut GpuTimings,
    ) -> Result<(), GpuError> {
        self.wait(Some(p.submission))?;
        for rx in &p.mapped {
            recv_map(rx)?;
        }
        if let (Some(range), Some(dst)) = (p.out_range, dst) {
            let started = Instant::now();
            {
                let view = slot
                    .staging_out
                    .get_mapped_range(0..p.out_bytes)
                    .map_err(|e| GpuError::Map(e.to_string()))?;
                let len = range.len();
                dst[range].copy_from_slice(&view[..len]);
            }
            slot.staging_out.unmap();
            t.download_host_ns += nanos(started.elapsed());
        }
        if let (Some(rx), Some(q)) = (&p.timestamps, &slot.queries) {
            recv_map(rx)?;
            let ticks = read_ticks(&q.readback, u64::from(QUERIES) * 8)?;
            t.upload_copy_ns += self.ticks_to_ns(ticks[1].saturating_sub(ticks[0]));
            t.kernel_ns += self.ticks_to_ns(ticks[3].saturating_sub(ticks[2]));
            if t.downloaded {
                t.download_copy_ns += self.ticks_to_ns(ticks[5].saturating_sub(ticks[4]));
            }
        }
        Ok(())
    }

    fn ticks_to_ns(&self, ticks: u64) -> u64 {
        (ticks as f64 * f64::from(self.timestamps().period_ns)).round() as u64
    }
}

/// The first `size` bytes of a buffer as a binding.
pub(crate) fn sized(buffer: &wgpu::Buffer, size: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset: 0,
        size: std::num::NonZero::new(size),
    })
}

fn recv_map(rx: &MapResult) -> Result<(), GpuError> {
    match rx.recv_timeout(WAIT_LIMIT) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(GpuError::Map(e.to_string())),
        Err(e) => Err(GpuError::Map(format!("no answer from the GPU: {e}"))),
    }
}

/// Reads and unmaps a mapped timestamp readback buffer.
fn read_ticks(buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u64>, GpuError> {
    let ticks = {
        let view = buffer.get_mapped_range(0..bytes).map_err(|e| GpuError::Map(e.to_string()))?;
        view.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()
    };
    buffer.unmap();
    Ok(ticks)
}
