//! `spider serve` and `spider worker` as real processes, over real HTTP on
//! 127.0.0.1, on SQLite and PostgreSQL. The captures uploaded are real: the
//! news-site fixture rendered in Chromium once, then filed under
//! `harbour.test` URLs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spider::capture::{Capture, Capturer, Target};
use spider::store::Store;
use spider::{Site, rules::normalize_text};

use crate::util::{
    FixtureServer, NEWS_PAGES, SpiderProcess, create_token, options, spider, temp_sqlite,
};

/// The news-site fixture's pages, captured once per test binary.
async fn news_captures() -> &'static [Capture] {
    static CAPTURES: tokio::sync::OnceCell<Vec<Capture>> = tokio::sync::OnceCell::const_new();
    CAPTURES
        .get_or_init(|| async {
            let server = FixtureServer::start().await;
            let capturer = Capturer::launch(options()).await.unwrap();
            let site = Site::new("harbour.test").unwrap();
            let mut captures = Vec::new();
            for page in NEWS_PAGES {
                let target = Target::parse(&server.url(&format!("/site/news-site/{page}")));
                captures.push(capturer.capture(&target, Some(&site)).await.unwrap());
            }
            capturer.close().await;
            captures
        })
        .await
}

/// Capture `i` of the fixture as a page of `https://www.harbour.test`:
/// `variant` makes distinct URLs of the same page.
async fn upload_body(i: usize, variant: Option<usize>) -> Vec<u8> {
    let mut capture = news_captures().await[i % NEWS_PAGES.len()].clone();
    capture.url = match variant {
        Some(n) => format!(
            "https://www.harbour.test/news/{}?n={n}",
            NEWS_PAGES[i % NEWS_PAGES.len()]
        ),
        None => format!(
            "https://www.harbour.test/news/{}",
            NEWS_PAGES[i % NEWS_PAGES.len()]
        ),
    };
    // The server must not believe this: the site comes from the URL.
    capture.site = Site::new("someone-else.test").unwrap();
    serde_json::to_vec(&capture).unwrap()
}

/// `NAME_sqlite` and `NAME_postgres`: the test `NAME(db_url)` on a fresh
/// SQLite file and on a fresh PostgreSQL database.
macro_rules! on_both_backends {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let (_dir, db) = crate::util::temp_sqlite();
                super::$name(&db).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let pg = crate::util::PgDatabase::create().await;
                super::$name(&pg.url).await;
                pg.drop_now().await;
            }
        }
    };
}

/// Sends `request`: the status and the JSON body (every answer of the API is
/// JSON, errors included).
async fn answer(request: reqwest::RequestBuilder, method: &str, path: &str) -> (u16, Value) {
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{method} {path} answered {status}, not JSON ({e}): {text}"));
    (status, body)
}

struct Api {
    client: reqwest::Client,
    origin: String,
    token: String,
}

impl Api {
    fn new(origin: &str, token: &str) -> Api {
        Api {
            client: reqwest::Client::new(),
            origin: origin.to_string(),
            token: token.to_string(),
        }
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let request = self.client.get(format!("{}{path}", self.origin));
        answer(request, "GET", path).await
    }

    async fn post(
        &self,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: Vec<u8>,
    ) -> (u16, Value) {
        let mut request = self
            .client
            .post(format!("{}{path}", self.origin))
            .header("content-type", content_type)
            .body(body);
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        answer(request, "POST", path).await
    }

    /// `POST /api/extract` (no token: extraction is open like the reads).
    async fn extract(&self, request: &Value) -> (u16, Value) {
        let body = serde_json::to_vec(request).unwrap();
        self.post("/api/extract", None, "application/json", body)
            .await
    }

    async fn upload(&self, body: Vec<u8>) -> (u16, Value) {
        self.post("/api/captures", Some(&self.token), "application/json", body)
            .await
    }

