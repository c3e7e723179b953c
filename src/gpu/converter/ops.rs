//! The ops on a [`GpuConverter`]: which wavefront the dither runs as on this device, an op on a
//! gray plane from the host, the conversion and its op with the gray plane kept on the GPU
//! between them, and the ops' rates for the estimator.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::gpu::device::wait::nanos;
use crate::gpu::ops::{DitherWavefront, OpJob, OpKernels, OpTimings, Plane, op_bands, run_op};
use crate::gpu::plan::bands::BandPlan;
use crate::gpu::timing::timestamps::Timestamps;
use crate::gpu::{GpuConverter, GpuError, GpuJob, GpuTimings};
use crate::pixel::{Kernel, Op};

/// Whether a `width` x `height` image converts by `kernel` in one band of at most `limit_bytes`
/// and its gray plane takes `op` in one band too: the plane can then stay on the GPU. Decided by
/// the plans the runs make (a band's input is padded to whole output words, so an image a few
/// bytes under the limit can take two).
fn one_band_each(
    kernel: Kernel,
    op: Op,
    (width, height): (u32, u32),
    limit_bytes: u64,
) -> Result<bool, GpuError> {
    Ok(BandPlan::new(kernel, width, height, limit_bytes)?.bands == 1
        && op_bands(op, (width, height), limit_bytes)?.len() == 1)
}

impl GpuConverter {
    /// How the dither's wavefront runs from now on: the one given, or with `None` the faster on
    /// this device ([`Self::dither_wavefront`]; the default unless `GRAYLAB_DITHER_WAVEFRONT`
    /// names one).
    pub fn set_dither_wavefront(&mut self, wavefront: Option<DitherWavefront>) {
        self.dither_wavefront = wavefront;
    }

    /// The wavefront a dither runs as: the one set, else the faster of the two on this device,
    /// each timed once (its passes, after a warm-up) on a [`crate::pixel::RATE_PLANE`] plane on
    /// the first call and kept (about 0.15 s on lavapipe, a few ms on a GPU).
    pub fn dither_wavefront(&self) -> Result<DitherWavefront, GpuError> {
        if let Some(w) = self.dither_wavefront.or_else(|| self.picked_wavefront.get().copied()) {
            return Ok(w);
        }
        let (warm, timed) = ((256, 16), crate::pixel::RATE_PLANE);
        let (warm_plane, plane) = (crate::pixel::rate_plane(warm), crate::pixel::rate_plane(timed));
        let mut out = vec![0_u8; plane.len()];
        // Each on a small plane first: a driver may compile a pipeline on its first dispatch.
        let mut passes_ns = |wavefront| -> Result<u64, GpuError> {
            let warm_out = &mut out[..warm_plane.len()];
            self.run_op_as(Op::Dither, Plane::Host(&warm_plane), warm, (None, wavefront), warm_out)?;
            let t = self.run_op_as(Op::Dither, Plane::Host(&plane), timed, (None, wavefront), &mut out)?;
            Ok(t.kernel.ns)
        };
        let (steps_ns, persistent_ns) =
            (passes_ns(DitherWavefront::Steps)?, passes_ns(DitherWavefront::Persistent)?);
        let faster =
            if persistent_ns < steps_ns { DitherWavefront::Persistent } else { DitherWavefront::Steps };
        log::info!(
            "the dither's wavefront on {}: {faster:?} (a {}x{} plane's passes: steps {:.2} ms, \
             persistent {:.2} ms)",
            self.ctx.adapter_info().name,
            timed.0,
            timed.1,
            steps_ns as f64 / 1e6,
            persistent_ns as f64 / 1e6
        );
        Ok(*self.picked_wavefront.get_or_init(|| faster))
    }

    /// Applies `op` to a `width` x `height` gray plane on the GPU, in row bands within the band
    /// limit: the new plane, byte-identical to [`crate::cpu::ops::apply_op`], and what each step
    /// took (the passes on GPU timestamps where the device has them and reads them in place; a
    /// first dither's choice of wavefront counted in the setup).
    pub fn apply_op(
        &self,
        op: Op,
        plane: &[u8],
        size: (u32, u32),
        cancel: Option<&AtomicBool>,
    ) -> Result<(Vec<u8>, OpTimings), GpuError> {
        let mut out = vec![0_u8; plane.len()];
        let t = self.run_op_picked(op, Plane::Host(plane), size, cancel, &mut out)?;
        Ok((out, t))
    }

