//! Store: spider's database, SQLite or PostgreSQL through sqlx. All SQL lives
//! in this module.
//!
//! Both backends run the same statements (numbered `$n` parameters work in
//! both), so each operation is written once and expanded for each pool by
//! [`on_pool!`]. Queries are checked at run time: no database is needed to
//! build spider. Migrations (`migrations/{sqlite,postgres}`) are embedded and
//! run on open.

mod error;

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;
use sqlx::Row;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use time::OffsetDateTime;

pub use error::StoreError;

use crate::capture::{Capture, SCHEMA_VERSION, Viewport};
use crate::site::Site;

/// The default database: a SQLite file in the working directory.
pub const DEFAULT_URL: &str = "sqlite://spider.db";

/// A connection pool to one of the supported databases.
#[derive(Debug, Clone)]
pub enum Store {
    /// An SQLite file (`sqlite://path`, `sqlite::memory:`), and the lock
    /// its writers take in turn.
    Sqlite(SqlitePool, WriteLock),
    /// A PostgreSQL server (`postgres://...`).
    Postgres(PgPool),
}

/// Runs the same code against whichever pool the store holds.
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            Store::Sqlite($pool, _) => $body,
            Store::Postgres($pool) => $body,
        }
    };
}

/// The id of a site, inserting the site first when it is new; inside a
/// transaction (`tx`), on either backend.
macro_rules! site_id {
    ($tx:ident, $name:expr, $now:expr) => {{
        sqlx::query(
            "INSERT INTO site (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind($name)
        .bind($now)
        .execute(&mut *$tx)
        .await?;
        let id: i64 = sqlx::query("SELECT site_id FROM site WHERE name = $1")
            .bind($name)
            .fetch_one(&mut *$tx)
            .await?
            .try_get(0)?;
        id
    }};
}

/// Inserts (or replaces) a capture inside a transaction; evaluates to
/// `(site_id, Stored)`. The first statement writes, so on SQLite the
/// transaction holds the write lock from its start (a read first could not
/// be upgraded once another writer committed).
macro_rules! insert_capture {
    ($tx:ident, $capture:expr, $row:expr) => {{
        let capture: &Capture = $capture;
        let row: &NewCapture = &$row;
        let site_id = site_id!($tx, capture.site.as_str(), row.now);
        let existed = sqlx::query("SELECT capture_id FROM capture WHERE site_id = $1 AND url = $2")
            .bind(site_id)
            .bind(&capture.url)
            .fetch_optional(&mut *$tx)
            .await?
            .is_some();
        sqlx::query(
            "INSERT INTO capture (site_id, url, captured_at, stored_at, viewport_width, \
             viewport_height, lang, title, agent, truncated, block_count, meta, blocks, html) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
             ON CONFLICT (site_id, url) DO UPDATE SET captured_at = excluded.captured_at, \
             stored_at = excluded.stored_at, viewport_width = excluded.viewport_width, \
             viewport_height = excluded.viewport_height, lang = excluded.lang, \
             title = excluded.title, agent = excluded.agent, truncated = excluded.truncated, \
             block_count = excluded.block_count, meta = excluded.meta, \
             blocks = excluded.blocks, html = excluded.html",
        )
        .bind(site_id)
        .bind(&capture.url)
        .bind(capture.captured_at)
        .bind(row.now)
        .bind(i64::from(capture.viewport.width))
        .bind(i64::from(capture.viewport.height))
        .bind(capture.lang.as_deref())
        .bind(capture.title())
        .bind(capture.agent.as_deref())
        .bind(capture.truncated)
        .bind(capture.blocks.len() as i64)
        .bind(&row.meta)
        .bind(&row.blocks)
        .bind(&capture.html)
        .execute(&mut *$tx)
        .await?;
        (
            site_id,
            if existed {
                Stored::Replaced
            } else {
                Stored::Inserted
            },
        )
    }};
}

/// A capture's JSON columns, serialised before the transaction starts so
/// the write lock is not held while serde works.
struct NewCapture {
    meta: String,
    blocks: String,
    now: OffsetDateTime,
}

impl NewCapture {
    fn of(capture: &Capture) -> NewCapture {
        NewCapture {
            meta: serde_json::to_string(&capture.meta).expect("Meta serialises"),
            blocks: serde_json::to_string(&capture.blocks).expect("Blocks serialise"),
            now: OffsetDateTime::now_utc(),
        }
    }
}

mod jobs;
mod rules;
mod tokens;
pub use jobs::{Job, JobState, LearnStatus, SiteOverview, Upload};
pub use rules::RulesVersion;
pub use tokens::TokenInfo;

/// A site and how many pages of it are stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiteSummary {
    /// The site.
    pub site: Site,
    /// Stored captures.
    pub pages: i64,
    /// Time of the newest capture.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_captured_at: Option<OffsetDateTime>,
}

