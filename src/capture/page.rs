//! One page in one tab: open, navigate, wait for late content, run the
//! capture script, read the page source, close. Every step is bounded by a
//! timeout, and the whole races the tab crashing and the browser dying.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::inspector::EventTargetCrashed;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
    GetResponseBodyParams, RequestId, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, EventJavascriptDialogOpening,
    HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::listeners::EventStream;
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
    #[serde(default)]
    pub timings: Option<serde_json::Value>,
    /// Properties read per block, of all there are.
    #[serde(default)]
    pub style_properties: Option<(usize, usize)>,
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
    let run_started = Instant::now();
    let died = |reason: String| CaptureError::BrowserDied {
        url: url.clone(),
        reason,
    };
    let opened = tokio::time::timeout(STEP_TIMEOUT, async {
        let browser = session.browser.read().await;
        browser.new_page("about:blank").await
    })
    .await;
    let tab = match opened {
        Ok(Ok(tab)) => tab,
        Ok(Err(e)) => return Err(died(format!("cannot open a tab: {e}"))),
        Err(_) => {
            return Err(CaptureError::Timeout {
                url,
                after: STEP_TIMEOUT,
                stage: "opening a tab",
            });
        }
    };
    let opened_after = run_started.elapsed();
    let result = watch_tab(&tab, session, source, options, mode).await;
    tracing::debug!(
        "{url}: tab opened in {opened_after:?}, page done after {:?} ({mode:?})",
        run_started.elapsed()
    );
    // Closing a crashed or hung tab can itself hang: bound it, don't wait on
    // it. The browser reclaims the tab either way.
    if session.is_alive() {
        tokio::spawn(async move {
            let _ = tokio::time::timeout(STEP_TIMEOUT, tab.close()).await;
        });
    }
    result
}

