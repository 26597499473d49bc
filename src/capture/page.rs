//! One page in one tab: open, navigate, wait for late content, run the
//! capture script, read the page source, close. Every step is bounded by a
//! timeout, and the whole races the tab crashing and the browser dying.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
    GetResponseBodyParams, RequestId, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use futures::StreamExt;
use serde::Deserialize;
use time::OffsetDateTime;

use super::browser::{CaptureOptions, Session};
use super::source::{Source, decode_html};
use super::{Block, Capture, CaptureError, Meta, SCHEMA_VERSION, SCRIPT, Viewport};
use crate::site::Site;

/// What to do with a page once it is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Settle, run the capture script, read the source.
    Capture,
    /// Stop after navigation: the baseline for the capture's overhead.
    NavigateOnly,
}

/// The page part of a capture, as the in-page script returns it.
#[derive(Debug, Deserialize)]
pub(crate) struct PageScan {
    pub url: String,
    pub content_type: Option<String>,
    pub encoding: Option<String>,
    pub lang: Option<String>,
    pub viewport: Viewport,
    pub meta: Meta,
    pub blocks: Vec<Block>,
    pub truncated: bool,
}

/// A scan plus what the Rust side adds to it.
pub(crate) struct Scanned {
    scan: PageScan,
    html: String,
    agent: String,
}

/// Installed before any page script runs: remembers when the DOM last
/// changed, so the settle wait knows whether content is still arriving.
const MUTATION_TRACKER: &str = "(function(){if(window.__spiderMutations)return;\
var t={last:performance.now()};window.__spiderMutations=t;\
new MutationObserver(function(){t.last=performance.now();})\
.observe(document,{childList:true,subtree:true,characterData:true});})();";

/// Largest string read from the page in one protocol message.
const CHUNK_CHARS: usize = 4 << 20;

/// Bound on each small protocol call (open a tab, read a value).
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens `source` in a new tab of `session` and, in `Mode::Capture`, scans it.
pub(crate) async fn run(
    session: &Arc<Session>,
    source: &Source,
    options: &CaptureOptions,
    mode: Mode,
) -> Result<Option<Scanned>, CaptureError> {
    let url = source.url.to_string();
    let died = |reason: String| CaptureError::BrowserDied {
        url: url.clone(),
        reason,
    };
    let opened = {
        let browser = session.browser.lock().await;
        tokio::time::timeout(STEP_TIMEOUT, browser.new_page("about:blank")).await
    };
    let tab = match opened {
        Ok(Ok(tab)) => tab,
        Ok(Err(e)) => return Err(died(format!("cannot open a tab: {e}"))),
        Err(_) => return Err(died("opening a tab timed out".into())),
    };
    let mut crashed = tab
        .event_listener::<EventTargetCrashed>()
        .await
        .map_err(|e| died(format!("cannot listen to the tab: {e}")))?;

    let work = in_tab(&tab, session, source, options, mode);
    let result = tokio::select! {
        r = tokio::time::timeout(options.page_timeout, work) => match r {
            Ok(r) => r,
            Err(_) => Err(CaptureError::Timeout {
                url: url.clone(),
                after: options.page_timeout,
                stage: "the whole page",
            }),
        },
        _ = crashed.next() => Err(CaptureError::TabCrashed { url: url.clone() }),
        _ = session.died() => Err(died("the browser process exited".into())),
    };
    // Closing a crashed or hung tab can itself hang: bound it, don't wait on
    // it. The browser reclaims the tab either way.
    if session.is_alive() {
        tokio::spawn(async move {
            let _ = tokio::time::timeout(STEP_TIMEOUT, tab.close()).await;
        });
    }
    result
}

