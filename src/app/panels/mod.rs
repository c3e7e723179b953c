//! The panels always on screen: the top bar, the settings on the left, the adapter panel, the
//! status bar and the frame meter; the work-per-pixel control and line (`work`).

pub(super) mod adapter;
pub(super) mod controls;
pub(super) mod frame_meter;
pub(super) mod op;
pub(super) mod status_bar;
pub(super) mod top_bar;
pub(super) mod work;