    /// Polls the site's rules until `done` says so (at most `limit`).
    async fn wait_for(&self, what: &str, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let (status, body) = self.get("/api/sites/harbour.test/rules").await;
            if status == 200 && done(&body) {
                return body;
            }
            assert!(
                start.elapsed() < limit,
                "waited {limit:?} for {what}; last answer {status}: {body}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_endpoints_answer_and_refuse_as_documented() {
    let (_dir, db) = temp_sqlite();
    let token = create_token(&db, "tester").await;
    let server = SpiderProcess::serve(
        &db,
        &[
            "--min-pages",
            "3",
            "--max-body-bytes",
            "3000000",
            "--poll-secs",
            "0.2",
        ],
    )
    .await;
    let api = Api::new(&server.origin, &token);

    // Pages and documents.
    let (status, health) = api.get("/healthz").await;
    assert_eq!(
        (status, health["status"].as_str()),
        (200, Some("ok")),
        "{health}"
    );
    let (status, openapi) = api.get("/api/openapi.json").await;
    assert_eq!(status, 200);
    assert!(
        openapi["paths"]["/api/captures"]["post"].is_object(),
        "{openapi}"
    );
    let index = reqwest::get(server.url("/")).await.unwrap();
    assert_eq!(index.status(), 200);
    let index = index.text().await.unwrap();
    assert!(
        index.contains("id=\"bookmarklet\"") && index.contains("__SPIDER_TOKEN__"),
        "{index}"
    );
    let script = reqwest::get(server.url("/bookmarklet.js")).await.unwrap();
    assert!(
        script.headers()["content-type"]
            .to_str()
            .unwrap()
            .contains("javascript")
    );
    let script = script.text().await.unwrap();
    assert!(script.contains("spiderCapture") && script.contains("/api/captures"));

    // Refusals, each with a JSON message saying why.
    let body = upload_body(0, None).await;
    let (status, answer) = api
        .post("/api/captures", None, "application/json", body.clone())
        .await;
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("token"),
        "{answer}"
    );
    let (status, _) = api
        .post(
            "/api/captures",
            Some("spt_not-a-real-token"),
            "application/json",
            body.clone(),
        )
        .await;
    assert_eq!(status, 401);
    let (status, answer) = api.upload(b"{\"schema\": 1, \"url\": ".to_vec()).await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("line 1 column"),
        "{answer}"
    );
    let (status, answer) = api
        .upload(br#"{"schema": 1, "colour": "red"}"#.to_vec())
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("colour"),
        "{answer}"
    );
    let mut local: Value = serde_json::from_slice(&body).unwrap();
    local["url"] = json!("file:///etc/passwd");
    let (status, answer) = api.upload(serde_json::to_vec(&local).unwrap()).await;
    assert_eq!(status, 422, "{answer}");
    let (status, _) = api
        .post("/api/captures", Some(&token), "text/plain", body.clone())
        .await;
    assert_eq!(status, 415);
    let (status, answer) = api.upload(vec![b' '; 3_100_000]).await;
    assert_eq!(status, 413, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("3000000"),
        "{answer}"
    );

