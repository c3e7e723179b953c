//! Writing images: the export formats and their encoders, and atomic writes
//! (a failed export never leaves a half file and never replaces one without consent), and the
//! progress of the encoders that report none (`progress`), graylab's TIFF writer (`tiff`), a
//! BMP's pixel density (`bmp`), and output folders that runs share (`folders`).

pub(super) mod atomic;
mod bmp;
pub(super) mod encode;
pub(super) mod folders;
mod progress;
mod tiff;
