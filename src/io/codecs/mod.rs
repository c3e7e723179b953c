//! graylab's own encoders, faster than the `image` crate's for gray output: PNG (parallel deflate
//! stripes) and baseline JPEG. Both code stripes in parallel, from gray rows asked for on demand,
//! and write them in order.

pub(super) mod jpeg;
pub(super) mod png;
pub(super) mod rows;
pub(super) mod stripes;
