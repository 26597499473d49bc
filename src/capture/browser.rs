//! The browser side of capture: one headless Chromium per [`Capturer`],
//! restarted when it dies, with one tab per page and at most `tabs` pages at
//! once.
//!
//! Chromium is driven through chromiumoxide. Its handler stream is polled in
//! a task of its own (every call hangs otherwise) and a watchdog notices when
//! the process exits, so pages in flight fail at once instead of waiting for
//! their timeouts; the page is then retried in a fresh browser.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::handler::viewport::Viewport as CdpViewport;
use futures::{Stream, StreamExt};
use tokio::sync::{RwLock, watch};
use tokio::task::JoinHandle;

use super::page::{self, Mode};
use super::source::{self, Target};
use super::{Capture, CaptureError, Viewport};
use crate::site::Site;

/// How pages are rendered and captured.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// The Chromium binary (see [`super::chromium::find`]).
    pub chromium: PathBuf,
    /// Layout viewport, CSS pixels.
    pub viewport: Viewport,
    /// Pages rendered at once, each in its own tab.
    pub tabs: usize,
    /// Everything one page may take, from opening its tab to its capture.
    pub page_timeout: Duration,
    /// How long to wait for the `load` event. Pages that never fire it
    /// offline (an image that retries forever) are captured as parsed.
    pub load_timeout: Duration,
    /// After `load`, the DOM must have been quiet this long before capture...
    pub settle_quiet: Duration,
    /// ...but the wait for late content ends after this long.
    pub settle_max: Duration,
    /// Block every request that would leave the machine: host names other
    /// than `localhost` fail to resolve at once. Right for local files.
    pub offline: bool,
    /// Larger pages are refused.
    pub max_page_bytes: u64,
    /// Most blocks recorded per page (the capture is flagged `truncated`).
    pub max_blocks: usize,
    /// Read every computed property for every block, instead of only those
    /// the page's style sources can change (same result, slower; see
    /// `bookmarklet/capture.js`).
    pub full_style: bool,
}

impl CaptureOptions {
    /// Defaults for a given Chromium binary: 1280x900, one tab per core, 30 s
    /// per page.
    pub fn new(chromium: PathBuf) -> CaptureOptions {
        CaptureOptions {
            chromium,
            viewport: Viewport::default(),
            tabs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            page_timeout: Duration::from_secs(30),
            load_timeout: Duration::from_secs(10),
            settle_quiet: Duration::from_millis(50),
            settle_max: Duration::from_secs(2),
            offline: false,
            max_page_bytes: 50 << 20,
            max_blocks: 50_000,
            full_style: false,
        }
    }
}

/// A running Chromium with its handler task and watchdog.
pub(crate) struct Session {
    /// Read-locked to open tabs (many at once), write-locked only to reap or
    /// kill the process.
    pub browser: RwLock<Browser>,
    pub pid: Option<u32>,
    pub agent: String,
    alive: watch::Receiver<bool>,
    alive_tx: Arc<watch::Sender<bool>>,
    handler_task: JoinHandle<()>,
    // Dropped (deleted) only after the browser has exited.
    _profile: tempfile::TempDir,
}

