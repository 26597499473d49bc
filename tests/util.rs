//! Shared test helpers: real Chromium (installed when missing), a fixture
//! HTTP server on 127.0.0.1, temporary SQLite files and fresh PostgreSQL
//! databases. Nothing here is a mock: a missing service fails loudly.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use spider::capture::{CaptureOptions, chromium};

/// The Chromium binary; installs Debian's package once when it is missing.
pub fn chromium() -> PathBuf {
    static CHROMIUM: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    CHROMIUM
        .get_or_init(|| chromium::ensure_installed().map_err(|e| e.to_string()))
        .clone()
        .unwrap_or_else(|e| panic!("these tests need Chromium and it cannot be installed: {e}"))
}

/// Capture options for tests: short timeouts so failures show quickly.
pub fn options() -> CaptureOptions {
    let mut options = CaptureOptions::new(chromium());
    options.tabs = 2;
    options.page_timeout = Duration::from_secs(20);
    options.load_timeout = Duration::from_secs(5);
    options
}

/// The article pages of the news-site fixture (The Harbour Gazette), which
/// share one template.
pub const NEWS_PAGES: &[&str] = &[
    "tide-tables.html",
    "ferry-strike.html",
    "lighthouse-sale.html",
    "market-hall.html",
    "storm-damage.html",
    "rowing-club.html",
];

/// The folder of hand-written fixture pages.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture site on 127.0.0.1: `/site/NAME` serves `tests/fixtures/NAME`,
/// plus routes that misbehave on purpose. It records every path requested.
pub struct FixtureServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct ServerState {
    requests: Arc<Mutex<Vec<String>>>,
}