    /// Converts `job` (an 8-bit gray output) and applies `op` to the gray plane without it
    /// leaving the GPU: the conversion's output band is the op's input, so no download and no
    /// upload run between them. The op's result is read back into `dst`. `None`, having run
    /// nothing, when the image takes more than one band of either, or with
    /// `GRAYLAB_OP_PLANE=host` (the caller then moves the plane through the host).
    pub fn convert_then_op(
        &self,
        job: &GpuJob<'_>,
        op: Op,
        dst: &mut [u8],
    ) -> Result<Option<(GpuTimings, OpTimings)>, GpuError> {
        let (width, height) = (job.width, job.height);
        if op.is_none()
            || !self.op_plane_on_gpu
            || job.kernel.out_bytes_per_pixel() != 1
            || !one_band_each(job.kernel, op, (width, height), self.band_limit_bytes)?
        {
            return Ok(None);
        }
        // An 8-bit gray output: `dst` is the plane.
        job.check_lengths(Some(dst))?;
        let started = Instant::now();
        self.with_buffers(|buffers, scopes| {
            let t = self.run_scoped(job, None, None, buffers, scopes, (started, started))?;
            let ring = buffers.ring.as_ref().filter(|_| t.bands == 1);
            let plane = ring.ok_or(GpuError::Bug("the gray plane is not one band on the GPU"))?;
            let plane = Plane::Device(&plane.band.output);
            Ok(Some((t, self.run_op_picked(op, plane, (width, height), job.cancel, dst)?)))
        })
    }

    /// [`Self::run_op_as`] with the wavefront this device runs, a first dither's choice of it
    /// counted in the stage's setup.
    fn run_op_picked(
        &self,
        op: Op,
        plane: Plane<'_>,
        size: (u32, u32),
        cancel: Option<&AtomicBool>,
        out: &mut [u8],
    ) -> Result<OpTimings, GpuError> {
        let started = Instant::now();
        let wavefront = if op == Op::Dither { self.dither_wavefront()? } else { DitherWavefront::Steps };
        let picked_ns = nanos(started.elapsed());
        let mut t = self.run_op_as(op, plane, size, (cancel, wavefront), out)?;
        t.setup_ns += picked_ns;
        t.wall_ns += picked_ns;
        Ok(t)
    }

    /// Runs `op` on `plane` into `out` as `wavefront`, its pipelines made on first use.
    fn run_op_as(
        &self,
        op: Op,
        plane: Plane<'_>,
        size: (u32, u32),
        (cancel, wavefront): (Option<&AtomicBool>, DitherWavefront),
        out: &mut [u8],
    ) -> Result<OpTimings, GpuError> {
        let started = Instant::now();
        let kernels = self.ops.get_or_init(|| crate::system::one_time::timed(|| OpKernels::new(&self.ctx)));
        let timestamps = self.pass_stamps()?.then(|| Timestamps::new(&self.ctx, 1));
        let compiled_ns = nanos(started.elapsed());
        let job = OpJob { op, plane, size, band_limit_bytes: self.band_limit_bytes, wavefront, cancel };
        let mut t = run_op(&self.ctx, kernels, &job, timestamps.as_ref(), out)?;
        t.setup_ns += compiled_ns;
        t.wall_ns = nanos(started.elapsed());
        Ok(t)
    }

    /// The ops' rates on this device: the blur and the dither on a small plane, each stage
    /// whole (setup, the plane's copies, the passes), the faster of two runs after a warm-up
    /// (about 0.4 s on lavapipe, where a dither step waits ~45 µs).
    pub fn measure_op_rates(&self) -> Result<crate::pixel::OpRates, GpuError> {
        use crate::pixel::{OpRates, RATE_PLANE, rate_plane};
        let plane = rate_plane(RATE_PLANE);
        OpRates::measured(true, (1, 2), |op| {
            let started = Instant::now();
            self.apply_op(op, &plane, RATE_PLANE, None)?;
            Ok(nanos(started.elapsed()))
        })
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn the_plane_stays_on_the_gpu_only_where_the_padded_plan_is_one_band() {
        // 105x13 RGB: 4,095 bytes, under a 4,096-byte limit, but 342 words of 12 bytes (4,104)
        // padded, so the conversion takes two bands; one pixel fewer a row fits.
        let (rgb, limit) = (Kernel::Rgb8ToL8, 4096);
        assert_eq!(BandPlan::new(rgb, 105, 13, limit).unwrap().bands, 2);
        assert!(!one_band_each(rgb, Op::Dither, (105, 13), limit).unwrap());
        assert!(one_band_each(rgb, Op::Dither, (104, 13), limit).unwrap());
        // The brief's case at lavapipe's 128 MiB: 16382x2731 is 2 bands padded, 16382x2730 one.
        let lavapipe = 128 << 20;
        assert!(!one_band_each(rgb, Op::Dither, (16_382, 2731), lavapipe).unwrap());
        assert!(one_band_each(rgb, Op::Dither, (16_382, 2730), lavapipe).unwrap());
        // The op's own plan counts too: a blur's u32 sums take four bytes a pixel.
        assert!(!one_band_each(rgb, Op::Blur { radius: 2 }, (104, 13), limit).unwrap());
        // A row wider than the limit is the conversion's error, said as it is.
        assert!(matches!(
            one_band_each(rgb, Op::Dither, (2000, 1), limit),
            Err(GpuError::RowTooLarge { .. })
        ));
    }
}
