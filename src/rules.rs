//! Rules: what spider learned about one site, the seam between learn and
//! extract.
//!
//! [`crate::learn`] writes a [`Rules`]; [`crate::extract`] applies one to a
//! page's HTML without a browser. Rules are stored as a versioned row in the
//! database and as a human-readable `rules/<site>.json` (format documented in
//! the README). Whatever the source, rules are validated once, on load
//! ([`Rules::from_json`], [`Rules::validate`]): every selector must parse as
//! CSS the extractor's parser applies, so extraction never meets a bad one.

use std::path::Path;

use scraper::Selector;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::site::Site;

/// Version of the rules format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Per-site extraction rules.
///
/// Extraction keeps the elements matched by [`content`](Rules::content)
/// inside the [`container`](Rules::container), minus those inside an
/// [`exclude`](Rules::exclude) match, minus blocks whose text is one of the
/// site's [`template`](Rules::template) strings, with the
/// [`title`](Rules::title) first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// [`FORMAT_VERSION`].
    pub format: u32,
    /// The site these rules are for.
    pub site: Site,
    /// Rules version in the store: 1 for the first learn, then +1 per learn.
    /// 0 for rules that were never stored.
    #[serde(default)]
    pub version: i64,
    /// When the rules were learned (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub learned_at: OffsetDateTime,
    /// Pages the rules were learned from.
    pub pages: usize,
    /// The nearest stable ancestor of the content on the training pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<Container>,
    /// The headline's selector, when one is consistent across pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<TitleRule>,
    /// Content selectors, best first; later ones are fallbacks and additions
    /// (subheadings, quotes, lists) to the first.
    pub content: Vec<ContentRule>,
    /// Chrome inside the container: share bars, related links, ad slots,
    /// comment threads. Matched elements are dropped with their subtree.
    #[serde(default)]
    pub exclude: Vec<ExcludeRule>,
    /// Normalised block texts ([`normalize_text`]) that recur across the
    /// site's pages: the site's own boilerplate, dropped at extraction.
    #[serde(default)]
    pub template: Vec<String>,
    /// Median words the rules extract from the training pages. A page where
    /// they extract far less is one they do not fit (template drift, a
    /// layout the training pages did not show): extraction falls back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_words: Option<u32>,
}

/// The content's container.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Container {
    /// CSS selector; matches exactly one element on the training pages.
    pub selector: String,
    /// Training pages where it matched the content's common ancestor.
    pub pages: usize,
}

/// The headline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TitleRule {
    /// CSS selector; its first match is the title.
    pub selector: String,
    /// Training pages where its first match was the headline.
    pub pages: usize,
    /// Mean similarity of the matched text to the page's title metadata
    /// (normalised Levenshtein, 0 to 1).
    pub similarity: f64,
}

/// One content selector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentRule {
    /// CSS selector.
    pub selector: String,
    /// The score of the cluster it was learned from (higher: more likely
    /// the article).
    pub score: f64,
    /// Mean F1, over the training pages, of the elements it matches against
    /// the cluster's blocks (0 to 1).
    pub confidence: f64,
    /// Training pages it matched at least one element on.
    pub pages: usize,
    /// Cluster blocks it covers on the training pages.
    pub blocks: usize,
    /// The cluster it was learned from (see `spider explain`).
    pub cluster: usize,
}

/// One exclusion selector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExcludeRule {
    /// CSS selector.
    pub selector: String,
    /// Training pages it matched on.
    pub pages: usize,
    /// Non-content blocks it removes on the training pages.
    pub blocks: usize,
}

