//! The `graylab` binary: parses the command line; no command opens the desktop app.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    // Before any thread: under RLIMIT_AS, no 64 MiB malloc arena per thread (see the function).
    graylab::system::keep_one_malloc_arena_under_address_limit();
    if let Some(why) = std::env::args_os().nth(1).and_then(|first| graylab::cli::not_a_command(&first)) {
        let _ = writeln!(std::io::stderr(), "error: {why}");
        return ExitCode::from(2);
    }
    let cli = graylab::cli::Cli::try_parse().unwrap_or_else(|err| {
        graylab::cli::print_parse_error_as_json(&err);
        err.exit()
    });
    if cli.command.is_some() {
        // SAFETY: nothing has started a thread yet (parsing does not).
        unsafe { graylab::cli::quiet_driver_probing() };
    }
    // SAFETY: as above.
    let driver_cache_off = unsafe { graylab::cli::driver_cache_off_on_a_full_disk() };
    // RUST_LOG=info|debug|wgpu_hal=warn,… shows more; warnings (wgpu, eframe, graylab) by default.
    let mut logger = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"));
    if std::env::var_os("RUST_LOG").is_none() {
        // A warning reads as graylab's own do ("warning: …"), its source named where it is another crate.
        logger.format(|f, record| {
            let level = if record.level() == log::Level::Warn { "warning" } else { record.level().as_str() };
            let level = level.to_lowercase();
            match record.target() {
                t if t.starts_with("graylab") => writeln!(f, "{level}: {}", record.args()),
                t => writeln!(f, "{level} ({t}): {}", record.args()),
            }
        });
    }
    logger.init();
    if let Some(warning) = driver_cache_off {
        log::warn!("{warning}");
    }
    if let Err(e) = graylab::io::remove_temp_files_on_signals() {
        log::warn!("temporary files will not be removed on Ctrl+C: {e}");
    }
    // Only `convert` takes --allow-truncated: the others' advice names it.
    let takes_allow_truncated = matches!(cli.command, Some(graylab::cli::Command::Convert(_)));
    let result = match cli.command {
        Some(command) => graylab::cli::run(command),
        None => open_app(cli),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // Best effort: a failing stderr has nowhere to report to.
            let text = graylab::cli::describe_for(err.as_ref(), takes_allow_truncated);
            let _ = writeln!(std::io::stderr(), "error: {text}");
            graylab::cli::exit_code(&err)
        }
    }
}

#[cfg(feature = "gui")]
fn open_app(cli: graylab::cli::Cli) -> anyhow::Result<ExitCode> {
    // A log is a new file: never over the photo, a FIFO or anything else already there.
    if let Some(log) = cli.frame_log.as_deref().filter(|p| std::fs::symlink_metadata(p).is_ok()) {
        let why = format!("--frame-log: the file exists already: {} (name a new file)", log.display());
        return Err(graylab::cli::UsageError(why).into());
    }
    graylab::app::run(graylab::app::AppOptions {
        initial_path: cli.path,
        backend: cli.backend,
        continuous: cli.continuous,
        frame_log: cli.frame_log,
        quit_after_secs: cli.quit_after,
        ..Default::default()
    })?;
    // Closed by a signal (its window asked to close, the settings saved): said as the signal's.
    Ok(graylab::system::signals::stop_status().map_or(ExitCode::SUCCESS, ExitCode::from))
}

#[cfg(not(feature = "gui"))]
fn open_app(_cli: graylab::cli::Cli) -> anyhow::Result<ExitCode> {
    anyhow::bail!("this graylab was built without the desktop app (feature `gui`); see `graylab --help`")
}
