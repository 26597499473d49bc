//! Capture: render pages in headless Chromium and record every text block's
//! text, place in the document, geometry and computed style.
//!
//! A [`Capture`] is the contract between capture, `spider import`, the
//! bookmarklet and the learner (its JSON form is documented in the README,
//! "The capture JSON schema"). The in-page half lives in
//! `bookmarklet/capture.js`, shared verbatim with the bookmarklet; this module
//! drives Chromium ([`Capturer`]), reads page sources ([`Target`]) and
//! validates captures that come from elsewhere ([`Capture::validate`]).

mod browser;
pub mod chromium;
mod error;
mod page;
mod source;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

pub use browser::{CaptureOptions, Capturer};
pub use error::CaptureError;
pub use source::{Target, decode_html};

use crate::site::Site;

/// The in-page capture script (`bookmarklet/capture.js`), embedded at build
/// time so the binary and the bookmarklet run the same code.
pub const SCRIPT: &str = include_str!("../../bookmarklet/capture.js");

/// Version of the capture JSON schema this build reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// One rendered page of a site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub schema: u32,
    /// The site the page belongs to.
    pub site: Site,
    /// The page's URL (after redirects); `file:` URLs for local files.
    pub url: String,
    /// When the page was rendered (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub captured_at: OffsetDateTime,
    /// The viewport the page was laid out in, CSS pixels.
    pub viewport: Viewport,
    /// The document's language (`<html lang>`, else Content-Language), as found.
    #[serde(default)]
    pub lang: Option<String>,
    /// Titles, descriptions and canonical URL from the document head.
    #[serde(default)]
    pub meta: Meta,
    /// The page's source as served, before scripts ran, decoded to text. The
    /// learner tests its selectors against this, not against the rendered DOM.
    pub html: String,
    /// The text blocks, in document order.
    pub blocks: Vec<Block>,
    /// True when the page had more blocks than the capture's limit.
    #[serde(default)]
    pub truncated: bool,
    /// What made the capture (`spider/0.1.0 Chromium/156...`, a bookmarklet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// Viewport size in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Viewport {
    /// Width in CSS pixels.
    pub width: u32,
    /// Height in CSS pixels.
    pub height: u32,
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport {
            width: 1280,
            height: 900,
        }
    }
}

/// Metadata from the document head; the learner scores blocks against it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// `<title>`.
    #[serde(default)]
    pub title: Option<String>,
    /// `og:title`.
    #[serde(default)]
    pub og_title: Option<String>,
    /// `og:description`.
    #[serde(default)]
    pub og_description: Option<String>,
    /// `og:site_name`: the part of titles that is the site's, not the page's.
    #[serde(default)]
    pub og_site_name: Option<String>,
    /// `og:url`.
    #[serde(default)]
    pub og_url: Option<String>,
    /// `<meta name=description>`.
    #[serde(default)]
    pub description: Option<String>,
    /// `twitter:title`.
    #[serde(default)]
    pub twitter_title: Option<String>,
    /// `twitter:description`.
    #[serde(default)]
    pub twitter_description: Option<String>,
    /// `<link rel=canonical>`, resolved to an absolute URL.
    #[serde(default)]
    pub canonical: Option<String>,
}

/// One text block: the text of a block-level box with an area, merged from
/// all its visible text nodes that do not sit in a nested block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// Whitespace-normalised text.
    pub text: String,
    /// The block element's tag name, lower case.
    pub tag: String,
    /// Characters of `text` that sit inside links (`<a href>`).
    pub link_text_len: usize,
    /// One step per element from `<html>` down to the block element.
    pub selector: Vec<SelectorStep>,
    /// For each step of `selector`, the element's index among its parent's
    /// element children (`<html>` is 0): finds the element again in a static
    /// parse of `html`.
    pub node: Vec<u32>,
    /// The block's border box in page coordinates, CSS pixels.
    pub bounds: Bounds,
    /// Computed CSS properties whose value differs from `<body>`'s (geometry
    /// properties excluded).
    #[serde(default)]
    pub style: BTreeMap<String, String>,
}

/// One element on a block's path: tag, id and sorted classes as found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectorStep {
    /// Tag name, lower case.
    pub tag: String,
    /// The `id` attribute, when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The classes, sorted, without duplicates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<String>,
}

/// A box in page coordinates (CSS pixels, origin at the document's top left).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// Upper limits on what a capture may hold; a capture beyond them is refused
/// rather than truncated, so nothing is stored half.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest page source, in bytes of UTF-8.
    pub max_html_bytes: usize,
    /// Most blocks in one capture.
    pub max_blocks: usize,
    /// Deepest selector path.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_html_bytes: 64 << 20,
            max_blocks: 200_000,
            // Chromium's parser nests at most 512 elements; deeper markup is
            // flattened, so a longer path cannot come from a real DOM.
            max_depth: 4096,
        }
    }
}

impl Capture {
    /// Parses one capture from JSON and validates it.
    pub fn from_json(json: &str) -> Result<Capture, CaptureError> {
        let capture: Capture = serde_json::from_str(json).map_err(|e| CaptureError::Invalid {
            url: None,
            reason: e.to_string(),
        })?;
        capture.validate(&Limits::default())?;
        Ok(capture)
    }

