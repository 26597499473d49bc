//! spider learns how to read a website by looking at it.
//!
//! Article pages of one site share a template. spider renders several pages
//! of a site in headless Chromium, records every text block's computed style
//! and geometry, clusters the blocks of all its pages and learns per-site
//! [`Rules`] that extract the article from new pages of the site without a
//! browser.
//!
//! # Layout
//! - [`site`]: [`Site`], the name that groups a site's pages.
//! - [`capture`]: render pages in Chromium and record their text blocks;
//!   [`Capture`] is the JSON contract shared with the bookmarklet and import.
//! - [`learn`]: cluster a site's blocks across its pages and turn the
//!   winning clusters into [`Rules`].
//! - [`rules`]: [`Rules`], the per-site rules (`rules/<site>.json`).
//! - [`extract`]: apply rules to a page's HTML, without a browser.
//! - [`eval`]: corpora and token F1.
//! - [`store`]: SQLite or PostgreSQL through sqlx; all SQL lives there.
//! - [`serve`]: the HTTP API, the bookmarklet and the learn workers.
//! - [`cli`]: the `spider` command line.
//!
//! # Example
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use spider::capture::{chromium, CaptureOptions, Capturer, Target};
//! use spider::{Site, Store};
//!
//! let capturer = Capturer::launch(CaptureOptions::new(chromium::find(None)?)).await?;
//! let site = Site::new("example.com")?;
//! let capture = capturer.capture(&Target::parse("page.html"), Some(&site)).await?;
//! println!("{} blocks", capture.blocks.len());
//! let store = Store::open("sqlite://spider.db").await?;
//! store.put_capture(&capture).await?;
//! capturer.close().await;
//!
//! // Learn the site's rules from its stored captures, then extract a page.
//! let captures = store.captures(&site).await?;
//! let learned = spider::learn_site(&site, captures, &Default::default())?;
//! let html = std::fs::read_to_string("another-page.html")?;
//! println!("{}", spider::extract(&html, &learned.rules).text());
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod capture;
pub mod cli;
pub mod eval;
pub mod extract;
pub mod learn;
pub mod rules;
pub mod serve;
pub mod site;
pub mod store;
#[cfg(test)]
mod testutil;

pub use capture::{Block, Capture, CaptureError};
pub use extract::{Extraction, extract};
pub use learn::{LearnError, Learned, learn_site};
pub use rules::{Rules, RulesError};
pub use site::Site;
pub use store::{Store, StoreError};
