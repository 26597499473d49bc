//! Learn time and peak memory vs number of blocks, on generated captures.
//!
//! ```text
//! cargo bench --bench learn                                # 1000,10000,28000,100000,1000000 blocks
//! cargo bench --bench learn -- --sizes 1000,28000 [--repeat 3]
//! cargo bench --bench learn -- --child N                   # internal: one size, one JSON line
//! ```
//!
//! The captures are generated here, not read from a corpus: a news site whose
//! pages have about 100 blocks each (so N blocks are N/100 pages), built by a
//! small deterministic LCG seeded per page. Every page has the same template
//! chrome (logo, a nav of 8 links, a share bar, topics, related links, an ad
//! label, a sidebar with 5 "most read" links drawn from a pool of 50 titles
//! and a newsletter box, a footer), an article (an `h1.headline` equal to the
//! page's `og:title`, a byline, 10–40 body paragraphs of 20–80 pseudo-words
//! drawn Zipf-like from a 30,000-word vocabulary, some `h2`s, sometimes a
//! figure caption, a quote or a list) and 0–20 comments. Every block carries
//! a selector path, element index path, bounds and 4–10 computed style
//! properties per kind of block, with small per-page and per-block variations
//! (±2 px of column jitter on some pages, 10% italic paragraphs, ...); every
//! capture carries a page source that the index paths resolve in (checked on
//! the first page of each run).
//!
//! Each size, and each repeat of it, runs in a child process (the bench
//! re-executes itself with `--child N`), so the peak memory is that size's
//! alone. The child generates one capture at a time and hands it to
//! [`Learner::add`] (all captures are never held at once: the learner's
//! compact form is what is measured), then calls [`Learner::learn`]. Learn
//! time is the sum of the `add` calls plus `learn()`; generating the captures
//! is timed apart (`generate_ms`) and excluded. At the end the child reads its
//! peak resident set size, `VmHWM` in `/proc/self/status`, and prints one
//! JSON line: blocks, pages, distinct vectors, clusters, `generate_ms`,
//! `learn_ms`, `peak_rss_mb`, the learner's own step timings (`steps`; its
//! `read` step runs from `Learner::new` to `learn()`, so it includes
//! generation) and what was learned.
//!
//! The parent prints a markdown table (median learn time over repeats, the
//! largest peak RSS), the steps of the median run, the ratio of time per
//! block between the largest and smallest size and the log-log slope of
//! learn time over blocks (1 is linear), the targets (28k blocks < 0.5 s;
//! 1M blocks < 60 s and < 2 GB) and the machine.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spider::Site;
use spider::capture::{
    Block, Bounds, Capture, Limits, Meta, SCHEMA_VERSION, SelectorStep, Viewport,
};
use spider::extract::Page;
use spider::learn::{Learner, ValidParams};

const DEFAULT_SIZES: [usize; 5] = [1_000, 10_000, 28_000, 100_000, 1_000_000];
/// Blocks per generated page, on average: N blocks are N / this many pages.
const BLOCKS_PER_PAGE: usize = 100;
const SITE: &str = "bench.test";
const SITE_NAME: &str = "Bench Site";
const VIEWPORT: Viewport = Viewport {
    width: 1280,
    height: 900,
};

// ---------------------------------------------------------------------------
// Arguments and the two modes.

enum Mode {
    Parent { sizes: Vec<usize>, repeat: usize },
    Child(usize),
}

fn parse_args() -> Mode {
    let mut sizes = DEFAULT_SIZES.to_vec();
    let mut repeat = 1;
    let mut child = None;
    let number = |s: &str| -> usize {
        s.replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{s:?} is not a number"))
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sizes" => {
                sizes = it
                    .next()
                    .expect("--sizes N,N,...")
                    .split(',')
                    .map(number)
                    .collect()
            }
            "--repeat" => repeat = number(&it.next().expect("--repeat N")).max(1),
            "--child" => child = Some(number(&it.next().expect("--child N"))),
            "--bench" => {}
            other => panic!("unknown argument {other} (use --sizes N,N,... --repeat N)"),
        }
    }
    match child {
        Some(n) => Mode::Child(n),
        None => Mode::Parent { sizes, repeat },
    }
}

fn main() {
    match parse_args() {
        Mode::Child(n) => println!("{}", child(n)),
        Mode::Parent { sizes, repeat } => parent(&sizes, repeat),
    }
}

// ---------------------------------------------------------------------------
// The child: one size.

fn child(blocks: usize) -> Value {
    let pages = (blocks / BLOCKS_PER_PAGE).max(2);
    let pool = Pool::new();
    let mut learner = Learner::new(Site::new(SITE).expect("site name"), ValidParams::default());
    let mut generate = Duration::ZERO;
    let mut add = Duration::ZERO;
    for i in 0..pages {
        let started = Instant::now();
        let capture = generate_page(i, &pool);
        generate += started.elapsed();
        if i == 0 {
            check(&capture);
        }
        let started = Instant::now();
        learner.add(capture).expect("add");
        add += started.elapsed();
    }
    let rss_after_add = status_mb("VmRSS");
    let started = Instant::now();
    let learned = learner.learn().expect("learn");
    let learn_call = started.elapsed();
    let peak = status_mb("VmHWM");
    let report = &learned.report;
    let rules = &learned.rules;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    json!({
        "blocks": report.blocks,
        "pages": report.pages,
        "distinct_vectors": report.distinct_vectors,
        "clusters": report.clusters.len(),
        "generate_ms": ms(generate),
        "learn_ms": ms(add + learn_call),
        "add_ms": ms(add),
        "learn_call_ms": ms(learn_call),
        "peak_rss_mb": peak,
        "rss_after_add_mb": rss_after_add,
        "steps": report.timings,
        "features": report.features,
        "template_blocks": report.template_blocks,
        "noise_blocks": report.noise_blocks,
        "headline_pages": report.headline_pages,
        "content_rules": rules.content.len(),
        "content": rules.content.iter().map(|r| format!("{} (conf {:.2})", r.selector, r.confidence)).collect::<Vec<_>>(),
        "container": rules.container.as_ref().map(|c| c.selector.clone()),
        "title": rules.title.as_ref().map(|t| t.selector.clone()),
        "exclude": rules.exclude.iter().map(|e| e.selector.clone()).collect::<Vec<_>>(),
        "template_strings": rules.template.len(),
    })
}

