//! GPU memory kept between runs: the ring of band and staging buffers, the input kept on the GPU,
//! and the set of both a converter owns.

pub(super) mod buffers;
pub(super) mod resident_input;
pub(super) mod ring;
