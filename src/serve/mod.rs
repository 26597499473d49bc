//! Serve: spider's HTTP API, the bookmarklet, and the learn workers.
//!
//! `spider serve` answers uploads from the bookmarklet (and anything else
//! that speaks the capture JSON schema), queues a learn once a site has
//! enough pages, and runs the same worker loop as `spider worker`
//! ([`worker`]). The API is described in `openapi.json`, served at
//! `/api/openapi.json`.
//!
//! Reads are open; uploads need a token (`spider token create NAME`). Every
//! error is JSON, `{"error": "what is wrong"}`, with the matching status.

mod page;
pub mod token;
pub mod worker;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{Notify, watch};
use tower_http::cors::{Any, CorsLayer};
use url::Url;

use crate::capture::{Capture, Limits};
use crate::extract::{Extractor, page_url};
use crate::site::Site;
use crate::store::{LearnStatus, Store, StoreError, Stored};
use worker::WorkerOptions;

/// The bookmarklet as served: the capture script, then the upload and
/// highlight code that uses it.
const BOOKMARKLET: &str = concat!(
    include_str!("../../bookmarklet/capture.js"),
    "\n",
    include_str!("../../bookmarklet/bookmarklet.js")
);

/// The API description (OpenAPI 3.1).
const OPENAPI: &str = include_str!("openapi.json");

/// Every route, for the OpenAPI check and the index page.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/"),
    ("GET", "/bookmarklet.js"),
    ("GET", "/healthz"),
    ("GET", "/api/openapi.json"),
    ("POST", "/api/captures"),
    ("GET", "/api/sites"),
    ("GET", "/api/sites/{site}"),
    ("GET", "/api/sites/{site}/rules"),
    ("POST", "/api/extract"),
];

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to listen on (port 0: any free port; the bound address is
    /// printed).
    pub listen: SocketAddr,
    /// Pages a site needs before its rules are learned.
    pub min_pages: usize,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Worker loops run inside the server (0: leave learning to `spider
    /// worker` processes).
    pub workers: usize,
    /// How the workers run.
    pub worker: WorkerOptions,
}

/// What every handler shares.
#[derive(Clone)]
struct App {
    store: Store,
    min_pages: usize,
    max_body_bytes: usize,
    /// Wakes in-process workers when a job is queued.
    wake: Arc<Notify>,
}

/// Runs the server (and its workers) until `shutdown` turns true. Prints
/// `listening on http://ADDR` on stdout once it accepts connections.
pub async fn serve(
    store: Store,
    options: ServeOptions,
    shutdown: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;

    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let addr = listener.local_addr()?;
    let wake = Arc::new(Notify::new());
    let app = App {
        store: store.clone(),
        min_pages: options.min_pages,
        max_body_bytes: options.max_body_bytes,
        wake: wake.clone(),
    };
    let mut workers = Vec::new();
    for index in 0..options.workers {
        workers.push(tokio::spawn(worker::run(
            store.clone(),
            worker::worker_name(index),
            WorkerOptions {
                once: false,
                ..options.worker.clone()
            },
            wake.clone(),
            shutdown.clone(),
        )));
    }
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}")?;
        out.flush()?;
    }
    tracing::info!("listening on http://{addr} ({} workers)", options.workers);
    let mut stop = shutdown.clone();
    axum::serve(listener, router(app))
        .with_graceful_shutdown(async move {
            let _ = stop.wait_for(|stop| *stop).await;
        })
        .await
        .context("the server failed")?;
    for worker in workers {
        let _ = worker.await;
    }
    Ok(())
}

fn router(app: App) -> Router {
    let cors = CorsLayer::new()
        // The bookmarklet posts from whatever site the reader is on, with a
        // bearer token (no cookies), so any origin may call.
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE])
        // Chrome asks before a public page may reach a server on the
        // reader's own machine or network (Private Network Access).
        .allow_private_network(true)
        .max_age(std::time::Duration::from_secs(86400));
    let limit = app.max_body_bytes;
    Router::new()
        .route("/", get(index))
        .route("/bookmarklet.js", get(bookmarklet))
        .route("/healthz", get(healthz))
        .route("/api/openapi.json", get(openapi))
        .route("/api/captures", post(post_capture))
        .route("/api/sites", get(list_sites))
        .route("/api/sites/{site}", get(show_site))
        .route("/api/sites/{site}/rules", get(show_rules))
        .route("/api/extract", post(post_extract))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            refuse_large_bodies,
        ))
        .layer(cors)
        // A client that stops sending mid-body must not hold its
        // connection and buffers forever.
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(app)
}

