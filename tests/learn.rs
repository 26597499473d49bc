//! Learning on a site we wrote (The Harbour Gazette, `tests/fixtures/news-site`):
//! captured in real Chromium from a local HTTP server, learned, and the rules
//! applied to the pages' source. Every element of the fixture carries an
//! oracle attribute the learner never sees (it reads tag, id and class only):
//! `data-expect="content"` on article parts, `data-expect="chrome"` on the
//! rest.

use scraper::{Html, Selector};
use spider::capture::Capturer;
use spider::learn::{Params, learn_site};
use spider::rules::normalize_text;
use spider::{Site, extract};

use crate::util::{FixtureServer, NEWS_PAGES, fixtures, options};

fn texts(html: &str, css: &str) -> Vec<String> {
    let doc = Html::parse_document(html);
    let sel = Selector::parse(css).unwrap();
    doc.select(&sel)
        .map(|e| normalize_text(&e.text().collect::<Vec<_>>().join(" ")))
        .filter(|t| !t.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_select_the_article_and_none_of_the_chrome() {
    let server = FixtureServer::start().await;
    let capturer = Capturer::launch(options()).await.unwrap();
    let site = Site::new("harbour.test").unwrap();
    let mut captures = Vec::new();
    for page in NEWS_PAGES {
        let url = server.url(&format!("/site/news-site/{page}"));
        let target = spider::capture::Target::parse(&url);
        captures.push(capturer.capture(&target, Some(&site)).await.unwrap());
    }
    capturer.close().await;

    let learned = learn_site(&site, captures, &Params::default().check().unwrap()).unwrap();
    let rules = &learned.rules;
    eprintln!("{}", rules.to_json());

    // The structure of the rules.
    assert!(!rules.content.is_empty(), "no content selectors");
    for rule in &rules.content {
        assert!(
            !rule.selector.contains("story-4"),
            "per-page id in {}",
            rule.selector
        );
        assert!(
            !rule.selector.ends_with(" a") && rule.selector != "a",
            "link rule {}",
            rule.selector
        );
    }
    let title = rules.title.as_ref().expect("a title selector");
    assert_eq!(title.pages, NEWS_PAGES.len());
    assert!(rules.container.is_some(), "a container");
    assert!(
        rules
            .template
            .contains(&"share this story: facebook twitter email".to_string()),
        "the share bar is a template string (and its links' words stay apart): {:?}",
        rules.template
    );
    assert!(
        learned
            .report
            .clusters
            .iter()
            .any(|c| c.role == spider::learn::select::Role::Content && c.pages < NEWS_PAGES.len()),
        "clusters on some pages only (blockquotes, lists) are selected too"
    );

    // Applied to each page's source: every article part comes out, and
    // everything that comes out is article.
    for page in NEWS_PAGES {
        let html = std::fs::read_to_string(fixtures().join("news-site").join(page)).unwrap();
        let out = extract(&html, rules);
        assert!(
            !out.content_matched_nothing(),
            "{page}: rules matched nothing"
        );
        let joined = normalize_text(&out.text());
        let content = texts(&html, "[data-expect=content]");
        for part in &content {
            assert!(
                joined.contains(part.as_str()),
                "{page}: article text missing: {part}"
            );
        }
        for block in &out.blocks {
            let block = normalize_text(block);
            assert!(
                content.iter().any(|c| c.contains(block.as_str())),
                "{page}: extracted text that is not article: {block}"
            );
        }
        assert_eq!(
            out.title.as_deref().map(normalize_text),
            texts(&html, "h1").first().cloned()
        );
    }
}
