//! The work grid's roofline: this machine's roofs (the CPU's memory stream and compute, the
//! GPU's device bandwidth and compute, and the round trip's transfer roof) and one point per
//! measured cell and series, operations per byte on x, operations per second on y.
//!
//! A point's operations are the rounds' (3 per round) and the formula's
//! ([`FORMULA_OPS_PER_PIXEL`]), over the 4 bytes an RGB8 pixel moves (3 read, 1 written); the
//! divergent variant is counted as asked, like [`crate::engine::WorkFigures`].

use crate::engine::sweep::grid::{FORMULA_OPS_PER_PIXEL, Roofline, RooflinePoint, Series};
use crate::engine::sweep::model::{SWEEP_BYTES, cpu_stream};
use crate::engine::sweep::result::SweepResult;
use crate::pixel::OPS_PER_ROUND;

/// The series a roofline shows, in legend order.
pub(crate) const ROOFLINE_SERIES: [Series; 4] =
    [Series::CpuAll, Series::GpuKernel, Series::GpuResident, Series::GpuTotal];

/// Integer operations of one pixel at `rounds`: the rounds' and the formula's.
#[must_use]
pub(crate) fn ops_per_pixel(rounds: u32) -> f64 {
    f64::from(rounds) * f64::from(OPS_PER_ROUND) + FORMULA_OPS_PER_PIXEL as f64
}

/// The roofline of `r`: its roofs from the stream baseline of its largest size, `r.compute`
/// and `r.ceilings`, and its measured points.
#[must_use]
pub fn roofline(r: &SweepResult) -> Roofline {
    let (in_bytes, out_bytes) = SWEEP_BYTES;
    let bytes_per_pixel = in_bytes + out_bytes;
    let ceilings = r.ceilings.as_deref();
    // The image up, then the result down, one after the other: bytes of the image per second.
    let transfer = ceilings.map(|c| {
        let up = c.host_to_device_gb_per_s().max(f64::MIN_POSITIVE);
        let down = c.device_to_host_gb_per_s().max(f64::MIN_POSITIVE);
        bytes_per_pixel / (in_bytes / up + out_bytes / down) * 1e9
    });
    let mut points = Vec::new();
    for p in &r.points {
        let pixels = f64::from(p.width) * f64::from(p.height);
        let ops = ops_per_pixel(p.work_rounds);
        for series in ROOFLINE_SERIES {
            let Some(ns) = p.median_ns(series) else { continue };
            points.push(RooflinePoint {
                series,
                work_rounds: p.work_rounds,
                megapixels: p.megapixels,
                ops_per_byte: ops / bytes_per_pixel,
                ops_per_s: ops * pixels / ns.max(1) as f64 * 1e9,
            });
        }
    }
    Roofline {
        cpu_bytes_per_s: cpu_stream(r).map(|(_, gb_per_s)| gb_per_s * 1e9),
        cpu_ops_per_s: r.compute.map(|c| c.cpu_ops_per_s),
        gpu_device_bytes_per_s: ceilings.map(|c| c.device_copy.gb_per_s() * 1e9),
        gpu_ops_per_s: r.compute.and_then(|c| c.gpu_ops_per_s),
        transfer_bytes_per_s: transfer,
        points,
    }
}
