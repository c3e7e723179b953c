//! Running a conversion: the job and its timings, recording each chunk's commands, the state of a
//! run in progress, the two drivers (pipelined with encoder timestamps, step by step on the CPU
//! clock), timing a kernel on data kept on the GPU, and round trips of several passes between one
//! upload and one download. Uses every layer below it.

pub(super) mod conversion;
pub(super) mod job;
pub(super) mod pipelined;
pub(super) mod record;
pub(super) mod resident;
pub(super) mod round_trip;
pub(super) mod stepwise;
