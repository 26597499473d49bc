//! `spider extract`: a site's pages through its rules, without a browser.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde::Serialize;

use super::open_store;
use crate::capture::decode_html;
use crate::extract::{Extraction, Extractor, page_url};
use crate::rules::Rules;
use crate::site::Site;

/// Largest page read (bytes).
const MAX_PAGE_BYTES: u64 = 50 << 20;

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// The site whose rules apply (default: from the page's canonical link or og:url).
    #[arg(long)]
    site: Option<Site>,
    /// Read rules from DIR/<site>.json instead of the database.
    #[arg(long, value_name = "DIR")]
    rules: Option<PathBuf>,
    /// One JSON object per page: {site, url, title, text, blocks, rules_version, matched, fallback}.
    #[arg(long)]
    json: bool,
    /// HTML files, directories (their .html/.htm files), http(s) URLs (fetched
    /// without a browser), or - for standard input.
    #[arg(required = true)]
    pages: Vec<String>,
}

/// How long fetching one URL may take.
const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// One page's result, as `--json` prints it.
#[derive(Serialize)]
struct PageOutput<'a> {
    site: &'a Site,
    url: Option<String>,
    file: &'a str,
    title: Option<&'a str>,
    text: String,
    blocks: &'a [String],
    rules_version: i64,
    matched: &'a [crate::extract::RuleMatch],
    fallback: Option<&'a str>,
}

/// A page read and decoded.
struct Input {
    name: String,
    html: String,
    /// Where it was fetched from (after redirects), for a URL.
    fetched: Option<String>,
}

/// True for an argument that is a web address rather than a file.
fn is_url(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Fetches a page: one GET, bounded in time and size, decoded with the
/// charset the server declares (else as files are).
async fn fetch(client: &reqwest::Client, address: &str) -> anyhow::Result<Input> {
    let url = url::Url::parse(address).with_context(|| format!("{address}: not a valid URL"))?;
    let mut response = client
        .get(url)
        .send()
        .await
        .with_context(|| format!("cannot fetch {address}"))?;
    let status = response.status();
    if !status.is_success() {
        bail!("cannot fetch {address}: the server answered {status}");
    }
    let final_url = response.url().to_string();
    let charset = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.split(';')
                .filter_map(|p| p.trim().strip_prefix("charset="))
                .next()
                .map(|c| c.trim_matches('"').to_string())
        });
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("cannot fetch {address}"))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > MAX_PAGE_BYTES {
            bail!("{address} is larger than {MAX_PAGE_BYTES} bytes");
        }
    }
    Ok(Input {
        name: address.to_string(),
        html: decode_html(&bytes, charset.as_deref()),
        fetched: Some(final_url),
    })
}

async fn read_inputs(args: &[String]) -> anyhow::Result<Vec<Input>> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut inputs = Vec::new();
    let mut client = None;
    for arg in args {
        if is_url(arg) {
            if client.is_none() {
                client = Some(
                    reqwest::Client::builder()
                        .timeout(FETCH_TIMEOUT)
                        .user_agent(concat!("spider/", env!("CARGO_PKG_VERSION")))
                        .build()
                        .context("cannot start an HTTP client")?,
                );
            }
            inputs.push(fetch(client.as_ref().expect("just set"), arg).await?);
            continue;
        }
        if arg == "-" {
            let mut bytes = Vec::new();
            std::io::stdin()
                .take(MAX_PAGE_BYTES + 1)
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            if bytes.len() as u64 > MAX_PAGE_BYTES {
                bail!("standard input is larger than {MAX_PAGE_BYTES} bytes");
            }
            inputs.push(Input {
                name: "-".into(),
                html: decode_html(&bytes, None),
                fetched: None,
            });
            continue;
        }
        let path = Path::new(arg);
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("cannot list {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                        matches!(e.to_ascii_lowercase().as_str(), "html" | "htm" | "xhtml")
                    })
                })
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.to_path_buf());
        }
    }
    for file in files {
        let size = std::fs::metadata(&file)
            .with_context(|| format!("cannot read {}", file.display()))?
            .len();
        if size > MAX_PAGE_BYTES {
            bail!("{} is larger than {MAX_PAGE_BYTES} bytes", file.display());
        }
        let bytes =
            std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
        inputs.push(Input {
            name: file.display().to_string(),
            html: decode_html(&bytes, None),
            fetched: None,
        });
    }
    Ok(inputs)
}