async fn in_tab(
    tab: &Page,
    session: &Session,
    source: &Source,
    options: &CaptureOptions,
    mode: Mode,
) -> Result<Option<Scanned>, CaptureError> {
    let url = source.url.to_string();
    let script_err = |reason: String| CaptureError::Script {
        url: url.clone(),
        reason,
    };
    // The main document's response: its status, type and body (for URLs).
    let mut responses = tab
        .event_listener::<EventResponseReceived>()
        .await
        .map_err(|e| script_err(e.to_string()))?;
    let network = if mode == Mode::Capture {
        tab.execute(AddScriptToEvaluateOnNewDocumentParams::new(
            MUTATION_TRACKER,
        ))
        .await
        .map_err(|e| script_err(e.to_string()))?;
        let network = NetworkActivity::track(tab).await;
        Some(network.map_err(|e| script_err(e.to_string()))?)
    } else {
        None
    };

    match tokio::time::timeout(options.load_timeout, tab.goto(url.as_str())).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            return Err(CaptureError::Navigation {
                url,
                reason: e.to_string(),
            });
        }
        Err(_) => {
            // No `load` event in time. A page whose document is parsed is
            // captured as it is (images that never arrive must not cost the
            // page); one still parsing is a timeout.
            let state: String = evaluate(tab, "document.readyState", false)
                .await
                .map_err(&script_err)?;
            if state == "loading" {
                return Err(CaptureError::Timeout {
                    url,
                    after: options.load_timeout,
                    stage: "loading the document",
                });
            }
            tracing::debug!(
                "{url}: no load event after {:?}, capturing as parsed",
                options.load_timeout
            );
        }
    }

    let document = main_response(&mut responses);
    if let Some(doc) = &document
        && doc.status >= 400
    {
        return Err(CaptureError::Navigation {
            url,
            reason: format!("HTTP status {}", doc.status),
        });
    }
    if mode == Mode::NavigateOnly {
        return Ok(None);
    }

    if let Some(network) = &network {
        settle(tab, network, options).await.map_err(&script_err)?;
    }

    let json = run_capture_script(tab, options.max_blocks)
        .await
        .map_err(&script_err)?;
    let scan: PageScan = serde_json::from_str(&json)
        .map_err(|e| script_err(format!("capture script returned bad JSON: {e}")))?;
    let content_type = scan.content_type.as_deref().unwrap_or("unknown");
    if !matches!(content_type, "text/html" | "application/xhtml+xml") {
        return Err(CaptureError::NotHtml {
            target: url,
            reason: format!("the browser shows it as {content_type}"),
        });
    }

    let html = match &source.file_bytes {
        Some(bytes) => decode_html(bytes, scan.encoding.as_deref()),
        None => {
            let doc =
                document.ok_or_else(|| script_err("no response seen for the document".into()))?;
            response_body(tab, doc.request_id, scan.encoding.as_deref())
                .await
                .map_err(&script_err)?
        }
    };
    Ok(Some(Scanned {
        scan,
        html,
        agent: session.agent.clone(),
    }))
}

/// Requests in flight in one tab, from the protocol's network events.
struct NetworkActivity {
    state: Arc<Mutex<NetworkState>>,
    task: tokio::task::JoinHandle<()>,
}

struct NetworkState {
    in_flight: HashSet<RequestId>,
    last_change: Instant,
}

impl NetworkActivity {
    async fn track(tab: &Page) -> Result<NetworkActivity, chromiumoxide::error::CdpError> {
        let mut sent = tab.event_listener::<EventRequestWillBeSent>().await?;
        let mut finished = tab.event_listener::<EventLoadingFinished>().await?;
        let mut failed = tab.event_listener::<EventLoadingFailed>().await?;
        let state = Arc::new(Mutex::new(NetworkState {
            in_flight: HashSet::new(),
            last_change: Instant::now(),
        }));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let (id, started) = tokio::select! {
                    Some(e) = sent.next() => (e.request_id.clone(), true),
                    Some(e) = finished.next() => (e.request_id.clone(), false),
                    Some(e) = failed.next() => (e.request_id.clone(), false),
                    else => return,
                };
                let mut state = shared.lock().expect("network state lock is never poisoned");
                if started {
                    state.in_flight.insert(id);
                } else {
                    state.in_flight.remove(&id);
                }
                state.last_change = Instant::now();
            }
        });
        Ok(NetworkActivity { state, task })
    }

    /// Requests in flight, and how long ago the last one started or ended.
    fn snapshot(&self) -> (usize, Duration) {
        let state = self
            .state
            .lock()
            .expect("network state lock is never poisoned");
        (state.in_flight.len(), state.last_change.elapsed())
    }
}

impl Drop for NetworkActivity {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Waits for late content: until the DOM has not changed and no request has
/// been in flight for `settle_quiet`, or `settle_max` has passed. Content a
/// script fetches after `load` is thus captured, while a page that polls
/// forever costs at most `settle_max`.
async fn settle(
    tab: &Page,
    network: &NetworkActivity,
    options: &CaptureOptions,
) -> Result<(), String> {
    const DOM_QUIET: &str =
        "(function(){var t=window.__spiderMutations;return t?performance.now()-t.last:1e9;})()";
    let quiet = options.settle_quiet;
    let deadline = Instant::now() + options.settle_max;
    loop {
        let dom_quiet_ms: f64 = evaluate(tab, DOM_QUIET, false).await?;
        let dom_quiet = Duration::from_secs_f64(dom_quiet_ms.max(0.0) / 1000.0);
        let (in_flight, net_quiet) = network.snapshot();
        if dom_quiet >= quiet && in_flight == 0 && net_quiet >= quiet {
            return Ok(());
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(());
        }
        let wait = if in_flight > 0 {
            Duration::from_millis(20)
        } else {
            quiet.saturating_sub(dom_quiet.min(net_quiet))
        };
        tokio::time::sleep(wait.clamp(Duration::from_millis(5), deadline - now)).await;
    }
}

struct DocumentResponse {
    request_id: RequestId,
    status: i64,
}

/// The first main-document response seen in the tab, if any yet.
fn main_response(
    responses: &mut chromiumoxide::listeners::EventStream<EventResponseReceived>,
) -> Option<DocumentResponse> {
    let mut found = None;
    while let Some(Some(event)) = responses.next().now_or_never() {
        if found.is_none() && event.r#type == ResourceType::Document {
            found = Some(DocumentResponse {
                request_id: event.request_id.clone(),
                status: event.response.status,
            });
        }
    }
    found
}