/// An error answer: `{"error": message}` with a status.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    fn unauthorized(message: &str) -> ApiError {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            format!(
                "{message}: send `Authorization: Bearer TOKEN` with a token from `spider token create NAME`"
            ),
        )
    }

    fn body(rejection: BytesRejection, limit: usize) -> ApiError {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large(limit)
        } else {
            ApiError::new(rejection.status(), rejection.body_text())
        }
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is larger than this server's limit of {limit} bytes"),
    )
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        tracing::error!("{error}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(json!({ "error": self.message }))).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// Longest a request may take, body included.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Largest oversized body read to the end before the 413 is sent.
const DRAIN_LIMIT: u64 = 64 << 20;

/// Refuses a body announced larger than the limit before reading any of it
/// (bodies without a length are cut off by `DefaultBodyLimit` as they come).
async fn refuse_large_bodies(State(app): State<App>, request: Request, next: Next) -> Response {
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match announced {
        Some(n) if n > app.max_body_bytes as u64 => {
            // Read (and drop) a moderately oversized body before answering:
            // a client still sending when the connection closes sees a reset,
            // not the 413 (browsers and hyper alike). Beyond that, close.
            if n <= DRAIN_LIMIT {
                discard_body(request).await;
            }
            too_large(app.max_body_bytes).into_response()
        }
        _ => next.run(request).await,
    }
}

/// The name of the token the request carries, or 401.
async fn authorize(app: &App, headers: &HeaderMap) -> Result<String, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError::unauthorized("no token"));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::unauthorized("the Authorization header is not `Bearer TOKEN`"))?;
    app.store
        .token_name(&token::hash(token))
        .await?
        .ok_or_else(|| ApiError::unauthorized("unknown or revoked token"))
}

/// Reads a request's body to its end without keeping it (at most
/// [`DRAIN_LIMIT`] bytes), so the client gets to read the answer.
async fn discard_body(request: Request) {
    use futures::StreamExt;
    let mut chunks = request.into_body().into_data_stream();
    let mut read = 0u64;
    while let Some(Ok(chunk)) = chunks.next().await {
        read += chunk.len() as u64;
        if read > DRAIN_LIMIT {
            break;
        }
    }
}

/// The request's body, up to the server's limit (`DefaultBodyLimit`).
async fn read_body(app: &App, request: Request) -> Result<Bytes, ApiError> {
    use axum::extract::FromRequest;
    Bytes::from_request(request, app)
        .await
        .map_err(|e| ApiError::body(e, app.max_body_bytes))
}

fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send the body as Content-Type: application/json (got {content_type:?})"),
        ))
    }
}

fn parse_site(name: &str) -> Result<Site, ApiError> {
    Site::new(name).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))
}

/// Runs CPU work (parsing megabytes of JSON, extraction) off the async
/// threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("worker thread failed: {e}"),
        )
    })
}

/// Parses and checks an uploaded capture. The site comes from the URL,
/// whatever the body says: a client must not file pages under another site.
fn read_upload(body: &[u8]) -> Result<Capture, ApiError> {
    let mut capture: Capture = serde_json::from_slice(body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("invalid capture JSON: {e}"),
        )
    })?;
    let unprocessable = |m: String| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, m);
    capture
        .validate(&Limits::default())
        .map_err(|e| unprocessable(e.to_string()))?;
    let mut url = Url::parse(&capture.url).map_err(|e| unprocessable(format!("bad url: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(unprocessable(format!(
            "url scheme {:?} is not http or https: uploads are pages of web sites",
            url.scheme()
        )));
    }
    url.set_fragment(None);
    capture.site = Site::from_url(&url)
        .ok_or_else(|| unprocessable(format!("no site name in the url's host: {url}")))?;
    capture.url = url.to_string();
    Ok(capture)
}

async fn post_capture(State(app): State<App>, request: Request) -> Result<Response, ApiError> {
    // The token is checked before the body is read: a client without one
    // costs no buffering. Its body is still read (and dropped), or it would
    // see the connection reset instead of the 401.
    let checked = match authorize(&app, request.headers()).await {
        Ok(token) => require_json(request.headers()).map(|()| token),
        Err(e) => Err(e),
    };
    let token = match checked {
        Ok(token) => token,
        Err(e) => {
            discard_body(request).await;
            return Err(e);
        }
    };
    let body = read_body(&app, request).await?;
    let capture = blocking(move || read_upload(&body)).await??;
    let upload = app.store.put_upload(&capture, app.min_pages).await?;
    if upload.queued {
        app.wake.notify_one();
    }
    tracing::info!(site = %capture.site, url = %capture.url, token = %token, pages = upload.pages, "upload");
    let rules = app.store.rules(&capture.site).await?;
    let learn = app
        .store
        .learn_status(&capture.site)
        .await?
        .unwrap_or_else(LearnStatus::none);
    let body = json!({
        "site": capture.site,
        "url": capture.url,
        "stored": match upload.stored { Stored::Inserted => "inserted", Stored::Replaced => "replaced" },
        "pages": upload.pages,
        "min_pages": app.min_pages,
        "learn": learn,
        "rules": rules,
    });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

async fn list_sites(State(app): State<App>) -> Result<Response, ApiError> {
    let sites = app.store.site_overviews().await?;
    Ok(Json(json!({ "sites": sites, "min_pages": app.min_pages })).into_response())
}

/// The site named in a path, with its learn status; 400 for a name that is
/// no site, 404 for a site without pages.
async fn known_site(app: &App, name: &str) -> Result<(Site, LearnStatus), ApiError> {
    let site = parse_site(name)?;
    let learn = app
        .store
        .learn_status(&site)
        .await?
        .ok_or_else(|| unknown_site(&site))?;
    Ok((site, learn))
}

fn unknown_site(site: &Site) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no pages of site {site} are stored"),
    )
}

