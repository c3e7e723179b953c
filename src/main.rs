//! The `graylab` binary: parses the command line; no command opens the desktop app.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = graylab::cli::Cli::parse();
    let result = match cli.command {
        Some(command) => graylab::cli::run(command),
        None => open_app(cli),
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
fn open_app(cli: graylab::cli::Cli) -> anyhow::Result<ExitCode> {
    graylab::app::run(graylab::app::AppOptions {
        initial_path: cli.path,
        backend: cli.backend,
        continuous: cli.continuous,
        frame_log: cli.frame_log,
        quit_after_secs: cli.quit_after,
        ..Default::default()
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "gui"))]
fn open_app(_cli: graylab::cli::Cli) -> anyhow::Result<ExitCode> {
    anyhow::bail!("this graylab was built without the desktop app (feature `gui`); see `graylab --help`")
}
