//! `spider eval`: the whole method on a corpus in the `sites-dev` layout.
//!
//! Per group: capture the `train` pages in Chromium as site `<group>` (kept
//! in `OUT/captures.db`, so a second run reuses them), learn from exactly
//! those captures, extract every `test` page with the rules (no browser),
//! write `OUT/<group>/<page>.txt`, then score against the gold texts. Gold
//! files are read here, by the scorer, and nowhere else.

use std::collections::{BTreeMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::capture::{CaptureOptions, Capturer, Target, chromium, decode_html};
use crate::eval::{Entry, read_manifest, sequence_ratio, sequence_words, token_prf};
use crate::extract::{Extractor, Page};
use crate::learn::{Learner, ValidParams};
use crate::site::Site;
use crate::store::Store;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The corpus: <group>/<page>.html, gold <group>/<page>.txt, manifest.tsv.
    #[arg(long)]
    corpus: PathBuf,
    /// Where extracted texts go (OUT/<group>/<page>.txt), with the capture cache.
    #[arg(long)]
    out: PathBuf,
    /// Also write every page's and group's scores as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Only these groups (comma-separated).
    #[arg(long, value_delimiter = ',')]
    groups: Vec<String>,
    /// Chromium binary.
    #[arg(long)]
    chromium: Option<PathBuf>,
    /// Pages rendered at once.
    #[arg(long, default_value_t = 2)]
    tabs: usize,
    /// Extract with the rules alone, without extraction's fallbacks (measures learning by itself).
    #[arg(long)]
    rules_only: bool,
}

/// Scores of one test page.
#[derive(Debug, Clone, Serialize)]
struct PageScore {
    group: String,
    page: String,
    precision: f64,
    recall: f64,
    f1: f64,
    sequence: f64,
    words: usize,
    fallback: Option<String>,
}

/// Scores of one group.
#[derive(Debug, Clone, Serialize)]
struct GroupScore {
    group: String,
    pages: usize,
    precision: f64,
    recall: f64,
    f1: f64,
    sequence: f64,
    fallbacks: usize,
    error: Option<String>,
    selectors: Vec<String>,
}

impl GroupScore {
    /// Means over `pages`, each page weighing the same.
    fn of(group: &str, pages: &[PageScore]) -> GroupScore {
        GroupScore {
            group: group.to_string(),
            pages: pages.len(),
            precision: mean(pages.iter().map(|s| s.precision)),
            recall: mean(pages.iter().map(|s| s.recall)),
            f1: mean(pages.iter().map(|s| s.f1)),
            sequence: mean(pages.iter().map(|s| s.sequence)),
            fallbacks: pages.iter().filter(|s| s.fallback.is_some()).count(),
            error: None,
            selectors: Vec::new(),
        }
    }
}

