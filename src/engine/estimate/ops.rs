//! What an op after the grayscale adds to a run ([`Pace::op_run`]): from the ops' rates measured
//! with this machine's ceilings ([`OpRates`]: the GPU's in its probe, the CPU's with its compute
//! ceiling), else as the synthetic rounds of as many operations a pixel.

use super::{Basis, Estimate, Lane, Pace, Part, THREE_TWO};
use crate::pixel::{Op, OpRates};

impl Pace {
    /// Sets what the ops cost on the CPU (`rates`, measured on all `threads`): one thread's
    /// blur costs the threads' count as much; the dither is one loop either way.
    pub fn set_cpu_op_rates(&mut self, rates: OpRates, threads: usize) {
        let one =
            OpRates { blur_ns_per_pixel_tap: rates.blur_ns_per_pixel_tap * threads.max(1) as f64, ..rates };
        self.set_op_rates(Lane::CpuAllThreads, rates);
        self.set_op_rates(Lane::CpuOneThread, one);
    }

    /// Sets what the ops cost on `lane`.
    pub fn set_op_rates(&mut self, lane: Lane, rates: OpRates) {
        self.op_rates.retain(|(l, _)| *l != lane);
        self.op_rates.push((lane, rates));
    }

    /// What `op` adds to a run of `lane` at `megapixels` and `rounds`: from the ops' measured
    /// rates on this lane (this machine's ceilings), else as the synthetic rounds of as many
    /// operations a pixel, at their pace here (an op is not its count: lavapipe's GPU blur took
    /// about 10x it).
    #[must_use]
    pub fn op_run(&self, lane: Lane, megapixels: f64, rounds: u32, op: Op) -> Estimate {
        self.op_run_shaped(&Part { lane, megapixels, rounds, op, runs: 1.0, height_per_width: THREE_TWO })
    }

    /// [`Self::op_run`] of one run of `part`, on an image of its shape.
    #[must_use]
    pub fn op_run_shaped(&self, part: &Part) -> Estimate {
        let Part { lane, megapixels, rounds, op, .. } = *part;
        if op.is_none() || lane == Lane::Transfer {
            return Estimate { seconds: 0.0, basis: Basis::Seen };
        }
        if let Some((_, rates)) = self.op_rates.iter().find(|(l, _)| *l == lane) {
            let seconds = rates.seconds(op, megapixels, part.height_per_width);
            return Estimate { seconds, basis: Basis::Ceilings };
        }
        let as_rounds = rounds.saturating_add(op.synthetic_rounds());
        let (with, without) = (self.run(lane, megapixels, as_rounds), self.run(lane, megapixels, rounds));
        Estimate { seconds: (with.seconds - without.seconds).max(0.0), basis: with.basis }
    }

    /// Whether the op rates of `lane` are known (measured with this machine's ceilings).
    #[must_use]
    pub fn op_rates_known(&self, lane: Lane) -> bool {
        self.op_rates.iter().any(|(l, _)| *l == lane)
    }

    /// One run of `lane` at `megapixels` and `rounds` with `op` after the grayscale, on a 3:2
    /// image.
    #[must_use]
    pub fn run_with_op(&self, lane: Lane, megapixels: f64, rounds: u32, op: Op) -> Estimate {
        self.part_run(&Part { lane, megapixels, rounds, op, runs: 1.0, height_per_width: THREE_TWO })
    }

    /// One run of `part` (its count of runs aside), its op priced on an image of its shape.
    #[must_use]
    pub fn part_run(&self, part: &Part) -> Estimate {
        let (run, op) = (self.run(part.lane, part.megapixels, part.rounds), self.op_run_shaped(part));
        Estimate { seconds: run.seconds + op.seconds, basis: run.basis.max(op.basis) }
    }
}
