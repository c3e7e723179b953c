//! Reading images: sniffing the format, walking a JPEG's structure without decoding it, checking
//! that a file can hold what its header claims, and decoding within the memory budget.

pub(super) mod changes;
pub(super) mod claims;
pub(super) mod decode;
pub(super) mod jpeg_layout;
pub(super) mod jpeg_restarts;
pub(super) mod jpeg_scan;
pub(super) mod jpeg_variants;
pub(super) mod libjpeg;
pub(super) mod luma_stream;
pub(super) mod messages;
pub(super) mod orientation;
pub(super) mod pnm;
pub(super) mod restart_bands;
pub(super) mod sniff;
pub(super) mod stored_luma;
pub(super) mod tiff;
pub(super) mod tiff_header;
pub(super) mod webp;
