//! The store on both backends: the same tests run on SQLite and PostgreSQL.

use std::collections::BTreeMap;

use spider::capture::{Bounds, Capture, Meta, SCHEMA_VERSION, SelectorStep, Viewport};
use spider::store::{Store, Stored};
use spider::{Block, Site};
use time::OffsetDateTime;

use crate::util::{PgDatabase, temp_sqlite};

fn capture(site: &str, url: &str, text: &str) -> Capture {
    Capture {
        schema: SCHEMA_VERSION,
        site: Site::new(site).unwrap(),
        url: url.to_string(),
        captured_at: OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap(),
        viewport: Viewport::default(),
        lang: Some("en".into()),
        meta: Meta {
            title: Some(format!("{text} | Site")),
            og_title: Some(text.to_string()),
            ..Meta::default()
        },
        html: format!("<html><body><p class=\"x\">{text}</p></body></html>"),
        blocks: vec![Block {
            text: text.to_string(),
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
                    id: None,
                    classes: vec!["x".into()],
                },
            ],
            node: vec![0, 1, 0],
            bounds: Bounds {
                x: 8.0,
                y: 8.0,
                width: 1264.0,
                height: 18.5,
            },
            style: BTreeMap::from([("font-size".to_string(), "18px".to_string())]),
        }],
        truncated: false,
        agent: Some("test".into()),
    }
}

/// Runs one async test body against SQLite and against PostgreSQL.
macro_rules! on_both_backends {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                let (_dir, url) = temp_sqlite();
                let store = Store::open(&url).await.unwrap();
                assert_eq!(store.backend(), "sqlite");
                ($body)(store.clone()).await;
                store.close().await;
            }

            #[tokio::test]
            async fn postgres() {
                let db = PgDatabase::create().await;
                let store = Store::open(&db.url).await.unwrap();
                assert_eq!(store.backend(), "postgres");
                ($body)(store.clone()).await;
                store.close().await;
                db.drop_now().await;
            }
        }
    };
}

on_both_backends!(round_trip, |store: Store| async move {
    let original = capture("example.com", "https://example.com/a", "Hello, wörld 🕷");
    assert_eq!(
        store.put_capture(&original).await.unwrap(),
        Stored::Inserted
    );
    let back = store.captures(&original.site).await.unwrap();
    assert_eq!(back, vec![original]);
});

on_both_backends!(same_page_twice_replaces, |store: Store| async move {
    let site = Site::new("example.com").unwrap();
    let first = capture("example.com", "https://example.com/a", "First version");
    let second = capture("example.com", "https://example.com/a", "Second version");
    let other = capture("example.com", "https://example.com/b", "Other page");
    assert_eq!(store.put_capture(&first).await.unwrap(), Stored::Inserted);
    assert_eq!(store.put_capture(&other).await.unwrap(), Stored::Inserted);
    assert_eq!(store.put_capture(&second).await.unwrap(), Stored::Replaced);
    let stored = store.captures(&site).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].blocks[0].text, "Second version");
    let pages = store.pages(&site).await.unwrap();
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[0].url, "https://example.com/a");
    assert_eq!(pages[0].title.as_deref(), Some("Second version"));
    assert_eq!(pages[0].blocks, 1);
});

on_both_backends!(
    sites_are_listed_with_page_counts,
    |store: Store| async move {
        for (site, page) in [
            ("b.org", "1"),
            ("a.com", "1"),
            ("a.com", "2"),
            ("a.com", "3"),
        ] {
            let c = capture(site, &format!("https://{site}/{page}"), "text");
            store.put_capture(&c).await.unwrap();
        }
        let sites = store.sites().await.unwrap();
        let summary: Vec<(&str, i64)> = sites.iter().map(|s| (s.site.as_str(), s.pages)).collect();
        assert_eq!(summary, vec![("a.com", 3), ("b.org", 1)]);
        assert_eq!(
            sites[0].last_captured_at,
            Some(OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap())
        );
        assert!(
            store
                .pages(&Site::new("nobody.net").unwrap())
                .await
                .unwrap()
                .is_empty()
        );
    }
);

on_both_backends!(
    hostile_strings_are_stored_as_data,
    |store: Store| async move {
        let url = "https://example.com/x?q=1'); DROP TABLE capture; --";
        let c = capture("example.com", url, "Robert'); DROP TABLE site;--");
        store.put_capture(&c).await.unwrap();
        let back = store.captures(&c.site).await.unwrap();
        assert_eq!(back[0].url, url);
        assert_eq!(back[0].blocks[0].text, "Robert'); DROP TABLE site;--");
        assert_eq!(store.sites().await.unwrap().len(), 1);
    }
);