/// One stored capture, without its blocks and source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageSummary {
    /// The page.
    pub url: String,
    /// Its title.
    pub title: Option<String>,
    /// How many text blocks it has.
    pub blocks: i64,
    /// When it was rendered.
    #[serde(with = "time::serde::rfc3339")]
    pub captured_at: OffsetDateTime,
}

/// What storing a capture did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A new page of the site.
    Inserted,
    /// The page was stored before; the old capture was replaced.
    Replaced,
}

/// SQLite's single-writer lock, taken in the process: SQLite lets one
/// connection write at a time, and pooled connections that find the
/// database locked sleep in its busy handler and retry, which under
/// concurrent uploads made a tail of up to a second (BENCHMARKS.md). Writers
/// that queue on this lock instead take turns at once. Other processes on
/// the same file still meet the busy handler (30 s).
#[derive(Debug, Clone, Default)]
pub struct WriteLock(std::sync::Arc<tokio::sync::Mutex<()>>);

impl Store {
    /// Waits for the right to write, on SQLite; nothing to wait for on
    /// PostgreSQL. Held until the guard drops, so it spans a transaction.
    async fn writing(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self {
            Store::Sqlite(_, lock) => Some(lock.0.lock().await),
            Store::Postgres(_) => None,
        }
    }

    /// Opens (creating when needed) the database at `url` and migrates it.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        let shown = redact(url);
        let open_err = |source| StoreError::Open {
            url: shown.clone(),
            source,
        };
        let store = if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)
                .map_err(open_err)?
                .create_if_missing(true)
                // WAL lets readers (the server) work while a writer stores.
                .journal_mode(SqliteJournalMode::Wal)
                .busy_timeout(Duration::from_secs(30))
                .foreign_keys(true);
            let pool = SqlitePoolOptions::new()
                .max_connections(4)
                .connect_with(options)
                .await
                .map_err(open_err)?;
            sqlx::migrate!("./migrations/sqlite")
                .run(&pool)
                .await
                .map_err(|source| StoreError::Migrate {
                    url: shown.clone(),
                    source,
                })?;
            Store::Sqlite(pool, WriteLock::default())
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(10))
                .connect(url)
                .await
                .map_err(open_err)?;
            sqlx::migrate!("./migrations/postgres")
                .run(&pool)
                .await
                .map_err(|source| StoreError::Migrate {
                    url: shown.clone(),
                    source,
                })?;
            Store::Postgres(pool)
        } else {
            return Err(StoreError::Unsupported { url: shown });
        };
        Ok(store)
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match self {
            Store::Sqlite(..) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    /// Closes the pool, waiting for connections to finish.
    pub async fn close(&self) {
        on_pool!(self, pool => pool.close().await)
    }

    /// Stores a capture in one transaction, replacing an earlier capture of
    /// the same site and URL.
    pub async fn put_capture(&self, capture: &Capture) -> Result<Stored, StoreError> {
        let row = NewCapture::of(capture);
        let _writing = self.writing().await;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let (_, stored) = insert_capture!(tx, capture, row);
            tx.commit().await?;
            Ok(stored)
        })
    }

    /// All sites with their page counts, by name.
    pub async fn sites(&self) -> Result<Vec<SiteSummary>, StoreError> {
        let rows = on_pool!(self, pool => {
            sqlx::query(
                "SELECT s.name, COUNT(c.capture_id), MAX(c.captured_at) FROM site s \
                 LEFT JOIN capture c ON c.site_id = s.site_id GROUP BY s.name ORDER BY s.name",
            )
            .fetch_all(pool)
            .await?
            .iter()
            .map(|row| -> Result<(String, i64, Option<OffsetDateTime>), sqlx::Error> {
                Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))
            })
            .collect::<Result<Vec<_>, _>>()?
        });
        rows.into_iter()
            .map(|(name, pages, last)| {
                Ok(SiteSummary {
                    site: site_from_db(&name)?,
                    pages,
                    last_captured_at: last,
                })
            })
            .collect()
    }

    /// The captures of a site, by URL, without blocks and source.
    pub async fn pages(&self, site: &Site) -> Result<Vec<PageSummary>, StoreError> {
        let pages = on_pool!(self, pool => {
            sqlx::query(
                "SELECT c.url, c.title, c.block_count, c.captured_at FROM capture c \
                 JOIN site s ON s.site_id = c.site_id WHERE s.name = $1 ORDER BY c.url",
            )
            .bind(site.as_str())
            .fetch_all(pool)
            .await?
            .iter()
            .map(|row| -> Result<PageSummary, sqlx::Error> {
                Ok(PageSummary {
                    url: row.try_get(0)?,
                    title: row.try_get(1)?,
                    blocks: row.try_get(2)?,
                    captured_at: row.try_get(3)?,
                })
            })
            .collect::<Result<Vec<_>, _>>()?
        });
        Ok(pages)
    }

    /// How many captures of a site are stored.
    pub async fn page_count(&self, site: &Site) -> Result<i64, StoreError> {
        let count = on_pool!(self, pool => {
            sqlx::query(
                "SELECT COUNT(*) FROM capture c JOIN site s ON s.site_id = c.site_id WHERE s.name = $1",
            )
            .bind(site.as_str())
            .fetch_one(pool)
            .await?
            .try_get(0)?
        });
        Ok(count)
    }

    /// The full captures of a site, by URL.
    pub async fn captures(&self, site: &Site) -> Result<Vec<Capture>, StoreError> {
        let mut out = Vec::new();
        self.for_each_capture(site, |c| out.push(c)).await?;
        Ok(out)
    }

    /// Calls `f` with each capture of a site, by URL, one row at a time, so
    /// a site of many pages never sits in memory at once (what the learner
    /// reads). Returns the number of captures.
    pub async fn for_each_capture(
        &self,
        site: &Site,
        mut f: impl FnMut(Capture),
    ) -> Result<usize, StoreError> {
        use futures::TryStreamExt;
        const QUERY: &str = "SELECT c.url, c.captured_at, c.viewport_width, c.viewport_height, \
             c.lang, c.agent, c.truncated, c.meta, c.blocks, c.html FROM capture c \
             JOIN site s ON s.site_id = c.site_id WHERE s.name = $1 ORDER BY c.url";
        let mut count = 0;
        on_pool!(self, pool => {
            let mut rows = sqlx::query(QUERY).bind(site.as_str()).fetch(pool);
            while let Some(row) = rows.try_next().await? {
                let row = CaptureRow {
                    url: row.try_get(0)?,
                    captured_at: row.try_get(1)?,
                    viewport_width: row.try_get(2)?,
                    viewport_height: row.try_get(3)?,
                    lang: row.try_get(4)?,
                    agent: row.try_get(5)?,
                    truncated: row.try_get(6)?,
                    meta: row.try_get(7)?,
                    blocks: row.try_get(8)?,
                    html: row.try_get(9)?,
                };
                f(row.into_capture(site)?);
                count += 1;
            }
        });
        Ok(count)
    }
}