impl FixtureServer {
    pub async fn start() -> FixtureServer {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let state = ServerState {
            requests: requests.clone(),
        };
        let app = Router::new()
            .route("/site/{*path}", get(site_file))
            .route("/hang", get(hang))
            .route("/slow/{ms}/{*path}", get(slow))
            .route("/image.png", get(image))
            .route("/notes.txt", get(text))
            .route("/missing.html", get(missing))
            .route("/latin1.html", get(latin1))
            .layer(axum::middleware::from_fn_with_state(state.clone(), record))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a port on 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        FixtureServer {
            addr,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Paths requested so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn record(
    State(state): State<ServerState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    state
        .requests
        .lock()
        .unwrap()
        .push(request.uri().path().to_string());
    next.run(request).await
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

async fn site_file(UrlPath(path): UrlPath<String>) -> Response {
    if path.contains("..") {
        return StatusCode::BAD_REQUEST.into_response();
    }
    match tokio::fs::read(fixtures().join(&path)).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type(&path))], bytes).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Never answers: a hung page or resource.
async fn hang() -> Response {
    std::future::pending::<()>().await;
    unreachable!()
}

/// Answers `/site/PATH` after `ms` milliseconds.
async fn slow(UrlPath((ms, path)): UrlPath<(u64, String)>) -> Response {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    site_file(UrlPath(path)).await
}

async fn image() -> Response {
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\0\x05\0\x01\xff\x89\x99=\x1d\0\0\0\0IEND\xaeB`\x82";
    ([(header::CONTENT_TYPE, "image/png")], png).into_response()
}

async fn text() -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "Just some notes.\n").into_response()
}

async fn missing() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/html")],
        "<h1>Not found</h1>",
    )
        .into_response()
}

/// A Windows-1252 page served without any charset label.
async fn latin1() -> Response {
    let body: &[u8] = b"<html><head><title>Caf\xe9</title></head><body><p>Caf\xe9 cr\xe8me \x93quoted\x94</p></body></html>";
    ([(header::CONTENT_TYPE, "text/html")], body).into_response()
}

/// A temporary SQLite database URL (the directory lives as long as the guard).
pub fn temp_sqlite() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("spider.db").display());
    (dir, url)
}

/// Where the test PostgreSQL server is: `$SPIDER_TEST_POSTGRES`, else the
/// machine's local server.
pub fn postgres_base() -> String {
    std::env::var("SPIDER_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_string())
}

/// A fresh, empty PostgreSQL database, dropped by [`PgDatabase::drop_now`].
pub struct PgDatabase {
    pub url: String,
    name: String,
}

impl PgDatabase {
    pub async fn create() -> PgDatabase {
        use sqlx::Connection;
        let base = postgres_base();
        let admin_url = format!("{base}/test");
        let mut admin = sqlx::PgConnection::connect(&admin_url).await.unwrap_or_else(|e| {
            panic!(
                "PostgreSQL is needed for this test and is not reachable at {admin_url}: {e}\n\
                 start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n\
                 or point SPIDER_TEST_POSTGRES at a server (postgres://user@host:port)"
            )
        });
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let name = format!(
            "spider_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name}"
        )))
        .execute(&mut admin)
        .await
        .unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .unwrap();
        PgDatabase {
            url: format!("{base}/{name}"),
            name,
        }
    }

    pub async fn drop_now(self) {
        use sqlx::Connection;
        let admin_url = format!("{}/test", postgres_base());
        if let Ok(mut admin) = sqlx::PgConnection::connect(&admin_url).await {
            let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            )))
            .execute(&mut admin)
            .await;
        }
    }
}

/// The dev corpus (`../shared/datasets/sites-dev`), read in place: its pages
/// are other people's and never copied here.
pub fn dev_corpus() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/sites-dev");
    assert!(
        dir.join("manifest.tsv").is_file(),
        "this test reads the dev corpus at {} (../shared beside the checkout); it is missing",
        dir.display()
    );
    dir
}

/// Every `step`-th page of the dev corpus, in manifest order.
pub fn dev_pages(step: usize) -> Vec<PathBuf> {
    let dir = dev_corpus();
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap();
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let html = header.iter().position(|h| *h == "html").unwrap();
    lines
        .filter(|l| !l.trim().is_empty())
        .step_by(step)
        .map(|l| dir.join(l.split('\t').nth(html).unwrap()))
        .collect()
}

/// Runs the `spider` binary to completion with `args` (stdin closed).
pub async fn spider(args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_spider"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run the spider binary")
}

/// Makes an upload token in database `db` with `spider token create`.
pub async fn create_token(db: &str, name: &str) -> String {
    let out = spider(&["--db", db, "token", "create", name]).await;
    assert!(
        out.status.success(),
        "spider token create failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(
        token.starts_with("spt_"),
        "spider token create printed {token:?}"
    );
    token
}

/// A `spider` process that runs until dropped (killed then): `spider serve`
/// or `spider worker`. For `serve`, [`SpiderProcess::origin`] is the address
/// it printed on its first line.
pub struct SpiderProcess {
    child: tokio::process::Child,
    /// `http://127.0.0.1:PORT` for a server; empty for a worker.
    pub origin: String,
}

impl SpiderProcess {
    /// `spider --db DB serve --listen 127.0.0.1:0 ARGS...`, once listening.
    pub async fn serve(db: &str, args: &[&str]) -> SpiderProcess {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_spider"))
            .args(["--db", db, "serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start spider serve");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("spider serve printed nothing for 30 s")
            .expect("read spider serve's stdout")
            .expect("spider serve exited before listening");
        let origin = first
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from spider serve: {first:?}"))
            .to_string();
        // Keep draining stdout so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        SpiderProcess { child, origin }
    }

    /// `spider --db DB worker ARGS...`, running.
    pub fn worker(db: &str, args: &[&str]) -> SpiderProcess {
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_spider"))
            .args(["--db", db, "worker"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start spider worker");
        SpiderProcess {
            child,
            origin: String::new(),
        }
    }

    /// `origin` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// Asks the process to stop (SIGTERM, as a service manager does) and
    /// waits at most `limit` for it to exit; its exit status.
    pub async fn terminate(mut self, limit: Duration) -> std::process::ExitStatus {
        let pid = self.child.id().expect("the process is running");
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        tokio::time::timeout(limit, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the process did not exit within {limit:?} of SIGTERM"))
            .expect("wait for the process")
    }

    /// Kills the process at once (SIGKILL: no chance to clean up) and reaps it.
    pub async fn kill(mut self) {
        self.child.kill().await.expect("kill the spider process");
    }
}

impl Drop for SpiderProcess {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