async fn show_site(State(app): State<App>, Path(site): Path<String>) -> Result<Response, ApiError> {
    let (site, learn) = known_site(&app, &site).await?;
    let captures = app.store.pages(&site).await?;
    let versions = app.store.rules_history(&site).await?;
    Ok(Json(json!({
        "site": site,
        "pages": captures.len(),
        "min_pages": app.min_pages,
        "rules_version": versions.first().map(|v| v.version),
        "learn": learn,
        "captures": captures,
        "versions": versions,
    }))
    .into_response())
}

async fn show_rules(
    State(app): State<App>,
    Path(site): Path<String>,
) -> Result<Response, ApiError> {
    let (site, learn) = known_site(&app, &site).await?;
    let rules = app.store.rules(&site).await?;
    let pages = app.store.page_count(&site).await?;
    Ok(Json(json!({
        "site": site,
        "pages": pages,
        "min_pages": app.min_pages,
        "rules": rules,
        "learn": learn,
    }))
    .into_response())
}

/// `POST /api/extract`: a page's HTML, and where it is from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtractRequest {
    /// The page source.
    html: String,
    /// The page's URL: picks the site when `site` is absent.
    #[serde(default)]
    url: Option<String>,
    /// The site whose rules apply.
    #[serde(default)]
    site: Option<String>,
}

async fn post_extract(State(app): State<App>, request: Request) -> Result<Response, ApiError> {
    require_json(request.headers())?;
    let body = read_body(&app, request).await?;
    let request: ExtractRequest = blocking(move || serde_json::from_slice(&body))
        .await?
        .map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("invalid request JSON: {e}"),
            )
        })?;
    let (request, page_url) = blocking(move || {
        let found = page_url(&request.html);
        (request, found)
    })
    .await?;
    let url = request.url.clone().or(page_url);
    let site = match (&request.site, &url) {
        (Some(site), _) => parse_site(site)?,
        (None, Some(url)) => Url::parse(url)
            .ok()
            .and_then(|u| Site::from_url(&u))
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("no site in url {url:?}: give \"site\""),
                )
            })?,
        (None, None) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "no site: give \"site\" or \"url\" (the page has no canonical link or og:url)",
            ));
        }
    };
    let rules = app.store.rules(&site).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no rules for site {site} yet"),
        )
    })?;
    let (extraction, rules) = blocking(move || {
        let extraction = Extractor::new(&rules).extract(&request.html);
        (extraction, rules)
    })
    .await?;
    Ok(Json(json!({
        "site": site,
        "url": url,
        "rules_version": rules.version,
        "title": extraction.title,
        "text": extraction.text(),
        "blocks": extraction.blocks,
        "matched": extraction.matched,
        "fallback": extraction.fallback,
    }))
    .into_response())
}

async fn index(State(app): State<App>) -> Result<Response, ApiError> {
    let sites = app.store.site_overviews().await?;
    Ok(Html(page::index(&sites, app.min_pages)).into_response())
}

async fn bookmarklet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        BOOKMARKLET,
    )
        .into_response()
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn healthz(State(app): State<App>) -> Response {
    match app.store.ping().await {
        Ok(()) => Json(json!({ "status": "ok", "database": app.store.backend() })).into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "error", "database": app.store.backend(), "error": e.to_string() })),
        )
            .into_response(),
    }
}

async fn not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no such endpoint: {method} {}", uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_describes_every_api_route() {
        let doc: serde_json::Value = serde_json::from_str(OPENAPI).expect("openapi.json parses");
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let paths = doc["paths"].as_object().expect("paths");
        for (method, path) in ROUTES {
            let entry = paths
                .get(*path)
                .unwrap_or_else(|| panic!("{path} missing from openapi.json"));
            assert!(
                entry.get(method.to_lowercase()).is_some(),
                "{method} {path} missing from openapi.json"
            );
        }
        assert_eq!(
            paths.len(),
            ROUTES.len(),
            "openapi.json lists routes the server lacks"
        );
    }

    #[test]
    fn uploads_take_their_site_from_the_url() {
        let mut capture = crate::testutil::capture(
            "evil.example",
            "https://www.News.test/a#top",
            "A",
            "<p>x</p>",
        );
        capture.blocks.clear();
        let json = serde_json::to_vec(&capture).unwrap();
        let read = read_upload(&json).unwrap();
        assert_eq!(read.site.as_str(), "news.test");
        assert_eq!(read.url, "https://www.news.test/a");

        capture.url = "file:///etc/passwd".into();
        let err = read_upload(&serde_json::to_vec(&capture).unwrap()).unwrap_err();
        assert_eq!(err.status, StatusCode::UNPROCESSABLE_ENTITY);
        let err = read_upload(b"{\"schema\": 1,").unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
        assert!(err.message.contains("EOF"), "{}", err.message);
    }
}
