//! The eframe desktop app (placeholder until the GUI lands).

/// Opens the desktop app.
pub fn run(_path: Option<std::path::PathBuf>) -> anyhow::Result<()> {
    anyhow::bail!("the desktop app is not built yet; use `graylab convert`, `bench` or `info`")
}
