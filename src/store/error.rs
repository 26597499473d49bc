//! Errors of the store. Database URLs in messages have their password removed.

/// Why the database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names no backend we support.
    #[error("unsupported database URL {url:?}: use sqlite://FILE or postgres://...")]
    Unsupported {
        /// The URL, password removed.
        url: String,
    },
    /// The database could not be opened.
    #[error("cannot open database {url}: {source}")]
    Open {
        /// The URL, password removed.
        url: String,
        /// The driver's error.
        source: sqlx::Error,
    },
    /// The schema could not be brought up to date.
    #[error("cannot migrate database {url}: {source}")]
    Migrate {
        /// The URL, password removed.
        url: String,
        /// The migrator's error.
        source: sqlx::migrate::MigrateError,
    },
    /// A query failed.
    #[error("database error: {0}")]
    Query(#[from] sqlx::Error),
    /// A stored value cannot be read back (written by a different version?).
    #[error("stored capture of {url} is unreadable: {reason}")]
    Corrupt {
        /// The page.
        url: String,
        /// What failed.
        reason: String,
    },
}
