//! A quick quality look at learning on the dev corpus: capture each group's
//! `train` pages in Chromium (once; the captures are kept in a database),
//! learn, extract the `test` pages with the rules alone (no fallback: `spider
//! eval` measures the whole method), and score token F1
//! against the gold texts (read by the scorer only).
//!
//! ```text
//! cargo bench --bench quality -- [--corpus DIR] [--db URL] [--groups a,b] [--verbose]
//! ```
//!
//! The database defaults to `sqlite:///tmp/spider-quality.db`; delete it to
//! capture again. The full evaluation (`spider eval`) comes with extraction.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use futures::StreamExt;
use spider::capture::{CaptureOptions, Capturer, Target, chromium, decode_html};
use spider::eval::{read_manifest, token_prf};
use spider::learn::{Learner, ValidParams};
use spider::{Site, Store};

struct Args {
    corpus: PathBuf,
    db: String,
    groups: Option<Vec<String>>,
    verbose: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        corpus: Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/sites-dev"),
        db: "sqlite:///tmp/spider-quality.db".into(),
        groups: None,
        verbose: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--corpus" => args.corpus = PathBuf::from(it.next().expect("--corpus DIR")),
            "--db" => args.db = it.next().expect("--db URL"),
            "--groups" => {
                args.groups = Some(
                    it.next()
                        .expect("--groups a,b")
                        .split(',')
                        .map(String::from)
                        .collect(),
                )
            }
            "--verbose" => args.verbose = true,
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    let entries = read_manifest(&args.corpus)
        .expect("the dev corpus (../shared/datasets/sites-dev) must be beside the checkout");
    let mut groups: BTreeMap<String, (Vec<_>, Vec<_>)> = BTreeMap::new();
    for e in entries {
        let slot = groups.entry(e.group.clone()).or_default();
        if e.split == "train" {
            slot.0.push(e);
        } else {
            slot.1.push(e);
        }
    }
    groups.retain(|g, (_, test)| {
        !test.is_empty() && args.groups.as_ref().is_none_or(|l| l.contains(g))
    });
    let store = Store::open(&args.db).await.expect("database");

    // Capture what is missing.
    let stored: std::collections::HashMap<String, i64> = store
        .sites()
        .await
        .expect("sites")
        .into_iter()
        .map(|s| (s.site.to_string(), s.pages))
        .collect();
    let missing: Vec<(Site, Target)> = groups
        .iter()
        .filter(|(g, (train, _))| stored.get(g.as_str()).copied().unwrap_or(0) < train.len() as i64)
        .flat_map(|(g, (train, _))| {
            train.iter().map(move |e| {
                (
                    Site::new(g).expect("group is a site name"),
                    Target::File(e.html.clone()),
                )
            })
        })
        .collect();
    if !missing.is_empty() {
        eprintln!("capturing {} train pages", missing.len());
        let mut options = CaptureOptions::new(chromium::ensure_installed().expect("chromium"));
        options.offline = true;
        let capturer = Capturer::launch(options).await.expect("browser");
        let started = Instant::now();
        let mut done = 0;
        let mut stream = futures::stream::iter(missing.iter())
            .map(|(site, target)| {
                let capturer = &capturer;
                async move { (target, capturer.capture(target, Some(site)).await) }
            })
            .buffer_unordered(2);
        while let Some((target, result)) = stream.next().await {
            done += 1;
            match result {
                Ok(c) => {
                    store.put_capture(&c).await.expect("store");
                }
                Err(e) => eprintln!("FAIL {}: {e}", target.display()),
            }
            if done % 50 == 0 {
                eprintln!(
                    "  {done}/{} in {:.0} s",
                    missing.len(),
                    started.elapsed().as_secs_f64()
                );
            }
        }
        drop(stream);
        capturer.close().await;
    }

    let mut all_f1 = Vec::new();
    let (mut all_p, mut all_r, mut empty, mut no_rules) = (0.0, 0.0, 0, 0);
    let mut rows = Vec::new();
    let mut learn_ms = Vec::new();
    for (group, (_, test)) in &groups {
        let site = Site::new(group).expect("site");
        let mut learner = Learner::new(site.clone(), ValidParams::default());
        store
            .for_each_capture(&site, |c| learner.add(c).expect("same site"))
            .await
            .expect("captures");
        let started = Instant::now();
        let learned = match learner.learn() {
            Ok(l) => l,
            Err(e) => {
                eprintln!("{group}: {e}");
                continue;
            }
        };
        learn_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        if learned.rules.content.is_empty() {
            no_rules += 1;
        }
        let mut f1s = Vec::new();
        for e in test {
            let bytes = std::fs::read(&e.html).expect("page");
            let html = decode_html(&bytes, None);
            let out = spider::extract::Page::parse(&html).extract_with_rules(&learned.rules);
            let text = out.text();
            let gold = e.gold().expect("gold");
            let (p, r, f1) = token_prf(&text, &gold);
            if text.trim().is_empty() {
                empty += 1;
            }
            all_p += p;
            all_r += r;
            f1s.push(f1);
            all_f1.push(f1);
            if args.verbose {
                eprintln!("  {group}/{}: P {p:.3} R {r:.3} F1 {f1:.3}", e.page);
            }
        }
        let mean = f1s.iter().sum::<f64>() / f1s.len() as f64;
        let selectors: Vec<&str> = learned
            .rules
            .content
            .iter()
            .map(|r| r.selector.as_str())
            .collect();
        rows.push((mean, group.clone(), f1s.len(), selectors.join(" | ")));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (f1, group, n, sel) in &rows {
        println!("{f1:.3}  {n:>2}  {group:32}  {sel}");
    }
    let n = all_f1.len() as f64;
    learn_ms.sort_by(f64::total_cmp);
    println!(
        "\nmacro token F1 {:.3} (P {:.3}, R {:.3}) over {} test pages in {} groups; {} empty pages; {} groups without content rules; learn median {:.0} ms, max {:.0} ms",
        all_f1.iter().sum::<f64>() / n,
        all_p / n,
        all_r / n,
        all_f1.len(),
        rows.len(),
        empty,
        no_rules,
        learn_ms.get(learn_ms.len() / 2).copied().unwrap_or(0.0),
        learn_ms.last().copied().unwrap_or(0.0)
    );
    store.close().await;
}
