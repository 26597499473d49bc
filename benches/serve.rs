//! Upload throughput of `spider serve`: captures per second sustained by
//! concurrent clients on loopback, with p50/p99 request latency, on SQLite
//! and on PostgreSQL.
//!
//! ```text
//! cargo bench --bench serve                                    # 2000 uploads, 20 clients, both backends
//! cargo bench --bench serve -- --uploads 5000 --clients 50 --backend postgres
//! SPIDER_BENCH_POSTGRES=postgres://user@host:5432 cargo bench --bench serve
//! SPIDER_BENCH_BIN=/path/to/other/spider cargo bench --bench serve   # another build
//! ```
//!
//! The real binary runs as a separate process, as in production:
//! `spider --db URL token create bench`, then
//! `spider --db URL serve --listen 127.0.0.1:0 --workers 0`. With no
//! workers, uploads only queue learn jobs: no learning runs during the
//! measurement, which times receiving, validating and storing captures.
//! SQLite is a fresh file in a temporary directory; PostgreSQL a fresh
//! database `spider_bench_<pid>` on `$SPIDER_BENCH_POSTGRES` (default
//! `postgres://postgres@127.0.0.1:5432`), dropped afterwards. An unreachable
//! PostgreSQL fails the bench.
//!
//! Captures are synthetic but shaped like a typical article page (about
//! 60 KB of HTML, about 150 blocks with selector paths, bounds and computed
//! style), a few different article texts, each upload a distinct URL
//! `https://bench.example/articles/<n>`, so every upload is an insert. A
//! warm-up (`--warmup`, default 100) runs first and is not timed. Every
//! response must be 201 Created, and afterwards the site must report as many
//! pages as were uploaded.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use spider::Site;
use spider::capture::{
    Block, Bounds, Capture, Limits, Meta, SCHEMA_VERSION, SelectorStep, Viewport,
};

/// Where captures are uploaded (POST, JSON body, bearer token).
const UPLOAD_PATH: &str = "/api/captures";
/// The bench's site, as the API reports it (GET).
const SITE_PATH: &str = "/api/sites/bench.example";
/// Replaced by the upload's number in every request body.
const PLACEHOLDER: &str = "__SPIDER_BENCH_N__";
/// Distinct article texts; uploads cycle through them.
const VARIANTS: usize = 8;

/// The binary under test: this build's, or `$SPIDER_BENCH_BIN` (to compare
/// two builds side by side with the same bench).
fn spider_binary() -> String {
    std::env::var("SPIDER_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_spider").to_string())
}

// ---- synthetic captures ----

/// A small deterministic generator (xorshift64*), so every run uploads the
/// same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "was",
    "on",
    "with",
    "as",
    "river",
    "council",
    "survey",
    "winter",
    "station",
    "report",
    "village",
    "water",
    "train",
    "garden",
    "school",
    "market",
    "harbour",
    "bridge",
    "season",
    "weather",
    "farmers",
    "valley",
    "residents",
    "engineers",
    "museum",
    "library",
    "festival",
    "journey",
    "evening",
    "morning",
    "according",
    "officials",
    "published",
    "measured",
    "expected",
    "described",
    "announced",
    "morning",
    "between",
    "several",
    "thousand",
    "hundred",
    "early",
    "later",
    "during",
    "after",
    "before",
    "because",
    "although",
    "however",
    "whose",
    "which",
    "where",
    "their",
    "there",
    "local",
    "northern",
    "southern",
    "annual",
    "public",
    "private",
    "quiet",
    "crowded",
    "old",
    "new",
    "small",
    "large",
    "long",
    "short",
    "first",
    "last",
    "second",
    "final",
    "careful",
];

fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        let w = WORDS[rng.below(WORDS.len())];
        if i == 0 {
            let mut c = w.chars();
            if let Some(first) = c.next() {
                s.extend(first.to_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push(' ');
            s.push_str(w);
        }
    }
    s.push('.');
    s
}

fn paragraph(rng: &mut Rng) -> String {
    let n = 2 + rng.below(3);
    let mut p = Vec::new();
    for _ in 0..n {
        let len = 12 + rng.below(14);
        p.push(sentence(rng, len));
    }
    p.join(" ")
}