/// A capture that fails half-way leaves nothing behind: the site row written
/// before the failing capture row is rolled back with it. (PostgreSQL
/// refuses NUL characters in text; `Capture::validate` normally stops them.)
#[tokio::test]
async fn a_failed_capture_is_not_half_written() {
    let db = PgDatabase::create().await;
    let store = Store::open(&db.url).await.unwrap();
    let mut bad = capture("half.example", "https://half.example/a", "text");
    bad.html = "<p>nul \0 byte</p>".into();
    assert!(store.put_capture(&bad).await.is_err());
    assert!(
        store.sites().await.unwrap().is_empty(),
        "the site row was left behind"
    );
    store.close().await;
    db.drop_now().await;
}

/// On a PostgreSQL built with lz4 (this machine's is), page sources and
/// block lists are stored lz4-compressed: pglz was half of PostgreSQL's
/// CPU under concurrent uploads.
#[tokio::test]
async fn postgres_compresses_large_columns_with_lz4() {
    use sqlx::Connection;
    let db = PgDatabase::create().await;
    Store::open(&db.url).await.unwrap().close().await;
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let lz4: bool = sqlx::query_scalar(
        "SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert!(
        lz4,
        "the test server has no lz4: this test cannot tell anything"
    );
    let methods: Vec<(String, String)> = sqlx::query_as(
        "SELECT attname::text, attcompression::text FROM pg_attribute \
         WHERE attrelid = 'capture'::regclass AND attname IN ('html', 'blocks') ORDER BY attname",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        methods,
        [
            ("blocks".to_string(), "l".to_string()),
            ("html".to_string(), "l".to_string())
        ]
    );
    conn.close().await.unwrap();
    db.drop_now().await;
}

#[tokio::test]
async fn unknown_database_urls_are_refused() {
    let err = Store::open("mysql://root@localhost/x").await.unwrap_err();
    assert!(
        err.to_string().contains("unsupported database URL"),
        "{err}"
    );
    let err = Store::open("postgres://nobody:secret@127.0.0.1:1/x")
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("cannot open database"), "{message}");
    assert!(!message.contains("secret"), "password leaked: {message}");
}

#[tokio::test]
async fn migrations_are_idempotent() {
    let (_dir, url) = temp_sqlite();
    let store = Store::open(&url).await.unwrap();
    store
        .put_capture(&capture("a.com", "https://a.com/", "x"))
        .await
        .unwrap();
    store.close().await;
    let store = Store::open(&url).await.unwrap();
    assert_eq!(store.sites().await.unwrap().len(), 1);
    store.close().await;
}

fn rules(site: &str, selector: &str) -> spider::Rules {
    spider::Rules {
        format: spider::rules::FORMAT_VERSION,
        site: Site::new(site).unwrap(),
        version: 0,
        learned_at: OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap(),
        pages: 3,
        container: None,
        title: None,
        content: vec![spider::rules::ContentRule {
            selector: selector.into(),
            score: 1.5,
            confidence: 0.9,
            pages: 3,
            blocks: 12,
            cluster: 4,
        }],
        exclude: vec![],
        template: vec!["share this".into()],
        expected_words: None,
    }
}

on_both_backends!(
    rules_are_versioned_and_the_newest_is_current,
    |store: Store| async move {
        let site = Site::new("example.com").unwrap();
        assert_eq!(store.rules(&site).await.unwrap(), None);
        let v1 = store
            .put_rules(&rules("example.com", ".entry p"), "{\"r\":1}")
            .await
            .unwrap();
        let v2 = store
            .put_rules(&rules("example.com", "article p"), "{\"r\":2}")
            .await
            .unwrap();
        store
            .put_rules(&rules("other.org", "p"), "{}")
            .await
            .unwrap();
        assert_eq!((v1.version, v2.version), (1, 2));
        let current = store.rules(&site).await.unwrap().unwrap();
        assert_eq!(current, v2);
        assert_eq!(current.content[0].selector, "article p");
        let first = store.rules_version(&site, Some(1)).await.unwrap().unwrap();
        assert_eq!(first.content[0].selector, ".entry p");
        assert_eq!(store.rules_version(&site, Some(9)).await.unwrap(), None);
        assert_eq!(
            store.rules_report(&site, None).await.unwrap().as_deref(),
            Some("{\"r\":2}")
        );
        let history = store.rules_history(&site).await.unwrap();
        let versions: Vec<i64> = history.iter().map(|h| h.version).collect();
        assert_eq!(versions, [2, 1]);
        assert_eq!(
            (history[0].content, history[0].template, history[0].pages),
            (1, 1, 3)
        );
    }
);
