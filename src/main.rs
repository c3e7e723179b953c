//! The `graylab` binary: parses the command line; no command opens the desktop app.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = graylab::cli::Cli::parse();
    let result = match cli.command {
        Some(command) => graylab::cli::run(command),
        None => open_app(cli.path),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(feature = "gui")]
fn open_app(path: Option<std::path::PathBuf>) -> anyhow::Result<ExitCode> {
    graylab::app::run(path)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "gui"))]
fn open_app(_path: Option<std::path::PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("this graylab was built without the desktop app (feature `gui`); see `graylab --help`")
}
