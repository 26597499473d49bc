//! The `spider` command line: one function per subcommand, each a thin layer
//! over the library stages. Exit status: 0 all good, 1 some pages failed
//! (each reported, the rest done), 2 nothing could be done (returned as an
//! error).

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};

mod eval;
mod extract;
mod learn;
mod serve;

use crate::capture::{self, CaptureOptions, Capturer, Target, Viewport, chromium};
use crate::site::Site;
use crate::store::{self, Store, Stored};

/// spider learns how to read a website by looking at it.
#[derive(Debug, Parser)]
#[command(name = "spider", version, about, long_about = None)]
pub struct Cli {
    /// Database: sqlite://FILE or postgres://USER@HOST/DB.
    #[arg(long, global = true, env = "DATABASE_URL", default_value = store::DEFAULT_URL)]
    db: String,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Install what spider needs (Chromium, via apt-get when missing) and check the database.
    Setup,
    /// Capture the bundled example site into the database and learn its rules (installs Chromium when missing).
    Demo,
    /// Render pages in headless Chromium and store one capture per page.
    Capture(CaptureArgs),
    /// Store captures made elsewhere (JSON lines, one capture per line; - for stdin).
    Import {
        /// A .jsonl file, or - for standard input.
        file: PathBuf,
    },
    /// List the sites with their page counts.
    Sites {
        /// Print JSON lines instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List a site's captures.
    Pages {
        /// The site.
        site: Site,
        /// Print JSON lines instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Learn a site's extraction rules from its stored captures.
    Learn(learn::LearnArgs),
    /// Show a site's current rules (or their versions).
    Rules(learn::RulesArgs),
    /// Show every cluster of a site's last learn: selector, size, pages, score, fate, sample texts.
    Explain(learn::ExplainArgs),
    /// Extract the main text of pages of a known site with its rules (no browser).
    Extract(extract::ExtractArgs),
    /// Capture, learn and extract a whole corpus (sites-dev layout) and score it against its gold texts.
    Eval(eval::EvalArgs),
    /// Run the HTTP API and bookmarklet server, with learn workers.
    Serve(serve::ServeArgs),
    /// Learn queued sites (as `spider serve` does), alone; several may share one database.
    Worker(serve::WorkerCommand),
    /// Manage upload tokens.
    #[command(subcommand)]
    Token(serve::TokenCommand),
    /// Ask a running server whether it and its database are healthy (exit 0 if so).
    Healthcheck(serve::HealthcheckArgs),
}

#[derive(Debug, Args)]
pub(super) struct CaptureArgs {
    /// Site the pages belong to (default: the URL's host, or the page's canonical URL host).
    #[arg(long)]
    site: Option<Site>,
    /// Print the captures as JSON lines on stdout instead of storing them.
    #[arg(long)]
    json: bool,
    /// Pages rendered at once (default: number of cores).
    #[arg(long)]
    tabs: Option<usize>,
    /// Seconds one page may take in all.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Seconds to wait for the load event before capturing the page as parsed.
    #[arg(long, default_value_t = 10.0)]
    load_timeout: f64,
    /// After load, wait until the DOM has been quiet this many ms...
    #[arg(long, default_value_t = 50)]
    settle_quiet_ms: u64,
    /// ...but at most this many ms.
    #[arg(long, default_value_t = 2000)]
    settle_max_ms: u64,
    /// Viewport, WIDTHxHEIGHT in CSS pixels.
    #[arg(long, default_value = "1280x900", value_parser = parse_viewport)]
    viewport: Viewport,
    /// Block requests that leave the machine (default when every target is a local file).
    #[arg(long, conflicts_with = "online")]
    offline: bool,
    /// Allow requests to other hosts even for local files.
    #[arg(long)]
    online: bool,
    /// Chromium binary (default: $SPIDER_CHROMIUM or /usr/lib/chromium/chromium).
    #[arg(long)]
    chromium: Option<PathBuf>,
    /// Refuse pages larger than this many bytes.
    #[arg(long, default_value_t = 50 << 20)]
    max_page_bytes: u64,
    /// Read every computed CSS property of every block, not only those the page's styles can change (same result, slower).
    #[arg(long)]
    full_style: bool,
    /// Files, directories (their .html/.htm files) or http(s) URLs.
    #[arg(required = true)]
    targets: Vec<String>,
}

fn parse_viewport(s: &str) -> Result<Viewport, String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s:?} is not WIDTHxHEIGHT"))?;
    let side = |v: &str| match v.trim().parse::<u32>() {
        Ok(n) if (100..=10_000).contains(&n) => Ok(n),
        _ => Err(format!("{v:?} is not a side between 100 and 10000 pixels")),
    };
    Ok(Viewport {
        width: side(w)?,
        height: side(h)?,
    })
}