    // CORS: the bookmarklet's preflight from any site.
    let preflight = api
        .client
        .request(reqwest::Method::OPTIONS, server.url("/api/captures"))
        .header("origin", "https://news.example.org")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{}", preflight.status());
    let allowed = |name: &str| {
        preflight
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_lowercase())
    };
    assert_eq!(allowed("access-control-allow-origin").as_deref(), Some("*"));
    assert!(
        allowed("access-control-allow-headers")
            .unwrap()
            .contains("authorization")
    );
    assert!(
        allowed("access-control-allow-methods")
            .unwrap()
            .contains("post")
    );

    // Nothing was stored by the refused uploads.
    let (_, sites) = api.get("/api/sites").await;
    assert_eq!(sites["sites"], json!([]), "{sites}");

    // Two pages: stored, no learn yet; the third queues one, which the
    // server's own worker runs.
    for i in 0..2 {
        let (status, answer) = api.upload(upload_body(i, None).await).await;
        assert_eq!(status, 201, "{answer}");
        assert_eq!(
            answer["site"], "harbour.test",
            "the site comes from the URL: {answer}"
        );
        assert_eq!(answer["pages"], i + 1);
        assert_eq!(answer["learn"]["state"], "none");
        assert_eq!(answer["rules"], Value::Null);
    }
    let (status, answer) = api.upload(upload_body(1, None).await).await;
    assert_eq!(
        (status, answer["stored"].as_str()),
        (201, Some("replaced")),
        "{answer}"
    );
    assert_eq!(answer["pages"], 2, "the same URL again replaces: {answer}");
    let (status, answer) = api.upload(upload_body(2, None).await).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["pages"], 3);
    assert!(
        matches!(
            answer["learn"]["state"].as_str(),
            Some("queued" | "running" | "done")
        ),
        "{answer}"
    );
    let learned = api
        .wait_for("the first rules", Duration::from_secs(60), |b| {
            !b["rules"].is_null()
        })
        .await;
    assert_eq!(learned["rules"]["version"], 1, "{learned}");
    assert_eq!(learned["learn"]["state"], "done", "{learned}");
    assert!(
        !learned["rules"]["content"].as_array().unwrap().is_empty(),
        "{learned}"
    );

    let (_, sites) = api.get("/api/sites").await;
    assert_eq!(sites["sites"][0]["site"], "harbour.test", "{sites}");
    assert_eq!(sites["sites"][0]["pages"], 3);
    assert_eq!(sites["sites"][0]["rules_version"], 1);
    let (status, site) = api.get("/api/sites/harbour.test").await;
    assert_eq!(status, 200);
    assert_eq!(site["captures"].as_array().unwrap().len(), 3, "{site}");
    assert_eq!(api.get("/api/sites/unknown.test").await.0, 404);
    assert_eq!(api.get("/api/sites/not%20a%20site").await.0, 400);
    assert_eq!(api.get("/api/sites/unknown.test/rules").await.0, 404);
    let index = reqwest::get(server.url("/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        index.contains("harbour.test") && index.contains("learned"),
        "{index}"
    );

    // Extraction of a page the rules never saw, by its source alone.
    let unseen = &news_captures().await[4];
    let request =
        json!({ "html": unseen.html, "url": "https://harbour.test/news/storm-damage.html" });
    let (status, extracted) = api.extract(&request).await;
    assert_eq!(status, 200, "{extracted}");
    assert_eq!(extracted["rules_version"], 1);
    let text = normalize_text(extracted["text"].as_str().unwrap());
    let doc = scraper::Html::parse_document(&unseen.html);
    for (css, wanted) in [
        // Paragraphs: three training pages teach those; lists may need more.
        ("p[data-expect=content]", true),
        ("[data-expect=chrome]", false),
    ] {
        for element in doc.select(&scraper::Selector::parse(css).unwrap()) {
            let part = normalize_text(&element.text().collect::<String>());
            if part.split(' ').count() >= 6 {
                assert_eq!(
                    text.contains(&part),
                    wanted,
                    "{css} {part:?} in extraction:\n{text}"
                );
            }
        }
    }
    let request = json!({ "html": "<p>hi</p>", "site": "unknown.test" });
    let (status, _) = api.extract(&request).await;
    assert_eq!(status, 404);

    // Hostile text reaches SQL only as parameters.
    let mut odd: Value = serde_json::from_slice(&upload_body(3, None).await).unwrap();
    odd["url"] = json!("https://harbour.test/x?q=';DROP TABLE capture;--");
    let (status, answer) = api.upload(serde_json::to_vec(&odd).unwrap()).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["pages"], 4);
    assert_eq!(api.get("/api/sites/harbour.test").await.1["pages"], 4);

    // A revoked token stops working at once.
    let out = spider(&["--db", &db, "token", "revoke", "tester"]).await;
    assert!(out.status.success());
    assert_eq!(api.upload(upload_body(5, None).await).await.0, 401);
}

