//! Planning a run, as arithmetic: row bands that fit one storage binding, the dispatch grid and
//! its parameters, chunks of rows within one submission's budget, the learnt submission budget
//! itself, and the host memory a run holds.

pub(super) mod bands;
pub(super) mod grid;
pub(super) mod host_memory;
pub(super) mod run_plan;
pub(super) mod submission_budget;

#[cfg(test)]
mod tests;