fn style(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn step(tag: &str, id: Option<&str>, classes: &[&str]) -> SelectorStep {
    SelectorStep {
        tag: tag.to_string(),
        id: id.map(str::to_string),
        classes: classes.iter().map(|c| c.to_string()).collect(),
    }
}

/// Builds one page: its HTML and the blocks a capture of it records, in
/// document order, with selector paths and node indices that match the HTML.
struct PageBuilder {
    html: String,
    blocks: Vec<Block>,
    y: f64,
}

impl PageBuilder {
    #[allow(clippy::too_many_arguments)]
    fn block(
        &mut self,
        path: &[SelectorStep],
        node: &[u32],
        text: &str,
        link: bool,
        x: f64,
        width: f64,
        line_height: f64,
        style: std::collections::BTreeMap<String, String>,
    ) {
        let chars = text.chars().count();
        let per_line = (width / 8.5).max(1.0) as usize;
        let lines = chars.div_ceil(per_line).max(1) as f64;
        let height = lines * line_height;
        self.blocks.push(Block {
            text: text.to_string(),
            tag: path.last().expect("a path").tag.clone(),
            link_text_len: if link { chars } else { 0 },
            selector: path.to_vec(),
            node: node.to_vec(),
            bounds: Bounds {
                x,
                y: self.y,
                width,
                height,
            },
            style,
        });
        self.y += height + 12.0;
    }
}

/// A capture of article `variant` whose URL carries [`PLACEHOLDER`].
fn article(variant: usize) -> Capture {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (variant as u64 + 1).wrapping_mul(0x1000_0001));
    let title = sentence(&mut rng, 8).trim_end_matches('.').to_string();
    let url = format!("https://bench.example/articles/{PLACEHOLDER}");
    let mut page = PageBuilder {
        html: String::new(),
        blocks: Vec::new(),
        y: 16.0,
    };
    let nav = [
        "News", "Politics", "Business", "Science", "Culture", "Sport", "Travel", "Opinion",
    ];

    // <head>: meta tags, stylesheets and the kind of inline script and
    // JSON-LD real article pages carry.
    let mut head = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title} | Bench Gazette</title>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"description\" content=\"{title}\">\n\
         <meta property=\"og:title\" content=\"{title}\">\n\
         <meta property=\"og:site_name\" content=\"Bench Gazette\">\n\
         <link rel=\"canonical\" href=\"{url}\">\n\
         <link rel=\"stylesheet\" href=\"/assets/site.css\">\n\
         <link rel=\"stylesheet\" href=\"/assets/article.css\">\n<style>\n"
    );
    for i in 0..150 {
        head.push_str(&format!(
            ".c{i}{{margin:{}px 0;padding:0 {}px;color:#{:06x};font-size:{}px}}\n",
            i % 24,
            i % 16,
            rng.next() & 0xff_ffff,
            12 + i % 10
        ));
    }
    head.push_str("</style>\n<script>\nwindow.dataLayer=window.dataLayer||[];\n");
    for i in 0..60 {
        head.push_str(&format!(
            "dataLayer.push({{event:'section_{i}',id:{},ts:{},label:'{}'}});\n",
            rng.next() % 100_000,
            rng.next() % 1_000_000_000,
            sentence(&mut rng, 4)
        ));
    }
    head.push_str(&format!(
        "</script>\n<script type=\"application/ld+json\">{{\"@context\":\"https://schema.org\",\
         \"@type\":\"NewsArticle\",\"headline\":\"{title}\",\"url\":\"{url}\"}}</script>\n</head>\n"
    ));
    page.html.push_str(&head);

    let html = step("html", None, &[]);
    let body = step("body", None, &["article-page", "layout-wide"]);

    // <body> > header.site-header: the logo, then the navigation.
    page.html
        .push_str("<body class=\"article-page layout-wide\">\n");
    page.html.push_str("<header class=\"site-header\">\n<div class=\"logo\"><a href=\"/\">Bench Gazette</a></div>\n<nav class=\"main-nav\"><ul>");
    let header = step("header", None, &["site-header"]);
    page.block(
        &[
            html.clone(),
            body.clone(),
            header.clone(),
            step("div", None, &["logo"]),
        ],
        &[0, 1, 0, 0],
        "Bench Gazette",
        true,
        40.0,
        220.0,
        32.0,
        style(&[
            ("font-family", "Georgia, serif"),
            ("font-size", "26px"),
            ("font-weight", "700"),
            ("line-height", "32px"),
            ("color", "rgb(20, 20, 20)"),
        ]),
    );
    for (i, item) in nav.iter().enumerate() {
        page.html.push_str(&format!(
            "<li class=\"nav-item\"><a href=\"/{}/\">{item}</a></li>",
            item.to_lowercase()
        ));
        page.block(
            &[
                html.clone(),
                body.clone(),
                header.clone(),
                step("nav", None, &["main-nav"]),
                step("ul", None, &[]),
                step("li", None, &["nav-item"]),
            ],
            &[0, 1, 0, 1, 0, i as u32],
            item,
            true,
            300.0 + 100.0 * i as f64,
            90.0,
            20.0,
            style(&[
                ("display", "list-item"),
                ("font-size", "14px"),
                ("text-transform", "uppercase"),
                ("letter-spacing", "0.05em"),
                ("line-height", "20px"),
                ("list-style-type", "none"),
                ("float", "left"),
            ]),
        );
    }
    page.html.push_str("</ul></nav>\n</header>\n");

    // body > div.layout > main#content.post > article: title, byline, text.
    let layout = step("div", None, &["layout"]);
    let main = step("main", Some("content"), &["post"]);
    let art = step("article", None, &["entry"]);
    let content = step("div", None, &["entry-content"]);
    page.html.push_str(&format!(
        "<div class=\"layout\">\n<main id=\"content\" class=\"post\">\n<article class=\"entry\">\n\
         <h1 class=\"entry-title\">{title}</h1>\n\
         <div class=\"byline\">By <a href=\"/authors/{variant}\">A. Writer</a> · 22 November 2026</div>\n\
         <div class=\"entry-content\">\n"
    ));
    page.block(
        &[
            html.clone(),
            body.clone(),
            layout.clone(),
            main.clone(),
            art.clone(),
            step("h1", None, &["entry-title"]),
        ],
        &[0, 1, 1, 0, 0, 0],
        &title,
        false,
        114.0,
        753.0,
        40.8,
        style(&[
            ("font-family", "Georgia, serif"),
            ("font-size", "34px"),
            ("font-weight", "700"),
            ("line-height", "40.8px"),
            ("margin-block-end", "8px"),
            ("margin-bottom", "8px"),
            ("unicode-bidi", "isolate"),
        ]),
    );
    page.block(
        &[
            html.clone(),
            body.clone(),
            layout.clone(),
            main.clone(),
            art.clone(),
            step("div", None, &["byline"]),
        ],
        &[0, 1, 1, 0, 0, 1],
        "By A. Writer · 22 November 2026",
        false,
        114.0,
        753.0,
        18.0,
        style(&[
            ("color", "rgb(102, 102, 102)"),
            ("font-size", "13px"),
            ("line-height", "18px"),
            ("margin-bottom", "24px"),
        ]),
    );
    let mut child = 0u32;
    for i in 0..108 {
        let (tag, text, st) = if i % 15 == 14 {
            let t = sentence(&mut rng, 5).trim_end_matches('.').to_string();
            (
                "h2",
                t,
                style(&[
                    ("font-size", "24px"),
                    ("font-weight", "700"),
                    ("line-height", "30px"),
                    ("margin-top", "32px"),
                    ("margin-bottom", "12px"),
                    ("unicode-bidi", "isolate"),
                ]),
            )
        } else {
            (
                "p",
                paragraph(&mut rng),
                style(&[
                    ("font-family", "Georgia, serif"),
                    ("font-size", "18px"),
                    ("line-height", "28.8px"),
                    ("margin-block-end", "18px"),
                    ("margin-block-start", "18px"),
                    ("margin-bottom", "18px"),
                    ("margin-top", "18px"),
                ]),
            )
        };
        page.html.push_str(&format!("<{tag}>{text}</{tag}>\n"));
        if i % 9 == 4 {
            // Inline figures and ads between paragraphs: markup, no text block.
            page.html.push_str(&format!(
                "<figure class=\"inline-figure\"><img src=\"/img/{variant}-{i}.jpg\" width=\"640\" height=\"360\" alt=\"\" loading=\"lazy\"></figure>\n"
            ));
        }
        page.block(
            &[
                html.clone(),
                body.clone(),
                layout.clone(),
                main.clone(),
                art.clone(),
                content.clone(),
                step(tag, None, &[]),
            ],
            &[0, 1, 1, 0, 0, 2, child],
            &text,
            false,
            114.0,
            680.0,
            if tag == "p" { 28.8 } else { 30.0 },
            st,
        );
        child += if i % 9 == 4 { 2 } else { 1 };
    }
    page.html.push_str("</div>\n</article>\n</main>\n");

    // div.layout > aside.sidebar: a heading and related articles.
    let aside = step("aside", None, &["sidebar"]);
    let widget = step("section", None, &["widget", "related"]);
    page.html.push_str("<aside class=\"sidebar\">\n<section class=\"widget related\">\n<h3 class=\"widget-title\">Most read</h3>\n<ul>");
    let saved_y = page.y;
    page.y = 98.0;
    page.block(
        &[
            html.clone(),
            body.clone(),
            layout.clone(),
            aside.clone(),
            widget.clone(),
            step("h3", None, &["widget-title"]),
        ],
        &[0, 1, 1, 1, 0, 0],
        "Most read",
        false,
        900.0,
        300.0,
        22.0,
        style(&[
            ("font-size", "16px"),
            ("font-weight", "700"),
            ("text-transform", "uppercase"),
            ("border-bottom", "2px solid rgb(0, 0, 0)"),
            ("line-height", "22px"),
        ]),
    );
    for i in 0..16 {
        let t = sentence(&mut rng, 7).trim_end_matches('.').to_string();
        page.html.push_str(&format!(
            "<li class=\"related-item\"><a href=\"/articles/{}\">{t}</a></li>",
            rng.next() % 100_000
        ));
        page.block(
            &[
                html.clone(),
                body.clone(),
                layout.clone(),
                aside.clone(),
                widget.clone(),
                step("ul", None, &[]),
                step("li", None, &["related-item"]),
            ],
            &[0, 1, 1, 1, 0, 1, i],
            &t,
            true,
            900.0,
            300.0,
            20.0,
            style(&[
                ("display", "list-item"),
                ("font-size", "14px"),
                ("line-height", "20px"),
                ("list-style-type", "none"),
                ("border-bottom", "1px solid rgb(221, 221, 221)"),
                ("padding-bottom", "8px"),
            ]),
        );
    }
    page.html.push_str("</ul>\n</section>\n</aside>\n</div>\n");
    page.y = saved_y;

    // body > footer.site-footer: links and the copyright line.
    let footer = step("footer", None, &["site-footer"]);
    page.html
        .push_str("<footer class=\"site-footer\">\n<ul class=\"footer-links\">");
    let links = [
        "About us",
        "Contact",
        "Advertise",
        "Careers",
        "Privacy policy",
        "Cookie settings",
        "Terms of use",
        "Accessibility",
        "Newsletters",
        "Archive",
        "Corrections",
        "RSS",
    ];
    for (i, l) in links.iter().enumerate() {
        page.html
            .push_str(&format!("<li><a href=\"/pages/{i}\">{l}</a></li>"));
        page.block(
            &[
                html.clone(),
                body.clone(),
                footer.clone(),
                step("ul", None, &["footer-links"]),
                step("li", None, &[]),
            ],
            &[0, 1, 2, 0, i as u32],
            l,
            true,
            40.0 + 100.0 * (i % 6) as f64,
            95.0,
            18.0,
            style(&[
                ("display", "list-item"),
                ("font-size", "12px"),
                ("line-height", "18px"),
                ("list-style-type", "none"),
                ("color", "rgb(200, 200, 200)"),
                ("background-color", "rgb(17, 17, 17)"),
            ]),
        );
    }
    page.html.push_str(
        "</ul>\n<p class=\"copyright\">© 2026 Bench Gazette. All rights reserved.</p>\n</footer>\n",
    );
    page.block(
        &[
            html.clone(),
            body.clone(),
            footer.clone(),
            step("p", None, &["copyright"]),
        ],
        &[0, 1, 2, 1],
        "© 2026 Bench Gazette. All rights reserved.",
        false,
        40.0,
        600.0,
        18.0,
        style(&[
            ("font-size", "12px"),
            ("line-height", "18px"),
            ("color", "rgb(150, 150, 150)"),
            ("background-color", "rgb(17, 17, 17)"),
        ]),
    );
    page.html
        .push_str("<script src=\"/assets/app.js\" defer></script>\n</body>\n</html>\n");

    let capture = Capture {
        schema: SCHEMA_VERSION,
        site: Site::new("bench.example").expect("a valid site"),
        url: url.clone(),
        captured_at: time::OffsetDateTime::now_utc(),
        viewport: Viewport::default(),
        lang: Some("en".into()),
        meta: Meta {
            title: Some(format!("{title} | Bench Gazette")),
            og_title: Some(title.clone()),
            og_site_name: Some("Bench Gazette".into()),
            description: Some(title.clone()),
            canonical: Some(url),
            ..Meta::default()
        },
        html: page.html,
        blocks: page.blocks,
        truncated: false,
        agent: Some("spider-bench".into()),
    };
    capture
        .validate(&Limits::default())
        .expect("the synthetic capture is valid");
    capture
}