/// A `capture` row as stored.
struct CaptureRow {
    url: String,
    captured_at: OffsetDateTime,
    viewport_width: i64,
    viewport_height: i64,
    lang: Option<String>,
    agent: Option<String>,
    truncated: bool,
    meta: String,
    blocks: String,
    html: String,
}

impl CaptureRow {
    fn into_capture(self, site: &Site) -> Result<Capture, StoreError> {
        let corrupt = |reason: String| StoreError::Corrupt {
            url: self.url.clone(),
            reason,
        };
        let size = |v: i64| u32::try_from(v).map_err(|_| corrupt(format!("viewport side {v}")));
        let viewport = Viewport {
            width: size(self.viewport_width)?,
            height: size(self.viewport_height)?,
        };
        let meta = serde_json::from_str(&self.meta).map_err(|e| corrupt(format!("meta: {e}")))?;
        let blocks =
            serde_json::from_str(&self.blocks).map_err(|e| corrupt(format!("blocks: {e}")))?;
        Ok(Capture {
            schema: SCHEMA_VERSION,
            site: site.clone(),
            url: self.url,
            captured_at: self.captured_at,
            viewport,
            lang: self.lang,
            meta,
            html: self.html,
            blocks,
            truncated: self.truncated,
            agent: self.agent,
        })
    }
}

fn site_from_db(name: &str) -> Result<Site, StoreError> {
    Site::new(name).map_err(|e| StoreError::Corrupt {
        url: name.to_string(),
        reason: e.to_string(),
    })
}

/// The URL with any password replaced by `***`, for messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords() {
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("sqlite://spider.db"), "sqlite://spider.db");
    }
}
