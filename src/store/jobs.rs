//! The learning queue (`learn_job` table) and uploads that feed it.
//!
//! One row per site. An upload stores its capture and, once the site has
//! enough pages, marks the site's row `queued` in the same transaction. A
//! worker claims a queued row by setting it `running` with a lease it renews
//! while it learns; a row whose lease ran out was left by a worker that died
//! and is claimed again. Uploads that arrive while a site is `running` set
//! `rerun`, and finishing turns `rerun` into one follow-up `queued`: any
//! number of uploads during a learn cost one more learn.
//!
//! Claiming is one `UPDATE`: on PostgreSQL its subquery takes the row `FOR
//! UPDATE SKIP LOCKED`, so concurrent workers pick different sites; SQLite
//! runs one writer at a time, so the statement is atomic there as it is.
//! Finishing writes the rules version and the job's new state in one
//! transaction, and only while the worker still holds the job: a worker that
//! lost its lease cannot overwrite anything.

use std::time::Duration;

use serde::Serialize;
use sqlx::Row;
use time::OffsetDateTime;

use super::rules::insert_rules;
use super::{NewCapture, Store, StoreError, Stored, site_from_db};
use crate::capture::Capture;
use crate::rules::Rules;
use crate::site::Site;

/// Where a site's learning stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Never requested: the site has fewer pages than the server asks for.
    None,
    /// Waiting for a worker.
    Queued,
    /// A worker is learning it.
    Running,
    /// The last learn succeeded.
    Done,
    /// The last learn failed (see the error); the next new page retries.
    Failed,
}

impl JobState {
    fn parse(s: &str) -> Result<JobState, StoreError> {
        Ok(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            other => {
                return Err(StoreError::Corrupt {
                    url: "learn_job".into(),
                    reason: format!("unknown state {other:?}"),
                });
            }
        })
    }
}

/// A site's learn job as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LearnStatus {
    /// The state.
    pub state: JobState,
    /// Pages arrived during the running learn: one more learn follows it.
    pub rerun: bool,
    /// Attempts at the current job (a retried job, after a worker died, has
    /// more than one).
    pub attempts: i64,
    /// Why the last learn failed.
    pub error: Option<String>,
    /// When the job was queued.
    #[serde(with = "time::serde::rfc3339::option")]
    pub requested_at: Option<OffsetDateTime>,
    /// When the current or last learn started.
    #[serde(with = "time::serde::rfc3339::option")]
    pub started_at: Option<OffsetDateTime>,
    /// When the last learn ended.
    #[serde(with = "time::serde::rfc3339::option")]
    pub finished_at: Option<OffsetDateTime>,
    /// The worker holding the job, while it runs.
    pub worker: Option<String>,
    /// The rules version the last successful learn stored.
    pub rules_version: Option<i64>,
}

impl LearnStatus {
    /// The status of a site no learn was asked for.
    pub fn none() -> LearnStatus {
        LearnStatus {
            state: JobState::None,
            rerun: false,
            attempts: 0,
            error: None,
            requested_at: None,
            started_at: None,
            finished_at: None,
            worker: None,
            rules_version: None,
        }
    }
}

/// A site with its page count, current rules version and learn state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiteOverview {
    /// The site.
    pub site: Site,
    /// Stored captures.
    pub pages: i64,
    /// Time of the newest capture.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_captured_at: Option<OffsetDateTime>,
    /// The current rules version, if any.
    pub rules_version: Option<i64>,
    /// The learn job's state.
    pub learn: JobState,
}

/// What an upload did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upload {
    /// Inserted or replaced.
    pub stored: Stored,
    /// The site's pages after it.
    pub pages: i64,
    /// Whether it asked for a learn (a new job, or a follow-up of a running one).
    pub queued: bool,
}

/// A job a worker holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The site to learn.
    pub site: Site,
    site_id: i64,
    /// The worker's name.
    pub worker: String,
    /// 1 for a first attempt; more when an earlier worker died holding it.
    pub attempts: i64,
}

fn now_ms() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2)
}

