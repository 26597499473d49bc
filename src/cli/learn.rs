//! `spider learn`, `spider rules`, `spider explain`.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, Parser};
use indicatif::{ProgressBar, ProgressStyle};

use super::{Cli, Command, capture, format_time, open_store};
use crate::learn::{ClusterReport, Clusterer, Learned, Params, Report};
use crate::rules::Rules;
use crate::serve::worker::learner_from_store;
use crate::site::Site;
use crate::store::Store;

#[derive(Debug, Args)]
pub struct LearnArgs {
    /// The site.
    site: Site,
    /// Refuse to learn from fewer pages.
    #[arg(long, default_value_t = 2)]
    min_pages: usize,
    /// Directory for the human-readable rules/<site>.json.
    #[arg(long, default_value = "rules")]
    out: PathBuf,
    /// Print the rules and the learn report as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Capture these URLs first (a file with one URL per line).
    #[arg(long)]
    urls: Option<PathBuf>,
    /// Capture these files or directories first.
    #[arg(long, num_args = 1..)]
    files: Vec<String>,
    /// Chromium binary, for --urls/--files.
    #[arg(long)]
    chromium: Option<PathBuf>,
    /// DBSCAN implementation (both give the same clusters; linfa is slow on large sites).
    #[arg(long, value_enum, default_value = "indexed")]
    clusterer: Clusterer,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// The site.
    site: Site,
    /// List the stored versions instead.
    #[arg(long)]
    history: bool,
    /// Show this version instead of the current one.
    #[arg(long)]
    version: Option<i64>,
    /// JSON lines for --history.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The site.
    site: Site,
    /// Also draw the clusters into this HTML report.
    #[arg(long)]
    html: Option<PathBuf>,
    /// Learn again from the stored captures (not stored) instead of showing the last learn.
    #[arg(long)]
    relearn: bool,
    /// Clusters to list (best score first); 0 for all.
    #[arg(long, default_value_t = 0)]
    top: usize,
}

fn spinner(message: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        eprintln!("{message}");
        return None;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_message(message.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// Reads the site's captures into a learner and learns (not stored).
async fn learn_from_store(store: &Store, site: &Site, params: Params) -> anyhow::Result<Learned> {
    let total = store.pages(site).await?.len();
    if total == 0 {
        bail!("no captures of site {site}: `spider capture --site {site} PAGES...` stores some");
    }
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "learn   [{bar:30}] {pos}/{len} pages {elapsed} {wide_msg}",
            )
            .expect("the progress template is valid")
            .progress_chars("=> "),
        );
        Some(bar)
    } else {
        eprintln!("reading {total} captures of {site}");
        None
    };
    let learner = learner_from_store(store, site, params, || {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    })
    .await?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let spin = spinner("clustering, scoring, testing selectors");
    let learned = tokio::task::spawn_blocking(move || learner.learn()).await??;
    if let Some(spin) = spin {
        spin.finish_and_clear();
    }
    Ok(learned)
}