/// Parses arguments and runs the subcommand.
pub fn run<I: IntoIterator<Item = OsString>>(args: I) -> anyhow::Result<ExitCode> {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            e.print().ok();
            return Ok(ExitCode::from(code));
        }
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::Setup => setup(&cli.db).await,
            Command::Demo => demo(&cli.db).await,
            Command::Capture(args) => capture(&cli.db, args).await,
            Command::Import { file } => import(&cli.db, &file).await,
            Command::Sites { json } => sites(&cli.db, json).await,
            Command::Pages { site, json } => pages(&cli.db, &site, json).await,
            Command::Learn(args) => learn::learn(&cli.db, args).await,
            Command::Rules(args) => learn::rules(&cli.db, args).await,
            Command::Explain(args) => learn::explain(&cli.db, args).await,
            Command::Extract(args) => extract::extract(&cli.db, args).await,
            Command::Eval(args) => eval::eval(args).await,
            Command::Serve(args) => serve::serve(&cli.db, args).await,
            Command::Worker(args) => serve::worker(&cli.db, args).await,
            Command::Token(command) => serve::token(&cli.db, command).await,
            Command::Healthcheck(args) => serve::healthcheck(args).await,
        }
    })
}

pub(super) async fn open_store(db: &str) -> anyhow::Result<Store> {
    Store::open(db).await.map_err(anyhow::Error::from)
}

async fn setup(db: &str) -> anyhow::Result<ExitCode> {
    let chromium = tokio::task::spawn_blocking(chromium::ensure_installed).await??;
    let mut out = std::io::stdout().lock();
    writeln!(out, "chromium: {}", chromium.display())?;
    let store = open_store(db).await?;
    writeln!(out, "database: {} ({})", store::redact(db), store.backend())?;
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

/// The bundled example site: pages of one small blog, written for spider.
const EXAMPLE_SITE: &[(&str, &str)] = &[
    (
        "style.css",
        include_str!("../../tests/fixtures/example-site/style.css"),
    ),
    (
        "first-frost.html",
        include_str!("../../tests/fixtures/example-site/first-frost.html"),
    ),
    (
        "river-survey.html",
        include_str!("../../tests/fixtures/example-site/river-survey.html"),
    ),
    (
        "night-trains.html",
        include_str!("../../tests/fixtures/example-site/night-trains.html"),
    ),
    (
        "bread-oven.html",
        include_str!("../../tests/fixtures/example-site/bread-oven.html"),
    ),
];

/// The example site's name.
pub const EXAMPLE_SITE_NAME: &str = "example.test";

async fn demo(db: &str) -> anyhow::Result<ExitCode> {
    let chromium = tokio::task::spawn_blocking(chromium::ensure_installed).await??;
    // A fixed directory, so running the demo twice replaces its captures.
    let dir = std::env::temp_dir().join("spider-example-site");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut targets = Vec::new();
    for (name, text) in EXAMPLE_SITE {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        if name.ends_with(".html") {
            targets.push(path.display().to_string());
        }
    }
    eprintln!(
        "capturing the example site ({} pages in {})",
        targets.len(),
        dir.display()
    );
    // Through the parser, so the demo runs with `spider capture`'s defaults.
    let mut argv: Vec<OsString> = [
        "spider",
        "capture",
        "--offline",
        "--site",
        EXAMPLE_SITE_NAME,
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    argv.push("--chromium".into());
    argv.push(chromium.into());
    argv.extend(targets.into_iter().map(OsString::from));
    let Command::Capture(args) = Cli::try_parse_from(argv)?.command else {
        bail!("the demo's capture arguments did not parse as `spider capture`");
    };
    let code = capture(db, args).await?;
    eprintln!();
    pages(db, &Site::new(EXAMPLE_SITE_NAME)?, false).await?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    // Then learn its rules, as `spider learn example.test --out DIR/rules`.
    eprintln!();
    let rules_dir = dir.join("rules");
    let argv = ["spider", "learn", EXAMPLE_SITE_NAME, "--out"]
        .into_iter()
        .map(OsString::from)
        .chain([rules_dir.into_os_string()]);
    let Command::Learn(args) = Cli::try_parse_from(argv)?.command else {
        bail!("the demo's learn arguments did not parse as `spider learn`");
    };
    learn::learn(db, args).await
}

/// Expands directories to their .html/.htm files, sorted.
fn expand_targets(args: &[String]) -> anyhow::Result<Vec<Target>> {
    let mut targets = Vec::new();
    for arg in args {
        match Target::parse(arg) {
            Target::File(path) if path.is_dir() => {
                let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
                    .with_context(|| format!("cannot list {}", path.display()))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.is_file()
                            && p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                                matches!(e.to_ascii_lowercase().as_str(), "html" | "htm" | "xhtml")
                            })
                    })
                    .collect();
                if files.is_empty() {
                    bail!("{} holds no .html/.htm files", path.display());
                }
                files.sort();
                targets.extend(files.into_iter().map(Target::File));
            }
            target => targets.push(target),
        }
    }
    Ok(targets)
}

