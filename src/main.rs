//! The `spider` binary: logging, then [`spider::cli::run`]; errors become exit
//! status 2 (1 means some pages failed, reported by the command itself).

use std::process::ExitCode;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SPIDER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match spider::cli::run(std::env::args_os()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("spider: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