// ---- the server process ----

/// `spider --db URL ARGS`, which must succeed; its stdout.
fn spider(db: &str, args: &[&str]) -> String {
    let out = Command::new(spider_binary())
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run spider");
    assert!(
        out.status.success(),
        "spider --db {db} {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A running `spider serve`, killed when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(db: &str) -> Server {
        let mut child = Command::new(spider_binary())
            .args([
                "--db",
                db,
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--workers",
                "0",
            ])
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start spider serve");
        // Drain stderr (kept for the failure message) and stdout after its
        // first line, so the server never blocks on a full pipe.
        let log = Arc::new(Mutex::new(String::new()));
        let mut stderr = child.stderr.take().expect("piped stderr");
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&String::from_utf8_lossy(&buf[..n]));
                if log.len() > 64 * 1024 {
                    let cut = log.len() - 32 * 1024;
                    let cut = (cut..log.len())
                        .find(|&i| log.is_char_boundary(i))
                        .unwrap_or(0);
                    log.drain(..cut);
                }
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut first = String::new();
        let read = stdout.read_line(&mut first);
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let mut server = Server {
            child,
            base: String::new(),
        };
        match first.trim().strip_prefix("listening on ") {
            Some(base) if read.is_ok() => server.base = base.trim_end_matches('/').to_string(),
            _ => {
                let _ = server.child.kill();
                let _ = server.child.wait();
                std::thread::sleep(Duration::from_millis(200));
                panic!(
                    "spider serve did not say where it listens (first stdout line {first:?}); stderr:\n{}",
                    log.lock().unwrap()
                );
            }
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- PostgreSQL ----

/// A fresh PostgreSQL database, dropped (with any connections) on drop.
struct PgDatabase {
    base: String,
    name: String,
}

impl PgDatabase {
    fn base() -> String {
        std::env::var("SPIDER_BENCH_POSTGRES")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_string())
            .trim_end_matches('/')
            .to_string()
    }

    async fn admin(base: &str) -> sqlx::PgConnection {
        use sqlx::Connection;
        let url = format!("{base}/postgres");
        sqlx::PgConnection::connect(&url).await.unwrap_or_else(|e| {
            panic!(
                "the PostgreSQL bench needs a server and {url} is not reachable: {e}\n\
                 start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n\
                 or point SPIDER_BENCH_POSTGRES at one (postgres://user@host:port), or pass --backend sqlite"
            )
        })
    }

    async fn create() -> PgDatabase {
        let base = Self::base();
        let name = format!("spider_bench_{}", std::process::id());
        let mut admin = Self::admin(&base).await;
        for sql in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
                .execute(&mut admin)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        PgDatabase { base, name }
    }

    fn url(&self) -> String {
        format!("{}/{}", self.base, self.name)
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        // Drop may run inside a runtime or while unwinding: use a runtime of
        // its own on a thread of its own.
        let base = self.base.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let done = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async {
                let mut admin = PgDatabase::admin(&base).await;
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                    .execute(&mut admin)
                    .await
            })
        })
        .join();
        if !matches!(done, Ok(Ok(_))) {
            eprintln!("warning: could not drop the bench database {}", self.name);
        }
    }
}