pub async fn learn(db: &str, args: LearnArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let mut capture_failed = false;
    if args.urls.is_some() || !args.files.is_empty() {
        let mut targets: Vec<String> = args.files.clone();
        if let Some(file) = &args.urls {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            targets.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(String::from),
            );
        }
        if targets.is_empty() {
            bail!("--urls/--files name no pages");
        }
        let mut argv: Vec<OsString> = ["spider", "capture", "--site", args.site.as_str()]
            .into_iter()
            .map(OsString::from)
            .collect();
        if let Some(chromium) = &args.chromium {
            argv.push("--chromium".into());
            argv.push(chromium.into());
        }
        argv.extend(targets.into_iter().map(OsString::from));
        let Command::Capture(capture_args) = Cli::try_parse_from(argv)?.command else {
            bail!("the capture arguments did not parse as `spider capture`");
        };
        capture_failed = capture(db, capture_args).await? != ExitCode::SUCCESS;
    }

    let store = open_store(db).await?;
    let params = Params {
        min_pages: args.min_pages,
        clusterer: args.clusterer,
        ..Params::default()
    };
    let learned = learn_from_store(&store, &args.site, params).await?;
    let report_json = serde_json::to_string(&learned.report)?;
    let rules = store.put_rules(&learned.rules, &report_json).await?;
    store.close().await;
    let path = rules.write(&args.out)?;
    let seconds = started.elapsed().as_secs_f64();

    if args.json {
        let out = serde_json::json!({ "rules": rules, "report": learned.report, "file": path, "seconds": seconds });
        writeln!(std::io::stdout().lock(), "{}", serde_json::to_string(&out)?)?;
    } else {
        print_summary(&rules, &learned.report, &path, seconds)?;
    }
    if rules.content.is_empty() {
        if learned.report.selector_pages == 0 {
            eprintln!(
                "warning: no capture of {} has its page source, so no selector could be tested \
                 (capture the pages with spider, or with a bookmarklet that sends the source)",
                rules.site
            );
        }
        eprintln!(
            "warning: no content selector could be learned for {}; extraction will fall back",
            rules.site
        );
        return Ok(ExitCode::from(1));
    }
    Ok(if capture_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_summary(rules: &Rules, report: &Report, path: &Path, seconds: f64) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let selected = report
        .clusters
        .iter()
        .filter(|c| c.role == crate::learn::select::Role::Content)
        .count();
    writeln!(
        out,
        "learned {} (version {}) from {} pages, {} blocks ({} distinct vectors, {} template) in {seconds:.2} s",
        rules.site,
        rules.version,
        report.pages,
        report.blocks,
        report.distinct_vectors,
        report.template_blocks
    )?;
    writeln!(
        out,
        "clusters: {} found, {} selected as content; {} noise blocks; selectors tested on {} pages",
        report.clusters.len(),
        selected,
        report.noise_blocks,
        report.selector_pages
    )?;
    if let Some(c) = &rules.container {
        writeln!(out, "container  {}  ({} pages)", c.selector, c.pages)?;
    }
    if let Some(t) = &rules.title {
        writeln!(
            out,
            "title      {}  ({} pages, similarity {:.2})",
            t.selector, t.pages, t.similarity
        )?;
    }
    for r in &rules.content {
        writeln!(
            out,
            "content    {}  (cluster {}, score {:.2}, F1 {:.2}, {} pages, {} blocks)",
            r.selector, r.cluster, r.score, r.confidence, r.pages, r.blocks
        )?;
    }
    for r in &rules.exclude {
        writeln!(
            out,
            "exclude    {}  ({} pages, {} blocks)",
            r.selector, r.pages, r.blocks
        )?;
    }
    writeln!(out, "template   {} strings", rules.template.len())?;
    writeln!(out, "wrote {}", path.display())?;
    Ok(())
}

