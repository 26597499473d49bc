//! The learn worker: claims queued sites from the store's queue and learns
//! them. The same loop runs inside `spider serve` and alone as `spider
//! worker`; any number of them can share one database (see
//! [`crate::store`]'s `learn_job` for how they stay off each other's sites).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, watch};

use crate::learn::{Learned, Learner, Params};
use crate::site::Site;
use crate::store::{Job, Store};

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// How long a claimed job is the worker's without renewal. A worker
    /// that dies loses its job to another after this long.
    pub lease: Duration,
    /// How often to look for work when nothing wakes the worker.
    pub poll: Duration,
    /// Stop when the queue is empty instead of waiting for more.
    pub once: bool,
    /// Jobs whose workers died this many times are marked failed.
    pub max_attempts: i64,
    /// Pause after claiming a job, before learning (tests use it to stop a
    /// worker mid-job).
    pub hold: Duration,
    /// Learner parameters.
    pub params: Params,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            lease: Duration::from_secs(60),
            poll: Duration::from_secs(2),
            once: false,
            max_attempts: 3,
            hold: Duration::ZERO,
            params: Params::default(),
        }
    }
}

/// A name for this worker, unique across processes and machines.
pub fn worker_name(index: usize) -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    let mut nonce = [0u8; 4];
    let _ = getrandom::fill(&mut nonce);
    format!(
        "{host}:{}:{index}:{:08x}",
        std::process::id(),
        u32::from_le_bytes(nonce)
    )
}

/// Runs jobs until `shutdown` turns true (or, with `once`, until the queue
/// is empty). `wake` is notified by the server when it queues a job, so an
/// in-process worker starts at once instead of at its next poll. Returns the
/// number of jobs it learned successfully.
pub async fn run(
    store: Store,
    name: String,
    options: WorkerOptions,
    wake: Arc<Notify>,
    mut shutdown: watch::Receiver<bool>,
) -> usize {
    let mut learned = 0;
    loop {
        if *shutdown.borrow() {
            break;
        }
        match store
            .claim_job(&name, options.lease, options.max_attempts)
            .await
        {
            Ok(Some(job)) => {
                tracing::info!(site = %job.site, worker = %name, attempt = job.attempts, "learning");
                if run_job(&store, &job, &options, &mut shutdown).await {
                    learned += 1;
                }
                continue;
            }
            Ok(None) if options.once => break,
            Ok(None) => {}
            Err(e) => tracing::error!("worker {name}: cannot read the queue: {e}"),
        }
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(options.poll) => {}
            _ = shutdown.changed() => {}
        }
    }
    learned
}

/// Learns one claimed job, renewing its lease meanwhile. True when rules
/// were stored.
async fn run_job(
    store: &Store,
    job: &Job,
    options: &WorkerOptions,
    shutdown: &mut watch::Receiver<bool>,
) -> bool {
    let work = async {
        if !options.hold.is_zero() {
            tokio::time::sleep(options.hold).await;
        }
        learn_job(store, &job.site, options.params.clone()).await
    };
    tokio::pin!(work);
    let mut renew = tokio::time::interval(options.lease / 3);
    renew.tick().await;
    let outcome = loop {
        tokio::select! {
            outcome = &mut work => break Some(outcome),
            _ = renew.tick() => match store.renew_lease(job, options.lease).await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::warn!(site = %job.site, "lost the job's lease; another worker has it");
                    return false;
                }
                Err(e) => tracing::warn!(site = %job.site, "cannot renew the lease: {e}"),
            },
            _ = shutdown.changed() => break None,
        }
    };
    let Some(outcome) = outcome else {
        // Shutting down mid-learn: give the job back rather than leave it
        // to wait out its lease.
        if let Err(e) = store.release_job(job).await {
            tracing::warn!(site = %job.site, "cannot release the job: {e}");
        }
        return false;
    };
    match outcome {
        Ok(learned) => {
            let report = serde_json::to_string(&learned.report).unwrap_or_else(|_| "{}".into());
            match store.finish_job(job, &learned.rules, &report).await {
                Ok(Some(rules)) => {
                    tracing::info!(site = %job.site, version = rules.version, "rules stored");
                    true
                }
                Ok(None) => {
                    tracing::warn!(site = %job.site, "learned, but the job was taken over; rules dropped");
                    false
                }
                Err(e) => {
                    tracing::error!(site = %job.site, "cannot store the rules: {e}");
                    let _ = store
                        .fail_job(job, &format!("cannot store the rules: {e}"))
                        .await;
                    false
                }
            }
        }
        Err(e) => {
            let message = format!("{e:#}");
            tracing::warn!(site = %job.site, "learn failed: {message}");
            if let Err(e) = store.fail_job(job, &message).await {
                tracing::error!(site = %job.site, "cannot record the failure: {e}");
            }
            false
        }
    }
}

async fn learn_job(store: &Store, site: &Site, params: Params) -> anyhow::Result<Learned> {
    let learner = learner_from_store(store, site, params, || {}).await?;
    Ok(tokio::task::spawn_blocking(move || learner.learn()).await??)
}

/// A learner fed with every stored capture of `site`, read one row at a
/// time; `on_page` is called after each (progress).
pub async fn learner_from_store(
    store: &Store,
    site: &Site,
    params: Params,
    mut on_page: impl FnMut(),
) -> anyhow::Result<Learner> {
    let params = params.check()?;
    let mut learner = Learner::new(site.clone(), params);
    let mut error = None;
    let mut seen = 0;
    store
        .for_each_capture(site, |capture| {
            seen += 1;
            on_page();
            if error.is_none()
                && let Err(e) = learner.add(capture)
            {
                error = Some(e);
            }
        })
        .await?;
    if let Some(e) = error {
        return Err(e.into());
    }
    if seen == 0 {
        anyhow::bail!("no captures of site {site}");
    }
    Ok(learner)
}
