//! The roofline: this machine's roofs (the CPU's memory stream and compute, the GPU's device
//! bandwidth and compute, the round trip's transfers) and one point per measured cell and
//! series: its [`cell_ops_per_pixel`] over the bytes a pixel moves ([`bytes_per_pixel`]; the
//! divergent variant counted as asked, like [`crate::engine::WorkFigures`]).

use crate::engine::estimate::PLAIN_BYTES;
use crate::engine::sweep::grid::{Roofline, RooflinePoint, Series, cell_ops_per_pixel};
use crate::engine::sweep::model::cpu_stream;
use crate::engine::sweep::result::SweepResult;
use crate::pixel::Op;

/// Bytes an op moves per pixel at the least: the gray plane read once and written once (the
/// blur's intermediate rows stay in cache on the CPU and in the GPU's own memory).
pub(crate) const OP_BYTES_PER_PIXEL: f64 = 2.0;

/// The bytes a pixel of a cell running `op` moves: the conversion's, and the op's.
#[must_use]
pub(crate) fn bytes_per_pixel(op: Op) -> f64 {
    let (in_bytes, out_bytes) = PLAIN_BYTES;
    in_bytes + out_bytes + if op.is_none() { 0.0 } else { OP_BYTES_PER_PIXEL }
}

/// The roofline of `r`: its roofs from the stream baseline, `r.compute` and `r.ceilings`, and its
/// measured points.
#[must_use]
pub fn roofline(r: &SweepResult) -> Roofline {
    let (in_bytes, out_bytes) = PLAIN_BYTES;
    let image_bytes = in_bytes + out_bytes;
    let ceilings = r.ceilings.as_deref();
    // The image up, then the result down, one after the other: bytes of the image per second.
    let transfer = ceilings.map(|c| {
        let up = c.host_to_device_gb_per_s().max(f64::MIN_POSITIVE);
        let down = c.device_to_host_gb_per_s().max(f64::MIN_POSITIVE);
        image_bytes / (in_bytes / up + out_bytes / down) * 1e9
    });
    let mut points = Vec::new();
    for p in &r.points {
        let pixels = f64::from(p.width) * f64::from(p.height);
        let ops = cell_ops_per_pixel(p.work_rounds, p.op) as f64;
        // The series a roofline shows, in legend order.
        for series in [Series::CpuAll, Series::GpuKernel, Series::GpuResident, Series::GpuTotal] {
            let Some(ns) = p.median_ns(series) else { continue };
            points.push(RooflinePoint {
                series,
                work_rounds: p.work_rounds,
                op: p.op,
                megapixels: p.megapixels,
                ops_per_byte: ops / bytes_per_pixel(p.op),
                ops_per_s: ops * pixels / ns.max(1) as f64 * 1e9,
            });
        }
    }
    let stream = cpu_stream(r);
    Roofline {
        cpu_bytes_per_s: stream.map(|(_, gb_per_s)| gb_per_s * 1e9),
        cpu_stream_mp: stream.map(|(mp, _)| mp),
        cpu_ops_per_s: r.compute.map(|c| c.cpu_ops_per_s),
        gpu_device_bytes_per_s: ceilings.map(|c| c.device_copy.gb_per_s() * 1e9),
        gpu_ops_per_s: r.compute.and_then(|c| c.gpu_ops_per_s),
        transfer_bytes_per_s: transfer,
        points,
    }
}
