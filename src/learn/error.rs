//! Errors of the learn stage.

use crate::site::Site;

/// Why a site could not be learned.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// Parameters out of range.
    #[error("invalid learning parameters: {0}")]
    Params(String),
    /// Not enough pages to tell template from content.
    #[error(
        "{site} has {found} page(s); learning needs at least {needed} (capture more pages of the site)"
    )]
    TooFewPages {
        /// The site.
        site: Site,
        /// Pages given.
        found: usize,
        /// Pages needed.
        needed: usize,
    },
    /// The pages have no text blocks at all.
    #[error("the pages of {site} have no text blocks")]
    NoBlocks {
        /// The site.
        site: Site,
    },
    /// A capture of another site was given.
    #[error("{url} belongs to {found}, not {expected}")]
    WrongSite {
        /// The page.
        url: String,
        /// Its site.
        found: Site,
        /// The site being learned.
        expected: Site,
    },
    /// A bug: the learner produced rules it cannot validate.
    #[error("internal error: {0}")]
    Internal(String),
}