/// 200 uploads from 20 clients at once: every one stored, one learn queued
/// for all of them, and one learn run.
async fn concurrent_uploads(db: &str) {
    let token = create_token(db, "crowd").await;
    let server = SpiderProcess::serve(db, &["--workers", "0"]).await;
    let bodies: Vec<Vec<u8>> = {
        let mut v = Vec::new();
        for n in 0..200 {
            v.push(upload_body(n, Some(n)).await);
        }
        v
    };
    let bodies = std::sync::Arc::new(bodies);
    let mut clients = Vec::new();
    for c in 0..20 {
        let bodies = bodies.clone();
        let api = Api::new(&server.origin, &token);
        clients.push(tokio::spawn(async move {
            let mut statuses = Vec::new();
            for n in (c..200).step_by(20) {
                statuses.push(api.upload(bodies[n].clone()).await.0);
            }
            statuses
        }));
    }
    for client in clients {
        let statuses = client.await.unwrap();
        assert!(statuses.iter().all(|&s| s == 201), "{statuses:?}");
    }
    let api = Api::new(&server.origin, &token);
    let (_, site) = api.get("/api/sites/harbour.test").await;
    assert_eq!(site["pages"], 200, "lost uploads: {}", site["pages"]);
    assert_eq!(site["learn"]["state"], "queued", "{}", site["learn"]);
    assert_eq!(site["learn"]["attempts"], 0);

    let out = spider(&["--db", db, "worker", "--once"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("learned 1 sites"));
    let (_, site) = api.get("/api/sites/harbour.test").await;
    assert_eq!(
        site["versions"].as_array().unwrap().len(),
        1,
        "one learn: {site}"
    );
    assert_eq!(site["learn"]["state"], "done", "{site}");
}

on_both_backends!(concurrent_uploads);

/// Pages arriving during a learn cost one follow-up learn; a worker killed
/// mid-learn leaves the previous rules in place and its job is retried.
async fn queue_survives_workers(db: &str) {
    let token = create_token(db, "queue").await;
    let server = SpiderProcess::serve(db, &["--workers", "0"]).await;
    let api = Api::new(&server.origin, &token);
    for i in 0..3 {
        assert_eq!(api.upload(upload_body(i, None).await).await.0, 201);
    }

    // A worker that holds each job 3 s before learning it.
    let slow = SpiderProcess::worker(db, &["--hold-ms", "3000", "--poll-secs", "0.2"]);
    api.wait_for("the learn to start", Duration::from_secs(30), |b| {
        b["learn"]["state"] == "running"
    })
    .await;
    for i in 3..8 {
        let (status, answer) = api.upload(upload_body(i, Some(i)).await).await;
        assert_eq!(status, 201, "{answer}");
        assert_eq!(answer["learn"]["state"], "running", "{answer}");
        assert_eq!(answer["learn"]["rerun"], true, "{answer}");
    }
    let done = api
        .wait_for("the follow-up learn", Duration::from_secs(60), |b| {
            b["learn"]["state"] == "done" && b["rules"]["version"] == 2
        })
        .await;
    assert_eq!(
        done["rules"]["pages"], 8,
        "the follow-up learned every page: {done}"
    );
    // Nothing more is queued: five uploads, one follow-up.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, site) = api.get("/api/sites/harbour.test").await;
    assert_eq!(site["versions"].as_array().unwrap().len(), 2, "{site}");
    slow.kill().await;

    // A worker killed while it holds a job.
    assert_eq!(api.upload(upload_body(8, Some(8)).await).await.0, 201);
    let doomed = SpiderProcess::worker(
        db,
        &[
            "--hold-ms",
            "60000",
            "--lease-secs",
            "3",
            "--poll-secs",
            "0.2",
        ],
    );
    let running = api
        .wait_for("the doomed learn to start", Duration::from_secs(30), |b| {
            b["learn"]["state"] == "running"
        })
        .await;
    assert!(running["learn"]["worker"].is_string(), "{running}");
    doomed.kill().await;
    let (_, after) = api.get("/api/sites/harbour.test/rules").await;
    assert_eq!(
        after["rules"]["version"], 2,
        "the previous rules stay current: {after}"
    );
    assert_eq!(after["learn"]["state"], "running", "{after}");

    // Once its lease has run out, another worker takes the job over.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let out = spider(&["--db", db, "worker", "--once", "--lease-secs", "3"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, retried) = api.get("/api/sites/harbour.test/rules").await;
    assert_eq!(retried["rules"]["version"], 3, "{retried}");
    assert_eq!(retried["rules"]["pages"], 9, "{retried}");
    assert_eq!(retried["learn"]["state"], "done", "{retried}");
    assert_eq!(
        retried["learn"]["attempts"], 2,
        "a retry of the killed worker's job: {retried}"
    );

    // A worker asked to stop mid-job gives the job back at once.
    assert_eq!(api.upload(upload_body(9, Some(9)).await).await.0, 201);
    let stopped = SpiderProcess::worker(db, &["--hold-ms", "60000", "--poll-secs", "0.2"]);
    api.wait_for("the learn to start", Duration::from_secs(30), |b| {
        b["learn"]["state"] == "running"
    })
    .await;
    let status = stopped.terminate(Duration::from_secs(10)).await;
    assert!(
        status.success(),
        "the worker exits cleanly on SIGTERM: {status}"
    );
    let (_, released) = api.get("/api/sites/harbour.test/rules").await;
    assert_eq!(released["learn"]["state"], "queued", "{released}");
    assert_eq!(released["learn"]["attempts"], 0, "{released}");
    assert_eq!(released["rules"]["version"], 3, "{released}");
}

on_both_backends!(queue_survives_workers);

/// Eight workers claiming at once from a queue of three sites: each site
/// goes to exactly one of them.
async fn claims_never_share_a_site(url: &str) {
    let store = Store::open(url).await.unwrap();
    let capture = &news_captures().await[0];
    for name in ["a.test", "b.test", "c.test"] {
        let mut c = capture.clone();
        c.site = Site::new(name).unwrap();
        c.url = format!("https://{name}/1");
        let upload = store.put_upload(&c, 1).await.unwrap();
        assert!(upload.queued);
    }
    let mut claims = Vec::new();
    for w in 0..8 {
        let store = store.clone();
        claims.push(tokio::spawn(async move {
            store
                .claim_job(&format!("w{w}"), Duration::from_secs(60), 3)
                .await
                .unwrap()
        }));
    }
    let mut sites = Vec::new();
    for claim in claims {
        if let Some(job) = claim.await.unwrap() {
            sites.push(job.site.to_string());
        }
    }
    sites.sort();
    assert_eq!(sites, ["a.test", "b.test", "c.test"]);
    // Held jobs are not handed out again while their leases run.
    assert!(
        store
            .claim_job("late", Duration::from_secs(60), 3)
            .await
            .unwrap()
            .is_none()
    );

    // A job whose workers keep dying is given up after three attempts.
    let mut c = capture.clone();
    c.site = Site::new("doomed.test").unwrap();
    c.url = "https://doomed.test/1".into();
    store.put_upload(&c, 1).await.unwrap();
    for attempt in 1..=3 {
        // A zero lease: the claimant is "dead" as soon as it has the job.
        let job = store
            .claim_job("dying", Duration::ZERO, 3)
            .await
            .unwrap()
            .expect("the stale job is claimed again");
        assert_eq!((job.site.as_str(), job.attempts), ("doomed.test", attempt));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        store
            .claim_job("next", Duration::from_secs(60), 3)
            .await
            .unwrap()
            .is_none()
    );
    let status = store.learn_status(&c.site).await.unwrap().unwrap();
    assert_eq!(status.state, spider::store::JobState::Failed, "{status:?}");
    assert!(
        status.error.as_deref().unwrap().contains("3 times"),
        "{status:?}"
    );
    store.close().await;
}

on_both_backends!(claims_never_share_a_site);
