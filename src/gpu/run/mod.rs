//! Running a conversion: the job and its timings, recording each chunk's commands, the state of a
//! run in progress, the two drivers (pipelined with encoder timestamps, step by step on the CPU
//! clock), passes over data kept on the GPU (`kept_passes`), timing a kernel on such data, and
//! round trips of several passes between one upload and one download.

pub(super) mod conversion;
pub(super) mod job;
pub(super) mod kept_passes;
pub(super) mod pipelined;
pub(super) mod record;
pub(super) mod resident;
pub(super) mod round_trip;
pub(super) mod stepwise;
