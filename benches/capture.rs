//! Capture throughput on the dev corpus: capture vs bare navigation.
//!
//! ```text
//! cargo bench --bench capture -- [--corpus DIR] [--pages N] [--tabs N]
//! ```
//!
//! Reads `../shared/datasets/sites-dev` (its `manifest.tsv`) in place. Every
//! page is opened twice in the same browser, side by side: once navigated
//! only (no capture script: the baseline) and once captured (settle wait,
//! capture script, source read), alternating which goes first. Per-page
//! medians and p95 for both give the overhead ratio; then two timed passes,
//! capture-all and navigate-all with `--tabs` tabs, give pages/s. The
//! machine is noisy: compare the ratios of one run, not figures of two runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::StreamExt;
use spider::Site;
use spider::capture::{CaptureOptions, Capturer, Target, chromium};

struct Args {
    corpus: PathBuf,
    pages: Option<usize>,
    tabs: usize,
}

fn parse_args() -> Args {
    let mut args = Args {
        corpus: Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/sites-dev"),
        pages: None,
        tabs: 2,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--corpus" => args.corpus = PathBuf::from(it.next().expect("--corpus DIR")),
            "--pages" => {
                args.pages = Some(it.next().expect("--pages N").parse().expect("a number"))
            }
            "--tabs" => args.tabs = it.next().expect("--tabs N").parse().expect("a number"),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

/// The corpus pages, in manifest order; `limit` spreads a sample evenly.
fn corpus_pages(corpus: &Path, limit: Option<usize>) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(corpus.join("manifest.tsv")).unwrap_or_else(|e| {
        panic!(
            "cannot read {}/manifest.tsv ({e}): the dev corpus must be beside the checkout \
             (../shared/datasets/sites-dev) or given with --corpus",
            corpus.display()
        )
    });
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().expect("manifest header").split('\t').collect();
    let html_col = header
        .iter()
        .position(|h| *h == "html")
        .expect("html column");
    let all: Vec<PathBuf> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| corpus.join(l.split('\t').nth(html_col).expect("html path")))
        .collect();
    match limit {
        Some(n) if n < all.len() => (0..n).map(|i| all[i * all.len() / n].clone()).collect(),
        _ => all,
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {cpu}")
}

#[tokio::main]
async fn main() {
    if let Ok(filter) = std::env::var("SPIDER_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .init();
    }
    let args = parse_args();
    let pages = corpus_pages(&args.corpus, args.pages);
    let chromium = chromium::find(None).expect("Chromium (run `cargo run -- setup` first)");
    let mut options = CaptureOptions::new(chromium.clone());
    options.tabs = args.tabs;
    options.offline = true;
    let capturer = Capturer::launch(options).await.expect("launch Chromium");
    let targets: Vec<Target> = pages.into_iter().map(Target::File).collect();
    // Pages of many sites under one name: the site does not matter here.
    let site = Site::new("dev-corpus").expect("a valid site name");
    println!("machine: {}", machine());
    println!(
        "corpus: {} ({} pages), {} tabs, viewport 1280x900, offline",
        args.corpus.display(),
        targets.len(),
        args.tabs
    );

    // Warm up the browser and the page cache.
    for t in targets.iter().take(4) {
        let _ = capturer.capture(t, Some(&site)).await;
    }

    // Side by side: each page navigated and captured, alternating the order.
    let paired: Vec<(Option<f64>, Option<f64>, usize)> =
        futures::stream::iter(targets.iter().enumerate())
            .map(|(i, target)| {
                let capturer = &capturer;
                let site = &site;
                async move {
                    let capture_once = || async {
                        let started = Instant::now();
                        let capture = capturer.capture(target, Some(site)).await;
                        capture.map(|c| (ms(started.elapsed()), c.blocks.len()))
                    };
                    let (nav, cap) = if i % 2 == 0 {
                        let nav = capturer.navigate(target).await.map(ms);
                        (nav, capture_once().await)
                    } else {
                        let cap = capture_once().await;
                        (capturer.navigate(target).await.map(ms), cap)
                    };
                    if let Err(e) = &cap {
                        eprintln!("capture failed: {e}");
                    }
                    let blocks = cap.as_ref().map_or(0, |(_, b)| *b);
                    (nav.ok(), cap.ok().map(|(t, _)| t), blocks)
                }
            })
            .buffer_unordered(args.tabs)
            .collect()
            .await;
    let both: Vec<(f64, f64, usize)> = paired
        .iter()
        .filter_map(|(n, c, b)| Some(((*n)?, (*c)?, *b)))
        .collect();
    let mut nav: Vec<f64> = both.iter().map(|p| p.0).collect();
    let mut cap: Vec<f64> = both.iter().map(|p| p.1).collect();
    let mut blocks: Vec<f64> = both.iter().map(|p| p.2 as f64).collect();
    let mut ratio: Vec<f64> = both.iter().map(|p| p.1 / p.0).collect();
    for v in [&mut nav, &mut cap, &mut blocks, &mut ratio] {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    println!(
        "paired pass: {} pages measured both ways ({} failed), median {} blocks/page",
        both.len(),
        paired.len() - both.len(),
        percentile(&blocks, 50.0)
    );
    println!(
        "  bare navigation  median {:7.1} ms   p95 {:7.1} ms",
        percentile(&nav, 50.0),
        percentile(&nav, 95.0)
    );
    println!(
        "  capture          median {:7.1} ms   p95 {:7.1} ms",
        percentile(&cap, 50.0),
        percentile(&cap, 95.0)
    );
    println!(
        "  capture / navigation: ratio of medians {:.2}x, median of per-page ratios {:.2}x",
        percentile(&cap, 50.0) / percentile(&nav, 50.0),
        percentile(&ratio, 50.0)
    );

    // Throughput with `tabs` pages in flight.
    let started = Instant::now();
    let ok = capturer
        .capture_all(&targets, Some(&site))
        .filter(|(_, r)| futures::future::ready(r.is_ok()))
        .count()
        .await;
    let capture_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let nav_ok = futures::stream::iter(targets.iter())
        .map(|t| capturer.navigate(t))
        .buffer_unordered(args.tabs)
        .filter(|r| futures::future::ready(r.is_ok()))
        .count()
        .await;
    let nav_secs = started.elapsed().as_secs_f64();
    println!(
        "throughput, {} tabs: capture {:.2} pages/s ({ok} pages in {capture_secs:.1} s), \
         bare navigation {:.2} pages/s ({nav_ok} pages in {nav_secs:.1} s)",
        args.tabs,
        ok as f64 / capture_secs,
        nav_ok as f64 / nav_secs
    );
    println!("browser restarts: {}", capturer.restarts());
    capturer.close().await;
}