// ---- the load ----

/// Request bodies, one per article variant, with [`PLACEHOLDER`] where the
/// upload's number goes.
struct Bodies(Vec<String>);

impl Bodies {
    fn body(&self, n: usize) -> Vec<u8> {
        self.0[n % self.0.len()]
            .replace(PLACEHOLDER, &n.to_string())
            .into_bytes()
    }
}

#[derive(Default)]
struct Outcome {
    latencies: Vec<Duration>,
    /// Non-201 answers and transport errors: description → count.
    failures: std::collections::BTreeMap<String, usize>,
}

/// Uploads captures `first..first + count` from `clients` concurrent
/// clients; returns the wall time and each request's outcome.
async fn upload(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    bodies: &Arc<Bodies>,
    first: usize,
    count: usize,
    clients: usize,
) -> (Duration, Outcome) {
    let next = Arc::new(AtomicUsize::new(first));
    let end = first + count;
    let url = format!("{base}{UPLOAD_PATH}");
    let auth = format!("Bearer {token}");
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, url, auth, next, bodies) = (
            http.clone(),
            url.clone(),
            auth.clone(),
            next.clone(),
            bodies.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut outcome = Outcome::default();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= end {
                    break;
                }
                let body = bodies.body(n);
                let t = Instant::now();
                let result = http
                    .post(&url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .header(reqwest::header::AUTHORIZATION, &auth)
                    .body(body)
                    .send()
                    .await;
                let failure = match result {
                    Ok(response) => {
                        let status = response.status();
                        let text = response.text().await;
                        match text {
                            Ok(_) if status == reqwest::StatusCode::CREATED => None,
                            Ok(text) => Some(format!(
                                "{status}: {}",
                                text.chars().take(200).collect::<String>()
                            )),
                            Err(e) => Some(format!("{status}, body not read: {e}")),
                        }
                    }
                    Err(e) => Some(format!("request failed: {e}")),
                };
                outcome.latencies.push(t.elapsed());
                if let Some(f) = failure {
                    *outcome.failures.entry(f).or_default() += 1;
                }
            }
            outcome
        }));
    }
    let mut all = Outcome::default();
    for task in tasks {
        let o = task.await.expect("a client task");
        all.latencies.extend(o.latencies);
        for (k, v) in o.failures {
            *all.failures.entry(k).or_default() += v;
        }
    }
    (start.elapsed(), all)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    // Nearest rank.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