impl Session {
    async fn launch(options: &CaptureOptions) -> Result<Session, CaptureError> {
        let launch_err = |reason: String| CaptureError::Launch {
            path: options.chromium.clone(),
            reason,
        };
        if !options.chromium.is_file() {
            return Err(CaptureError::ChromiumMissing {
                path: options.chromium.clone(),
            });
        }
        let profile = tempfile::Builder::new()
            .prefix("spider-chromium-")
            .tempdir()
            .map_err(|e| launch_err(format!("cannot create a profile directory: {e}")))?;
        let Viewport { width, height } = options.viewport;
        // Flags without the leading `--`: chromiumoxide adds it.
        let mut builder = BrowserConfig::builder()
            .chrome_executable(&options.chromium)
            .user_data_dir(profile.path())
            .window_size(width, height)
            .viewport(CdpViewport {
                width,
                height,
                device_scale_factor: Some(1.0),
                emulating_mobile: false,
                is_landscape: width > height,
                has_touch: false,
            })
            .request_timeout(options.page_timeout + Duration::from_secs(5))
            .launch_timeout(Duration::from_secs(30))
            // Fetch what the page asks for: upgrading http: requests to
            // https: (and falling back) costs time and renames requests.
            .disable_https_first()
            .arg("disable-gpu")
            .arg("disable-component-update")
            .arg("disable-background-networking")
            .arg("disable-sync")
            .arg("disable-domain-reliability")
            .arg("disable-crash-reporter")
            .arg("disable-quic")
            .arg("no-first-run")
            .arg("no-default-browser-check")
            .arg((
                "disable-features",
                "MediaRouter,OptimizationHints,Translate",
            ));
        if options.offline {
            // Every host but the loopback ones fails to resolve, at once:
            // pages from disk never wait on hosts they cannot reach. (The
            // rules apply to IP literals too, hence the loopback exclusions.)
            builder = builder.arg((
                "host-resolver-rules",
                "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]",
            ));
            // A file: page may then read its file: stylesheets' rules (each
            // file is an origin of its own otherwise), which the capture
            // script uses to read only the properties the page styles. With
            // no host reachable, a page cannot send what it reads anywhere.
            builder = builder.arg("allow-file-access-from-files");
        }
        if running_as_root() {
            // Chromium refuses to start its sandbox as root.
            builder = builder.no_sandbox();
        }
        let config = builder.build().map_err(launch_err)?;
        let (mut browser, mut handler) = Browser::launch(config)
            .await
            .map_err(|e| launch_err(e.to_string()))?;
        let pid = browser
            .get_mut_child()
            .and_then(|child| child.as_mut_inner().id());

        let (alive_tx, alive) = watch::channel(true);
        let alive_tx = Arc::new(alive_tx);
        let handler_alive = alive_tx.clone();
        let handler_task = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(e) = event {
                    use chromiumoxide::error::CdpError;
                    if matches!(e, CdpError::Ws(_) | CdpError::Io(_)) {
                        tracing::debug!("connection to Chromium lost: {e}");
                        break;
                    }
                    tracing::debug!("Chromium handler: {e}");
                }
            }
            let _ = handler_alive.send(false);
        });

        let version = browser
            .version()
            .await
            .map(|v| v.product)
            .unwrap_or_else(|_| "Chromium".into());
        let agent = format!("spider/{} {version}", env!("CARGO_PKG_VERSION"));
        let session = Session {
            browser: RwLock::new(browser),
            pid,
            agent,
            alive,
            alive_tx,
            handler_task,
            _profile: profile,
        };
        Ok(session)
    }

    /// Starts the watchdog: the connection does not always break when the
    /// process dies, the exit status always comes. It ends with the session.
    fn watch(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let alive_tx = self.alive_tx.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let Some(session) = weak.upgrade() else {
                    return;
                };
                // Never wait for the lock: tabs being opened hold it.
                let exited = match session.browser.try_write() {
                    Ok(mut browser) => !matches!(browser.try_wait(), Ok(None)),
                    Err(_) => false,
                };
                if exited || !*session.alive.borrow() {
                    let _ = alive_tx.send(false);
                    return;
                }
            }
        });
    }

    pub fn is_alive(&self) -> bool {
        *self.alive.borrow()
    }

    /// Resolves when the browser is gone.
    pub async fn died(&self) {
        let mut alive = self.alive.clone();
        let _ = alive.wait_for(|a| !*a).await;
    }

    /// Closes the browser politely, then kills it, and reaps the process.
    async fn shutdown(&self) {
        let mut browser = self.browser.write().await;
        if self.is_alive() {
            let _ = tokio::time::timeout(Duration::from_secs(3), browser.close()).await;
        }
        if tokio::time::timeout(Duration::from_secs(3), browser.wait())
            .await
            .is_err()
        {
            let _ = browser.kill().await;
        }
        let _ = self.alive_tx.send(false);
        self.handler_task.abort();
    }
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// Captures pages in one headless Chromium, `tabs` at a time, restarting the
/// browser when it dies.
pub struct Capturer {
    options: CaptureOptions,
    session: RwLock<Arc<Session>>,
    restarts: AtomicU32,
}

