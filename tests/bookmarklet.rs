//! The bookmarklet end to end: a real `spider serve` process, real headless
//! Chromium, and fixture pages on another local origin, as a reader would
//! use it. The bookmarklet's code comes from the server's index page, like
//! the link a reader drags to the bookmarks bar, and runs in the page the way
//! a bookmark's `javascript:` URL does. What it leaves in the page (the
//! `#spider-badge` and the `data-spider` marks) is read back from the DOM and
//! what it uploaded from the server's API and database.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt;
use serde_json::Value;

use crate::util::{FixtureServer, SpiderProcess, chromium, create_token, fixtures, temp_sqlite};

/// Any single browser step (navigation, evaluation).
const STEP: Duration = Duration::from_secs(20);

/// The site every fixture page is filed under: the fixture server's host.
const SITE: &str = "127.0.0.1";

/// A `spider serve` process on a port of its own, with a fresh SQLite
/// database and one upload token. Killed when dropped.
struct SpiderServer {
    _process: SpiderProcess,
    /// `http://127.0.0.1:PORT`.
    origin: String,
    db: String,
    token: String,
    _dir: tempfile::TempDir,
}

impl SpiderServer {
    async fn start() -> SpiderServer {
        let (dir, db) = temp_sqlite();
        let token = create_token(&db, "e2e").await;
        let process = SpiderProcess::serve(&db, &["--min-pages", "3"]).await;
        SpiderServer {
            origin: process.origin.clone(),
            _process: process,
            db,
            token,
            _dir: dir,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// GETs an API path: the status and the JSON body.
    async fn get(&self, path: &str) -> (u16, Value) {
        let response = reqwest::get(self.url(path))
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("GET {path} answered {status} with non-JSON ({e}): {text}"));
        (status, body)
    }

    /// POSTs JSON to an API path and returns the JSON answer (2xx only).
    async fn post_json(&self, path: &str, body: &Value) -> Value {
        let response = reqwest::Client::new()
            .post(self.url(path))
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        let status = response.status();
        let text = response.text().await.unwrap();
        assert!(status.is_success(), "POST {path}: {status}: {text}");
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("POST {path}: not JSON ({e}): {text}"))
    }

    /// The URLs of the stored pages of [`SITE`] (none when it is unknown).
    async fn stored_urls(&self) -> Vec<String> {
        let (status, body) = self.get(&format!("/api/sites/{SITE}")).await;
        if status == 404 {
            return Vec::new();
        }
        assert_eq!(status, 200, "GET /api/sites/{SITE}: {body}");
        let captures = body["captures"]
            .as_array()
            .unwrap_or_else(|| panic!("no captures list in {body}"));
        assert_eq!(
            body["pages"].as_u64(),
            Some(captures.len() as u64),
            "{body}"
        );
        captures
            .iter()
            .map(|c| {
                c["url"]
                    .as_str()
                    .unwrap_or_else(|| panic!("capture without url: {c}"))
                    .to_string()
            })
            .collect()
    }
}

/// Headless Chromium launched as spider's capture launches it, with one tab.
struct Chrome {
    browser: Browser,
    handler: tokio::task::JoinHandle<()>,
    page: Page,
    _profile: tempfile::TempDir,
}

impl Chrome {
    async fn launch() -> Chrome {
        let profile = tempfile::Builder::new()
            .prefix("spider-bookmarklet-")
            .tempdir()
            .unwrap();
        // Flags without the leading `--`: chromiumoxide adds it.
        let config = BrowserConfig::builder()
            .chrome_executable(chromium())
            .user_data_dir(profile.path())
            .window_size(1280, 900)
            .viewport(Viewport {
                width: 1280,
                height: 900,
                device_scale_factor: Some(1.0),
                emulating_mobile: false,
                is_landscape: true,
                has_touch: false,
            })
            .no_sandbox()
            .launch_timeout(Duration::from_secs(30))
            .request_timeout(STEP)
            .arg("disable-gpu")
            .arg("disable-background-networking")
            .arg("disable-component-update")
            .arg("disable-sync")
            .arg("no-first-run")
            .arg("no-default-browser-check")
            .build()
            .expect("browser config");
        let (browser, mut handler) = Browser::launch(config).await.expect("launch Chromium");
        // Every call hangs unless the handler is polled.
        let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = tokio::time::timeout(STEP, browser.new_page("about:blank"))
            .await
            .expect("opening a tab timed out")
            .expect("open a tab");
        Chrome {
            browser,
            handler,
            page,
            _profile: profile,
        }
    }