/// Queues a learn of `site_id` inside a transaction: a new or finished row
/// becomes `queued`; a queued row stays as it is; a running row gets
/// `rerun`.
macro_rules! request_learn {
    ($tx:ident, $site_id:expr, $now:expr) => {
        sqlx::query(
            "INSERT INTO learn_job (site_id, state, rerun, requested_at, attempts) \
             VALUES ($1, 'queued', FALSE, $2, 0) \
             ON CONFLICT (site_id) DO UPDATE SET \
             rerun = CASE WHEN learn_job.state = 'running' THEN TRUE ELSE learn_job.rerun END, \
             requested_at = CASE WHEN learn_job.state IN ('running', 'queued') \
                 THEN learn_job.requested_at ELSE excluded.requested_at END, \
             attempts = CASE WHEN learn_job.state IN ('running', 'queued') \
                 THEN learn_job.attempts ELSE 0 END, \
             state = CASE WHEN learn_job.state = 'running' THEN 'running' ELSE 'queued' END",
        )
        .bind($site_id)
        .bind($now)
        .execute(&mut *$tx)
        .await?
    };
}

/// The claim statement up to its subquery's `LIMIT 1` (the caller adds
/// the backend's locking clause and the closing parenthesis).
macro_rules! claim_sql {
    () => {
        "UPDATE learn_job SET state = 'running', worker = $1, started_at = $2, \
         lease_until = $3, attempts = attempts + 1, rerun = FALSE, error = NULL \
         WHERE site_id = (SELECT site_id FROM learn_job WHERE state = 'queued' \
         OR (state = 'running' AND lease_until < $4) ORDER BY requested_at LIMIT 1"
    };
}