struct Row {
    backend: &'static str,
    uploads: usize,
    wall: Duration,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

fn assert_all_created(phase: &str, backend: &str, outcome: &Outcome) {
    if !outcome.failures.is_empty() {
        let total: usize = outcome.failures.values().sum();
        let mut msg = format!("{backend}, {phase}: {total} upload(s) were not 201 Created:\n");
        for (what, n) in &outcome.failures {
            msg.push_str(&format!("  {n} × {what}\n"));
        }
        panic!("{msg}");
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_backend(
    backend: &'static str,
    db: &str,
    bodies: &Arc<Bodies>,
    warmup: usize,
    uploads: usize,
    clients: usize,
) -> Row {
    let token = spider(db, &["token", "create", "bench"]).trim().to_string();
    assert!(
        !token.is_empty() && !token.contains(char::is_whitespace),
        "spider token create printed {token:?}, not a token"
    );
    let server = Server::start(db);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(clients)
        .build()
        .expect("HTTP client");

    let (_, outcome) = upload(&http, &server.base, &token, bodies, 0, warmup, clients).await;
    assert_all_created("warm-up", backend, &outcome);
    let (wall, outcome) = upload(
        &http,
        &server.base,
        &token,
        bodies,
        warmup,
        uploads,
        clients,
    )
    .await;
    assert_all_created("measurement", backend, &outcome);

    // None lost: the site has every page uploaded.
    let response = http
        .get(format!("{}{SITE_PATH}", server.base))
        .header(reqwest::header::AUTHORIZATION, format!("Bearer {token}"))
        .send()
        .await
        .expect("GET the bench site");
    let status = response.status();
    let text = response.text().await.expect("the site's JSON");
    assert!(status.is_success(), "GET {SITE_PATH}: {status}: {text}");
    let site: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("GET {SITE_PATH} is not JSON ({e}): {text}"));
    let pages = site.get("pages").and_then(serde_json::Value::as_u64);
    assert_eq!(
        pages,
        Some((warmup + uploads) as u64),
        "{backend}: {} uploads were answered 201 but the site reports {pages:?} pages: {text}",
        warmup + uploads
    );
    drop(server);

    let mut latencies = outcome.latencies;
    latencies.sort();
    Row {
        backend,
        uploads,
        wall,
        p50: percentile(&latencies, 50.0),
        p99: percentile(&latencies, 99.0),
        max: *latencies.last().expect("at least one upload"),
    }
}

fn main() {
    let mut uploads = 2000usize;
    let mut clients = 20usize;
    let mut warmup = 100usize;
    let mut backend = "both".to_string();
    let mut args = std::env::args().skip(1);
    let number = |v: Option<String>, flag: &str| -> usize {
        v.unwrap_or_else(|| panic!("{flag} needs a value"))
            .parse()
            .unwrap_or_else(|e| panic!("{flag}: {e}"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--uploads" => uploads = number(args.next(), "--uploads"),
            "--clients" => clients = number(args.next(), "--clients"),
            "--warmup" => warmup = number(args.next(), "--warmup"),
            "--backend" => backend = args.next().expect("--backend sqlite|postgres|both"),
            "--bench" => {}
            other => panic!(
                "unknown argument {other} (--uploads N, --clients N, --warmup N, --backend sqlite|postgres|both)"
            ),
        }
    }
    assert!(
        uploads > 0 && clients > 0,
        "--uploads and --clients must be at least 1"
    );
    let backends: &[&'static str] = match backend.as_str() {
        "sqlite" => &["sqlite"],
        "postgres" => &["postgres"],
        "both" => &["sqlite", "postgres"],
        other => panic!("--backend {other}: expected sqlite, postgres or both"),
    };

    let captures: Vec<Capture> = (0..VARIANTS).map(article).collect();
    let bodies: Vec<String> = captures
        .iter()
        .map(|c| serde_json::to_string(c).expect("serialise a capture"))
        .collect();
    let html_kb =
        captures.iter().map(|c| c.html.len()).sum::<usize>() as f64 / VARIANTS as f64 / 1024.0;
    let blocks = captures.iter().map(|c| c.blocks.len()).sum::<usize>() / VARIANTS;
    let body_kb = bodies.iter().map(String::len).sum::<usize>() as f64 / VARIANTS as f64 / 1024.0;
    let bodies = Arc::new(Bodies(bodies));
    println!(
        "captures: {html_kb:.0} KB html, {blocks} blocks, {body_kb:.0} KB JSON per upload; \
         {warmup} warm-up + {uploads} timed uploads, {clients} clients, server with --workers 0"
    );

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut rows = Vec::new();
    for &b in backends {
        let row = match b {
            "sqlite" => {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let db = format!("sqlite://{}", dir.path().join("bench.db").display());
                runtime.block_on(run_backend(b, &db, &bodies, warmup, uploads, clients))
            }
            _ => {
                let pg = runtime.block_on(PgDatabase::create());
                runtime.block_on(run_backend(b, &pg.url(), &bodies, warmup, uploads, clients))
            }
        };
        println!(
            "{}: {} uploads in {:.2} s",
            row.backend,
            row.uploads,
            row.wall.as_secs_f64()
        );
        rows.push(row);
    }

    println!();
    println!("| backend | uploads | clients | captures/s | MB/s | p50 | p99 | max |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let secs = r.wall.as_secs_f64();
        println!(
            "| {} | {} | {clients} | {:.0} | {:.1} | {:.1} ms | {:.1} ms | {:.1} ms |",
            r.backend,
            r.uploads,
            r.uploads as f64 / secs,
            r.uploads as f64 * body_kb / 1024.0 / secs,
            r.p50.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3,
            r.max.as_secs_f64() * 1e3,
        );
    }
}