/// Runs the page's work under the page timeout, racing a tab crash and the
/// browser's death, and answers JavaScript dialogs (an `alert()` would
/// otherwise freeze the page until its timeout).
async fn watch_tab(
    tab: &Page,
    session: &Arc<Session>,
    source: &Source,
    options: &CaptureOptions,
    mode: Mode,
) -> Result<Option<Scanned>, CaptureError> {
    let url = source.url.to_string();
    let listen_err = |e: chromiumoxide::error::CdpError| CaptureError::Script {
        url: url.clone(),
        reason: format!("cannot listen to the tab: {e}"),
    };
    let mut crashed = tab
        .event_listener::<EventTargetCrashed>()
        .await
        .map_err(listen_err)?;
    let mut dialogs = tab
        .event_listener::<EventJavascriptDialogOpening>()
        .await
        .map_err(listen_err)?;
    let dialog_tab = tab.clone();
    let dialog_task = tokio::spawn(async move {
        while dialogs.next().await.is_some() {
            let accept = HandleJavaScriptDialogParams::new(true);
            let _ = tokio::time::timeout(STEP_TIMEOUT, dialog_tab.execute(accept)).await;
        }
    });
    let work = in_tab(tab, session, source, options, mode);
    let result = tokio::select! {
        r = tokio::time::timeout(options.page_timeout, work) => match r {
            Ok(r) => r,
            Err(_) => Err(CaptureError::Timeout {
                url: url.clone(),
                after: options.page_timeout,
                stage: "the whole page",
            }),
        },
        // `Some`: a stream that merely ends (tab closed) is not a crash.
        Some(_) = crashed.next() => Err(CaptureError::TabCrashed { url: url.clone() }),
        _ = session.died() => Err(CaptureError::BrowserDied {
            url: url.clone(),
            reason: "the browser process exited".into(),
        }),
    };
    dialog_task.abort();
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
    let mut network = if mode == Mode::Capture {
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

    let navigation = Instant::now();
    let goto = tokio::time::timeout(options.load_timeout, tab.goto(url.as_str())).await;
    tracing::debug!("{url}: navigation {:?} ({mode:?})", navigation.elapsed());
    match goto {
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

    let loaded = Instant::now();
    if let Some(network) = &mut network {
        // Requests of the navigation itself are not late content.
        network.mark();
        settle(tab, network, loaded, options)
            .await
            .map_err(&script_err)?;
    }
    let settled = Instant::now();
    let failed_stylesheets = network
        .as_mut()
        .map(|n| {
            n.pump();
            std::mem::take(&mut n.failed_stylesheets)
        })
        .unwrap_or_default();
    let scan = run_capture_script(tab, options, &failed_stylesheets)
        .await
        .map_err(&script_err)?;
    tracing::debug!(
        "{url}: settled in {:?}, capture script {:?} ({} blocks; in page: {:?}, \
         style properties read {:?})",
        settled - loaded,
        settled.elapsed(),
        scan.blocks.len(),
        scan.timings,
        scan.style_properties,
    );
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
///
/// The events come on three streams, so a request's end can be read before
/// its start: ends seen first are remembered, and such a start is ignored.
/// The streams are drained right after an evaluation returns; the protocol
/// delivers events in order, so every request the page had started by then
/// is counted.
struct Request {
    url: String,
    stylesheet: bool,
}

struct NetworkActivity {
    sent: EventStream<EventRequestWillBeSent>,
    finished: EventStream<EventLoadingFinished>,
    failed: EventStream<EventLoadingFailed>,
    in_flight: HashMap<RequestId, Request>,
    /// Ends read before their starts: `true` when the request failed.
    ended_early: HashMap<RequestId, bool>,
    /// Stylesheets that failed to load: the capture script may skip them
    /// (their rules cannot be read, and there are none).
    failed_stylesheets: Vec<String>,
    /// Counted requests started since [`NetworkActivity::mark`].
    started_since_mark: usize,
    last_change: Instant,
}

impl NetworkActivity {
    async fn track(tab: &Page) -> Result<NetworkActivity, chromiumoxide::error::CdpError> {
        Ok(NetworkActivity {
            sent: tab.event_listener::<EventRequestWillBeSent>().await?,
            finished: tab.event_listener::<EventLoadingFinished>().await?,
            failed: tab.event_listener::<EventLoadingFailed>().await?,
            in_flight: HashMap::new(),
            ended_early: HashMap::new(),
            failed_stylesheets: Vec::new(),
            started_since_mark: 0,
            last_change: Instant::now(),
        })
    }

    /// Reads what arrived so far, then counts new requests from here on.
    fn mark(&mut self) {
        self.pump();
        self.started_since_mark = 0;
    }

    /// Reads every event received so far.
    fn pump(&mut self) {
        let now = Instant::now();
        let mut ended = Vec::new();
        while let Some(Some(e)) = self.finished.next().now_or_never() {
            ended.push((e.request_id.clone(), false));
        }
        while let Some(Some(e)) = self.failed.next().now_or_never() {
            ended.push((e.request_id.clone(), true));
        }
        while let Some(Some(e)) = self.sent.next().now_or_never() {
            // Only requests that can bring text or styles: not images,
            // fonts, media, the browser's favicon, or streams that never end.
            let counts = matches!(
                e.r#type,
                Some(
                    ResourceType::Document
                        | ResourceType::Stylesheet
                        | ResourceType::Script
                        | ResourceType::Xhr
                        | ResourceType::Fetch
                )
            );
            if !counts {
                continue;
            }
            self.started_since_mark += 1;
            self.last_change = now;
            let request = Request {
                url: e.request.url.clone(),
                stylesheet: e.r#type == Some(ResourceType::Stylesheet),
            };
            match self.ended_early.remove(&e.request_id) {
                Some(failed) => self.ended(request, failed),
                None => {
                    self.in_flight.insert(e.request_id.clone(), request);
                }
            }
        }
        for (id, failed) in ended {
            self.last_change = now;
            match self.in_flight.remove(&id) {
                Some(request) => self.ended(request, failed),
                None => {
                    self.ended_early.insert(id, failed);
                }
            }
        }
    }

    fn ended(&mut self, request: Request, failed: bool) {
        if failed && request.stylesheet {
            self.failed_stylesheets.push(request.url);
        }
    }
}

/// Waits for late content, at most `settle_max`. A page where nothing
/// happened since its `load` event (no DOM change, no request) is done at
/// once; otherwise the DOM must be unchanged and the network idle for
/// `settle_quiet`. Content a script fetches after `load` is thus captured,
/// static pages pay nothing, and a page that polls forever pays the cap.
async fn settle(
    tab: &Page,
    network: &mut NetworkActivity,
    loaded_at: Instant,
    options: &CaptureOptions,
) -> Result<(), String> {
    // [ms since the last DOM change, ms since the load event or -1]
    const PAGE_ACTIVITY: &str = "(function(){var t=window.__spiderMutations;var now=performance.now();\
        var n=performance.getEntriesByType('navigation')[0];\
        var load=n&&n.loadEventStart>0?now-n.loadEventStart:-1;\
        return [t?now-t.last:1e9,load];})()";
    let quiet = options.settle_quiet;
    let deadline = loaded_at + options.settle_max;
    let mut first = true;
    loop {
        let (dom_quiet_ms, since_load_ms): (f64, f64) = evaluate(tab, PAGE_ACTIVITY, false).await?;
        network.pump();
        // The page can set any number here: never trust it to fit.
        let dom_quiet =
            Duration::try_from_secs_f64(dom_quiet_ms.max(0.0) / 1000.0).unwrap_or(Duration::MAX);
        let idle = network.in_flight.is_empty();
        if first {
            first = false;
            let loaded = since_load_ms >= 0.0;
            let dom_still = dom_quiet_ms >= since_load_ms;
            let no_new_requests = network.started_since_mark == 0;
            if loaded && dom_still && idle && no_new_requests {
                return Ok(());
            }
        }
        let net_quiet = network.last_change.elapsed();
        if idle && dom_quiet >= quiet && net_quiet >= quiet {
            return Ok(());
        }
        let now = Instant::now();
        if now >= deadline {
            tracing::debug!(
                "settle gave up after {:?}; in flight: {:?}",
                options.settle_max,
                network
                    .in_flight
                    .values()
                    .map(|r| &r.url)
                    .collect::<Vec<_>>()
            );
            return Ok(());
        }
        let wait = if idle {
            quiet.saturating_sub(dom_quiet.min(net_quiet))
        } else {
            Duration::from_millis(20)
        };
        // Not `clamp`: it panics when less than 5 ms are left.
        tokio::time::sleep(wait.max(Duration::from_millis(5)).min(deadline - now)).await;
    }
}

struct DocumentResponse {
    request_id: RequestId,
    status: i64,
}

/// The first main-document response seen in the tab, if any yet.
fn main_response(responses: &mut EventStream<EventResponseReceived>) -> Option<DocumentResponse> {
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

/// Runs the capture script and reads its JSON back, in chunks when large.
/// (A JSON string beats returning the object by value: Chromium's by-value
/// serialisation measured slower than building the string in the page.)
async fn run_capture_script(
    tab: &Page,
    options: &CaptureOptions,
    failed_stylesheets: &[String],
) -> Result<PageScan, String> {
    let script_options = serde_json::json!({
        "maxBlocks": options.max_blocks,
        "fullStyle": options.full_style,
        "failedStylesheets": failed_stylesheets,
    });
    let call = format!(
        "{SCRIPT}\n;(function(){{var s=window.spiderCapture.captureJson({script_options});\
         if(s.length<={CHUNK_CHARS})return s;window.__spiderResult=s;return s.length;}})()"
    );
    let bad = |e: serde_json::Error| format!("capture script returned bad data: {e}");
    let first: serde_json::Value = evaluate(tab, &call, false).await?;
    let total = match first {
        serde_json::Value::String(s) => return serde_json::from_str(&s).map_err(bad),
        serde_json::Value::Number(n) => n.as_u64().ok_or("bad length")? as usize,
        other => return Err(format!("capture script returned {other}")),
    };
    let mut json = String::with_capacity(total);
    let mut at = 0usize;
    while at < total {
        // Never split inside a surrogate pair.
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
    serde_json::from_str(&json).map_err(bad)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_site_comes_from_the_url_then_the_canonical_url() {
        let meta = Meta {
            canonical: Some("https://www.news.example/a".into()),
            og_url: Some("https://og.example/a".into()),
            ..Meta::default()
        };
        let site = |url: &str, meta: &Meta| derive_site(url, meta).map(|s| s.to_string());
        assert_eq!(
            site("https://blog.example/x", &meta).as_deref(),
            Some("blog.example")
        );
        assert_eq!(
            site("file:///tmp/x.html", &meta).as_deref(),
            Some("news.example")
        );
        let only_og = Meta {
            og_url: Some("https://og.example/a".into()),
            ..Meta::default()
        };
        assert_eq!(
            site("file:///tmp/x.html", &only_og).as_deref(),
            Some("og.example")
        );
        assert_eq!(site("file:///tmp/x.html", &Meta::default()), None);
    }
}