/// How many times one page is tried in a fresh browser after the browser
/// died under it.
const BROWSER_RETRIES: usize = 2;

impl Capturer {
    /// Starts Chromium.
    pub async fn launch(options: CaptureOptions) -> Result<Capturer, CaptureError> {
        let session = start_session(&options).await?;
        Ok(Capturer {
            options,
            session: RwLock::new(session),
            restarts: AtomicU32::new(0),
        })
    }

    /// The options this capturer runs with.
    pub fn options(&self) -> &CaptureOptions {
        &self.options
    }

    /// The current browser process id (tests kill it to check restarts).
    pub async fn browser_pid(&self) -> Option<u32> {
        self.session.read().await.pid
    }

    /// How often the browser was restarted after dying.
    pub fn restarts(&self) -> u32 {
        self.restarts.load(Ordering::Relaxed)
    }

    /// Renders one page and captures it. `site` names the page's site; when
    /// `None` it comes from the URL, else from the page's canonical URL.
    pub async fn capture(
        &self,
        target: &Target,
        site: Option<&Site>,
    ) -> Result<Capture, CaptureError> {
        let source = source::load(target, self.options.max_page_bytes).await?;
        let result = self.with_retries(|session| {
            let source = &source;
            async move { page::run(&session, source, &self.options, Mode::Capture).await }
        });
        let scanned = result.await?;
        let scanned = scanned.expect("Mode::Capture always yields a scan");
        page::assemble(scanned, &source, site)
    }

    /// Opens the page like [`Capturer::capture`] but runs no capture script:
    /// the baseline the capture overhead is measured against.
    pub async fn navigate(&self, target: &Target) -> Result<Duration, CaptureError> {
        let source = source::load(target, self.options.max_page_bytes).await?;
        let started = Instant::now();
        self.with_retries(|session| {
            let source = &source;
            async move { page::run(&session, source, &self.options, Mode::NavigateOnly).await }
        })
        .await?;
        Ok(started.elapsed())
    }

    /// Captures many pages, `tabs` at a time; yields `(index, result)` in
    /// completion order.
    pub fn capture_all<'a>(
        &'a self,
        targets: &'a [Target],
        site: Option<&'a Site>,
    ) -> impl Stream<Item = (usize, Result<Capture, CaptureError>)> + 'a {
        futures::stream::iter(targets.iter().enumerate())
            .map(move |(i, target)| async move { (i, self.capture(target, site).await) })
            .buffer_unordered(self.options.tabs.max(1))
    }

    async fn with_retries<'s, F, Fut, T>(&'s self, run: F) -> Result<T, CaptureError>
    where
        F: Fn(Arc<Session>) -> Fut,
        Fut: std::future::Future<Output = Result<T, CaptureError>> + 's,
    {
        let mut attempt = 0;
        loop {
            let session = self.session.read().await.clone();
            let result = run(session.clone()).await;
            match result {
                Err(e) if e.is_browser_failure() || !session.is_alive() => {
                    if attempt >= BROWSER_RETRIES {
                        return Err(e);
                    }
                    attempt += 1;
                    tracing::warn!("{e}; restarting Chromium and trying again");
                    self.restart(&session).await?;
                }
                other => return other,
            }
        }
    }

    /// Replaces a dead session, unless another page already did.
    async fn restart(&self, dead: &Arc<Session>) -> Result<(), CaptureError> {
        let mut current = self.session.write().await;
        if !Arc::ptr_eq(&current, dead) {
            return Ok(());
        }
        let fresh = start_session(&self.options).await?;
        let old = std::mem::replace(&mut *current, fresh);
        self.restarts.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move { old.shutdown().await });
        Ok(())
    }

    /// Closes the browser and waits for its process to exit.
    pub async fn close(self) {
        let session = self.session.read().await.clone();
        session.shutdown().await;
    }
}

async fn start_session(options: &CaptureOptions) -> Result<Arc<Session>, CaptureError> {
    let session = Arc::new(Session::launch(options).await?);
    session.watch();
    Ok(session)
}
