//! Capture in real Chromium: what a capture records, and how it copes with
//! pages that hang, crash, are not HTML, or are hostile.

use std::time::{Duration, Instant};

use futures::StreamExt;
use spider::capture::{Capture, CaptureError, Capturer, Target, Viewport};
use spider::{Block, Site};

use crate::util::{FixtureServer, fixtures, options};

fn site() -> Site {
    Site::new("example.test").unwrap()
}

fn url_target(url: &str) -> Target {
    Target::Url(url::Url::parse(url).unwrap())
}

/// Serves `path` from a fresh fixture server and captures it in a fresh
/// browser with `options`; the server is returned for its request log.
async fn capture_served(
    path: &str,
    options: spider::capture::CaptureOptions,
) -> (FixtureServer, Result<Capture, CaptureError>) {
    let server = FixtureServer::start().await;
    let capturer = Capturer::launch(options).await.unwrap();
    let capture = capturer
        .capture(&url_target(&server.url(path)), Some(&site()))
        .await;
    capturer.close().await;
    (server, capture)
}

fn find<'a>(capture: &'a Capture, text: &str) -> &'a Block {
    capture
        .blocks
        .iter()
        .find(|b| b.text == text)
        .unwrap_or_else(|| {
            let texts: Vec<_> = capture.blocks.iter().map(|b| &b.text).collect();
            panic!("no block {text:?} in {texts:#?}")
        })
}