/// Progress on stderr: a bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new(len: usize, what: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::new(len as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {elapsed} {wide_msg}")
                .expect("the progress template is valid")
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        Progress { bar: Some(bar) }
    }

    /// One item done: a line (plain mode) or a tick (bar mode, lines only for failures).
    fn done(&self, line: &str, failed: bool) {
        match &self.bar {
            Some(bar) => {
                if failed {
                    bar.println(line);
                }
                bar.set_message(line.to_string());
                bar.inc(1);
            }
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

pub(super) async fn capture(db: &str, args: CaptureArgs) -> anyhow::Result<ExitCode> {
    let targets = expand_targets(&args.targets)?;
    let secs = |s: f64, what: &str| {
        if s.is_finite() && s > 0.0 {
            Ok(Duration::from_secs_f64(s))
        } else {
            Err(anyhow::anyhow!(
                "--{what} must be a positive number of seconds"
            ))
        }
    };
    let chromium = chromium::find(args.chromium.as_deref())?;
    let mut options = CaptureOptions::new(chromium);
    options.viewport = args.viewport;
    if let Some(tabs) = args.tabs {
        anyhow::ensure!(tabs > 0, "--tabs must be at least 1");
        options.tabs = tabs;
    }
    options.page_timeout = secs(args.timeout, "timeout")?;
    options.load_timeout = secs(args.load_timeout, "load-timeout")?.min(options.page_timeout);
    options.settle_quiet = Duration::from_millis(args.settle_quiet_ms);
    options.settle_max = Duration::from_millis(args.settle_max_ms);
    options.max_page_bytes = args.max_page_bytes;
    options.full_style = args.full_style;
    let all_files = targets.iter().all(|t| matches!(t, Target::File(_)));
    options.offline = args.offline || (all_files && !args.online);

    // Open the database first: a wrong --db should fail before rendering.
    let store = if args.json {
        None
    } else {
        Some(open_store(db).await?)
    };
    let capturer = Capturer::launch(options).await?;
    let progress = Progress::new(targets.len(), "capture");
    let mut stdout = std::io::stdout().lock();
    let mut failures: Vec<String> = Vec::new();
    let (mut inserted, mut replaced) = (0usize, 0usize);
    let mut results = Box::pin(capturer.capture_all(&targets, args.site.as_ref()));
    while let Some((i, result)) = results.next().await {
        let target = targets[i].display();
        let outcome = match result {
            Ok(capture) => match &store {
                None => {
                    let json = serde_json::to_string(&capture)?;
                    writeln!(stdout, "{json}").context("cannot write to stdout")?;
                    Ok(format!(
                        "ok    {} ({} blocks)",
                        capture.url,
                        capture.blocks.len()
                    ))
                }
                Some(store) => match store.put_capture(&capture).await {
                    Ok(stored) => {
                        let verb = match stored {
                            Stored::Inserted => {
                                inserted += 1;
                                "stored"
                            }
                            Stored::Replaced => {
                                replaced += 1;
                                "replaced"
                            }
                        };
                        Ok(format!(
                            "ok    {} ({} blocks, {verb} as site {})",
                            capture.url,
                            capture.blocks.len(),
                            capture.site
                        ))
                    }
                    Err(e) => Err(format!("{target}: cannot store: {e}")),
                },
            },
            Err(e) => Err(e.to_string()),
        };
        match outcome {
            Ok(line) => progress.done(&line, false),
            Err(message) => {
                progress.done(&format!("FAIL  {message}"), true);
                failures.push(message);
            }
        }
    }
    drop(results);
    progress.finish();
    let restarts = capturer.restarts();
    capturer.close().await;
    let ok = targets.len() - failures.len();
    let place = match &store {
        Some(s) => {
            s.close().await;
            format!(
                " into {} ({inserted} new, {replaced} replaced)",
                store::redact(db)
            )
        }
        None => String::new(),
    };
    eprintln!("captured {ok} of {} pages{place}", targets.len());
    if restarts > 0 {
        eprintln!("the browser died and was restarted {restarts} time(s)");
    }
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("{} page(s) failed:", failures.len());
        for f in &failures {
            eprintln!("  {f}");
        }
        Ok(ExitCode::from(1))
    }
}

async fn import(db: &str, file: &Path) -> anyhow::Result<ExitCode> {
    let reader: Box<dyn BufRead> = if file == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let f =
            std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        Box::new(std::io::BufReader::new(f))
    };
    let store = open_store(db).await?;
    let (mut stored, mut failed) = (0usize, 0usize);
    for (n, line) in reader.split(b'\n').enumerate() {
        let line_no = n + 1;
        let bytes = line.with_context(|| format!("cannot read {}", file.display()))?;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            eprintln!("line {line_no}: not UTF-8 text, skipped");
            failed += 1;
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match capture::Capture::from_json(text) {
            Ok(capture) => match store.put_capture(&capture).await {
                Ok(_) => stored += 1,
                Err(e) => {
                    eprintln!("line {line_no}: cannot store {}: {e}", capture.url);
                    failed += 1;
                }
            },
            Err(e) => {
                eprintln!("line {line_no}: {e}");
                failed += 1;
            }
        }
    }
    store.close().await;
    eprintln!(
        "imported {stored} capture(s) into {}, {failed} line(s) failed",
        store::redact(db)
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A time for tables: UTC, to the second (`2026-11-22 02:10:08Z`).
pub(super) fn format_time(t: Option<time::OffsetDateTime>) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]Z");
    t.and_then(|t| t.to_offset(time::UtcOffset::UTC).format(&format).ok())
        .unwrap_or_else(|| "-".into())
}

