//! Extraction speed: spider's rules (with its fallbacks) vs `dom_smoothie`
//! (Readability) on the dev corpus's test pages, single thread, side by side
//! in one process, plus the parse alone (html5ever via scraper) as the floor.
//!
//! ```text
//! spider eval --corpus ../shared/datasets/sites-dev --out /tmp/evalout   # once: captures the train pages
//! cargo bench --bench extract -- [--db sqlite:///tmp/evalout/captures.db] [--corpus DIR] [--rounds 5]
//! ```
//!
//! Rules are learned from the stored captures of each group's train pages
//! (not timed). Each round times, page by page and alternating which goes
//! first, parse-only, spider extract, and dom_smoothie on the same decoded
//! text; pages/s and MB/s are over all rounds, and the median round is
//! quoted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use spider::capture::decode_html;
use spider::eval::read_manifest;
use spider::extract::Page;
use spider::learn::{Learner, ValidParams};
use spider::{Rules, Site, Store};

/// spider on one page: time, and something to keep the work from being optimised away.
fn time_ours(html: &str, rules: &Rules) -> (Duration, usize) {
    let t = Instant::now();
    let out = Page::parse(html).extract(rules);
    (t.elapsed(), out.blocks.len())
}

/// dom_smoothie on one page, configured as spider's fallback uses it.
fn time_theirs(html: &str) -> (Duration, usize) {
    let t = Instant::now();
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
    (t.elapsed(), n)
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
    let mut pages: Vec<(String, Rules)> = Vec::new();
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
        let rules = learner.learn().expect("learn").rules;
        for f in files {
            pages.push((
                decode_html(&std::fs::read(f).expect("page"), None),
                rules.clone(),
            ));
        }
    }
    let bytes: usize = pages.iter().map(|(h, _)| h.len()).sum();
    println!(
        "{} test pages, {:.1} MB of HTML, {rounds} rounds",
        pages.len(),
        bytes as f64 / 1e6
    );

    let mut per_round: Vec<(Duration, Duration, Duration)> = Vec::new();
    let mut sink = 0usize;
    for round in 0..rounds {
        let (mut parse, mut ours, mut theirs) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for (i, (html, rules)) in pages.iter().enumerate() {
            let spider_first = (i + round) % 2 == 0;
            let (a, b) = if spider_first {
                let a = time_ours(html, rules);
                (a, time_theirs(html))
            } else {
                let b = time_theirs(html);
                (time_ours(html, rules), b)
            };
            ours += a.0;
            theirs += b.0;
            sink += a.1 + b.1;
            let t = Instant::now();
            let page = Page::parse(html);
            parse += t.elapsed();
            sink += page.root().children().count();
        }
        per_round.push((parse, ours, theirs));
    }
    per_round.sort_by_key(|r| r.1);
    let (parse, ours, theirs) = per_round[per_round.len() / 2];
    let rate = |d: Duration| pages.len() as f64 / d.as_secs_f64();
    let mbs = |d: Duration| bytes as f64 / 1e6 / d.as_secs_f64();
    println!("| | pages/s | MB/s | ms per page |");
    println!("|---|---:|---:|---:|");
    for (name, d) in [
        ("parse only (scraper/html5ever)", parse),
        ("spider extract (rules + fallbacks)", ours),
        ("dom_smoothie", theirs),
    ] {
        println!(
            "| {name} | {:.0} | {:.1} | {:.2} |",
            rate(d),
            mbs(d),
            d.as_secs_f64() * 1000.0 / pages.len() as f64
        );
    }
    println!(
        "\nspider / dom_smoothie pages/s: {:.2}× (median round); checksum {sink}",
        rate(ours) / rate(theirs)
    );
    runtime.block_on(store.close());
}
