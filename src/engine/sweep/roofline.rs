//! The roofline: this machine's roofs (the CPU's memory stream and compute, the GPU's device
//! bandwidth and compute, the round trip's transfers) and one point per measured cell and
//! series: its [`cell_ops_per_pixel`] over the bytes a pixel moves through the memory of its
//! series' roof ([`bytes_per_pixel`]: a blur's differ on the CPU and the GPU; the divergent
//! variant counted as asked, like [`crate::engine::WorkFigures`]).

use crate::engine::estimate::PLAIN_BYTES;
use crate::engine::sweep::grid::{Roofline, RooflinePoint, Series, cell_ops_per_pixel};
use crate::engine::sweep::model::cpu_stream;
use crate::engine::sweep::result::SweepResult;
use crate::pixel::Op;

/// Bytes an op moves per pixel through the CPU's memory: the gray plane read once and written
/// once. The blur's other reads stay in cache: each source row is read again by the `2R + 1`
/// output rows around it while they are in L2, and its one row of u32 sums is in L1
/// (`src/cpu/ops/blur.rs`); the dither's two rows of errors are in L1.
pub(crate) const CPU_OP_BYTES_PER_PIXEL: f64 = 2.0;

/// Bytes the blur moves per pixel through the GPU's device memory (`shaders/blur.wgsl`): the
/// gray plane read (1), its intermediate `mid`, one u32 a pixel, written by `blur_rows` (4) and
/// read back by `blur_cols` (4), the result written (1); each apron counted once.
pub(crate) const GPU_BLUR_BYTES_PER_PIXEL: f64 = 10.0;

/// Bytes the dither moves per pixel through the GPU's device memory: the gray plane read and
/// the result written (its ring of four rows of errors stays in cache).
pub(crate) const GPU_DITHER_BYTES_PER_PIXEL: f64 = 2.0;

/// The bytes a pixel of a cell running `op` moves through the memory the roof of `series`
/// stands for (the CPU's, or the GPU's device memory): the conversion's, and the op's.
#[must_use]
pub(crate) fn bytes_per_pixel(op: Op, series: Series) -> f64 {
    let (in_bytes, out_bytes) = PLAIN_BYTES;
    let on_cpu = matches!(series, Series::Cpu1 | Series::CpuAll);
    let op_bytes = match op {
        Op::None => 0.0,
        _ if on_cpu => CPU_OP_BYTES_PER_PIXEL,
        Op::Blur { .. } => GPU_BLUR_BYTES_PER_PIXEL,
        Op::Dither => GPU_DITHER_BYTES_PER_PIXEL,
    };
    in_bytes + out_bytes + op_bytes
}

/// The roofline of `r`: its roofs from the stream baseline, `r.compute` and `r.ceilings`, and its
/// measured points.
#[must_use]
pub fn roofline(r: &SweepResult) -> Roofline {
    let (in_bytes, out_bytes) = PLAIN_BYTES;
    // The GPU's points' bytes a pixel: the x axis the transfer roof is drawn on (every cell of a
    // sweep runs the same kind of op; the most where they would differ).
    let gpu_bytes =
        r.points.iter().map(|p| bytes_per_pixel(p.op, Series::GpuTotal)).fold(in_bytes + out_bytes, f64::max);
    let ceilings = r.ceilings.as_deref();
    // The image up, then the result down, one after the other: a pixel's bytes per second.
    let transfer = ceilings.map(|c| {
        let up = c.host_to_device_gb_per_s().max(f64::MIN_POSITIVE);
        let down = c.device_to_host_gb_per_s().max(f64::MIN_POSITIVE);
        gpu_bytes / (in_bytes / up + out_bytes / down) * 1e9
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
                ops_per_byte: ops / bytes_per_pixel(p.op, series),
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