/// A line of `/proc/self/status` (`VmHWM:   123456 kB`), in MB.
fn status_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    kb / 1024.0
}

/// The generator's own test: the capture is valid and every block's index
/// path finds, in a static parse of its source, an element with its tag and
/// its text.
fn check(capture: &Capture) {
    capture
        .validate(&Limits::default())
        .expect("a valid capture");
    let page = Page::parse(&capture.html);
    for block in &capture.blocks {
        let tags: Vec<&str> = block.selector.iter().map(|s| s.tag.as_str()).collect();
        let element = page
            .element_at(&block.node, &tags)
            .and_then(|id| page.element(id))
            .unwrap_or_else(|| {
                panic!(
                    "block {:?} is not at {:?} in the source",
                    block.text, block.node
                )
            });
        let text = element.text().collect::<String>();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(text, block.text, "source and block text differ");
    }
}

// ---------------------------------------------------------------------------
// The parent: every size in a child, then the tables.

fn parent(sizes: &[usize], repeat: usize) {
    let exe = std::env::current_exe().expect("own executable");
    let load_before = load();
    let mut results: Vec<(usize, Vec<Value>)> = Vec::new();
    for &n in sizes {
        let mut runs = Vec::new();
        for r in 0..repeat {
            eprint!("{n} blocks, run {}/{repeat} ... ", r + 1);
            let out = Command::new(&exe)
                .arg("--child")
                .arg(n.to_string())
                .stderr(Stdio::inherit())
                .output()
                .expect("run the child");
            assert!(
                out.status.success(),
                "child for {n} blocks failed: {}",
                out.status
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            let line = stdout
                .lines()
                .rev()
                .find(|l| l.starts_with('{'))
                .expect("the child's JSON line");
            let run: Value = serde_json::from_str(line).expect("the child's JSON");
            eprintln!(
                "learn {:.3} s, peak {:.0} MB",
                f(&run, "learn_ms") / 1000.0,
                f(&run, "peak_rss_mb")
            );
            runs.push(run);
        }
        runs.sort_by(|a, b| f(a, "learn_ms").total_cmp(&f(b, "learn_ms")));
        results.push((n, runs));
    }
    // The median run (lower middle for an even count) of each size.
    let median = |runs: &[Value]| runs[(runs.len() - 1) / 2].clone();

    println!("## Learn time vs blocks (generated captures)\n");
    println!(
        "`cargo bench --bench learn -- --sizes {} --repeat {repeat}`\n",
        sizes
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    println!("{}\n", machine(&load_before));
    println!(
        "| blocks | pages | distinct vectors | clusters | learn s (median of {repeat}) | µs per block | peak RSS MB |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (_, runs) in &results {
        let m = median(runs);
        let peak = runs.iter().map(|r| f(r, "peak_rss_mb")).fold(0.0, f64::max);
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.2} | {:.0} |",
            u(&m, "blocks"),
            u(&m, "pages"),
            u(&m, "distinct_vectors"),
            u(&m, "clusters"),
            f(&m, "learn_ms") / 1000.0,
            per_block_us(&m),
            peak
        );
    }

    // Steps of the median runs.
    let mut names: Vec<String> = Vec::new();
    for (_, runs) in &results {
        for (name, _) in steps(&median(runs)) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    println!(
        "\nSteps of the median run, ms (`add`: the add calls alone; the learner's `read` runs from `Learner::new` to `learn()`, generation included; then `learn()`'s steps; `generate`: building the captures, not in learn time):\n"
    );
    println!(
        "| blocks | add | {} | learn() | generate | RSS after adds MB |",
        names.join(" | ")
    );
    println!("|---:|---:|{}---:|---:|---:|", "---:|".repeat(names.len()));
    for (_, runs) in &results {
        let m = median(runs);
        let by_name: BTreeMap<String, f64> = steps(&m).into_iter().collect();
        let cells: Vec<String> = names
            .iter()
            .map(|n| by_name.get(n).map_or("–".into(), |v| format!("{v:.1}")))
            .collect();
        println!(
            "| {} | {:.1} | {} | {:.1} | {:.1} | {:.0} |",
            u(&m, "blocks"),
            f(&m, "add_ms"),
            cells.join(" | "),
            f(&m, "learn_call_ms"),
            f(&m, "generate_ms"),
            f(&m, "rss_after_add_mb")
        );
    }

    // Growth.
    if let (Some((_, small)), Some((_, large))) = (results.first(), results.last())
        && results.len() > 1
    {
        let (small, large) = (median(small), median(large));
        let ratio = per_block_us(&large) / per_block_us(&small);
        let slope = (f(&large, "learn_ms") / f(&small, "learn_ms")).ln()
            / (f(&large, "blocks") / f(&small, "blocks")).ln();
        println!(
            "\nTime per block, {} blocks / {} blocks: {ratio:.2}×; log-log slope of learn time over blocks: {slope:.2} (1 is linear).",
            u(&large, "blocks"),
            u(&small, "blocks")
        );
        if results.len() > 2 {
            let pairs: Vec<String> = results
                .windows(2)
                .map(|w| {
                    let (a, b) = (median(&w[0].1), median(&w[1].1));
                    format!(
                        "{}→{}: {:.2}",
                        u(&a, "blocks"),
                        u(&b, "blocks"),
                        (f(&b, "learn_ms") / f(&a, "learn_ms")).ln()
                            / (f(&b, "blocks") / f(&a, "blocks")).ln()
                    )
                })
                .collect();
            println!("Slope between neighbouring sizes: {}.", pairs.join(", "));
        }
    }

    // Targets, for the sizes measured.
    println!();
    for (n, runs) in &results {
        let m = median(runs);
        let secs = f(&m, "learn_ms") / 1000.0;
        let peak = runs.iter().map(|r| f(r, "peak_rss_mb")).fold(0.0, f64::max);
        let verdict = |ok: bool| if ok { "met" } else { "**NOT met**" };
        match n {
            28_000 => println!(
                "Target 28k blocks < 0.5 s: {secs:.3} s, {}.",
                verdict(secs < 0.5)
            ),
            1_000_000 => println!(
                "Target 1M blocks < 60 s and < 2 GB: {secs:.1} s, {peak:.0} MB, {}.",
                verdict(secs < 60.0 && peak < 2048.0)
            ),
            _ => {}
        }
    }

    // What was learned at the largest size.
    if let Some((_, runs)) = results.last() {
        let m = median(runs);
        println!(
            "\nLearned at {} blocks: {} content rules {}, container {}, title {}, {} exclusions {}, {} template strings; {} template blocks, {} noise blocks, headline on {} of {} pages, {} features.",
            u(&m, "blocks"),
            u(&m, "content_rules"),
            m["content"],
            m["container"],
            m["title"],
            m["exclude"].as_array().map_or(0, Vec::len),
            m["exclude"],
            u(&m, "template_strings"),
            u(&m, "template_blocks"),
            u(&m, "noise_blocks"),
            u(&m, "headline_pages"),
            u(&m, "pages"),
            u(&m, "features"),
        );
    }
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing from the child's JSON"))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing from the child's JSON"))
}

fn per_block_us(v: &Value) -> f64 {
    f(v, "learn_ms") * 1000.0 / f(v, "blocks")
}

fn steps(v: &Value) -> Vec<(String, f64)> {
    serde_json::from_value(v["steps"].clone()).expect("steps")
}

/// The 1-minute load average (`/proc/loadavg`): other work on the machine
/// slows every figure.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}

/// `2 cores (AMD EPYC), 24.0 GiB`, from `/proc`.
fn machine(load_before: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .split_whitespace()
                .next()?
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    format!(
        "**Machine:** {cores} cores (`{model}`, as /proc/cpuinfo names it), {mem_gib:.1} GiB; release build (bench profile); load average {load_before} before the runs, {} after.",
        load()
    )
}

// ---------------------------------------------------------------------------
// The generator.

/// A 64-bit LCG (Knuth's MMIX constants), seeded through splitmix64 so that
/// neighbouring page numbers give unrelated streams.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng(z ^ (z >> 31))
    }

    /// 31 random bits (the high bits of the state: the low ones are weak).
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }

    /// 0 ..< n.
    fn below(&mut self, n: usize) -> usize {
        ((u64::from(self.next()) * n as u64) >> 31) as usize
    }

    /// lo ..= hi.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// [0, 1).
    fn unit(&mut self) -> f64 {
        f64::from(self.next()) / f64::from(1u32 << 31)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The most common words; the rest of the vocabulary is pseudo-words.
const COMMON: [&str; 24] = [
    "the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "on", "was", "with", "as",
    "by", "at", "from", "this", "be", "are", "or", "an", "but", "not",
];
const SYLLABLES: [&str; 32] = [
    "ka", "lo", "ri", "ten", "mar", "so", "vel", "du", "pra", "nis", "tor", "el", "an", "quo",
    "ber", "fi", "gal", "ux", "mon", "ste", "ra", "py", "dre", "col", "hin", "jo", "wes", "tri",
    "ov", "zan", "le", "mu",
];
const VOCABULARY: usize = 30_000;

/// Appends word `index` of the vocabulary.
fn push_word(out: &mut String, index: usize) {
    if let Some(w) = COMMON.get(index) {
        out.push_str(w);
        return;
    }
    let mut k = index;
    loop {
        out.push_str(SYLLABLES[k % SYLLABLES.len()]);
        k /= SYLLABLES.len();
        if k == 0 {
            break;
        }
    }
}

/// A word index, Zipf-like: P(i) ∝ 1 / (i + 1).
fn word_index(rng: &mut Rng) -> usize {
    ((VOCABULARY as f64).powf(rng.unit()) as usize)
        .saturating_sub(1)
        .min(VOCABULARY - 1)
}

fn capitalize_at(out: &mut String, start: usize) {
    if let Some(c) = out[start..].chars().next() {
        let upper: String = c.to_uppercase().collect();
        out.replace_range(start..start + c.len_utf8(), &upper);
    }
}

/// Prose: `n` words in sentences of 6–18 words.
fn prose(rng: &mut Rng, n: usize) -> String {
    let mut out = String::with_capacity(n * 7);
    let mut left_in_sentence = 0;
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        let start = out.len();
        push_word(&mut out, word_index(rng));
        if left_in_sentence == 0 {
            capitalize_at(&mut out, start);
            left_in_sentence = rng.range(6, 18);
        }
        left_in_sentence -= 1;
        if i + 1 == n || left_in_sentence == 0 {
            out.push('.');
            left_in_sentence = 0;
        } else if rng.chance(0.06) {
            out.push(',');
        }
    }
    out
}