use futures::FutureExt;

/// Runs the capture script and reads its JSON back, in chunks when large:
/// one protocol message per 4 M characters, never split inside a surrogate
/// pair.
async fn run_capture_script(tab: &Page, max_blocks: usize) -> Result<String, String> {
    let call = format!(
        "{SCRIPT}\n;(function(){{var s=window.spiderCapture.captureJson({{maxBlocks:{max_blocks}}});\
         if(s.length<={CHUNK_CHARS})return s;window.__spiderResult=s;return s.length;}})()"
    );
    let first: serde_json::Value = evaluate(tab, &call, false).await?;
    let total = match first {
        serde_json::Value::String(s) => return Ok(s),
        serde_json::Value::Number(n) => n.as_u64().ok_or("bad length")? as usize,
        other => return Err(format!("capture script returned {other}")),
    };
    let mut json = String::with_capacity(total);
    let mut at = 0usize;
    while at < total {
        let read = format!(
            "(function(){{var s=window.__spiderResult;var b=Math.min(s.length,{at}+{CHUNK_CHARS});\
             var c=s.charCodeAt(b-1);if(b<s.length&&c>=0xd800&&c<=0xdbff)b--;\
             return [b,s.slice({at},b)];}})()"
        );
        let (end, chunk): (usize, String) = evaluate(tab, &read, false).await?;
        if end <= at {
            return Err("capture result did not advance".into());
        }
        json.push_str(&chunk);
        at = end;
    }
    let _: serde_json::Value = evaluate(tab, "delete window.__spiderResult", false).await?;
    Ok(json)
}

/// The document's body as served, decoded the way the browser decoded it.
async fn response_body(
    tab: &Page,
    request_id: RequestId,
    encoding: Option<&str>,
) -> Result<String, String> {
    let body = tokio::time::timeout(
        STEP_TIMEOUT,
        tab.execute(GetResponseBodyParams::new(request_id)),
    )
    .await
    .map_err(|_| "reading the page source timed out".to_string())?
    .map_err(|e| format!("cannot read the page source: {e}"))?;
    if body.result.base64_encoded {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(body.result.body.as_bytes())
            .map_err(|e| format!("page source is not valid base64: {e}"))?;
        Ok(decode_html(&bytes, encoding))
    } else {
        Ok(body.result.body.replace('\0', "\u{FFFD}"))
    }
}

/// Evaluates an expression in the page and converts its value.
async fn evaluate<T: serde::de::DeserializeOwned>(
    tab: &Page,
    expression: &str,
    await_promise: bool,
) -> Result<T, String> {
    let params = EvaluateParams::builder()
        .expression(expression)
        .await_promise(await_promise)
        .return_by_value(true)
        .build()
        .map_err(|e| e.to_string())?;
    let result = tab
        .evaluate_expression(params)
        .await
        .map_err(|e| e.to_string())?;
    result
        .into_value()
        .map_err(|e| format!("unexpected value from the page: {e}"))
}

/// Completes a scan into a capture: site, time, agent, source.
pub(crate) fn assemble(
    scanned: Scanned,
    source: &Source,
    site: Option<&Site>,
) -> Result<Capture, CaptureError> {
    let Scanned { scan, html, agent } = scanned;
    let url = if scan.url.is_empty() {
        source.url.to_string()
    } else {
        scan.url
    };
    let site = match site {
        Some(site) => site.clone(),
        None => derive_site(&url, &scan.meta)
            .ok_or_else(|| CaptureError::NoSite { url: url.clone() })?,
    };
    let capture = Capture {
        schema: SCHEMA_VERSION,
        site,
        url,
        captured_at: OffsetDateTime::now_utc(),
        viewport: scan.viewport,
        lang: scan.lang,
        meta: scan.meta,
        html,
        blocks: scan.blocks,
        truncated: scan.truncated,
        agent: Some(agent),
    };
    capture.validate(&super::Limits::default())?;
    Ok(capture)
}

/// The site of a page: its URL's host, else its canonical or og:url host.
fn derive_site(url: &str, meta: &Meta) -> Option<Site> {
    [Some(url), meta.canonical.as_deref(), meta.og_url.as_deref()]
        .into_iter()
        .flatten()
        .filter_map(|u| url::Url::parse(u).ok())
        .find_map(|u| Site::from_url(&u))
}
