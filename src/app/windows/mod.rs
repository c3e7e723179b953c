//! The windows opened on demand: export, size sweep, parity, the tutorial's claims, and the
//! native file dialogs.

pub(super) mod claims_window;
pub(super) mod dialogs;
pub(super) mod export_window;
pub(super) mod parity_window;
pub(super) mod sweep_window;