/// `f` over `items` on all cores, results in order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, items.len().max(1));
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("an extraction thread panicked"))
            .collect()
    })
}

pub async fn extract(db: &str, args: ExtractArgs) -> anyhow::Result<ExitCode> {
    let inputs = read_inputs(&args.pages).await?;
    if inputs.is_empty() {
        bail!("no pages to extract");
    }
    // Parse and work out each page's site (CPU work, all cores).
    let sites: Vec<(Option<String>, Option<Site>)> = par_map(&inputs, |input| {
        let url = page_url(&input.html).or_else(|| input.fetched.clone());
        let site = args.site.clone().or_else(|| {
            url.as_deref()
                .and_then(|u| url::Url::parse(u).ok())
                .and_then(|u| Site::from_url(&u))
        });
        (url, site)
    });

    // Rules per site, from files or the database, validated on load.
    let mut rules: HashMap<Site, Rules> = HashMap::new();
    let needed: Vec<Site> = {
        let mut v: Vec<Site> = sites.iter().filter_map(|(_, s)| s.clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    if let Some(dir) = &args.rules {
        for site in needed {
            let path = dir.join(format!("{site}.json"));
            rules.insert(site, Rules::read(&path)?);
        }
    } else if !needed.is_empty() {
        let store = open_store(db).await?;
        for site in needed {
            match store.rules(&site).await? {
                Some(r) => {
                    rules.insert(site, r);
                }
                None => bail!("no rules for {site}: `spider learn {site}` learns them"),
            }
        }
        store.close().await;
    }

    let extractors: HashMap<&Site, Extractor<'_>> =
        rules.iter().map(|(s, r)| (s, Extractor::new(r))).collect();
    let pages: Vec<(&Input, &Option<Site>)> =
        inputs.iter().zip(sites.iter().map(|(_, s)| s)).collect();
    let results: Vec<Result<Extraction, String>> = par_map(&pages, |(input, site)| {
        match site.as_ref().and_then(|s| extractors.get(s)) {
            Some(x) => Ok(x.extract(&input.html)),
            None => Err(format!(
                "{}: no site (no canonical link or og:url in the page): give --site",
                input.name
            )),
        }
    });

    let mut out = std::io::stdout().lock();
    let mut status = ExitCode::SUCCESS;
    let many = inputs.len() > 1;
    for ((input, (url, site)), result) in inputs.iter().zip(&sites).zip(&results) {
        let extraction = match result {
            Ok(e) => e,
            Err(message) => {
                eprintln!("{message}");
                status = ExitCode::from(1);
                continue;
            }
        };
        let site = site
            .as_ref()
            .expect("a site, since rules were found for it");
        if extraction.content_matched_nothing() {
            eprintln!(
                "{}: rules for {site} matched nothing on this page",
                input.name
            );
            status = ExitCode::from(1);
        }
        if let Some(reason) = &extraction.fallback {
            eprintln!("{}: fallback: {reason}", input.name);
        }
        if args.json {
            let record = PageOutput {
                site,
                url: url.clone(),
                file: &input.name,
                title: extraction.title.as_deref(),
                text: extraction.text(),
                blocks: &extraction.blocks,
                rules_version: rules.get(site).map_or(0, |r| r.version),
                matched: &extraction.matched,
                fallback: extraction.fallback.as_deref(),
            };
            writeln!(out, "{}", serde_json::to_string(&record)?)?;
        } else {
            if many {
                writeln!(out, "==> {} <==", input.name)?;
            }
            writeln!(out, "{}", extraction.text())?;
            if many {
                writeln!(out)?;
            }
        }
    }
    Ok(status)
}