/// A headline: `n` capitalised words (common words in lower case).
fn headline(rng: &mut Rng, n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        let start = out.len();
        let index = word_index(rng);
        push_word(&mut out, index);
        if i == 0 || index >= COMMON.len() {
            capitalize_at(&mut out, start);
        }
    }
    out
}

const NAV: [&str; 8] = [
    "World",
    "Politics",
    "Business",
    "Technology",
    "Science",
    "Health",
    "Sport",
    "Culture",
];
const FOOTER_LINKS: [&str; 6] = [
    "About",
    "Contact",
    "Privacy",
    "Terms",
    "Careers",
    "Advertise",
];
const FOOTER_NOTES: [&str; 3] = [
    "© 2026 Bench Site. All rights reserved.",
    "Bench Site is an independent newsroom covering the world, one generated story at a time.",
    "Write to the newsroom at news at bench dot test.",
];
const SHARE: [&str; 3] = ["Facebook", "X", "Email"];
const FIRST_NAMES: [&str; 12] = [
    "Ana", "Ben", "Chloe", "Dmitri", "Eva", "Farid", "Grace", "Hugo", "Ines", "Jon", "Keiko",
    "Luis",
];
const LAST_NAMES: [&str; 12] = [
    "Almeida", "Brown", "Cohen", "Dubois", "Evans", "Fischer", "Garcia", "Hansen", "Ito", "Jensen",
    "Kowalski", "Lopez",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// What every page draws from: other articles' titles (the "most read" and
/// related links) and topics.
struct Pool {
    titles: Vec<(String, String)>,
    topics: Vec<String>,
}

impl Pool {
    fn new() -> Pool {
        let mut rng = Rng::new(u64::MAX);
        let titles = (0..50)
            .map(|i| {
                let n = rng.range(6, 11);
                (
                    headline(&mut rng, n),
                    format!("https://{SITE}/post/archive-{i}"),
                )
            })
            .collect();
        let topics = (0..30)
            .map(|_| {
                let n = rng.range(1, 2);
                headline(&mut rng, n)
            })
            .collect();
        Pool { titles, topics }
    }
}

/// A kind of block's computed style: the properties whose value differs from
/// `<body>`'s, `property: value; ...`.
type Style = &'static str;
const LOGO: Style = "color: rgb(200, 16, 46); font-family: \"Playfair Display\", serif; font-size: 32px; font-weight: 700; letter-spacing: -0.5px";
const NAV_LI: Style = "color: rgb(255, 255, 255); display: inline-block; font-size: 14px; font-weight: 700; letter-spacing: 0.5px; list-style-type: none; text-transform: uppercase";
const HEADLINE: Style = "font-family: Georgia, \"Times New Roman\", serif; font-size: 40px; font-weight: 700; letter-spacing: -0.5px; line-height: 46px; margin-bottom: 16px";
const BYLINE: Style = "color: rgb(102, 102, 102); font-size: 14px; letter-spacing: 0.3px; margin-bottom: 4px; text-transform: uppercase";
const READING_TIME: Style =
    "color: rgb(102, 102, 102); font-size: 13px; font-style: italic; margin-bottom: 24px";
const SHARE_LABEL: Style =
    "color: rgb(102, 102, 102); font-size: 12px; font-weight: 700; text-transform: uppercase";
const SHARE_LI: Style = "color: rgb(0, 90, 156); display: inline-block; font-size: 12px; list-style-type: none; margin-right: 12px";
const BODY_P: Style = "color: rgb(34, 34, 34); font-family: Georgia, \"Times New Roman\", serif; font-size: 18px; line-height: 28.8px; margin-bottom: 24px; margin-top: 0px";
const BODY_H2: Style = "color: rgb(34, 34, 34); font-family: Georgia, \"Times New Roman\", serif; font-size: 26px; font-weight: 700; line-height: 32px; margin-bottom: 12px; margin-top: 32px";
const QUOTE_P: Style = "color: rgb(85, 85, 85); font-family: Georgia, \"Times New Roman\", serif; font-size: 22px; font-style: italic; line-height: 32px; margin-bottom: 0px; margin-top: 0px";
const BODY_LI: Style = "color: rgb(34, 34, 34); display: list-item; font-family: Georgia, \"Times New Roman\", serif; font-size: 18px; line-height: 28.8px; list-style-type: disc; margin-bottom: 8px";
const CAPTION: Style =
    "color: rgb(102, 102, 102); font-size: 13px; font-style: italic; line-height: 18px";
const TOPICS_LABEL: Style =
    "font-size: 13px; font-weight: 700; margin-right: 8px; text-transform: uppercase";
const TOPIC_LI: Style = "background-color: rgb(238, 238, 238); border-radius: 3px; color: rgb(0, 90, 156); display: inline-block; font-size: 13px; list-style-type: none";
const RELATED_H3: Style = "font-family: Georgia, \"Times New Roman\", serif; font-size: 20px; font-weight: 700; margin-bottom: 12px; text-transform: uppercase";
const RELATED_LI: Style = "color: rgb(0, 90, 156); font-size: 16px; font-weight: 700; line-height: 22px; list-style-type: none; margin-bottom: 10px";
const AD_LABEL: Style = "color: rgb(153, 153, 153); font-size: 10px; letter-spacing: 1px; text-align: center; text-transform: uppercase";
const COMMENTS_H3: Style = "border-top-color: rgb(221, 221, 221); border-top-style: solid; border-top-width: 1px; font-size: 20px; font-weight: 700; margin-bottom: 16px";
const COMMENT_AUTHOR: Style =
    "color: rgb(51, 51, 51); font-size: 13px; font-weight: 700; margin-bottom: 4px";
const COMMENT_TEXT: Style = "color: rgb(68, 68, 68); font-family: Arial, sans-serif; font-size: 14px; line-height: 20px; margin-bottom: 12px";
const SIDEBAR_H2: Style = "border-bottom-color: rgb(200, 16, 46); border-bottom-style: solid; border-bottom-width: 2px; font-size: 18px; font-weight: 700; margin-bottom: 12px; text-transform: uppercase";
const MOST_READ_LI: Style = "color: rgb(17, 17, 17); font-size: 15px; font-weight: 700; line-height: 20px; list-style-type: decimal; margin-bottom: 12px";
const NEWSLETTER_H3: Style = "background-color: rgb(200, 16, 46); color: rgb(255, 255, 255); font-size: 18px; font-weight: 700";
const NEWSLETTER_P: Style = "background-color: rgb(200, 16, 46); color: rgb(255, 255, 255); font-size: 14px; line-height: 20px";
const FOOTER_P: Style = "background-color: rgb(17, 17, 17); color: rgb(170, 170, 170); font-size: 13px; line-height: 20px";
const FOOTER_LI: Style = "background-color: rgb(17, 17, 17); color: rgb(170, 170, 170); display: inline-block; font-size: 13px; list-style-type: none; margin-right: 16px";

/// An element of the generated page.
struct El {
    tag: &'static str,
    id: Option<String>,
    /// Sorted, as a capture records them.
    classes: &'static [&'static str],
    attrs: Vec<(&'static str, String)>,
    children: Vec<Child>,
    /// Set when the element is a captured block.
    look: Option<Look>,
}

enum Child {
    El(El),
    Text(String),
    /// Markup written as is (the head, a script).
    Raw(String),
}

/// A block's computed style and border box.
struct Look {
    style: BTreeMap<String, String>,
    bounds: Bounds,
}

fn el(tag: &'static str, classes: &'static [&'static str], children: Vec<Child>) -> Child {
    Child::El(El {
        tag,
        id: None,
        classes,
        attrs: Vec::new(),
        children,
        look: None,
    })
}

/// A block element with its text (and links) as children.
fn block(
    tag: &'static str,
    classes: &'static [&'static str],
    children: Vec<Child>,
    style: Style,
    bounds: Bounds,
) -> Child {
    Child::El(El {
        tag,
        id: None,
        classes,
        attrs: Vec::new(),
        children,
        look: Some(Look {
            style: style
                .split(';')
                .filter_map(|d| d.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect(),
            bounds,
        }),
    })
}

fn text(s: impl Into<String>) -> Child {
    Child::Text(s.into())
}

fn link(s: impl Into<String>, href: impl Into<String>) -> Child {
    Child::El(El {
        tag: "a",
        id: None,
        classes: &[],
        attrs: vec![("href", href.into())],
        children: vec![text(s)],
        look: None,
    })
}

/// Adds or replaces one property of a block's style (the one-property
/// variations).
fn restyle(child: &mut Child, property: &str, value: &str) {
    if let Child::El(El {
        look: Some(look), ..
    }) = child
    {
        look.style.insert(property.into(), value.into());
    }
}

/// A column of the layout: blocks stack down it.
struct Column {
    x: f64,
    width: f64,
    y: f64,
}

impl Column {
    /// The box of a block of `chars` characters at `font` px and `line` px
    /// line height, then `gap` px of space below it.
    fn place(&mut self, chars: usize, font: f64, line: f64, gap: f64) -> Bounds {
        let per_line = (self.width / (font * 0.5)).max(1.0);
        let lines = (chars as f64 / per_line).ceil().max(1.0);
        let bounds = Bounds {
            x: self.x,
            y: self.y,
            width: self.width,
            height: lines * line,
        };
        self.y += lines * line + gap;
        bounds
    }
}

fn at(x: f64, y: f64, width: f64, height: f64) -> Bounds {
    Bounds {
        x,
        y,
        width,
        height,
    }
}

/// Page `i` of the generated site.
fn generate_page(i: usize, pool: &Pool) -> Capture {
    let mut rng = Rng::new(i as u64);
    let url = format!("https://{SITE}/post/{i}");
    let n = rng.range(6, 12);
    let title = headline(&mut rng, n);
    // Some pages are laid out a pixel or two off (a scrollbar, a font).
    let (jx, jw) = if rng.chance(0.3) {
        (rng.range(0, 4) as f64 - 2.0, rng.range(0, 4) as f64 - 2.0)
    } else {
        (0.0, 0.0)
    };
    let mut main = Column {
        x: 100.0 + jx,
        width: 640.0 + jw,
        y: 140.0,
    };
    let mut side = Column {
        x: 800.0,
        width: 300.0,
        y: 140.0,
    };

    // Site header.
    let nav: Vec<Child> = NAV
        .iter()
        .enumerate()
        .map(|(k, label)| {
            let bounds = at(100.0 + 100.0 * k as f64, 84.0, 90.0, 20.0);
            block(
                "li",
                &[],
                vec![link(*label, format!("/{}", label.to_lowercase()))],
                NAV_LI,
                bounds,
            )
        })
        .collect();
    let header = el(
        "header",
        &["site-header"],
        vec![
            block(
                "div",
                &["logo"],
                vec![text(SITE_NAME)],
                LOGO,
                at(100.0, 20.0, 220.0, 44.0),
            ),
            el("nav", &["site-nav"], vec![el("ul", &[], nav)]),
        ],
    );

    // Article header and share bar.
    let author = format!("{} {}", rng.pick(&FIRST_NAMES), rng.pick(&LAST_NAMES));
    let date = format!("{} {}, 2026", rng.pick(&MONTHS), rng.range(1, 28));
    let byline = format!("By {author} · {date}");
    let paragraphs = rng.range(10, 40);
    let story_header = el(
        "header",
        &["story-header"],
        vec![
            block(
                "h1",
                &["headline"],
                vec![text(title.clone())],
                HEADLINE,
                main.place(title.len(), 40.0, 46.0, 16.0),
            ),
            block(
                "p",
                &["byline"],
                vec![text(byline.clone())],
                BYLINE,
                main.place(byline.len(), 14.0, 20.0, 4.0),
            ),
            block(
                "p",
                &["reading-time"],
                vec![text(format!("{} min read", paragraphs / 4 + 1))],
                READING_TIME,
                main.place(12, 13.0, 18.0, 24.0),
            ),
        ],
    );
    let share_y = main.y;
    main.y += 40.0;
    let mut share = vec![block(
        "p",
        &["share-label"],
        vec![text("Share this")],
        SHARE_LABEL,
        at(main.x, share_y, 90.0, 16.0),
    )];
    share.push(el(
        "ul",
        &["share-links"],
        SHARE
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let href = format!("https://share.test/{}?u={url}", s.to_lowercase());
                block(
                    "li",
                    &[],
                    vec![link(*s, href)],
                    SHARE_LI,
                    at(main.x + 100.0 + 80.0 * k as f64, share_y, 70.0, 16.0),
                )
            })
            .collect(),
    ));
    let share = el("div", &["share-bar"], share);

    // The story.
    let mut body = Vec::new();
    let mut description = String::new();
    let lead_bold = rng.chance(0.3);
    let figure_at = rng.chance(0.4).then_some(1);
    let quote_at = rng.chance(0.3).then(|| rng.range(2, paragraphs - 1));
    let list_at = rng.chance(0.3).then(|| rng.range(2, paragraphs - 1));
    for k in 0..paragraphs {
        if k >= 3 && rng.chance(0.15) {
            let n = rng.range(3, 7);
            let h = headline(&mut rng, n);
            let bounds = main.place(h.len(), 26.0, 32.0, 12.0);
            body.push(block("h2", &[], vec![text(h)], BODY_H2, bounds));
        }
        let n = rng.range(20, 80);
        let words = prose(&mut rng, n);
        if k == 0 {
            description = words.split(' ').take(25).collect::<Vec<_>>().join(" ");
        }
        let bounds = main.place(words.len(), 18.0, 28.8, 24.0);
        let mut p = block("p", &[], vec![text(words)], BODY_P, bounds);
        if k == 0 && lead_bold {
            restyle(&mut p, "font-weight", "700");
        } else if rng.chance(0.1) {
            restyle(&mut p, "font-style", "italic");
        }
        body.push(p);
        if figure_at == Some(k) {
            let n = rng.range(6, 16);
            let caption = prose(&mut rng, n);
            main.y += 360.0;
            let bounds = main.place(caption.len(), 13.0, 18.0, 24.0);
            let img = Child::El(El {
                tag: "img",
                id: None,
                classes: &[],
                attrs: vec![("src", format!("/img/{i}.jpg")), ("alt", String::new())],
                children: Vec::new(),
                look: None,
            });
            body.push(el(
                "figure",
                &[],
                vec![
                    img,
                    block("figcaption", &[], vec![text(caption)], CAPTION, bounds),
                ],
            ));
        }
        if quote_at == Some(k) {
            let n = rng.range(10, 30);
            let quote = prose(&mut rng, n);
            let bounds = main.place(quote.len(), 22.0, 32.0, 24.0);
            body.push(el(
                "blockquote",
                &[],
                vec![block("p", &[], vec![text(quote)], QUOTE_P, bounds)],
            ));
        }
        if list_at == Some(k) {
            let items = (0..rng.range(3, 5))
                .map(|_| {
                    let n = rng.range(5, 15);
                    let item = prose(&mut rng, n);
                    let bounds = main.place(item.len(), 18.0, 28.8, 8.0);
                    block("li", &[], vec![text(item)], BODY_LI, bounds)
                })
                .collect();
            body.push(el("ul", &[], items));
        }
    }
    let story_body = el("div", &["story-body"], body);

    // Topics, related links, an ad slot.
    let topics_y = main.y;
    let mut topics: Vec<Child> = Vec::new();
    let mut picked = Vec::new();
    let wanted = rng.range(3, 6);
    while picked.len() < wanted {
        let t = rng.below(pool.topics.len());
        if !picked.contains(&t) {
            picked.push(t);
        }
    }
    for (k, &t) in picked.iter().enumerate() {
        let name = &pool.topics[t];
        let bounds = at(main.x + 80.0 + 110.0 * k as f64, topics_y, 100.0, 20.0);
        topics.push(block(
            "li",
            &[],
            vec![link(name.clone(), format!("/topic/{t}"))],
            TOPIC_LI,
            bounds,
        ));
    }
    main.y += 44.0;
    let topics = el(
        "div",
        &["topics"],
        vec![
            block(
                "p",
                &["topics-label"],
                vec![text("Topics")],
                TOPICS_LABEL,
                at(main.x, topics_y, 70.0, 20.0),
            ),
            el("ul", &[], topics),
        ],
    );
    let related_title = block(
        "h3",
        &["related-title"],
        vec![text("Related articles")],
        RELATED_H3,
        main.place(16, 20.0, 24.0, 12.0),
    );
    let related_links: Vec<Child> = (0..5)
        .map(|_| {
            let (title, href) = rng.pick(&pool.titles);
            let bounds = main.place(title.len(), 16.0, 22.0, 10.0);
            block(
                "li",
                &[],
                vec![link(title.clone(), href.clone())],
                RELATED_LI,
                bounds,
            )
        })
        .collect();
    let related = el(
        "section",
        &["related"],
        vec![related_title, el("ul", &[], related_links)],
    );
    let ad = el(
        "div",
        &["ad-slot"],
        vec![block(
            "p",
            &["ad-label"],
            vec![text("Advertisement")],
            AD_LABEL,
            main.place(13, 10.0, 14.0, 260.0),
        )],
    );

    // Comments.
    let comments = rng.range(0, 20);
    let mut article = vec![story_header, share, story_body, topics, related, ad];
    if comments > 0 {
        let heading = format!("{comments} comments");
        let mut thread = vec![block(
            "h3",
            &["comments-title"],
            vec![text(heading.clone())],
            COMMENTS_H3,
            main.place(heading.len(), 20.0, 24.0, 16.0),
        )];
        let thread_x = main.x + 20.0;
        let thread_width = main.width - 40.0;
        let mut column = Column {
            x: thread_x,
            width: thread_width,
            y: main.y,
        };
        for _ in 0..comments {
            let who = format!(
                "{}{} · {} hours ago",
                rng.pick(&FIRST_NAMES).to_lowercase(),
                rng.range(1, 999),
                rng.range(1, 23)
            );
            let n = rng.range(5, 60);
            let said = prose(&mut rng, n);
            let author = block(
                "p",
                &["comment-author"],
                vec![text(who.clone())],
                COMMENT_AUTHOR,
                column.place(who.len(), 13.0, 18.0, 4.0),
            );
            let mut said = block(
                "p",
                &["comment-text"],
                vec![text(said.clone())],
                COMMENT_TEXT,
                column.place(said.len(), 14.0, 20.0, 12.0),
            );
            if rng.chance(0.05) {
                restyle(&mut said, "color", "rgb(0, 90, 156)");
            }
            thread.push(el("div", &["comment"], vec![author, said]));
        }
        main.y = column.y;
        article.push(el("section", &["comments"], thread));
    }
    let article = Child::El(El {
        tag: "article",
        id: Some(format!("story-{i}")),
        classes: &["story"],
        attrs: Vec::new(),
        children: article,
        look: None,
    });

    // Sidebar.
    let sidebar_title = block(
        "h2",
        &["sidebar-title"],
        vec![text("Most read")],
        SIDEBAR_H2,
        side.place(9, 18.0, 24.0, 12.0),
    );
    let mut most_read = Vec::new();
    let mut picked = Vec::new();
    while picked.len() < 5 {
        let t = rng.below(pool.titles.len());
        if !picked.contains(&t) {
            picked.push(t);
        }
    }
    for &t in &picked {
        let (title, href) = &pool.titles[t];
        let bounds = side.place(title.len(), 15.0, 20.0, 12.0);
        most_read.push(block(
            "li",
            &[],
            vec![link(title.clone(), href.clone())],
            MOST_READ_LI,
            bounds,
        ));
    }
    let most_read = el("ol", &["most-read"], most_read);
    let side_ad = el(
        "div",
        &["ad-slot"],
        vec![block(
            "p",
            &["ad-label"],
            vec![text("Advertisement")],
            AD_LABEL,
            side.place(13, 10.0, 14.0, 260.0),
        )],
    );
    let pitch = "Our best stories in your inbox every weekday morning.";
    let newsletter = el(
        "div",
        &["newsletter"],
        vec![
            block(
                "h3",
                &[],
                vec![text("Get the morning briefing")],
                NEWSLETTER_H3,
                side.place(24, 18.0, 24.0, 8.0),
            ),
            block(
                "p",
                &[],
                vec![text(pitch)],
                NEWSLETTER_P,
                side.place(pitch.len(), 14.0, 20.0, 8.0),
            ),
            block(
                "p",
                &["newsletter-cta"],
                vec![link("Sign up", "/newsletter")],
                NEWSLETTER_P,
                side.place(7, 14.0, 20.0, 8.0),
            ),
        ],
    );
    let sidebar = el(
        "aside",
        &["sidebar"],
        vec![sidebar_title, most_read, side_ad, newsletter],
    );

    // Footer.
    let mut footer = Column {
        x: 100.0,
        width: 1080.0,
        y: main.y.max(side.y) + 40.0,
    };
    let footer_y = footer.y;
    footer.y += 40.0;
    let footer_links: Vec<Child> = FOOTER_LINKS
        .iter()
        .enumerate()
        .map(|(k, label)| {
            let bounds = at(100.0 + 90.0 * k as f64, footer_y, 80.0, 20.0);
            block(
                "li",
                &[],
                vec![link(*label, format!("/{}", label.to_lowercase()))],
                FOOTER_LI,
                bounds,
            )
        })
        .collect();
    let mut footer_children = vec![el(
        "nav",
        &["footer-nav"],
        vec![el("ul", &[], footer_links)],
    )];
    for note in FOOTER_NOTES {
        footer_children.push(block(
            "p",
            &["footer-note"],
            vec![text(note)],
            FOOTER_P,
            footer.place(note.chars().count(), 13.0, 20.0, 8.0),
        ));
    }

    let layout = el(
        "div",
        &["layout"],
        vec![el("main", &["content-area"], vec![article]), sidebar],
    );
    let body = el(
        "body",
        &[],
        vec![
            header,
            layout,
            el("footer", &["site-footer"], footer_children),
            el(
                "script",
                &[],
                vec![Child::Raw("window.dataLayer = [];".into())],
            ),
        ],
    );
    let meta = Meta {
        title: Some(format!("{title} | {SITE_NAME}")),
        og_title: Some(title.clone()),
        og_description: Some(description.clone()),
        og_site_name: Some(SITE_NAME.into()),
        og_url: Some(url.clone()),
        description: Some(description.clone()),
        twitter_title: None,
        twitter_description: None,
        canonical: Some(url.clone()),
    };
    let head = format!(
        "<meta charset=\"utf-8\"><title>{}</title><meta name=\"description\" content=\"{}\">\
         <meta property=\"og:title\" content=\"{}\"><meta property=\"og:site_name\" content=\"{SITE_NAME}\">\
         <link rel=\"canonical\" href=\"{}\"><link rel=\"stylesheet\" href=\"/static/site.css\">",
        escape(&format!("{title} | {SITE_NAME}")),
        escape(&description),
        escape(&title),
        escape(&url)
    );
    let html = El {
        tag: "html",
        id: None,
        classes: &[],
        attrs: vec![("lang", "en".into())],
        children: vec![el("head", &[], vec![Child::Raw(head)]), body],
        look: None,
    };

    let mut out = Emitted {
        html: String::with_capacity(64 * 1024),
        blocks: Vec::with_capacity(BLOCKS_PER_PAGE + 40),
        path: Vec::new(),
        node: Vec::new(),
    };
    out.html.push_str("<!DOCTYPE html>\n");
    out.emit(&html, 0);
    Capture {
        schema: SCHEMA_VERSION,
        site: Site::new(SITE).expect("site name"),
        url,
        captured_at: time::OffsetDateTime::UNIX_EPOCH,
        viewport: VIEWPORT,
        lang: Some("en".into()),
        meta,
        html: out.html,
        blocks: out.blocks,
        truncated: false,
        agent: None,
    }
}