    async fn goto(&self, url: &str) {
        tokio::time::timeout(STEP, self.page.goto(url))
            .await
            .unwrap_or_else(|_| panic!("loading {url} timed out"))
            .unwrap_or_else(|e| panic!("loading {url}: {e}"));
    }

    /// Evaluates `expression` in the page (as a user gesture, like a click
    /// on a bookmark) and returns its value as JSON.
    async fn eval(&self, expression: &str) -> Value {
        let params = EvaluateParams::builder()
            .expression(expression)
            .return_by_value(true)
            .user_gesture(true)
            .build()
            .unwrap();
        let result = tokio::time::timeout(STEP, self.page.evaluate_expression(params))
            .await
            .expect("evaluating in the page timed out")
            .unwrap_or_else(|e| panic!("evaluating in the page: {e}"));
        result.value().cloned().unwrap_or(Value::Null)
    }

    /// Waits until the page has drawn two more frames.
    async fn painted(&self) {
        let params = EvaluateParams::builder()
            .expression(
                "new Promise(function (done) {
                   requestAnimationFrame(function () { requestAnimationFrame(done); });
                 })",
            )
            .await_promise(true)
            .build()
            .unwrap();
        let _ = tokio::time::timeout(STEP, self.page.evaluate_expression(params)).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    /// The bookmarklet's badge: `(data-state, text)`, if there is one.
    async fn badge(&self) -> Option<(String, String)> {
        let value = self
            .eval(
                "(function () { var b = document.getElementById('spider-badge');
                  if (!b) return null;
                  if (b.hasAttribute('data-e2e-previous')) return ['previous', b.textContent];
                  return [b.getAttribute('data-state'), b.textContent]; })()",
            )
            .await;
        let pair = value.as_array()?;
        Some((
            pair[0].as_str().unwrap_or("").to_string(),
            pair[1].as_str().unwrap_or("").to_string(),
        ))
    }

    /// Polls the badge until `done` holds for its state (or panics after
    /// `limit`); every state seen on the way is returned, in order.
    async fn wait_badge(
        &self,
        limit: Duration,
        done: impl Fn(&str) -> bool,
    ) -> (String, String, Vec<String>) {
        let started = Instant::now();
        let mut seen: Vec<String> = Vec::new();
        loop {
            if let Some((state, text)) = self.badge().await {
                if seen.last() != Some(&state) {
                    seen.push(state.clone());
                }
                if done(&state) {
                    return (state, text, seen);
                }
                if started.elapsed() > limit {
                    panic!("badge still {state:?} ({text}) after {limit:?}; states seen: {seen:?}");
                }
            } else if started.elapsed() > limit {
                panic!("no #spider-badge after {limit:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs the bookmarklet and waits until it has uploaded (or failed).
    async fn run(&self, code: &str) -> (String, String, Vec<String>) {
        self.start(code).await;
        self.wait_badge(Duration::from_secs(30), |s| {
            !matches!(s, "previous" | "capturing" | "uploading")
        })
        .await
    }

    /// Runs the bookmarklet's code. A badge left by an earlier run is
    /// tagged first, so that it is not taken for this run's: the new
    /// run replaces it once its script has loaded.
    async fn start(&self, code: &str) {
        self.eval(
            "(function () { var b = document.getElementById('spider-badge');
               if (b) b.setAttribute('data-e2e-previous', ''); })()",
        )
        .await;
        self.eval(code).await;
    }

    async fn close(self) {
        let mut browser = self.browser;
        let _ = tokio::time::timeout(Duration::from_secs(5), browser.close()).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), browser.wait()).await;
        self.handler.abort();
    }
}

/// The bookmarklet as a reader gets it: the server's index page, with
/// `token` typed into its token field, links the bookmarklet as
/// `javascript:` + the URI-encoded code. Returns the code.
async fn bookmarklet_code(chrome: &Chrome, server: &SpiderServer, token: &str) -> String {
    chrome.goto(&server.url("/")).await;
    let token_json = serde_json::to_string(token).unwrap();
    let href = chrome
        .eval(&format!(
            "(function () {{
               var input = document.getElementById('token');
               if (!input) return 'no #token input';
               input.value = {token_json};
               input.dispatchEvent(new Event('input', {{ bubbles: true }}));
               var link = document.getElementById('bookmarklet');
               if (!link) return 'no #bookmarklet link';
               return link.getAttribute('href');
             }})()"
        ))
        .await;
    let href = href.as_str().unwrap_or_default().to_string();
    let encoded = href
        .strip_prefix("javascript:")
        .unwrap_or_else(|| panic!("the bookmarklet link is not a javascript: URL: {href:?}"));
    let code = chrome
        .eval(&format!(
            "decodeURIComponent({})",
            serde_json::to_string(encoded).unwrap()
        ))
        .await
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        code.contains(&server.origin) && code.contains(token),
        "the bookmarklet code lacks the server or the token: {code}"
    );
    assert!(
        !code.contains("__SPIDER_"),
        "placeholders left in the bookmarklet: {code}"
    );
    code
}