async fn sites(db: &str, json: bool) -> anyhow::Result<ExitCode> {
    let store = open_store(db).await?;
    let sites = store.sites().await?;
    store.close().await;
    let mut out = std::io::stdout().lock();
    if json {
        for s in &sites {
            writeln!(out, "{}", serde_json::to_string(s)?)?;
        }
    } else if sites.is_empty() {
        eprintln!("no sites yet: `spider capture --site SITE FILE...` stores some");
    } else {
        let width = sites
            .iter()
            .map(|s| s.site.as_str().len())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(out, "{:width$}  {:>5}  last captured", "site", "pages")?;
        for s in &sites {
            writeln!(
                out,
                "{:width$}  {:>5}  {}",
                s.site,
                s.pages,
                format_time(s.last_captured_at)
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn pages(db: &str, site: &Site, json: bool) -> anyhow::Result<ExitCode> {
    let store = open_store(db).await?;
    let pages = store.pages(site).await?;
    store.close().await;
    let mut out = std::io::stdout().lock();
    if json {
        for p in &pages {
            writeln!(out, "{}", serde_json::to_string(p)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if pages.is_empty() {
        eprintln!("no captures of site {site}");
        return Ok(ExitCode::from(1));
    }
    writeln!(out, "{:>6}  {:20}  url / title", "blocks", "captured")?;
    for p in &pages {
        writeln!(
            out,
            "{:>6}  {:20}  {}\n{:30}{}",
            p.blocks,
            format_time(Some(p.captured_at)),
            p.url,
            "",
            p.title.as_deref().unwrap_or("(no title)")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_viewports() {
        assert_eq!(
            parse_viewport("1280x900").unwrap(),
            Viewport {
                width: 1280,
                height: 900
            }
        );
        assert!(parse_viewport("1280").is_err());
        assert!(parse_viewport("0x900").is_err());
        assert!(parse_viewport("axb").is_err());
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