pub async fn rules(db: &str, args: RulesArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(db).await?;
    let mut out = std::io::stdout().lock();
    if args.history {
        let versions = store.rules_history(&args.site).await?;
        store.close().await;
        if versions.is_empty() {
            eprintln!(
                "no rules for {} yet: `spider learn {}`",
                args.site, args.site
            );
            return Ok(ExitCode::from(1));
        }
        if args.json {
            for v in &versions {
                writeln!(out, "{}", serde_json::to_string(v)?)?;
            }
        } else {
            writeln!(
                out,
                "{:>7}  {:20}  {:>5}  {:>7}  {:>7}  {:>8}",
                "version", "learned", "pages", "content", "exclude", "template"
            )?;
            for v in &versions {
                writeln!(
                    out,
                    "{:>7}  {:20}  {:>5}  {:>7}  {:>7}  {:>8}",
                    v.version,
                    format_time(Some(v.learned_at)),
                    v.pages,
                    v.content,
                    v.exclude,
                    v.template
                )?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let rules = store.rules_version(&args.site, args.version).await?;
    store.close().await;
    match rules {
        Some(rules) => {
            writeln!(out, "{}", rules.to_json())?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            match args.version {
                Some(v) => eprintln!("{} has no rules version {v}", args.site),
                None => eprintln!(
                    "no rules for {} yet: `spider learn {}`",
                    args.site, args.site
                ),
            }
            Ok(ExitCode::from(1))
        }
    }
}

pub async fn explain(db: &str, args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(db).await?;
    let stored = if args.relearn {
        None
    } else {
        store.rules_report(&args.site, None).await?
    };
    let (report, rules): (Report, Option<Rules>) = match stored {
        Some(json) => (
            serde_json::from_str(&json)
                .context("the stored learn report is unreadable (learn again with --relearn)")?,
            store.rules(&args.site).await?,
        ),
        None => {
            let learned = learn_from_store(&store, &args.site, Params::default()).await?;
            (learned.report, Some(learned.rules))
        }
    };
    store.close().await;
    let text = explain_text(&report, args.top);
    write!(std::io::stdout().lock(), "{text}")?;
    if let Some(path) = &args.html {
        std::fs::write(path, explain_html(&report, rules.as_ref()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Column names of the cluster table, and which are right-aligned numbers.
const COLUMNS: [(&str, bool); 14] = [
    ("#", true),
    ("role", false),
    ("score", true),
    ("pages", true),
    ("blocks", true),
    ("mass", true),
    ("cov", true),
    ("prose", true),
    ("links", true),
    ("tmpl", true),
    ("rel", true),
    ("head", true),
    ("rep", true),
    ("selector / signature", false),
];

/// One cluster's cells, in [`COLUMNS`] order.
fn cells(c: &ClusterReport) -> [String; 14] {
    let sc = &c.score;
    let role = serde_json::to_value(c.role)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let selector = if c.selectors.is_empty() {
        c.signature.clone()
    } else {
        c.selectors.join(", ")
    };
    [
        c.id.to_string(),
        role,
        format!("{:.2}", sc.total),
        c.pages.to_string(),
        c.blocks.to_string(),
        format!("{:.1}", sc.mass),
        format!("{:.2}", sc.coverage),
        format!("{:.2}", sc.prose),
        format!("{:.2}", sc.link_density),
        format!("{:.2}", sc.template_share),
        format!("{:.2}", sc.relevance),
        format!("{:.2}", sc.headline),
        format!("{:.2}", sc.repeats),
        selector,
    ]
}

fn explain_text(report: &Report, top: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} pages, {} blocks ({} distinct vectors, {} template, {} noise), {} clusters, headline found on {} pages",
        report.site,
        report.pages,
        report.blocks,
        report.distinct_vectors,
        report.template_blocks,
        report.noise_blocks,
        report.clusters.len(),
        report.headline_pages
    );
    let n = if top == 0 { report.clusters.len() } else { top };
    let rows: Vec<[String; 14]> = report.clusters.iter().take(n).map(cells).collect();
    let widths: Vec<usize> = (0..COLUMNS.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([COLUMNS[i].0.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            let last = i + 1 == cells.len();
            match (COLUMNS[i].1, last) {
                (true, _) => out.push_str(&format!("{}{cell}  ", " ".repeat(pad))),
                (false, true) => out.push_str(cell),
                (false, false) => out.push_str(&format!("{cell}{}  ", " ".repeat(pad))),
            }
        }
        out
    };
    let header: Vec<String> = COLUMNS.iter().map(|(name, _)| name.to_string()).collect();
    let _ = writeln!(s, "{}", line(&header));
    for (c, row) in report.clusters.iter().zip(&rows) {
        let _ = writeln!(s, "{}", line(row));
        let _ = writeln!(s, "      why: {}", c.reason);
        for sample in &c.samples {
            let _ = writeln!(s, "      \u{201c}{sample}\u{201d}");
        }
    }
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn explain_html(report: &Report, rules: Option<&Rules>) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>spider explain: {site}</title>\
         <style>body{{font:14px system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:4px 6px;vertical-align:top}}tr.content{{background:#e6f6e6}}\
         tr.title{{background:#e6eefa}}tr.excluded{{background:#fbeaea}}.bar{{background:#4a8;height:8px}}\
         code{{font-size:12px}}</style></head><body><h1>{site}</h1><p>{pages} pages, {blocks} blocks, \
         {vectors} distinct vectors, {template} template blocks, {noise} noise blocks, {n} clusters.</p>",
        site = escape(report.site.as_str()),
        pages = report.pages,
        blocks = report.blocks,
        vectors = report.distinct_vectors,
        template = report.template_blocks,
        noise = report.noise_blocks,
        n = report.clusters.len()
    );
    let max = report
        .clusters
        .iter()
        .map(|c| c.score.total)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    s.push_str("<table><tr>");
    for (name, _) in COLUMNS {
        let _ = write!(s, "<th>{}</th>", escape(name));
    }
    s.push_str("<th>why</th><th>samples</th></tr>");
    for c in &report.clusters {
        let row = cells(c);
        let _ = write!(s, "<tr class=\"{}\">", escape(&row[1]));
        for (i, cell) in row.iter().enumerate() {
            match i {
                2 => {
                    let width = c.score.total / max * 80.0;
                    let _ = write!(
                        s,
                        "<td>{cell}<div class=\"bar\" style=\"width:{width:.0}px\"></div></td>"
                    );
                }
                13 => {
                    let _ = write!(s, "<td><code>{}</code></td>", escape(cell));
                }
                _ => {
                    let _ = write!(s, "<td>{}</td>", escape(cell));
                }
            }
        }
        let samples: Vec<String> = c.samples.iter().map(|t| escape(t)).collect();
        let _ = write!(
            s,
            "<td>{}</td><td>{}</td></tr>",
            escape(&c.reason),
            samples.join("<br>")
        );
    }
    s.push_str("</table>");
    if let Some(rules) = rules {
        let _ = write!(
            s,
            "<h2>Rules (version {})</h2><pre>{}</pre>",
            rules.version,
            escape(&rules.to_json())
        );
    }
    s.push_str("</body></html>\n");
    s
}
