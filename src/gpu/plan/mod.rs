//! Planning a run, as arithmetic: row bands that fit one storage binding, the dispatch grid and
//! its parameters, chunks of rows within one submission's budget, and the learnt submission
//! budget itself.

pub(super) mod bands;
pub(super) mod grid;
pub(super) mod run_plan;
pub(super) mod submission_budget;

#[cfg(test)]
mod tests;
