//! Extraction speed: spider's rules (streaming where they allow it, the
//! tree path and its fallbacks elsewhere) vs `dom_smoothie` (Readability)
//! on the dev corpus's test pages, single thread, side by side in one
//! process; plus spider's tree path alone, html5ever's parse alone and
//! spider's streaming tokenizer alone as floors.
//!
//! ```text
//! spider eval --corpus ../shared/datasets/sites-dev --out /tmp/evalout   # once: captures the train pages
//! cargo bench --bench extract -- [--db sqlite:///tmp/evalout/captures.db] [--corpus DIR] [--rounds 5]
//! ```
//!
//! Rules are learned from the stored captures of each group's train pages
//! (not timed). First every page is extracted by both paths and the
//! streaming results are checked against the tree path's (they must be
//! equal). Then each round times, page by page and rotating which goes
//! first, the parsers alone, spider, spider's tree path and dom_smoothie on
//! the same decoded text; the median round (by spider's time) is quoted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use spider::capture::decode_html;
use spider::eval::read_manifest;
use spider::extract::{Extractor, Page, tokens_only};
use spider::learn::{Learner, ValidParams};
use spider::{Rules, Site, Store};

/// dom_smoothie on one page, configured as spider's fallback uses it.
fn dom_smoothie(html: &str) -> usize {
    let config = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Formatted,
        ..Default::default()
    };
    let mut n = 0;
    if let Ok(mut r) = dom_smoothie::Readability::new(html, None, Some(config))
        && let Ok(a) = r.parse()
    {
        n = a.text_content.len();
    }
    n
}

/// Times `f` on one page.
fn timed(total: &mut Duration, sink: &mut usize, f: impl FnOnce() -> usize) {
    let t = Instant::now();
    *sink += f();
    *total += t.elapsed();
}

fn main() {
    let mut corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/sites-dev");
    let mut db = "sqlite:///tmp/evalout/captures.db".to_string();
    let mut rounds = 5usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--corpus" => corpus = PathBuf::from(args.next().expect("--corpus DIR")),
            "--db" => db = args.next().expect("--db URL"),
            "--rounds" => rounds = args.next().expect("--rounds N").parse().expect("a number"),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let entries = read_manifest(&corpus).expect("the dev corpus beside the checkout");
    let mut tests: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in entries.iter().filter(|e| e.split == "test") {
        tests
            .entry(e.group.clone())
            .or_default()
            .push(e.html.clone());
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let store = runtime.block_on(Store::open(&db)).expect("database");
    let mut rule_sets: Vec<Rules> = Vec::new();
    let mut pages: Vec<(String, usize, PathBuf)> = Vec::new();
    for (group, files) in &tests {
        let site = Site::new(group).expect("site");
        let mut learner = Learner::new(site.clone(), ValidParams::default());
        let n = runtime
            .block_on(store.for_each_capture(&site, |c| learner.add(c).expect("same site")))
            .expect("captures");
        assert!(
            n > 0,
            "no captures of {group} in {db}: run `spider eval --out /tmp/evalout` first"
        );
        rule_sets.push(learner.learn().expect("learn").rules);
        for f in files {
            let html = decode_html(&std::fs::read(f).expect("page"), None);
            pages.push((html, rule_sets.len() - 1, f.clone()));
        }
    }
    runtime.block_on(store.close());
    let extractors: Vec<Extractor<'_>> = rule_sets.iter().map(Extractor::new).collect();
    let bytes: usize = pages.iter().map(|(h, _, _)| h.len()).sum();
    println!(
        "{} test pages, {:.1} MB of HTML, {} of {} rule sets streamable, {rounds} rounds",
        pages.len(),
        bytes as f64 / 1e6,
        extractors.iter().filter(|e| e.streams()).count(),
        extractors.len()
    );

    // Both paths must agree wherever the streaming one answers: the text
    // always; the per-rule match counts too, but for elements html5ever's
    // adoption agency clones (empty copies of an <a> around blocks).
    let (mut streamed, mut text_differs, mut counts_differ) = (0, 0, 0);
    for (html, r, file) in &pages {
        let Some(out) = extractors[*r].extract_streaming(html) else {
            continue;
        };
        streamed += 1;
        let tree = extractors[*r].extract_tree(html);
        if (&out.title, &out.blocks, &out.fallback) != (&tree.title, &tree.blocks, &tree.fallback) {
            text_differs += 1;
            println!("  text differs from the tree path: {}", file.display());
        } else if out.matched != tree.matched {
            counts_differ += 1;
            println!(
                "  match counts differ from the tree path: {}",
                file.display()
            );
        }
    }
    println!(
        "streaming path taken on {streamed} of {} pages; text differs from the tree path on {text_differs}, match counts on {counts_differ}\n",
        pages.len()
    );

    const NAMES: [&str; 5] = [
        "parse only: html5ever (scraper)",
        "tokenize only: spider's streaming tokenizer",
        "**spider extract** (streaming + tree path + fallbacks)",
        "spider, tree path only (html5ever + fallbacks)",
        "dom_smoothie",
    ];
    let mut per_round: Vec<[Duration; 5]> = Vec::new();
    let mut sink = 0usize;
    for round in 0..rounds {
        let mut t = [Duration::ZERO; 5];
        for (i, (html, r, _)) in pages.iter().enumerate() {
            let x = &extractors[*r];
            for k in 0..5 {
                let which = (i + round + k) % 5;
                let total = &mut t[which];
                match which {
                    0 => timed(total, &mut sink, || {
                        Page::parse(html).root().children().count()
                    }),
                    1 => timed(total, &mut sink, || tokens_only(html)),
                    2 => timed(total, &mut sink, || x.extract(html).blocks.len()),
                    3 => timed(total, &mut sink, || x.extract_tree(html).blocks.len()),
                    _ => timed(total, &mut sink, || dom_smoothie(html)),
                }
            }
        }
        per_round.push(t);
    }
    per_round.sort_by_key(|t| t[2]);
    let median = per_round[per_round.len() / 2];
    let rate = |d: Duration| pages.len() as f64 / d.as_secs_f64();
    let mbs = |d: Duration| bytes as f64 / 1e6 / d.as_secs_f64();
    println!("| | pages/s | MB/s | ms per page |");
    println!("|---|---:|---:|---:|");
    for (name, d) in NAMES.iter().zip(median) {
        println!(
            "| {name} | {:.0} | {:.1} | {:.2} |",
            rate(d),
            mbs(d),
            d.as_secs_f64() * 1000.0 / pages.len() as f64
        );
    }
    println!(
        "\nspider / dom_smoothie pages/s: {:.2}× (median round); tree path / dom_smoothie: {:.2}×; checksum {sink}",
        rate(median[2]) / rate(median[4]),
        rate(median[3]) / rate(median[4]),
    );
}