    /// Checks what serde cannot: schema version, URL, sizes, and that every
    /// block is internally consistent. Captures from outside (import,
    /// uploads) pass through here before they are stored.
    pub fn validate(&self, limits: &Limits) -> Result<(), CaptureError> {
        let invalid = |reason: String| CaptureError::Invalid {
            url: Some(self.url.clone()),
            reason,
        };
        if self.schema != SCHEMA_VERSION {
            return Err(invalid(format!(
                "schema {} is not supported (this build reads schema {SCHEMA_VERSION})",
                self.schema
            )));
        }
        let url = url::Url::parse(&self.url).map_err(|e| invalid(format!("bad url: {e}")))?;
        if !matches!(url.scheme(), "http" | "https" | "file") {
            return Err(invalid(format!(
                "url scheme {:?} is not http, https or file",
                url.scheme()
            )));
        }
        if self.viewport.width == 0 || self.viewport.height == 0 {
            return Err(invalid("viewport has a zero side".into()));
        }
        if self.html.len() > limits.max_html_bytes {
            return Err(invalid(format!(
                "html is {} bytes, more than the limit of {}",
                self.html.len(),
                limits.max_html_bytes
            )));
        }
        if self.html.contains('\0') {
            return Err(invalid("html contains NUL characters".into()));
        }
        if self.blocks.len() > limits.max_blocks {
            return Err(invalid(format!(
                "{} blocks, more than the limit of {}",
                self.blocks.len(),
                limits.max_blocks
            )));
        }
        for (i, block) in self.blocks.iter().enumerate() {
            let bad = |what: &str| invalid(format!("block {i}: {what}"));
            if block.text.trim().is_empty() {
                return Err(bad("empty text"));
            }
            if block.link_text_len > block.text.chars().count() {
                return Err(bad("link_text_len is longer than the text"));
            }
            if block.selector.is_empty() || block.selector.len() > limits.max_depth {
                return Err(bad("selector path is empty or too deep"));
            }
            if block.node.len() != block.selector.len() {
                return Err(bad("node and selector paths differ in length"));
            }
            if block.selector.last().map(|s| s.tag.as_str()) != Some(block.tag.as_str()) {
                return Err(bad("tag is not the last selector step"));
            }
            let b = &block.bounds;
            if ![b.x, b.y, b.width, b.height].iter().all(|v| v.is_finite())
                || b.width < 0.0
                || b.height < 0.0
            {
                return Err(bad("bounds are not finite and non-negative"));
            }
        }
        Ok(())
    }

    /// The page's title: `og:title`, else `<title>`.
    pub fn title(&self) -> Option<&str> {
        self.meta.og_title.as_deref().or(self.meta.title.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Capture {
        Capture {
            schema: SCHEMA_VERSION,
            site: Site::new("example.com").unwrap(),
            url: "https://example.com/a".into(),
            captured_at: OffsetDateTime::UNIX_EPOCH,
            viewport: Viewport::default(),
            lang: Some("en".into()),
            meta: Meta {
                title: Some("A".into()),
                ..Meta::default()
            },
            html: "<p>Hello</p>".into(),
            blocks: vec![Block {
                text: "Hello".into(),
                tag: "p".into(),
                link_text_len: 0,
                selector: vec![
                    SelectorStep {
                        tag: "html".into(),
                        id: None,
                        classes: vec![],
                    },
                    SelectorStep {
                        tag: "body".into(),
                        id: None,
                        classes: vec![],
                    },
                    SelectorStep {
                        tag: "p".into(),
                        id: Some("x".into()),
                        classes: vec!["a".into(), "b".into()],
                    },
                ],
                node: vec![0, 1, 0],
                bounds: Bounds {
                    x: 8.0,
                    y: 8.0,
                    width: 100.0,
                    height: 20.0,
                },
                style: BTreeMap::from([("font-weight".into(), "700".into())]),
            }],
            truncated: false,
            agent: None,
        }
    }

    #[test]
    fn json_round_trip() {
        let c = sample();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(Capture::from_json(&json).unwrap(), c);
    }

    #[test]
    fn rejects_inconsistent_captures() {
        let mut c = sample();
        c.blocks[0].node.pop();
        assert!(c.validate(&Limits::default()).is_err());

        let mut c = sample();
        c.url = "javascript:alert(1)".into();
        assert!(c.validate(&Limits::default()).is_err());

        let mut c = sample();
        c.blocks[0].link_text_len = 99;
        assert!(c.validate(&Limits::default()).is_err());

        let mut c = sample();
        c.schema = 7;
        let err = c.validate(&Limits::default()).unwrap_err().to_string();
        assert!(err.contains("schema 7"), "{err}");
    }

    #[test]
    fn reports_missing_fields_by_name() {
        let err = Capture::from_json(r#"{"schema":1,"site":"a.com"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field"), "{err}");
        let err = Capture::from_json("not json").unwrap_err().to_string();
        assert!(err.contains("invalid capture"), "{err}");
    }
}
