//! `Site`: the name that groups pages sharing one template (normally a host).
//!
//! Every stage keys its data by site: captures are stored per site, rules are
//! learned per site, extraction picks rules by site. A site is validated once,
//! where it enters (CLI argument, URL, uploaded JSON), and trusted afterwards.

use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

/// A normalised site name: lower case, no leading `www.`, no whitespace.
///
/// Hosts become sites (`https://www.Example.com/a` -> `example.com`); a site
/// can also be any short label given with `--site` (`nytimes`, `blog-a`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Site(String);

/// Why a string is not a site name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid site name {name:?}: {reason}")]
pub struct InvalidSite {
    /// The rejected input.
    pub name: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Longest accepted site name (a DNS name is at most 253 characters).
const MAX_LEN: usize = 253;

impl Site {
    /// Validates and normalises a site name.
    pub fn new(name: &str) -> Result<Site, InvalidSite> {
        let invalid = |reason| InvalidSite {
            name: name.chars().take(100).collect(),
            reason,
        };
        let lower = name.trim().to_lowercase();
        let bare = lower.strip_prefix("www.").unwrap_or(&lower);
        if bare.is_empty() {
            return Err(invalid("it is empty"));
        }
        if bare.len() > MAX_LEN {
            return Err(invalid("it is longer than 253 characters"));
        }
        let allowed = |c: char| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ':');
        if !bare.chars().all(allowed) {
            return Err(invalid(
                "only letters, digits, '.', '-', '_' and ':' are allowed",
            ));
        }
        Ok(Site(bare.to_string()))
    }

    /// The site of a web page: its host, without `www.`. `None` for URLs
    /// without a host (`file:`, `data:`).
    pub fn from_url(url: &Url) -> Option<Site> {
        match url.scheme() {
            "http" | "https" => Site::new(url.host_str()?).ok(),
            _ => None,
        }
    }

    /// The site's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Site {
    type Error = InvalidSite;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Site::new(&value)
    }
}

impl From<Site> for String {
    fn from(site: Site) -> String {
        site.0
    }
}

impl std::str::FromStr for Site {
    type Err = InvalidSite;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Site::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_hosts() {
        assert_eq!(
            Site::new(" WWW.Example.COM ").unwrap().as_str(),
            "example.com"
        );
        let url = Url::parse("https://www.bbc.co.uk/news/1").unwrap();
        assert_eq!(Site::from_url(&url).unwrap().as_str(), "bbc.co.uk");
        let file = Url::parse("file:///tmp/a.html").unwrap();
        assert_eq!(Site::from_url(&file), None);
    }

    #[test]
    fn rejects_bad_names() {
        assert!(Site::new("").is_err());
        assert!(Site::new("www.").is_err());
        assert!(Site::new("a b").is_err());
        assert!(Site::new("a/b").is_err());
        assert!(Site::new("'; drop table capture; --").is_err());
        assert!(Site::new(&"a".repeat(300)).is_err());
        assert!(serde_json::from_str::<Site>("\"bad site\"").is_err());
        assert_eq!(
            serde_json::from_str::<Site>("\"WWW.A.com\"")
                .unwrap()
                .as_str(),
            "a.com"
        );
    }
}
