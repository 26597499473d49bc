//! Errors of the capture stage. Each names the page (or file) it concerns, so
//! a batch can report it and go on with the other pages.

use std::path::PathBuf;
use std::time::Duration;

/// Why a page could not be captured, or the browser could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// No Chromium binary where we looked.
    #[error(
        "Chromium not found at {path}: install Debian's `chromium` package \
         (`spider setup` does it) or pass --chromium PATH"
    )]
    ChromiumMissing {
        /// Where we looked.
        path: PathBuf,
    },
    /// Chromium could not be installed.
    #[error("cannot install Chromium: {reason}")]
    Install {
        /// What went wrong.
        reason: String,
    },
    /// Chromium would not start.
    #[error("cannot start Chromium ({path}): {reason}")]
    Launch {
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The browser died and could not be brought back for this page.
    #[error("{url}: the browser died while capturing the page ({reason})")]
    BrowserDied {
        /// The page.
        url: String,
        /// What we saw.
        reason: String,
    },
    /// A local file could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A local file is empty.
    #[error("{path}: empty file (0 bytes), nothing to capture")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The input is not an HTML page (binary data, an image, plain text...).
    #[error("{target}: not an HTML page ({reason})")]
    NotHtml {
        /// The file or URL.
        target: String,
        /// What it looks like instead.
        reason: String,
    },
    /// The page is larger than the configured limit.
    #[error(
        "{target}: page is {bytes} bytes, more than the limit of {limit} (see --max-page-bytes)"
    )]
    TooLarge {
        /// The file or URL.
        target: String,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The browser could not load the page (DNS, refused, 404 file...).
    #[error("{url}: navigation failed: {reason}")]
    Navigation {
        /// The page.
        url: String,
        /// Chromium's error text.
        reason: String,
    },
    /// The page did not finish in time.
    #[error("{url}: timed out after {after:?} ({stage})")]
    Timeout {
        /// The page.
        url: String,
        /// The limit that was hit.
        after: Duration,
        /// What was going on.
        stage: &'static str,
    },
    /// The tab's renderer process crashed.
    #[error("{url}: the page crashed its tab")]
    TabCrashed {
        /// The page.
        url: String,
    },
    /// The capture script failed in the page.
    #[error("{url}: capture script failed: {reason}")]
    Script {
        /// The page.
        url: String,
        /// The exception or protocol error.
        reason: String,
    },
    /// No site was given and none can be derived from the page.
    #[error(
        "{url}: no site: pass --site, or capture the page by its http(s) URL \
         or give it a <link rel=canonical>"
    )]
    NoSite {
        /// The page.
        url: String,
    },
    /// A capture (imported, uploaded or produced) breaks the schema.
    #[error("invalid capture{}: {reason}", url.as_ref().map(|u| format!(" of {u}")).unwrap_or_default())]
    Invalid {
        /// The page, when known.
        url: Option<String>,
        /// What is wrong.
        reason: String,
    },
}

impl CaptureError {
    /// Errors that may go away when the same page is captured in a fresh
    /// browser (the old one died under it).
    pub(crate) fn is_browser_failure(&self) -> bool {
        matches!(self, CaptureError::BrowserDied { .. })
    }
}
