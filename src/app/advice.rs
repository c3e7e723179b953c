//! Error messages in the app's own words: the error and its causes on one line, each cause once,
//! then what the user can do here (the CLI's advice names flags; the app names its controls).

use std::error::Error;

use crate::engine::{GpuError, causes};
use crate::io::IoError;

/// An error, its causes, and advice in the app's terms.
#[must_use]
pub fn describe(err: &(dyn Error + 'static)) -> String {
    let text = causes::one_line(err);
    match advice(err) {
        Some(hint) => format!("{text}. {hint}"),
        None => text,
    }
}

/// What the user can do about an error, in the app.
fn advice(err: &(dyn Error + 'static)) -> Option<&'static str> {
    for e in causes::chain(err) {
        match causes::io_error(e) {
            Some(IoError::Exists { .. }) => return Some("Choose Replace when asked, or another name."),
            Some(IoError::OutputIsFolder { .. }) => return Some("Add a file name to the folder."),
            Some(IoError::UnknownExportFormat { .. }) => {
                return Some("Pick a format, or end the name with .png, .jpg, .tif, .bmp or .webp.");
            }
            Some(IoError::TooLarge { .. } | IoError::FileTooLarge { .. }) => {
                return Some(
                    "The image open now and other programs hold memory: close them, or set \
                     GRAYLAB_MEMORY_BUDGET before starting graylab if the budget is wrong.",
                );
            }
            _ => {}
        }
        if causes::no_gpu(e) {
            return Some("Choose the CPU backend.");
        }
        if matches!(causes::gpu_error(e), Some(GpuError::OutOfMemory(_) | GpuError::RowTooLarge { .. })) {
            return Some("The CPU backend converts it without the GPU's limits.");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::engine::EngineError;

    #[test]
    fn advice_names_the_apps_controls_never_a_flag() {
        let exists = IoError::Exists { path: PathBuf::from("/tmp/out.png") };
        let text = describe(&EngineError::Io(exists));
        assert_eq!(text, "the output file exists: /tmp/out.png. Choose Replace when asked, or another name.");
        let gpu =
            describe(&EngineError::GpuUnavailable(std::sync::Arc::new(crate::engine::GpuError::NoAdapter)));
        assert!(gpu.ends_with("Choose the CPU backend."), "{gpu}");
        assert!(!text.contains("--") && !gpu.contains("--"));
    }
}
