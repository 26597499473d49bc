//! `spider serve`, `spider worker`, `spider token`, `spider healthcheck`.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use tokio::sync::{Notify, watch};

use super::open_store;
use crate::serve::worker::{self, WorkerOptions};
use crate::serve::{ServeOptions, token};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Pages a site needs before its rules are learned.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    min_pages: u32,
    /// Largest request body in bytes (larger uploads get 413).
    #[arg(long, default_value_t = 10 << 20)]
    max_body_bytes: usize,
    /// Learn workers inside the server (0: run `spider worker` processes instead).
    #[arg(long, default_value_t = 1)]
    workers: usize,
    #[command(flatten)]
    worker: WorkerArgs,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Seconds a worker owns a job without renewing it; a worker that dies loses its job after this long.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(3..))]
    lease_secs: u64,
    /// Seconds between looks at the queue when idle.
    #[arg(long, default_value_t = 2.0)]
    poll_secs: f64,
    /// Milliseconds to pause after claiming a job (tests stop workers mid-job with it).
    #[arg(long, default_value_t = 0, hide = true)]
    hold_ms: u64,
}

impl WorkerArgs {
    fn options(&self, once: bool) -> anyhow::Result<WorkerOptions> {
        if !(self.poll_secs.is_finite() && self.poll_secs > 0.0) {
            bail!("--poll-secs must be a positive number");
        }
        Ok(WorkerOptions {
            lease: Duration::from_secs(self.lease_secs),
            poll: Duration::from_secs_f64(self.poll_secs),
            once,
            hold: Duration::from_millis(self.hold_ms),
            ..WorkerOptions::default()
        })
    }
}

#[derive(Debug, Args)]
pub struct WorkerCommand {
    /// Learn what is queued, then exit (instead of waiting for more).
    #[arg(long)]
    once: bool,
    #[command(flatten)]
    worker: WorkerArgs,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token and print it (only its hash is stored: keep it).
    Create {
        /// A name for it (who or what uses it).
        name: String,
    },
    /// List the tokens' names.
    List,
    /// Delete a token: uploads with it get 401 from then on.
    Revoke {
        /// Its name.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    /// The server's health endpoint.
    #[arg(long, default_value = "http://127.0.0.1:8080/healthz")]
    url: String,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
}

/// A watch that turns true on Ctrl-C or SIGTERM.
fn shutdown_signal() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            _ = ctrl_c => {}
            _ = term => {}
        }
        tracing::info!("shutting down");
        let _ = tx.send(true);
    });
    rx
}

pub async fn serve(db: &str, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(db).await?;
    let options = ServeOptions {
        listen: args.listen,
        min_pages: args.min_pages as usize,
        max_body_bytes: args.max_body_bytes,
        workers: args.workers,
        worker: args.worker.options(false)?,
    };
    crate::serve::serve(store.clone(), options, shutdown_signal()).await?;
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

pub async fn worker(db: &str, args: WorkerCommand) -> anyhow::Result<ExitCode> {
    let store = open_store(db).await?;
    let name = worker::worker_name(0);
    eprintln!("worker {name} on {}", crate::store::redact(db));
    let learned = worker::run(
        store.clone(),
        name,
        args.worker.options(args.once)?,
        Arc::new(Notify::new()),
        shutdown_signal(),
    )
    .await;
    eprintln!("learned {learned} sites");
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

pub async fn token(db: &str, command: TokenCommand) -> anyhow::Result<ExitCode> {
    let store = open_store(db).await?;
    let mut out = std::io::stdout().lock();
    match command {
        TokenCommand::Create { name } => {
            if !token::valid_name(&name) {
                bail!("token names are 1 to 64 of A-Z a-z 0-9 - _ . @ (got {name:?})");
            }
            let secret = token::generate().context("no randomness for a token")?;
            if !store.put_token(&name, &token::hash(&secret)).await? {
                bail!("a token named {name:?} exists: `spider token revoke {name}` first");
            }
            writeln!(out, "{secret}")?;
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                eprintln!("token {name:?} created; only its hash is stored, so keep it now");
            }
        }
        TokenCommand::List => {
            for info in store.tokens().await? {
                writeln!(
                    out,
                    "{}\t{}",
                    info.name,
                    super::format_time(Some(info.created_at))
                )?;
            }
        }
        TokenCommand::Revoke { name } => {
            if !store.delete_token(&name).await? {
                bail!("no token named {name:?}");
            }
            writeln!(out, "revoked {name}")?;
        }
    }
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

pub async fn healthcheck(args: HealthcheckArgs) -> anyhow::Result<ExitCode> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs_f64(args.timeout.clamp(0.1, 600.0)))
        .build()?;
    match client.get(&args.url).send().await {
        Ok(response) if response.status().is_success() => {
            println!("{}", response.text().await.unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Ok(response) => {
            let status = response.status();
            eprintln!(
                "{}: {status} {}",
                args.url,
                response.text().await.unwrap_or_default()
            );
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!("{}: {e}", args.url);
            Ok(ExitCode::from(1))
        }
    }
}