fn file_url(path: &Path) -> Option<String> {
    let absolute = std::fs::canonicalize(path).ok()?;
    url::Url::from_file_path(absolute).ok().map(String::from)
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

pub async fn eval(args: EvalArgs) -> anyhow::Result<ExitCode> {
    let entries = read_manifest(&args.corpus)?;
    let mut groups: BTreeMap<String, (Vec<Entry>, Vec<Entry>)> = BTreeMap::new();
    for e in entries {
        let slot = groups.entry(e.group.clone()).or_default();
        if e.split == "train" {
            slot.0.push(e);
        } else if e.split == "test" {
            slot.1.push(e);
        }
    }
    let wanted: HashSet<&String> = args.groups.iter().collect();
    for g in &wanted {
        anyhow::ensure!(
            groups.contains_key(*g),
            "no group {g} in {}",
            args.corpus.display()
        );
    }
    groups.retain(|g, (_, test)| !test.is_empty() && (wanted.is_empty() || wanted.contains(g)));
    anyhow::ensure!(!groups.is_empty(), "no group with test pages to evaluate");
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let db = format!("sqlite://{}", args.out.join("captures.db").display());
    let store = Store::open(&db).await?;

    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(groups.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "eval    [{bar:30}] {pos}/{len} groups {elapsed} {wide_msg}",
            )
            .expect("the progress template is valid")
            .progress_chars("=> "),
        );
        Some(bar)
    } else {
        None
    };
    let say = |line: String| match &bar {
        Some(bar) => bar.set_message(line),
        None => eprintln!("{line}"),
    };

    let mut capturer: Option<Capturer> = None;
    let mut page_scores: Vec<PageScore> = Vec::new();
    let mut group_scores: Vec<GroupScore> = Vec::new();
    for (group, (train, test)) in &groups {
        say(format!("{group}: capturing"));
        let site = Site::new(group).with_context(|| format!("group {group} is not a site name"))?;
        let train_urls: HashSet<String> = train.iter().filter_map(|e| file_url(&e.html)).collect();
        let stored: HashSet<String> = store
            .pages(&site)
            .await?
            .into_iter()
            .map(|p| p.url)
            .collect();
        let missing: Vec<Target> = train
            .iter()
            .filter(|e| file_url(&e.html).is_none_or(|u| !stored.contains(&u)))
            .map(|e| Target::File(e.html.clone()))
            .collect();
        if !missing.is_empty() {
            if capturer.is_none() {
                let mut options = CaptureOptions::new(chromium::find(args.chromium.as_deref())?);
                options.offline = true;
                options.tabs = args.tabs.max(1);
                capturer = Some(Capturer::launch(options).await?);
            }
            let c = capturer.as_ref().expect("launched above");
            let mut results = Box::pin(c.capture_all(&missing, Some(&site)));
            while let Some((i, result)) = results.next().await {
                match result {
                    Ok(capture) => {
                        store.put_capture(&capture).await?;
                    }
                    Err(e) => {
                        let line = format!("{}: capture failed: {e}", missing[i].display());
                        match &bar {
                            Some(bar) => bar.println(line),
                            None => eprintln!("{line}"),
                        }
                    }
                }
            }
        }

        say(format!("{group}: learning"));
        let mut learner = Learner::new(site.clone(), ValidParams::default());
        let mut add_error = None;
        store
            .for_each_capture(&site, |capture| {
                if train_urls.contains(&capture.url)
                    && add_error.is_none()
                    && let Err(e) = learner.add(capture)
                {
                    add_error = Some(e);
                }
            })
            .await?;
        let learned = match add_error {
            Some(e) => Err(e.to_string()),
            None => tokio::task::spawn_blocking(move || learner.learn())
                .await?
                .map_err(|e| e.to_string()),
        };

        say(format!("{group}: extracting"));
        let dir = args.out.join(group);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let mut scores = Vec::new();
        for entry in test {
            let bytes = std::fs::read(&entry.html)
                .with_context(|| format!("cannot read {}", entry.html.display()))?;
            let (text, fallback) = match &learned {
                Ok(l) => {
                    let html = decode_html(&bytes, None);
                    let out = if args.rules_only {
                        Page::parse(&html).extract_with_rules(&l.rules)
                    } else {
                        Extractor::new(&l.rules).extract(&html)
                    };
                    (out.text(), out.fallback)
                }
                Err(_) => (String::new(), None),
            };
            let path = dir.join(format!("{}.txt", entry.page));
            std::fs::write(&path, format!("{text}\n"))
                .with_context(|| format!("cannot write {}", path.display()))?;
            // The scorer, and only the scorer, reads the gold text.
            let gold = entry.gold().with_context(|| {
                format!("cannot read the gold text of {}/{}", group, entry.page)
            })?;
            let (precision, recall, f1) = token_prf(&text, &gold);
            let sequence = sequence_ratio(&sequence_words(&text), &sequence_words(&gold));
            scores.push(PageScore {
                group: group.clone(),
                page: entry.page.clone(),
                precision,
                recall,
                f1,
                sequence,
                words: crate::learn::text::word_count(&text),
                fallback,
            });
        }
        let mut score = GroupScore::of(group, &scores);
        score.error = learned.as_ref().err().cloned();
        score.selectors = learned
            .as_ref()
            .map(|l| l.rules.content.iter().map(|r| r.selector.clone()).collect())
            .unwrap_or_default();
        group_scores.push(score);
        page_scores.extend(scores);
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(c) = capturer {
        c.close().await;
    }
    store.close().await;

    let overall = GroupScore::of("overall", &page_scores);
    let mut out = std::io::stdout().lock();
    let width = group_scores
        .iter()
        .map(|g| g.group.len())
        .max()
        .unwrap_or(5)
        .max(7);
    writeln!(
        out,
        "{:width$}  {:>5}  {:>6}  {:>6}  {:>6}  {:>6}  {:>9}",
        "group", "pages", "P", "R", "F1", "seq", "fallbacks"
    )?;
    for g in group_scores.iter().chain([&overall]) {
        writeln!(
            out,
            "{:width$}  {:>5}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.3}  {:>9}{}",
            g.group,
            g.pages,
            g.precision,
            g.recall,
            g.f1,
            g.sequence,
            g.fallbacks,
            g.error
                .as_deref()
                .map(|e| format!("  (learn failed: {e})"))
                .unwrap_or_default()
        )?;
    }
    let empty = page_scores.iter().filter(|s| s.words == 0).count();
    writeln!(
        out,
        "\nmacro token F1 {:.3} (P {:.3}, R {:.3}), word-sequence similarity {:.3}, over {} test pages in {} groups; {} empty; {} fallbacks",
        overall.f1,
        overall.precision,
        overall.recall,
        overall.sequence,
        overall.pages,
        group_scores.len(),
        empty,
        overall.fallbacks
    )?;
    if let Some(path) = &args.json {
        let json =
            serde_json::json!({ "overall": overall, "groups": group_scores, "pages": page_scores });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