/// The page's source and blocks, written from one tree.
struct Emitted {
    html: String,
    blocks: Vec<Block>,
    path: Vec<SelectorStep>,
    node: Vec<u32>,
}

impl Emitted {
    fn emit(&mut self, el: &El, index: u32) {
        self.html.push('<');
        self.html.push_str(el.tag);
        if let Some(id) = &el.id {
            self.html.push_str(&format!(" id=\"{}\"", escape(id)));
        }
        if !el.classes.is_empty() {
            self.html
                .push_str(&format!(" class=\"{}\"", el.classes.join(" ")));
        }
        for (name, value) in &el.attrs {
            self.html
                .push_str(&format!(" {name}=\"{}\"", escape(value)));
        }
        self.html.push('>');
        self.path.push(SelectorStep {
            tag: el.tag.to_string(),
            id: el.id.clone(),
            classes: el.classes.iter().map(|c| c.to_string()).collect(),
        });
        self.node.push(index);
        if let Some(look) = &el.look {
            let mut text = String::new();
            let mut link_chars = 0;
            collect_text(el, false, &mut text, &mut link_chars);
            self.blocks.push(Block {
                text,
                tag: el.tag.to_string(),
                link_text_len: link_chars,
                selector: self.path.clone(),
                node: self.node.clone(),
                bounds: look.bounds,
                style: look.style.clone(),
            });
        }
        let mut elements = 0;
        for child in &el.children {
            match child {
                Child::El(e) => {
                    self.emit(e, elements);
                    elements += 1;
                }
                Child::Text(t) => self.html.push_str(&escape(t)),
                Child::Raw(r) => self.html.push_str(r),
            }
        }
        if !matches!(el.tag, "img" | "meta" | "link" | "br") {
            self.html.push_str("</");
            self.html.push_str(el.tag);
            self.html.push('>');
        }
        self.path.pop();
        self.node.pop();
    }
}

/// A block's text, its pieces joined by single spaces, and the characters
/// of it inside links.
fn collect_text(el: &El, in_link: bool, text: &mut String, link_chars: &mut usize) {
    let in_link = in_link || el.tag == "a";
    for child in &el.children {
        match child {
            Child::El(e) => collect_text(e, in_link, text, link_chars),
            Child::Text(t) => {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(t);
                if in_link {
                    *link_chars += t.chars().count();
                }
            }
            Child::Raw(_) => {}
        }
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}