fn path(block: &Block) -> String {
    block
        .selector
        .iter()
        .map(|s| {
            let mut step = s.tag.clone();
            if let Some(id) = &s.id {
                step.push('#');
                step.push_str(id);
            }
            for c in &s.classes {
                step.push('.');
                step.push_str(c);
            }
            step
        })
        .collect::<Vec<_>>()
        .join(" > ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_blocks_with_text_selectors_bounds_styles_and_meta() {
    let server = FixtureServer::start().await;
    let capturer = Capturer::launch(options()).await.unwrap();
    let url = server.url("/site/example-site/first-frost.html");
    let capture = capturer.capture(&url_target(&url), None).await.unwrap();
    capturer.close().await;

    // Site from the URL's host; the URL and viewport as rendered.
    assert_eq!(capture.site.as_str(), "127.0.0.1");
    assert_eq!(capture.url, url);
    assert_eq!(
        capture.viewport,
        Viewport {
            width: 1280,
            height: 900
        }
    );
    assert_eq!(capture.lang.as_deref(), Some("en"));

    // The source exactly as served, not the rendered DOM.
    let source = std::fs::read_to_string(fixtures().join("example-site/first-frost.html")).unwrap();
    assert_eq!(capture.html, source);

    // Metadata from the head.
    let meta = &capture.meta;
    assert_eq!(
        meta.title.as_deref(),
        Some("The first frost came early this year | Valley Notes")
    );
    assert_eq!(
        meta.og_title.as_deref(),
        Some("The first frost came early this year")
    );
    assert_eq!(meta.og_site_name.as_deref(), Some("Valley Notes"));
    assert_eq!(
        meta.twitter_title.as_deref(),
        Some("The first frost came early this year")
    );
    assert_eq!(meta.twitter_description, None);
    assert!(
        meta.description
            .as_deref()
            .unwrap()
            .starts_with("Gardeners in the valley")
    );
    assert_eq!(meta.og_description, meta.description);
    assert_eq!(
        meta.canonical.as_deref(),
        Some("https://example.test/first-frost")
    );

    // Blocks in document order; hidden and visually-hidden text never.
    let texts: Vec<&str> = capture.blocks.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(texts.first(), Some(&"Valley Notes"));
    let h1 = texts
        .iter()
        .position(|t| *t == "The first frost came early this year")
        .unwrap();
    let quote = texts
        .iter()
        .position(|t| t.starts_with("A garden that has never"))
        .unwrap();
    let footer = texts
        .iter()
        .position(|t| t.starts_with("Valley Notes is written"))
        .unwrap();
    assert!(h1 < quote && quote < footer, "{texts:#?}");
    assert!(!texts.iter().any(|t| t.contains("hidden and must never")));
    assert!(!texts.iter().any(|t| t.contains("End of article")));

    // The headline: path with ids and classes, element indexes, geometry, CSS.
    let headline = find(&capture, "The first frost came early this year");
    assert_eq!(headline.tag, "h1");
    assert_eq!(
        path(headline),
        "html > body.post-page > div.layout > main#post-100.post > article > h1.entry-title"
    );
    assert_eq!(headline.node, vec![0, 1, 1, 0, 0, 0]);
    assert_eq!(headline.link_text_len, 0);
    let b = headline.bounds;
    assert!(b.x > 24.0 && b.x < 400.0, "headline x {b:?}");
    assert!(b.y > 60.0 && b.y < 300.0, "headline y {b:?}");
    assert!(b.width > 500.0 && b.width < 1100.0, "headline width {b:?}");
    assert!(b.height > 30.0 && b.height < 100.0, "headline height {b:?}");
    // From the external stylesheet, differing from <body>:
    assert_eq!(
        headline.style.get("font-size").map(String::as_str),
        Some("34px")
    );
    assert_eq!(
        headline.style.get("font-weight").map(String::as_str),
        Some("700")
    );
    // Same as <body>, so not recorded; geometry never recorded.
    assert!(!headline.style.contains_key("font-family"));
    assert!(!headline.style.contains_key("width"));
    assert!(!headline.style.contains_key("height"));

    // The sidebar sits right of the article, and is all links.
    let related = find(&capture, "Volunteers count the river's otters");
    assert_eq!(related.tag, "li");
    assert!(
        related.bounds.x > b.x + b.width,
        "sidebar {:?} vs headline {b:?}",
        related.bounds
    );
    assert_eq!(related.link_text_len, related.text.chars().count());
    assert_eq!(
        related.style.get("font-family").map(String::as_str),
        Some("Arial, sans-serif")
    );

    // Inline links inside a paragraph count only their own characters.
    let para = capture
        .blocks
        .iter()
        .find(|b| b.text.starts_with("The committee has opened"))
        .unwrap();
    assert_eq!(para.link_text_len, "Write to us".len());

    // Every node path leads to the same element as its selector path: the
    // static parse of `html` must be able to find it again.
    for block in &capture.blocks {
        assert_eq!(block.node.len(), block.selector.len());
        assert_eq!(block.selector[0].tag, "html");
        assert_eq!(block.selector[1].tag, "body");
    }
    // And what we produce passes our own validation and JSON round trip.
    let json = serde_json::to_string(&capture).unwrap();
    assert_eq!(Capture::from_json(&json).unwrap(), capture);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_text_merges_into_its_block_and_hidden_text_is_skipped() {
    let (_server, capture) = capture_served("/site/pages/deep-nav.html", options()).await;
    let capture = capture.unwrap();

    let mixed = find(
        &capture,
        "Intro text bold and a link. After the break Tail text of the div.",
    );
    assert_eq!(mixed.tag, "div");
    assert_eq!(mixed.selector.last().unwrap().id.as_deref(), Some("mixed"));
    assert_eq!(mixed.link_text_len, "a link".len());
    find(&capture, "A nested paragraph.");
    // An inline-block is not a block of its own: its text stays in the cell.
    find(&capture, "Cell one");
    let cell = find(&capture, "Cell two");
    assert_eq!(cell.tag, "td");
    assert!(
        path(cell).contains("table > tbody > tr > td"),
        "{}",
        path(cell)
    );
    find(&capture, "Visible end.");
    for hidden in ["Off-screen text.", "Invisible text.", "Transparent text."] {
        assert!(
            !capture.blocks.iter().any(|b| b.text.contains(hidden)),
            "{hidden} was captured"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_stylesheets_load_and_unreachable_hosts_are_blocked() {
    let mut opts = options();
    opts.offline = true;
    let started = Instant::now();
    let (server, capture) = capture_served("/site/pages/external.html", opts).await;
    let took = started.elapsed();
    let capture = capture.unwrap();

    let logo = find(&capture, "Offline but styled");
    assert_eq!(
        logo.style.get("font-size").map(String::as_str),
        Some("26px")
    );
    assert!(
        server
            .requests()
            .contains(&"/site/example-site/style.css".to_string())
    );
    // A blocking script on a dead host must not hold the page until the
    // load timeout (5 s here): the host fails to resolve at once.
    assert!(took < Duration::from_secs(4), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_without_load_event_is_captured_as_parsed() {
    let mut opts = options();
    opts.load_timeout = Duration::from_secs(2);
    opts.settle_max = Duration::from_millis(500);
    let (server, capture) = capture_served("/site/pages/hung-image.html", opts).await;
    let capture = capture.unwrap();
    find(&capture, "Waiting for the picture");
    find(
        &capture,
        "This paragraph is parsed long before the load event, which never fires.",
    );
    assert!(server.requests().contains(&"/hang".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_page_times_out_and_the_others_finish() {
    let server = FixtureServer::start().await;
    let mut opts = options();
    opts.page_timeout = Duration::from_secs(3);
    opts.load_timeout = Duration::from_secs(3);
    let capturer = Capturer::launch(opts).await.unwrap();
    let targets = vec![
        url_target(&server.url("/hang")),
        url_target(&server.url("/site/example-site/night-trains.html")),
        url_target(&server.url("/site/example-site/bread-oven.html")),
    ];
    let mut results: Vec<_> = capturer
        .capture_all(&targets, Some(&site()))
        .collect()
        .await;
    capturer.close().await;
    results.sort_by_key(|(i, _)| *i);
    match &results[0].1 {
        Err(CaptureError::Timeout { url, .. }) => assert!(url.ends_with("/hang")),
        other => panic!("expected a timeout, got {other:?}"),
    }
    let message = results[0].1.as_ref().unwrap_err().to_string();
    assert!(
        message.contains("/hang") && message.contains("timed out"),
        "{message}"
    );
    for (_, r) in &results[1..] {
        let capture = r.as_ref().expect("the other pages are captured");
        assert!(capture.blocks.len() > 10);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_added_after_load_is_waited_for() {
    let (_server, capture) = capture_served("/site/pages/late.html", options()).await;
    let capture = capture.unwrap();
    find(&capture, "Written in the page.");
    find(&capture, "Added by a script after the page had loaded.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_that_are_not_html_are_refused_clearly() {
    let server = FixtureServer::start().await;
    let capturer = Capturer::launch(options()).await.unwrap();
    let image = capturer
        .capture(&url_target(&server.url("/image.png")), Some(&site()))
        .await;
    let text = capturer
        .capture(&url_target(&server.url("/notes.txt")), Some(&site()))
        .await;
    let missing = capturer
        .capture(&url_target(&server.url("/missing.html")), Some(&site()))
        .await;
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let refused = capturer
        .capture(
            &url_target(&format!("http://{closed_port}/nothing-listens")),
            Some(&site()),
        )
        .await;
    capturer.close().await;
    match image {
        Err(CaptureError::NotHtml { reason, .. }) => {
            assert!(reason.contains("image/png"), "{reason}")
        }
        other => panic!("expected not HTML, got {other:?}"),
    }
    match text {
        Err(CaptureError::NotHtml { reason, .. }) => {
            assert!(reason.contains("text/plain"), "{reason}")
        }
        other => panic!("expected not HTML, got {other:?}"),
    }
    match missing {
        Err(CaptureError::Navigation { reason, .. }) => assert!(reason.contains("404"), "{reason}"),
        other => panic!("expected a 404 navigation error, got {other:?}"),
    }
    match refused {
        Err(CaptureError::Navigation { reason, .. }) => {
            assert!(reason.contains("ERR_CONNECTION_REFUSED"), "{reason}")
        }
        other => panic!("expected connection refused, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_tab_fails_only_its_page() {
    let server = FixtureServer::start().await;
    let capturer = Capturer::launch(options()).await.unwrap();
    let targets = vec![
        url_target("chrome://crash"),
        url_target(&server.url("/site/example-site/river-survey.html")),
    ];
    let mut results: Vec<_> = capturer
        .capture_all(&targets, Some(&site()))
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    // The browser survives a crashed tab and goes on.
    let after = capturer
        .capture(
            &url_target(&server.url("/site/example-site/first-frost.html")),
            Some(&site()),
        )
        .await;
    let restarts = capturer.restarts();
    capturer.close().await;
    match &results[0].1 {
        Err(CaptureError::TabCrashed { url }) => {
            assert!(url.starts_with("chrome://crash"), "{url}")
        }
        other => panic!("expected a tab crash, got {other:?}"),
    }
    assert!(results[1].1.is_ok(), "{:?}", results[1].1);
    assert!(after.is_ok(), "{after:?}");
    assert_eq!(restarts, 0, "a tab crash must not restart the browser");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_is_restarted_when_it_dies() {
    let server = FixtureServer::start().await;
    let capturer = Capturer::launch(options()).await.unwrap();
    let pid = capturer
        .browser_pid()
        .await
        .expect("a launched browser has a pid");
    // Slow pages keep tabs busy while the browser is killed under them.
    let targets: Vec<Target> = ["first-frost", "river-survey", "night-trains", "bread-oven"]
        .iter()
        .map(|p| url_target(&server.url(&format!("/slow/1500/example-site/{p}.html"))))
        .collect();
    let killer = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let status = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -9 {pid} failed");
    };
    let site = site();
    let (results, ()) = tokio::join!(
        capturer
            .capture_all(&targets, Some(&site))
            .collect::<Vec<_>>(),
        killer
    );
    let restarts = capturer.restarts();
    let new_pid = capturer.browser_pid().await;
    capturer.close().await;
    assert!(restarts >= 1, "the browser was not restarted");
    assert_ne!(new_pid, Some(pid));
    for (i, result) in &results {
        let capture = result.as_ref().unwrap_or_else(|e| panic!("page {i}: {e}"));
        assert!(capture.blocks.len() > 10);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_with_replaced_builtins_are_captured() {
    let (_server, capture) = capture_served("/site/pages/hostile.html", options()).await;
    let capture = capture.unwrap();
    let h1 = find(&capture, "Built-ins replaced");
    assert_eq!(h1.selector.last().unwrap().classes, vec!["a", "b"]);
    find(
        &capture,
        "An emoji 🕷, a \"quote\", a \\ backslash and a tab: done.",
    );
    // A lone surrogate is not valid Unicode: it arrives as U+FFFD.
    find(&capture, "lone \u{FFFD} surrogate");
    // Properties the page added to Object.prototype are not serialised.
    let blocks = serde_json::to_string(&capture.blocks).unwrap();
    assert!(!blocks.contains("should not appear"));
    assert!(!blocks.contains("injected"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_without_charset_in_windows_1252_is_decoded() {
    let (_server, capture) = capture_served("/latin1.html", options()).await;
    let capture = capture.unwrap();
    find(&capture, "Café crème \u{201c}quoted\u{201d}");
    assert!(
        capture
            .html
            .contains("<p>Café crème \u{201c}quoted\u{201d}</p>"),
        "{}",
        capture.html
    );
    assert_eq!(capture.meta.title.as_deref(), Some("Café"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewport_can_be_chosen() {
    let mut opts = options();
    opts.viewport = Viewport {
        width: 1000,
        height: 700,
    };
    let capturer = Capturer::launch(opts).await.unwrap();
    let file = fixtures().join("example-site/first-frost.html");
    let capture = capturer
        .capture(&Target::File(file), Some(&site()))
        .await
        .unwrap();
    capturer.close().await;
    assert_eq!(
        capture.viewport,
        Viewport {
            width: 1000,
            height: 700
        }
    );
    let header = find(&capture, "Valley Notes");
    assert_eq!(header.bounds.width, 1000.0 - 2.0 * 24.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_files_give_clear_results() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        Target::File(path)
    };
    let empty = write("empty.html", b"");
    let binary = write(
        "binary.html",
        b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0",
    );
    let latin1 = write(
        "latin1.html",
        b"<title>Na\xefve</title><p>Na\xefve caf\xe9 \x96 invalid UTF-8</p>",
    );
    let mut big = String::from("<!DOCTYPE html><title>Big</title><body>");
    let paragraph =
        "<p>A paragraph of a very large page, repeated to make ten megabytes of markup. </p>\n";
    while big.len() < 10 << 20 {
        big.push_str(paragraph);
    }
    big.push_str("<p>The last paragraph.</p></body>");
    let big = write("big.html", big.as_bytes());
    let deep = format!(
        "<title>Deep</title><body>{}<p>At the bottom of five thousand elements.</p>{}</body>",
        "<div>".repeat(5000),
        "</div>".repeat(5000)
    );
    let deep = write("deep.html", deep.as_bytes());
    let missing = Target::File(dir.path().join("does-not-exist.html"));

    let mut opts = options();
    opts.page_timeout = Duration::from_secs(60);
    opts.load_timeout = Duration::from_secs(30);
    let capturer = Capturer::launch(opts).await.unwrap();
    let targets = vec![empty, binary, latin1, big, deep, missing];
    let mut results: Vec<_> = capturer
        .capture_all(&targets, Some(&site()))
        .collect()
        .await;
    capturer.close().await;
    results.sort_by_key(|(i, _)| *i);
    let mut results = results.into_iter().map(|(_, r)| r);

    match results.next().unwrap() {
        Err(e @ CaptureError::Empty { .. }) => assert!(e.to_string().contains("empty file")),
        other => panic!("empty file: {other:?}"),
    }
    match results.next().unwrap() {
        Err(e @ CaptureError::NotHtml { .. }) => assert!(e.to_string().contains("binary"), "{e}"),
        other => panic!("binary file: {other:?}"),
    }
    let latin1 = results
        .next()
        .unwrap()
        .expect("invalid UTF-8 is decoded, not refused");
    find(&latin1, "Naïve café \u{2013} invalid UTF-8");
    assert!(latin1.html.contains("Naïve café"));
    // 120,000 paragraphs: captured up to the block limit, and flagged.
    let big = results.next().unwrap().expect("a 10 MB page is captured");
    assert_eq!(big.blocks.len(), options().max_blocks);
    assert!(big.truncated);
    assert!(big.html.len() >= 10 << 20);
    assert!(big.html.ends_with("<p>The last paragraph.</p></body>"));
    let deep = results.next().unwrap().expect("deep nesting is captured");
    let bottom = find(&deep, "At the bottom of five thousand elements.");
    // Chromium's parser nests at most 512 elements deep.
    assert!(bottom.selector.len() <= 520, "{}", bottom.selector.len());
    match results.next().unwrap() {
        Err(e @ CaptureError::Read { .. }) => {
            assert!(e.to_string().contains("does-not-exist.html"))
        }
        other => panic!("missing file: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tricky_markup_is_captured_as_a_reader_sees_it() {
    let started = Instant::now();
    let (_server, capture) = capture_served("/site/pages/tricky.html", options()).await;
    let took = started.elapsed();
    let capture = capture.expect("an alert() during load is answered, not waited on");
    assert!(took < Duration::from_secs(10), "took {took:?}");

    // Link text is counted in characters, not UTF-16 units.
    let hot = find(&capture, "🔥 Hot topics");
    assert_eq!(hot.link_text_len, hot.text.chars().count());
    // Form controls named `id` or `className` do not shadow the form's own.
    let form = find(&capture, "Leave a comment");
    let step = &form.selector[form.selector.len() - 2];
    assert_eq!(step.tag, "form");
    assert_eq!(step.id.as_deref(), Some("comment-form"));
    assert_eq!(step.classes, vec!["comments"]);
    // A block inside a link is link text.
    let headline = find(&capture, "A headline that is a link");
    assert_eq!(headline.link_text_len, headline.text.chars().count());
    // Clipped away, and visually hidden text, are not on the page.
    assert!(
        !capture
            .blocks
            .iter()
            .any(|b| b.text.contains("Folded away"))
    );
    find(&capture, "Read more.");
    // A line-clamped excerpt is a block of its own.
    assert_eq!(
        find(&capture, "An excerpt clamped to two lines.").tag,
        "div"
    );
    // U+0085 is whitespace on both sides of the contract.
    find(&capture, "Next line");
    // A lone surrogate with the page's native JSON still arrives as U+FFFD.
    find(&capture, "half \u{FFFD} a pair");
}

/// The capture reads only the CSS properties a page's style sources can
/// change (a 3x saving). This checks, on real pages of the dev corpus and on
/// our fixtures, that it records exactly what reading every property does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_only_styled_properties_gives_the_same_styles_as_reading_all() {
    // Every 20th page by default; SPIDER_STYLE_CHECK_STEP=1 checks them all.
    let step = std::env::var("SPIDER_STYLE_CHECK_STEP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut pages: Vec<Target> = crate::util::dev_pages(step)
        .into_iter()
        .map(Target::File)
        .collect();
    for page in [
        "example-site/first-frost.html",
        "pages/tricky.html",
        "pages/deep-nav.html",
        "pages/hostile.html",
    ] {
        pages.push(Target::File(fixtures().join(page)));
    }
    let mut pruned_options = options();
    pruned_options.offline = true;
    let mut full_options = pruned_options.clone();
    full_options.full_style = true;
    let pruned = Capturer::launch(pruned_options).await.unwrap();
    let full = Capturer::launch(full_options).await.unwrap();

    let (mut compared, mut blocks, mut differences) = (0, 0, Vec::new());
    let mut properties = std::collections::BTreeSet::new();
    let site = site();
    for target in &pages {
        let (a, b) = tokio::join!(
            pruned.capture(target, Some(&site)),
            full.capture(target, Some(&site))
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        let texts = |c: &Capture| c.blocks.iter().map(|b| b.text.clone()).collect::<Vec<_>>();
        if texts(&a) != texts(&b) {
            // A page that renders differently twice (clocks, random ads)
            // cannot be compared block by block.
            continue;
        }
        compared += 1;
        for (x, y) in a.blocks.iter().zip(&b.blocks) {
            blocks += 1;
            if x.style != y.style {
                let missing: Vec<_> = y
                    .style
                    .iter()
                    .filter(|(k, v)| x.style.get(*k) != Some(v))
                    .collect();
                properties.extend(missing.iter().map(|(k, _)| k.to_string()));
                differences.push(format!("{} {:?}: {missing:?}", target.display(), x.text));
            }
        }
    }
    pruned.close().await;
    full.close().await;
    assert!(
        compared * 10 >= pages.len() * 9,
        "only {compared} of {} pages compared",
        pages.len()
    );
    assert!(blocks > 1000, "only {blocks} blocks compared");
    assert!(
        differences.is_empty(),
        "{} of {blocks} blocks differ in {properties:?}, e.g.\n{}",
        differences.len(),
        differences
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
