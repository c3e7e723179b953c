//! The crossover modelled from this machine's ceilings: the GPU path with every step at its
//! probed ceiling against the CPU at its memory-stream baseline, and the size where they meet.
//!
//! Per pixel (RGB8 in, gray out: 3 bytes up, 4 through the kernel, 1 down), rates in GB/s:
//! - GPU end to end = latency + the copies' latencies + 3/host→staging + 3/staging→device +
//!   4/device-copy + 1/device→readback + 1/readback→host, one after the other;
//! - overlapped: the host copies beside the GPU's copies and kernel, the larger of the two;
//! - resident: latency + 4/device-copy;
//! - CPU = 4/memory-stream (all threads, at the sweep's largest size: its fastest cell's).
//!
//! `latency + g·P < c·P` from `P = latency / (c − g)` when `g < c`, never otherwise.

use crate::engine::estimate::{PLAIN_BYTES, steps_ns_per_pixel};
use crate::engine::sweep::result::{CostModel, ModelledPoint, SweepModel, SweepPoint, SweepResult};
use crate::gpu::GpuCeilings;

/// The CPU's memory-stream rate: the fastest of the cells' baselines (each a median of its runs)
/// at the sweep's largest size that has one, over every level: (megapixels, GB/s). The stream does
/// no work, so each level's cell measures the same stream again; the slow ones are the noise of
/// a machine busy with the cell's heavy runs (236 µs to 4.5 ms at 1 MP, 256 rounds, where the
/// 0-round cell's median was 197 µs), not a slower memory.
pub(crate) fn cpu_stream(r: &SweepResult) -> Option<(f64, f64)> {
    let baseline = |p: &SweepPoint| {
        p.cpu_stream.map(|s| (p.megapixels, p.megapixels * 1e6 * 4.0 / s.median_ns.max(1) as f64))
    };
    let largest = r.points.iter().filter_map(baseline).map(|(mp, _)| mp).reduce(f64::max)?;
    r.points
        .iter()
        .filter_map(baseline)
        .filter(|(mp, _)| mp.total_cmp(&largest).is_eq())
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
}

impl CostModel {
    /// The model of the plain conversion (RGB8 in, gray out: 3 bytes read, 1 written a pixel).
    #[must_use]
    pub fn new(c: &GpuCeilings, cpu_stream_gb_per_s: f64, gpu_latency_ns: f64) -> Self {
        let (host, copies, kernel) = steps_ns_per_pixel(c);
        let (in_bytes, out_bytes) = PLAIN_BYTES;
        Self {
            gpu_latency_ns,
            copy_latency_ns: 0.0,
            gpu_ns_per_pixel: host + copies + kernel,
            gpu_overlapped_ns_per_pixel: host.max(copies + kernel),
            gpu_resident_ns_per_pixel: kernel,
            cpu_ns_per_pixel: (in_bytes + out_bytes) / cpu_stream_gb_per_s.max(f64::MIN_POSITIVE),
        }
    }

    /// The same with the copies' fixed costs (`copy_latency_ns`, up and down) added to every
    /// end-to-end run.
    #[must_use]
    pub fn with_copy_latency(self, copy_latency_ns: f64) -> Self {
        Self { copy_latency_ns: copy_latency_ns.max(0.0), ..self }
    }

    /// The fixed cost of an end-to-end run: the dispatch's and the copies'.
    #[must_use]
    pub fn end_to_end_latency_ns(&self) -> f64 {
        self.gpu_latency_ns + self.copy_latency_ns
    }

    /// The modelled times at `pixels`.
    #[must_use]
    pub fn at(&self, pixels: f64) -> ModelledPoint {
        let ns = |v: f64| v.round() as u64;
        let end_to_end = self.end_to_end_latency_ns();
        ModelledPoint {
            gpu_total_ns: ns(end_to_end + pixels * self.gpu_ns_per_pixel),
            gpu_overlapped_ns: ns(end_to_end + pixels * self.gpu_overlapped_ns_per_pixel),
            gpu_resident_ns: ns(self.gpu_latency_ns + pixels * self.gpu_resident_ns_per_pixel),
            cpu_ns: ns(pixels * self.cpu_ns_per_pixel),
        }
    }
}