/// Why a rules file or row was refused.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// Not valid JSON for the format.
    #[error("rules are not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Written by a newer or older spider.
    #[error("rules format {found} is not supported (this build reads format {FORMAT_VERSION})")]
    Format {
        /// The `format` field found.
        found: u32,
    },
    /// A selector the extractor cannot apply.
    #[error("rules for {site}: {field} selector `{selector}` is not valid CSS: {reason}")]
    Selector {
        /// The site.
        site: Site,
        /// Which list it was in.
        field: &'static str,
        /// The selector.
        selector: String,
        /// The parser's message.
        reason: String,
    },
    /// Reading or writing a rules file.
    #[error("rules file {path}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl Rules {
    /// Parses and validates rules JSON.
    pub fn from_json(json: &str) -> Result<Rules, RulesError> {
        let rules: Rules = serde_json::from_str(json)?;
        rules.validate()?;
        Ok(rules)
    }

    /// Pretty JSON, as written to `rules/<site>.json`.
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serialising cannot fail.
        serde_json::to_string_pretty(self).expect("rules serialise to JSON")
    }

    /// Checks the format version and that every selector parses.
    pub fn validate(&self) -> Result<(), RulesError> {
        if self.format != FORMAT_VERSION {
            return Err(RulesError::Format { found: self.format });
        }
        let check = |field: &'static str, selector: &str| {
            parse_selector(selector)
                .map(|_| ())
                .map_err(|reason| RulesError::Selector {
                    site: self.site.clone(),
                    field,
                    selector: selector.to_string(),
                    reason,
                })
        };
        if let Some(container) = &self.container {
            check("container", &container.selector)?;
        }
        if let Some(title) = &self.title {
            check("title", &title.selector)?;
        }
        for rule in &self.content {
            check("content", &rule.selector)?;
        }
        for rule in &self.exclude {
            check("exclude", &rule.selector)?;
        }
        Ok(())
    }

    /// Reads and validates `path`.
    pub fn read(path: &Path) -> Result<Rules, RulesError> {
        let json = std::fs::read_to_string(path).map_err(|source| RulesError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Rules::from_json(&json)
    }

    /// Writes `dir/<site>.json` (creating `dir`) and returns the path.
    pub fn write(&self, dir: &Path) -> Result<std::path::PathBuf, RulesError> {
        let path = dir.join(format!("{}.json", self.site));
        let io = |source| RulesError::Io {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        // Write then rename, so a reader never sees half a file.
        let partial = dir.join(format!(".{}.json.partial", self.site));
        std::fs::write(&partial, self.to_json() + "\n").map_err(io)?;
        std::fs::rename(&partial, &path).map_err(io)?;
        Ok(path)
    }
}

/// Parses a CSS selector the way extraction applies it.
pub fn parse_selector(selector: &str) -> Result<Selector, String> {
    if selector.trim().is_empty() {
        return Err("empty selector".into());
    }
    Selector::parse(selector).map_err(|e| e.to_string())
}

/// The normal form block texts are compared in, across pages and at
/// extraction: Unicode NFKC, case folded (lower case), whitespace collapsed.
pub fn normalize_text(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let mut out = String::with_capacity(text.len());
    // ASCII is its own NFKC form: skip the normaliser for it.
    let normalized;
    let text = if text.is_ascii() {
        text
    } else {
        normalized = text.nfkc().collect::<String>();
        &normalized
    };
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            format: FORMAT_VERSION,
            site: Site::new("example.test").unwrap(),
            version: 0,
            learned_at: OffsetDateTime::UNIX_EPOCH,
            pages: 3,
            container: Some(Container {
                selector: "main.post".into(),
                pages: 3,
            }),
            title: None,
            content: vec![ContentRule {
                selector: ".entry p".into(),
                score: 1.0,
                confidence: 1.0,
                pages: 3,
                blocks: 9,
                cluster: 0,
            }],
            exclude: vec![],
            template: vec!["share this".into()],
            expected_words: Some(120),
        }
    }

    #[test]
    fn round_trips_through_json() {
        let rules = rules();
        assert_eq!(Rules::from_json(&rules.to_json()).unwrap(), rules);
    }

    #[test]
    fn bad_selector_is_a_clear_error() {
        let mut rules = rules();
        rules.content[0].selector = "p[".into();
        let err = Rules::from_json(&rules.to_json()).unwrap_err().to_string();
        assert!(err.contains("content selector `p[`"), "{err}");
    }

    #[test]
    fn other_format_is_refused() {
        let json = rules().to_json().replace("\"format\": 1", "\"format\": 9");
        assert!(matches!(
            Rules::from_json(&json),
            Err(RulesError::Format { found: 9 })
        ));
    }

    #[test]
    fn normalises_text() {
        assert_eq!(
            normalize_text("  Share\u{a0}THIS\n story "),
            "share this story"
        );
        assert_eq!(normalize_text("ﬁne"), "fine");
    }
}
