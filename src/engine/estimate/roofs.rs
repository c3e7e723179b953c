//! The lanes' ceilings from what `graylab info --probe` measured (and cached): the GPU end to
//! end priced step by step ([`steps_ns_per_pixel`], which the sweep's model prices too), the
//! CPU's streaming rate from the host's memcpy, a transfer at the copies' rates and latencies. A
//! lane priced so says its estimate rests on this machine's ceilings ([`super::Basis::Ceilings`])
//! until a run of it is seen.

use super::{BYTES_PER_PIXEL, Lane, Pace, Roof};
use crate::engine::CpuCompute;
use crate::gpu::{Bandwidth, GpuCeilings, GpuCompute, PLAIN_OPS_PER_PIXEL};

/// Bytes a pixel of the plain conversion reads and writes (RGB8 in, gray out).
pub(crate) const PLAIN_BYTES: (f64, f64) = (3.0, 1.0);

/// Nanoseconds `bytes` take at `b`'s ceiling.
fn ns(bytes: f64, b: &Bandwidth) -> f64 {
    bytes / b.gb_per_s().max(f64::MIN_POSITIVE)
}

/// The plain conversion's steps at `c`'s ceilings, nanoseconds a pixel: the host's copies (into
/// upload staging, out of readback memory), the GPU's copies (staging to device, device to
/// readback), and the kernel at the device-copy rate (its bytes read and written).
pub(crate) fn steps_ns_per_pixel(c: &GpuCeilings) -> (f64, f64, f64) {
    let (up, down) = PLAIN_BYTES;
    let host = ns(up, &c.host_to_staging) + ns(down, &c.readback_to_host);
    let copies = ns(up, &c.staging_to_device) + ns(down, &c.device_to_readback);
    (host, copies, ns(up + down, &c.device_copy))
}

/// The GPU's plain end-to-end nanoseconds a pixel at its ceilings, its steps one after the
/// other, the kernel at its own measured rate where known, else at the slower of the device copy
/// and its [`PLAIN_OPS_PER_PIXEL`] at the compute ceiling: lavapipe's kernel streams at a tenth
/// of its copy command and a fifth of that bound, so its sweep was priced at 8 s and took 27.
fn gpu_ns_per_pixel(c: &GpuCeilings) -> f64 {
    let (host, copies, kernel) = steps_ns_per_pixel(c);
    let ops_per_s = c.compute.as_ref().map(GpuCompute::ops_per_s);
    let modelled = kernel.max(ops_per_s.map_or(0.0, |o| PLAIN_OPS_PER_PIXEL / o.max(1.0) * 1e9));
    let kernel = c.plain_kernel.as_ref().map_or(modelled, |k| ns(PLAIN_BYTES.0 + PLAIN_BYTES.1, k));
    host + copies + kernel
}

impl Pace {
    /// Sets the ceilings measured on this machine, where known: the CPU's compute ceiling and its
    /// ops' rates (the prior of the CPU lanes' worked runs), and the GPU's probe
    /// ([`Self::set_gpu_ceilings`]).
    pub fn know_ceilings(&mut self, cpu: Option<&CpuCompute>, gpu: Option<&GpuCeilings>) {
        if let Some(c) = cpu {
            self.set_cpu_compute(c.ops_per_s(), c.threads);
            if let Some(rates) = c.op_rates {
                self.set_cpu_op_rates(rates, c.threads);
            }
        }
        if let Some(c) = gpu {
            self.set_gpu_ceilings(c);
        }
    }

    /// Sets the lanes' ceilings from the GPU's probe `c`: the GPU end to end costs the submit's
    /// and the copies' latencies a run, and a pixel the plain conversion's steps at their
    /// ceilings (its compute ceiling, where measured, prices its rounds); the CPU lanes stream
    /// at the host's memcpy rate (one thread at its share); a transfer costs the copies' mean
    /// latency and moves at the upload's and the download's rates as a whole, one of each. The
    /// CPU's compute ceiling stays as set ([`Pace::set_cpu_compute`]).
    pub fn set_gpu_ceilings(&mut self, c: &GpuCeilings) {
        if let Some(rates) = c.op_rates {
            self.set_op_rates(Lane::Gpu, rates);
        }
        let fixed_ns = c.submit_latency_ns as f64 + c.copy_latency_ns.map_or(0.0, |[up, down]| up + down);
        let gpu = Roof {
            bytes_per_s: BYTES_PER_PIXEL / gpu_ns_per_pixel(c).max(f64::MIN_POSITIVE) * 1e9,
            ops_per_s: c.compute.as_ref().map_or(self.roof(Lane::Gpu).ops_per_s, GpuCompute::ops_per_s),
            fixed_s: Some(fixed_ns / 1e9),
        };
        self.set_roof(Lane::Gpu, gpu);
        let (up, down) = (c.host_to_device_gb_per_s(), c.device_to_host_gb_per_s());
        let bytes_per_s = 2.0 / (1.0 / up.max(f64::MIN_POSITIVE) + 1.0 / down.max(f64::MIN_POSITIVE)) * 1e9;
        let mean_latency_ns =
            c.copy_latency_ns.map_or(c.submit_latency_ns as f64, |[u, d]| f64::midpoint(u, d));
        let transfer =
            Roof { bytes_per_s, fixed_s: Some(mean_latency_ns / 1e9), ..self.roof(Lane::Transfer) };
        self.set_roof(Lane::Transfer, transfer);
        let host_bytes_per_s = c.host_memcpy.gb_per_s() * 1e9;
        let threads = c.host_threads.max(1) as f64;
        for (lane, bytes_per_s) in
            [(Lane::CpuAllThreads, host_bytes_per_s), (Lane::CpuOneThread, host_bytes_per_s / threads)]
        {
            self.set_roof(lane, Roof { bytes_per_s, ..self.roof(lane) });
        }
    }
}