/// Whitespace runs to one space, trimmed.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// N in the badge's "spider: N blocks matched (...)".
fn matched_count(text: &str) -> usize {
    text.strip_prefix("spider: ")
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no block count in {text:?}"))
}

fn news_page(fixture: &FixtureServer, page: &str) -> String {
    fixture.url(&format!("/site/news-site/{page}"))
}

fn screenshot_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bookmarklet-e2e.png")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarklet_uploads_learns_and_highlights() {
    let fixture = FixtureServer::start().await;
    let server = SpiderServer::start().await;
    let chrome = Chrome::launch().await;
    let code = bookmarklet_code(&chrome, &server, &server.token).await;

    // Pages of one layout: two other fixture pages wrap their body in one
    // more <div>, and three pages are too few to learn both layouts.
    let training = ["tide-tables.html", "storm-damage.html", "rowing-club.html"];
    // Two pages: stored, too few to learn from.
    for (i, page) in training[..2].iter().enumerate() {
        chrome.goto(&news_page(&fixture, page)).await;
        let (state, text, _) = chrome.run(&code).await;
        assert_eq!(state, "uploaded", "{page}: {text}");
        assert!(
            text.contains(&format!("{} of 3 pages", i + 1)),
            "{page}: {text}"
        );
        assert!(!text.contains("used the DOM"), "{page}: {text}");
    }

    // The third starts a learn; the badge follows it to the highlight.
    chrome.goto(&news_page(&fixture, training[2])).await;
    let (state, text, _) = chrome.run(&code).await;
    assert_eq!(state, "learning", "{text}");
    assert!(text.contains("learning 127.0.0.1 from 3 pages"), "{text}");
    let (state, text, seen) = chrome
        .wait_badge(Duration::from_secs(150), |s| s != "learning")
        .await;
    assert_eq!(state, "matched", "{text} (states seen: {seen:?})");

    let mut stored = server.stored_urls().await;
    stored.sort();
    let mut expected: Vec<String> = training.iter().map(|p| news_page(&fixture, p)).collect();
    expected.sort();
    assert_eq!(stored, expected);
    let (status, rules) = server.get(&format!("/api/sites/{SITE}/rules")).await;
    assert_eq!(status, 200, "{rules}");
    assert!(
        rules["rules"]["content"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "no content rules: {rules}"
    );

    // A page never uploaded: the rules apply at once.
    chrome
        .goto(&news_page(&fixture, "lighthouse-sale.html"))
        .await;
    let (state, text, _) = chrome.run(&code).await;
    assert_eq!(state, "matched", "{text}");
    let n = matched_count(&text);
    assert!(n > 0, "{text}; rules: {rules}");
    assert!(text.contains("rules v"), "{text}");

    // The fixture's oracle attributes (never seen by the learner) against
    // the marks: every article paragraph marked, no chrome marked.
    let dom = chrome
        .eval(
            "(function () {
               var marked = document.querySelectorAll('[data-spider=content]');
               var paragraphs = document.querySelectorAll('.story-body p[data-expect=content]');
               var unmarked = [];
               for (var i = 0; i < paragraphs.length; i++) {
                 if (!paragraphs[i].closest('[data-spider=content]')) unmarked.push(paragraphs[i].textContent.slice(0, 60));
               }
               var chrome = [];
               var all = document.querySelectorAll('[data-spider]');
               for (var j = 0; j < all.length; j++) {
                 if (all[j].closest('[data-expect=chrome]') || all[j].querySelector('[data-expect=chrome]')) {
                   chrome.push(all[j].outerHTML.slice(0, 120));
                 }
               }
               var title = document.querySelector('[data-spider=title]');
               return {
                 marked: marked.length,
                 paragraphs: paragraphs.length,
                 unmarked: unmarked,
                 chrome: chrome,
                 nav: document.querySelectorAll('nav [data-spider], footer [data-spider], aside [data-spider], header [data-spider]').length,
                 title: title ? title.textContent : null,
                 outline: marked.length ? getComputedStyle(marked[0]).outlineStyle : null
               };
             })()",
        )
        .await;
    assert_eq!(dom["marked"].as_u64(), Some(n as u64), "{dom}");
    assert!(dom["paragraphs"].as_u64().unwrap() >= 5, "{dom}");
    assert_eq!(dom["unmarked"], Value::Array(vec![]), "{dom}");
    assert_eq!(dom["chrome"], Value::Array(vec![]), "{dom}");
    assert_eq!(dom["nav"].as_u64(), Some(0), "{dom}");
    assert_eq!(dom["outline"].as_str(), Some("solid"), "{dom}");
    if rules["rules"]["title"].is_object() {
        assert_eq!(
            dom["title"].as_str(),
            Some("Council puts the old Point lighthouse up for sale"),
            "{dom}"
        );
    }

    // Running it again replaces the badge and the marks, never doubles them;
    // and what it marks is what the server's extractor takes from the page
    // with the same rules. (Each upload may start a new learn: the rules the
    // badge used must still be current when the server extracts.)
    let source =
        std::fs::read_to_string(fixtures().join("news-site/lighthouse-sale.html")).unwrap();
    let page_url = news_page(&fixture, "lighthouse-sale.html");
    let mut compared = false;
    for _ in 0..3 {
        let (state, again, _) = chrome.run(&code).await;
        assert_eq!(state, "matched", "{again}");
        let marks = chrome
            .eval(
                "(function () {
                   var title = document.querySelector('[data-spider=title]');
                   var content = document.querySelectorAll('[data-spider=content]');
                   var texts = [];
                   for (var i = 0; i < content.length; i++) texts.push(content[i].textContent);
                   return { title: title ? title.textContent : null, content: texts };
                 })()",
            )
            .await;
        let content: Vec<String> = marks["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| words(t.as_str().unwrap()))
            .collect();
        assert_eq!(content.len(), matched_count(&again), "{again}: {marks}");
        let mut marked: Vec<String> = marks["title"].as_str().map(words).into_iter().collect();
        marked.extend(content);
        let extracted = server
            .post_json(
                "/api/extract",
                &serde_json::json!({ "html": source, "url": page_url }),
            )
            .await;
        let version = again
            .split("rules v")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|v| v.parse::<u64>().ok());
        if extracted["rules_version"].as_u64() != version {
            continue;
        }
        assert!(
            extracted["fallback"].is_null(),
            "the server's extractor fell back on this page: {extracted}"
        );
        let blocks: Vec<String> = extracted["blocks"]
            .as_array()
            .unwrap_or_else(|| panic!("no blocks in {extracted}"))
            .iter()
            .map(|t| words(t.as_str().unwrap()))
            .collect();
        assert_eq!(
            marked, blocks,
            "marked in the page vs extracted by the server"
        );
        compared = true;
        break;
    }
    assert!(compared, "the site's rules kept changing under the test");
    let badges = chrome
        .eval("document.querySelectorAll('#spider-badge').length")
        .await;
    assert_eq!(badges.as_u64(), Some(1));
    let frames = chrome
        .eval("document.querySelectorAll('iframe[data-spider-frame]').length")
        .await;
    assert_eq!(frames.as_u64(), Some(0), "the helper iframe is left behind");

    // Screenshots show the last frame drawn: let the marks be drawn first.
    chrome.painted().await;
    let path = screenshot_path();
    tokio::time::timeout(
        STEP,
        chrome.page.save_screenshot(
            ScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Png)
                .build(),
            &path,
        ),
    )
    .await
    .expect("the screenshot timed out")
    .expect("take a screenshot");
    let png = std::fs::read(&path).unwrap();
    assert!(
        png.len() > 1000 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );

    // Dismissed with a click.
    chrome
        .eval("document.getElementById('spider-badge').click()")
        .await;
    assert_eq!(chrome.badge().await, None);
    chrome.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarklet_reports_csp_block() {
    let fixture = FixtureServer::start().await;
    let server = SpiderServer::start().await;
    let chrome = Chrome::launch().await;
    let code = bookmarklet_code(&chrome, &server, &server.token).await;

    chrome.goto(&fixture.url("/site/pages/csp.html")).await;
    chrome.start(&code).await;
    let (state, text, _) = chrome
        .wait_badge(Duration::from_secs(15), |s| s == "error")
        .await;
    assert_eq!(state, "error");
    assert!(text.contains("Content-Security-Policy"), "{text}");
    assert!(text.contains(&server.origin), "{text}");

    // Nothing ran, so nothing was uploaded.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(server.stored_urls().await, Vec::<String>::new());
    chrome.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarklet_survives_hostile_page() {
    let fixture = FixtureServer::start().await;
    let server = SpiderServer::start().await;
    let chrome = Chrome::launch().await;
    let code = bookmarklet_code(&chrome, &server, &server.token).await;

    let url = fixture.url("/site/pages/hostile-article.html");
    chrome.goto(&url).await;
    let (state, text, _) = chrome.run(&code).await;
    assert_eq!(state, "uploaded", "{text}");
    // The page's broken TextDecoder and fetch did not cost the source.
    assert!(!text.contains("used the DOM"), "{text}");
    assert_eq!(server.stored_urls().await, vec![url.clone()]);

    // What was stored: the page as served, and its article as blocks.
    let store = spider::store::Store::open(&server.db).await.unwrap();
    let captures = store
        .captures(&spider::Site::new(SITE).unwrap())
        .await
        .unwrap();
    store.close().await;
    let capture = captures.iter().find(|c| c.url == url).unwrap();
    let source = std::fs::read_to_string(fixtures().join("pages/hostile-article.html")).unwrap();
    assert_eq!(capture.html, source);
    let texts: Vec<&str> = capture.blocks.iter().map(|b| b.text.as_str()).collect();
    assert!(
        texts.contains(&"Allotment society counts its marrows"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("the total came to forty-one")),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("spider")),
        "the badge was captured: {texts:?}"
    );
    assert!(
        capture
            .agent
            .as_deref()
            .is_some_and(|a| a.starts_with("spider-bookmarklet/1 ")),
        "{:?}",
        capture.agent
    );
    chrome.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarklet_reports_a_refused_token() {
    let fixture = FixtureServer::start().await;
    let server = SpiderServer::start().await;
    let chrome = Chrome::launch().await;
    let code = bookmarklet_code(&chrome, &server, "not-a-valid-token").await;

    chrome.goto(&news_page(&fixture, "ferry-strike.html")).await;
    let (state, text, _) = chrome.run(&code).await;
    assert_eq!(state, "error", "{text}");
    assert!(text.contains("401"), "{text}");
    assert!(text.contains(&server.origin), "{text}");
    assert_eq!(server.stored_urls().await, Vec::<String>::new());
    chrome.close().await;
}

/// Three training pages of two layouts teach a selector for one of them
/// only; on a page of the other the rules select nothing, and the badge
/// outlines what the server's extractor (with its fallback) takes instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarklet_falls_back_where_the_rules_select_nothing() {
    let fixture = FixtureServer::start().await;
    let server = SpiderServer::start().await;
    let chrome = Chrome::launch().await;
    let code = bookmarklet_code(&chrome, &server, &server.token).await;
    for page in ["ferry-strike.html", "market-hall.html", "storm-damage.html"] {
        chrome.goto(&news_page(&fixture, page)).await;
        chrome.run(&code).await;
    }
    let (state, text, seen) = chrome
        .wait_badge(Duration::from_secs(150), |s| s != "learning")
        .await;
    assert_eq!(state, "matched", "{text} (states seen: {seen:?})");

    chrome
        .goto(&news_page(&fixture, "lighthouse-sale.html"))
        .await;
    chrome.start(&code).await;
    // Until the server's answer comes, the badge says it is asking.
    let started = Instant::now();
    let (state, text) = loop {
        if let Some((state, text)) = chrome.badge().await {
            let settled =
                state == "error" || (state == "matched" && !text.contains("asking the server"));
            if settled {
                break (state, text);
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "badge still {state:?}: {text}"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(state, "matched", "{text}");
    assert!(
        text.contains("the rules select nothing here") && text.contains("by the fallback"),
        "{text}"
    );
    let marked = text
        .split("; ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no block count in {text:?}"));
    let dom = chrome
        .eval(
            "(function () {
               var paragraphs = document.querySelectorAll('.story-body p[data-expect=content]');
               var found = 0;
               for (var i = 0; i < paragraphs.length; i++) {
                 if (paragraphs[i].closest('[data-spider=content]')) found++;
               }
               return [found, paragraphs.length, document.querySelectorAll('[data-spider=content]').length];
             })()",
        )
        .await;
    let (found, paragraphs, marks) = (
        dom[0].as_u64().unwrap(),
        dom[1].as_u64().unwrap(),
        dom[2].as_u64().unwrap(),
    );
    assert_eq!(marks as usize, marked, "{text}");
    assert!(
        paragraphs > 0 && found == paragraphs,
        "{found} of {paragraphs} article paragraphs outlined: {text}"
    );
    chrome.close().await;
}