impl Store {
    /// Stores an uploaded capture and, when its site then has at least
    /// `min_pages` pages, asks for a learn, all in one transaction.
    pub async fn put_upload(
        &self,
        capture: &Capture,
        min_pages: usize,
    ) -> Result<Upload, StoreError> {
        let row = NewCapture::of(capture);
        let min_pages = min_pages as i64;
        let _writing = self.writing().await;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let (site_id, stored) = insert_capture!(tx, capture, row);
            let pages: i64 = sqlx::query("SELECT COUNT(*) FROM capture WHERE site_id = $1")
                .bind(site_id)
                .fetch_one(&mut *tx)
                .await?
                .try_get(0)?;
            let mut queued = false;
            if pages >= min_pages {
                // A new page always counts. A page stored again counts only
                // while the site has no rules and no learn under way: it
                // retries a failed learn, but does not re-learn what the
                // same pages taught.
                let wanted = stored == Stored::Inserted
                    || sqlx::query(
                        "SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM rule_set WHERE site_id = $1) \
                         AND NOT EXISTS (SELECT 1 FROM learn_job WHERE site_id = $1 \
                         AND state IN ('queued', 'running'))",
                    )
                    .bind(site_id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .is_some();
                if wanted {
                    request_learn!(tx, site_id, row.now);
                    queued = true;
                }
            }
            tx.commit().await?;
            Ok(Upload { stored, pages, queued })
        })
    }

    /// Asks for a learn of a stored site (as an upload would), whatever its
    /// page count. False when the site is unknown.
    pub async fn request_learn(&self, site: &Site) -> Result<bool, StoreError> {
        let now = OffsetDateTime::now_utc();
        let _writing = self.writing().await;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let Some(row) = sqlx::query("SELECT site_id FROM site WHERE name = $1")
                .bind(site.as_str())
                .fetch_optional(&mut *tx)
                .await?
            else {
                return Ok(false);
            };
            let site_id: i64 = row.try_get(0)?;
            request_learn!(tx, site_id, now);
            tx.commit().await?;
            Ok(true)
        })
    }

    /// Takes the oldest queued job, or a running one whose lease ran out,
    /// for `worker`, leased for `lease`. Jobs whose workers died
    /// `max_attempts` times are marked failed instead of tried again.
    pub async fn claim_job(
        &self,
        worker: &str,
        lease: Duration,
        max_attempts: i64,
    ) -> Result<Option<Job>, StoreError> {
        let now = OffsetDateTime::now_utc();
        let now_ms = now_ms();
        let until = now_ms.saturating_add(lease_ms(lease));
        const GIVE_UP: &str = "UPDATE learn_job SET state = 'failed', lease_until = NULL, \
             worker = NULL, finished_at = $1, rerun = FALSE, \
             error = 'the workers learning this site stopped before finishing ' || attempts || ' times' \
             WHERE state = 'running' AND lease_until < $2 AND attempts >= $3";
        // One statement either way; PostgreSQL's subquery locks the row it
        // picks and skips rows other workers are claiming.
        let claim = match self {
            Store::Sqlite(..) => concat!(claim_sql!(), ")", " RETURNING site_id, attempts"),
            Store::Postgres(_) => concat!(
                claim_sql!(),
                " FOR UPDATE SKIP LOCKED)",
                " RETURNING site_id, attempts"
            ),
        };
        let _writing = self.writing().await;
        let row = on_pool!(self, pool => {
            sqlx::query(GIVE_UP)
                .bind(now)
                .bind(now_ms)
                .bind(max_attempts)
                .execute(pool)
                .await?;
            sqlx::query(claim)
                .bind(worker)
                .bind(now)
                .bind(until)
                .bind(now_ms)
                .fetch_optional(pool)
                .await?
                .map(|row| -> Result<(i64, i64), sqlx::Error> {
                    Ok((row.try_get(0)?, row.try_get(1)?))
                })
                .transpose()?
        });
        let Some((site_id, attempts)) = row else {
            return Ok(None);
        };
        let name: String = on_pool!(self, pool => {
            sqlx::query("SELECT name FROM site WHERE site_id = $1")
                .bind(site_id)
                .fetch_one(pool)
                .await?
                .try_get(0)?
        });
        Ok(Some(Job {
            site: site_from_db(&name)?,
            site_id,
            worker: worker.to_string(),
            attempts,
        }))
    }

    /// Extends the worker's lease on its job. False when the job is no
    /// longer the worker's (its lease ran out and another worker took it).
    pub async fn renew_lease(&self, job: &Job, lease: Duration) -> Result<bool, StoreError> {
        let until = now_ms().saturating_add(lease_ms(lease));
        let _writing = self.writing().await;
        let done = on_pool!(self, pool => {
            sqlx::query(
                "UPDATE learn_job SET lease_until = $1 \
                 WHERE site_id = $2 AND worker = $3 AND state = 'running'",
            )
            .bind(until)
            .bind(job.site_id)
            .bind(&job.worker)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Stores the learned rules as the site's next version and closes the
    /// job, in one transaction; a follow-up learn is queued when pages came
    /// in meanwhile. `None` (and nothing stored) when the job is no longer
    /// this worker's.
    pub async fn finish_job(
        &self,
        job: &Job,
        rules: &Rules,
        report: &str,
    ) -> Result<Option<Rules>, StoreError> {
        let now = OffsetDateTime::now_utc();
        let _writing = self.writing().await;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            // Written first: it takes SQLite's write lock and, on PostgreSQL,
            // the row lock, and proves the job is still ours.
            let held = sqlx::query(
                "UPDATE learn_job SET \
                 state = CASE WHEN rerun THEN 'queued' ELSE 'done' END, \
                 requested_at = CASE WHEN rerun THEN $1 ELSE requested_at END, \
                 attempts = CASE WHEN rerun THEN 0 ELSE attempts END, \
                 rerun = FALSE, finished_at = $1, lease_until = NULL, worker = NULL, error = NULL \
                 WHERE site_id = $2 AND worker = $3 AND state = 'running'",
            )
            .bind(now)
            .bind(job.site_id)
            .bind(&job.worker)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if held != 1 {
                tx.rollback().await?;
                return Ok(None);
            }
            let version = insert_rules!(tx, job.site_id, rules, report);
            sqlx::query("UPDATE learn_job SET rules_version = $1 WHERE site_id = $2")
                .bind(version)
                .bind(job.site_id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Some(Rules { version, ..rules.clone() }))
        })
    }

    /// Records that the learn failed; the job is queued again when pages
    /// came in meanwhile (they may be what it lacked). False when the job
    /// is no longer this worker's.
    pub async fn fail_job(&self, job: &Job, error: &str) -> Result<bool, StoreError> {
        let now = OffsetDateTime::now_utc();
        let _writing = self.writing().await;
        let done = on_pool!(self, pool => {
            sqlx::query(
                "UPDATE learn_job SET \
                 state = CASE WHEN rerun THEN 'queued' ELSE 'failed' END, \
                 requested_at = CASE WHEN rerun THEN $1 ELSE requested_at END, \
                 rerun = FALSE, finished_at = $1, lease_until = NULL, worker = NULL, error = $2 \
                 WHERE site_id = $3 AND worker = $4 AND state = 'running'",
            )
            .bind(now)
            .bind(error)
            .bind(job.site_id)
            .bind(&job.worker)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Gives a job back unfinished (the worker is shutting down): it is
    /// queued again and this attempt does not count.
    pub async fn release_job(&self, job: &Job) -> Result<(), StoreError> {
        let _writing = self.writing().await;
        on_pool!(self, pool => {
            sqlx::query(
                "UPDATE learn_job SET state = 'queued', worker = NULL, lease_until = NULL, \
                 attempts = attempts - 1 WHERE site_id = $1 AND worker = $2 AND state = 'running'",
            )
            .bind(job.site_id)
            .bind(&job.worker)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// A site's learn status; `None` when the site is unknown.
    pub async fn learn_status(&self, site: &Site) -> Result<Option<LearnStatus>, StoreError> {
        type Fields = (
            Option<String>,
            Option<bool>,
            Option<i64>,
            Option<String>,
            Option<OffsetDateTime>,
            Option<OffsetDateTime>,
            Option<OffsetDateTime>,
            Option<String>,
            Option<i64>,
        );
        let row: Option<Fields> = on_pool!(self, pool => {
            sqlx::query(
                "SELECT j.state, j.rerun, j.attempts, j.error, j.requested_at, j.started_at, \
                 j.finished_at, j.worker, j.rules_version FROM site s \
                 LEFT JOIN learn_job j ON j.site_id = s.site_id WHERE s.name = $1",
            )
            .bind(site.as_str())
            .fetch_optional(pool)
            .await?
            .map(|r| -> Result<Fields, sqlx::Error> {
                Ok((
                    r.try_get(0)?,
                    r.try_get(1)?,
                    r.try_get(2)?,
                    r.try_get(3)?,
                    r.try_get(4)?,
                    r.try_get(5)?,
                    r.try_get(6)?,
                    r.try_get(7)?,
                    r.try_get(8)?,
                ))
            })
            .transpose()?
        });
        let Some((state, rerun, attempts, error, requested, started, finished, worker, version)) =
            row
        else {
            return Ok(None);
        };
        let Some(state) = state else {
            return Ok(Some(LearnStatus::none()));
        };
        Ok(Some(LearnStatus {
            state: JobState::parse(&state)?,
            rerun: rerun.unwrap_or(false),
            attempts: attempts.unwrap_or(0),
            error,
            requested_at: requested,
            started_at: started,
            finished_at: finished,
            worker,
            rules_version: version,
        }))
    }

    /// Every site with its pages, current rules version and learn state.
    pub async fn site_overviews(&self) -> Result<Vec<SiteOverview>, StoreError> {
        type Fields = (
            String,
            i64,
            Option<OffsetDateTime>,
            Option<i64>,
            Option<String>,
        );
        let rows: Vec<Fields> = on_pool!(self, pool => {
            sqlx::query(
                "SELECT s.name, \
                 (SELECT COUNT(*) FROM capture c WHERE c.site_id = s.site_id), \
                 (SELECT MAX(c.captured_at) FROM capture c WHERE c.site_id = s.site_id), \
                 (SELECT MAX(r.version) FROM rule_set r WHERE r.site_id = s.site_id), \
                 j.state FROM site s LEFT JOIN learn_job j ON j.site_id = s.site_id \
                 ORDER BY s.name",
            )
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| -> Result<Fields, sqlx::Error> {
                Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?, r.try_get(4)?))
            })
            .collect::<Result<Vec<_>, _>>()?
        });
        rows.into_iter()
            .map(|(name, pages, last, version, state)| {
                Ok(SiteOverview {
                    site: site_from_db(&name)?,
                    pages,
                    last_captured_at: last,
                    rules_version: version,
                    learn: match state {
                        Some(s) => JobState::parse(&s)?,
                        None => JobState::None,
                    },
                })
            })
            .collect()
    }

    /// Answers when the database does (for health checks).
    pub async fn ping(&self) -> Result<(), StoreError> {
        on_pool!(self, pool => {
            sqlx::query("SELECT 1").execute(pool).await?;
        });
        Ok(())
    }
}
