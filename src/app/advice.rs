//! Error messages in the app's own words: the error and its causes on one line, each cause once,
//! then what the user can do here (the CLI's advice names flags; the app names its controls).

use std::error::Error;

use crate::engine::{EngineError, GpuError, IoError};

/// An error, its causes, and advice in the app's terms.
#[must_use]
pub fn describe(err: &(dyn Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let line = c.to_string();
        // Transparent wrappers repeat their inner error's text.
        if !text.ends_with(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        cause = c.source();
    }
    if let Some(hint) = advice(err) {
        text.push_str(". ");
        text.push_str(hint);
    }
    text
}

/// What the user can do about an error, in the app.
fn advice(err: &(dyn Error + 'static)) -> Option<&'static str> {
    let mut current = Some(err);
    while let Some(e) = current {
        let io = e.downcast_ref::<IoError>().or_else(|| match e.downcast_ref::<EngineError>() {
            Some(EngineError::Io(io)) => Some(io),
            _ => None,
        });
        match io {
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
        if matches!(e.downcast_ref::<EngineError>(), Some(EngineError::GpuUnavailable(_)))
            || matches!(e.downcast_ref::<GpuError>(), Some(GpuError::NoAdapter))
        {
            return Some("Choose the CPU backend.");
        }
        if matches!(
            e.downcast_ref::<EngineError>(),
            Some(EngineError::Gpu(GpuError::OutOfMemory(_) | GpuError::RowTooLarge { .. }))
        ) || matches!(
            e.downcast_ref::<GpuError>(),
            Some(GpuError::OutOfMemory(_) | GpuError::RowTooLarge { .. })
        ) {
            return Some("The CPU backend converts it without the GPU's limits.");
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn advice_names_the_apps_controls_never_a_flag() {
        let exists = IoError::Exists { path: PathBuf::from("/tmp/out.png") };
        let text = describe(&EngineError::Io(exists));
        assert_eq!(text, "the output file exists: /tmp/out.png. Choose Replace when asked, or another name.");
        let gpu = describe(&EngineError::GpuUnavailable("no adapter".into()));
        assert!(gpu.ends_with("Choose the CPU backend."), "{gpu}");
        assert!(!text.contains("--") && !gpu.contains("--"));
    }
}