/// The smallest size in megapixels from which `latency + gpu·P` is below `cpu·P`: `None` when
/// never (a GPU pixel costs no less than a CPU pixel), 0 when at any size.
#[must_use]
pub fn crossover_mp(latency_ns: f64, gpu_ns_per_pixel: f64, cpu_ns_per_pixel: f64) -> Option<f64> {
    let saving = cpu_ns_per_pixel - gpu_ns_per_pixel;
    (saving > 0.0).then(|| latency_ns.max(0.0) / saving / 1e6)
}

/// Fills `r.model` and the modelled times of the points at 0 rounds from `r.ceilings`, the
/// stream baseline and the measured dispatch latency (else the probe's submit latency); nothing
/// without ceilings or a baseline, nor where a cell ran an op.
pub(crate) fn model_sweep(r: &mut SweepResult) {
    r.model = None;
    if r.has_op() {
        return;
    }
    let Some((cpu_stream_mp, cpu_gb_per_s)) = cpu_stream(r) else { return };
    let Some(c) = &r.ceilings else { return };
    let (latency_ns, latency_from) = match r.dispatch_latency_ns {
        Some(ns) => (ns as f64, "the sweep's resident times at its two smallest sizes, extended to 0 pixels"),
        None => (c.submit_latency_ns as f64, "the probe's submit-and-wait latency"),
    };
    let copies = r.copy_latency.map_or(0.0, crate::engine::ceilings::CopyLatency::total_ns);
    let cost = CostModel::new(c, cpu_gb_per_s, latency_ns).with_copy_latency(copies);
    let latency_from = match r.copy_latency {
        Some(l) => format!(
            "{latency_from}, plus the copies' fitted latencies ({:.1} µs up, {:.1} µs down) end to end",
            l.up_ns / 1e3,
            l.down_ns / 1e3
        ),
        None => latency_from.to_owned(),
    };
    for p in r.points.iter_mut().filter(|p| p.work_rounds == 0) {
        p.modelled = Some(cost.at(p.megapixels * 1e6));
    }
    let cross =
        |latency_ns, gpu_ns_per_pixel| crossover_mp(latency_ns, gpu_ns_per_pixel, cost.cpu_ns_per_pixel);
    r.model = Some(Box::new(SweepModel {
        cost,
        latency_from,
        cpu_stream_mp,
        crossover_mp: cross(cost.end_to_end_latency_ns(), cost.gpu_ns_per_pixel),
        overlapped_crossover_mp: cross(cost.end_to_end_latency_ns(), cost.gpu_overlapped_ns_per_pixel),
        resident_crossover_mp: cross(latency_ns, cost.gpu_resident_ns_per_pixel),
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ceilings::rates::example_ceilings;

    #[test]
    fn the_stream_is_the_fastest_cells_at_the_largest_size_whatever_its_level() {
        use crate::engine::sweep::grid::Series;
        use crate::engine::sweep::result::one_run;
        // The 1-MP cells of a work grid: 197 µs at 0 rounds, 2,802 µs (a busy cell) at 256.
        let cell = |mp: f64, k: u32, stream_ns: u64| SweepPoint {
            cpu_stream: Some(one_run(stream_ns)),
            work_rounds: k,
            ..SweepPoint::for_tests(mp, &[(Series::CpuAll, 1000)])
        };
        let r = SweepResult::for_tests(vec![
            cell(0.25, 0, 40_000),
            cell(1.0, 0, 197_000),
            cell(0.25, 16, 45_000),
            cell(1.0, 16, 240_000),
            cell(0.25, 256, 60_000),
            cell(1.0, 256, 2_802_000),
        ]);
        let (mp, gb_per_s) = cpu_stream(&r).expect("a stream");
        assert!((mp - 1.0).abs() < 1e-12);
        // 4 MB in 197 µs: 20.3 GB/s, not the 256-round cell's 1.43.
        assert!((gb_per_s - 4e6 / 197_000.0).abs() < 1e-9, "{gb_per_s}");
        // The smaller size's faster stream (in cache) is not the roof.
        assert!(gb_per_s < 4e6 * 0.25 / 40_000.0);
        assert_eq!(cpu_stream(&SweepResult::for_tests(Vec::new())), None);
    }

    #[test]
    fn costs_per_pixel_from_fixed_ceilings() {
        // 32 GB/s host→staging, 128 staging→device, 3200 device copy, 64 down each way.
        let m = CostModel::new(&example_ceilings(), 40.0, 20_000.0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // Host: 3/32 + 1/64 = 0.109375; GPU: 3/128 + 4/3200 + 1/64 = 0.0403125.
        assert!(close(m.gpu_ns_per_pixel, 0.149_687_5), "{m:?}");
        assert!(close(m.gpu_overlapped_ns_per_pixel, 0.109_375), "{m:?}");
        assert!(close(m.gpu_resident_ns_per_pixel, 0.00125), "{m:?}");
        assert!(close(m.cpu_ns_per_pixel, 0.1), "{m:?}");
        let at = m.at(2e6);
        assert_eq!(
            (at.gpu_total_ns, at.gpu_overlapped_ns, at.gpu_resident_ns, at.cpu_ns),
            (319_375, 238_750, 22_500, 200_000)
        );
        // End to end the GPU never wins (0.15 > 0.1 ns per pixel), not even overlapped; resident
        // it wins from 20 µs / (0.1 − 0.00125) ns = 0.2025 MP.
        assert_eq!(crossover_mp(m.gpu_latency_ns, m.gpu_ns_per_pixel, m.cpu_ns_per_pixel), None);
        assert_eq!(crossover_mp(m.gpu_latency_ns, m.gpu_overlapped_ns_per_pixel, m.cpu_ns_per_pixel), None);
        let resident = crossover_mp(m.gpu_latency_ns, m.gpu_resident_ns_per_pixel, m.cpu_ns_per_pixel);
        assert!(resident.is_some_and(|mp| (mp - 0.202_531_645_569_620_25).abs() < 1e-12), "{resident:?}");
        // A slow CPU (4 GB/s: 1 ns a pixel): the GPU wins above 20 µs / 0.8503125 ns = 0.0235 MP.
        let slow = CostModel::new(&example_ceilings(), 4.0, 20_000.0);
        let mp = crossover_mp(slow.gpu_latency_ns, slow.gpu_ns_per_pixel, slow.cpu_ns_per_pixel);
        assert!(mp.is_some_and(|mp| (mp - 0.02 / 0.850_312_5).abs() < 1e-12), "{mp:?}");
        assert_eq!(crossover_mp(0.0, 0.5, 1.0), Some(0.0));
    }

    #[test]
    fn the_copies_latency_moves_the_end_to_end_crossover_not_the_resident_one() {
        // The slow CPU above, with 80 µs of fitted copy latency up and down.
        let plain = CostModel::new(&example_ceilings(), 4.0, 20_000.0);
        let m = plain.with_copy_latency(80_000.0);
        assert!((m.end_to_end_latency_ns() - 100_000.0).abs() < 1e-9);
        let (at, before) = (m.at(1e6), plain.at(1e6));
        assert_eq!(at.gpu_total_ns - before.gpu_total_ns, 80_000, "end to end pays the copies' latency");
        assert_eq!(at.gpu_overlapped_ns - before.gpu_overlapped_ns, 80_000);
        assert_eq!(at.gpu_resident_ns, before.gpu_resident_ns, "resident makes no copies");
        // From 0.0235 MP to 100 µs / 0.8503125 ns = 0.1176 MP.
        let mp = crossover_mp(m.end_to_end_latency_ns(), m.gpu_ns_per_pixel, m.cpu_ns_per_pixel);
        assert!(mp.is_some_and(|mp| (mp - 0.1 / 0.850_312_5).abs() < 1e-12), "{mp:?}");
        // Sweeps saved before the fit read with no copy latency.
        let json = serde_json::to_value(plain).expect("json");
        let mut old = json.as_object().expect("object").clone();
        old.remove("copy_latency_ns");
        let read: CostModel = serde_json::from_value(old.into()).expect("an older model");
        assert_eq!(read, plain);
    }
}
