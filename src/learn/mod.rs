//! Learn: from a site's captures to its [`Rules`].
//!
//! The pipeline, one module per step:
//! 1. [`features`]: each block becomes a sparse vector (style
//!    `property=value`s, tag, tag path, width and x); identical vectors are
//!    collapsed.
//! 2. [`cluster`]: DBSCAN over the distinct vectors, weighted by count.
//! 3. [`score`]: each cluster is scored by its non-template text mass, how
//!    many pages it is on, prose vs fragments, link density, TF-IDF
//!    relevance to each page's own title and description (minus relevance
//!    to the other pages' titles), and distance from the headline.
//! 4. [`select`]: the top cluster, plus the clusters inside its region that
//!    are dense, non-template text.
//! 5. [`selectors`]: CSS selectors for the chosen clusters, the container,
//!    exclusions and the title, each tested on the training pages' source
//!    parsed the way extraction parses it.
//!
//! [`Learner`] takes captures one at a time and keeps only what learning
//! needs (interned paths, text keys, terms, geometry; the source of a few
//! evenly spread pages), so a site of many pages learns in bounded memory.
//! Gold texts of a corpus never come here: the only input is captures.

pub mod cluster;
mod error;
pub mod features;
mod params;
pub mod score;
pub mod select;
pub mod selectors;
pub mod text;

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::time::Instant;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

pub use error::LearnError;
pub use params::{Clusterer, Params, ValidParams};

use crate::capture::{Block, Capture, SelectorStep};
use crate::rules::{FORMAT_VERSION, Rules, normalize_text};
use crate::site::Site;
use features::Vectoriser;
use text::Analyzer;

/// Block texts up to this many bytes are analysed once per site.
const TEXT_CACHE_MAX_BYTES: usize = 300;
/// Most texts remembered.
const TEXT_CACHE_MAX: usize = 200_000;
/// Most template strings kept in the rules.
const MAX_TEMPLATE_STRINGS: usize = 2000;
/// Longest template string kept, in characters.
const MAX_TEMPLATE_CHARS: usize = 500;
/// Blocks longer than this many words are never taken for a headline.
const HEADLINE_MAX_WORDS: usize = 40;
/// Minimum similarity of a headline to the page's title metadata.
const HEADLINE_MIN_SIMILARITY: f64 = 0.6;

/// One page as the learner keeps it.
#[derive(Debug)]
pub struct PageData {
    /// The page's URL.
    pub url: String,
    /// Viewport width and height.
    pub viewport: (u32, u32),
    /// Analysed terms of its titles and descriptions.
    pub meta_terms: Vec<u32>,
    /// The page source, for the pages that selectors are tested on.
    pub html: Option<String>,
    /// Its blocks: `blocks[first..first + len]`.
    pub first: usize,
    /// Number of blocks.
    pub len: usize,
    /// The headline block and its similarity to the title metadata.
    pub headline: Option<(usize, f64)>,
}

/// One block as the learner keeps it.
#[derive(Debug)]
pub struct BlockData {
    /// Page index.
    pub page: u32,
    /// The text, whitespace normalised.
    pub text: Box<str>,
    /// Hash of the normalised text.
    pub text_key: u64,
    /// Mostly link text.
    pub link: bool,
    /// Words.
    pub words: u32,
    /// Characters, and characters inside links.
    pub chars: u32,
    /// Characters inside links.
    pub link_chars: u32,
    /// Distinct analysed terms.
    pub terms: Box<[u32]>,
    /// Interned selector steps, `<html>` first.
    pub steps: Box<[u32]>,
    /// Element index path (the capture's `node`).
    pub node: Box<[u32]>,
    /// x, y, width, height.
    pub bounds: [f32; 4],
    /// Distinct vector id.
    pub vector: u32,
    /// Text recurs on other pages.
    pub template: bool,
    /// Cluster, after clustering.
    pub cluster: Option<usize>,
    /// The element its nearest stable anchor is (hash of its index path;
    /// 0: none), set by [`select::split_by_anchor`].
    pub anchor: u64,
}

/// Everything known about a site's pages after all captures are added.
pub struct Model {
    /// The site.
    pub site: Site,
    /// Pages.
    pub pages: Vec<PageData>,
    /// Blocks of all pages, page after page.
    pub blocks: Vec<BlockData>,
    /// Interned selector steps.
    pub steps: Vec<SelectorStep>,
    /// Interned terms.
    pub terms: Vec<String>,
    /// Number of clusters.
    pub clusters: usize,
    /// Template strings for the rules, normalised.
    pub template_texts: Vec<String>,
}

impl Model {
    /// The blocks of page `p`.
    pub fn page_blocks(&self, p: usize) -> std::ops::Range<usize> {
        let page = &self.pages[p];
        page.first..page.first + page.len
    }

    /// Tag names of a block's path.
    pub fn tags(&self, block: &BlockData) -> Vec<&str> {
        block
            .steps
            .iter()
            .map(|&s| self.steps[s as usize].tag.as_str())
            .collect()
    }
}

/// Takes a site's captures one at a time, then learns.
pub struct Learner {
    site: Site,
    params: ValidParams,
    vectoriser: Vectoriser,
    pages: Vec<PageData>,
    blocks: Vec<BlockData>,
    steps: Vec<SelectorStep>,
    step_ids: FxHashMap<SelectorStep, u32>,
    terms: Vec<String>,
    term_ids: FxHashMap<String, u32>,
    analyzers: HashMap<String, Analyzer>,
    // language -> lower-cased word -> its term ids
    word_terms: HashMap<String, FxHashMap<String, Box<[u32]>>>,
    // (normalised text hash, link flag) -> (pages it is on, last page seen)
    recurring: FxHashMap<(u64, bool), (u32, u32)>,
    html_stride: usize,
    started: Instant,
    // Short block texts already analysed (the language of the first page).
    text_cache: FxHashMap<Box<str>, TextInfo>,
    cache_lang: Option<String>,
}

/// What the learner derives from a block's text alone.
#[derive(Clone)]
struct TextInfo {
    normalized: Box<str>,
    key: u64,
    words: u32,
    terms: Box<[u32]>,
}

/// What a learn produced.
#[derive(Debug, Clone, Serialize)]
pub struct Learned {
    /// The rules.
    pub rules: Rules,
    /// How they came about.
    pub report: Report,
}

/// How the rules came about: every cluster and its fate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// The site.
    pub site: Site,
    /// Pages learned from.
    pub pages: usize,
    /// Blocks on them.
    pub blocks: usize,
    /// Distinct block vectors.
    pub distinct_vectors: usize,
    /// Distinct discrete features.
    pub features: usize,
    /// Blocks whose text recurs on other pages.
    pub template_blocks: usize,
    /// Blocks in no cluster.
    pub noise_blocks: usize,
    /// Pages whose source was parsed to test selectors.
    pub selector_pages: usize,
    /// Pages where a headline was found.
    pub headline_pages: usize,
    /// Every cluster, best score first.
    pub clusters: Vec<ClusterReport>,
    /// Milliseconds per step.
    pub timings: Vec<(String, f64)>,
}

/// One cluster in the [`Report`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterReport {
    /// Cluster id.
    pub id: usize,
    /// Blocks in it.
    pub blocks: usize,
    /// Pages it is on.
    pub pages: usize,
    /// Its score and the parts of it.
    pub score: score::Score,
    /// What the learner made of it.
    pub role: select::Role,
    /// Why.
    pub reason: String,
    /// Selectors written for it.
    pub selectors: Vec<String>,
    /// Its most common rendered path (last steps).
    pub signature: String,
    /// A few of its texts.
    pub samples: Vec<String>,
}

impl Learner {
    /// A learner for `site`.
    pub fn new(site: Site, params: ValidParams) -> Learner {
        Learner {
            site,
            params,
            vectoriser: Vectoriser::new(),
            pages: Vec::new(),
            blocks: Vec::new(),
            steps: Vec::new(),
            step_ids: FxHashMap::default(),
            terms: Vec::new(),
            term_ids: FxHashMap::default(),
            analyzers: HashMap::new(),
            word_terms: HashMap::new(),
            recurring: FxHashMap::default(),
            html_stride: 1,
            started: Instant::now(),
            text_cache: FxHashMap::default(),
            cache_lang: None,
        }
    }

    fn intern_step(&mut self, step: &SelectorStep) -> u32 {
        if let Some(&id) = self.step_ids.get(step) {
            return id;
        }
        let id = self.steps.len() as u32;
        self.steps.push(step.clone());
        self.step_ids.insert(step.clone(), id);
        id
    }

    /// The distinct term ids of `text`. Words repeat a lot across a site,
    /// so each distinct word is analysed (stop list, stemmer, interning)
    /// once per language and remembered.
    fn terms_of(&mut self, lang: &str, text: &str) -> Vec<u32> {
        let Learner {
            analyzers,
            word_terms,
            terms,
            term_ids,
            ..
        } = self;
        let analyzer = analyzers
            .entry(lang.to_string())
            .or_insert_with(|| Analyzer::new(Some(lang)));
        let cache = word_terms.entry(lang.to_string()).or_default();
        let mut ids = Vec::new();
        text::for_each_word(text, |word| {
            if let Some(known) = cache.get(word) {
                ids.extend_from_slice(known);
                return;
            }
            let found: Box<[u32]> = analyzer
                .terms(word)
                .into_iter()
                .map(|term| match term_ids.get(&term) {
                    Some(&id) => id,
                    None => {
                        let id = terms.len() as u32;
                        terms.push(term.clone());
                        term_ids.insert(term, id);
                        id
                    }
                })
                .collect();
            ids.extend_from_slice(&found);
            cache.insert(word.to_string(), found);
        });
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Adds one page. Captures of another site are refused.
    pub fn add(&mut self, capture: Capture) -> Result<(), LearnError> {
        if capture.site != self.site {
            return Err(LearnError::WrongSite {
                url: capture.url,
                found: capture.site,
                expected: self.site.clone(),
            });
        }
        let page_index = self.pages.len() as u32;
        let lang = capture.lang.clone().unwrap_or_else(|| "en".into());
        let meta = &capture.meta;
        let meta_text: String = [
            &meta.title,
            &meta.og_title,
            &meta.twitter_title,
            &meta.description,
            &meta.og_description,
            &meta.twitter_description,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join(" \n ");
        let meta_terms = self.terms_of(&lang, &meta_text);
        let titles = title_variants(&capture);

        let first = self.blocks.len();
        let mut keys_on_page: HashSet<(u64, bool)> = HashSet::new();
        let mut headline: Option<(usize, f64)> = None;
        let mut headline_rank = 0.0;
        let use_cache = *self.cache_lang.get_or_insert_with(|| lang.clone()) == lang;
        for block in &capture.blocks {
            // Template text repeats on every page: analyse it once.
            let info = match self.text_cache.get(block.text.as_str()) {
                Some(info) if use_cache => info.clone(),
                _ => {
                    let normalized = normalize_text(&block.text);
                    let info = TextInfo {
                        key: hash_str(&normalized),
                        normalized: normalized.into(),
                        words: text::word_count(&block.text) as u32,
                        terms: self.terms_of(&lang, &block.text).into(),
                    };
                    if use_cache
                        && block.text.len() <= TEXT_CACHE_MAX_BYTES
                        && self.text_cache.len() < TEXT_CACHE_MAX
                    {
                        self.text_cache
                            .insert(block.text.clone().into(), info.clone());
                    }
                    info
                }
            };
            let normalized = &*info.normalized;
            if normalized.is_empty() {
                continue;
            }
            let chars = block.text.chars().count().max(1) as u32;
            let link_chars = (block.link_text_len as u32).min(chars);
            let link = link_chars * 2 >= chars;
            let text_key = info.key;
            keys_on_page.insert((text_key, link));
            let words = info.words;
            let index = self.blocks.len();
            if (words as usize) <= HEADLINE_MAX_WORDS {
                let sim = headline_similarity(normalized, &titles);
                // Blog titles are often links to their permalink, but the
                // same title in a "recent posts" list is one too: prefer
                // text over links, then the larger type.
                let font = block
                    .style
                    .get("font-size")
                    .and_then(|v| v.trim_end_matches("px").parse::<f64>().ok())
                    .unwrap_or(16.0);
                let rank = sim * if link { 0.95 } else { 1.0 } + font.clamp(0.0, 200.0) / 10_000.0;
                if sim >= HEADLINE_MIN_SIMILARITY && headline_rank < rank {
                    headline_rank = rank;
                    headline = Some((index, sim));
                }
            }
            let terms = info.terms;
            let steps: Box<[u32]> = block.selector.iter().map(|s| self.intern_step(s)).collect();
            let vector = self.vectoriser.add(block, capture.viewport.width);
            self.blocks.push(BlockData {
                page: page_index,
                text: block.text.clone().into_boxed_str(),
                text_key,
                link,
                words,
                chars,
                link_chars,
                terms,
                steps,
                node: block.node.clone().into_boxed_slice(),
                bounds: bounds_of(block),
                vector,
                template: false,
                cluster: None,
                anchor: 0,
            });
        }
        for key in keys_on_page {
            let entry = self.recurring.entry(key).or_insert((0, u32::MAX));
            if entry.1 != page_index {
                entry.0 += 1;
                entry.1 = page_index;
            }
        }
        let keep_html =
            (page_index as usize).is_multiple_of(self.html_stride) && !capture.html.is_empty();
        self.pages.push(PageData {
            url: capture.url,
            viewport: (capture.viewport.width, capture.viewport.height),
            meta_terms,
            html: keep_html.then_some(capture.html),
            first,
            len: self.blocks.len() - first,
            headline,
        });
        // Keep the source of an evenly spread sample only: when twice the
        // sample size is held, every other one is dropped.
        let held = self.pages.iter().filter(|p| p.html.is_some()).count();
        if held > 2 * self.params.selector_pages {
            self.html_stride *= 2;
            let stride = self.html_stride;
            for (i, page) in self.pages.iter_mut().enumerate() {
                if !i.is_multiple_of(stride) {
                    page.html = None;
                }
            }
        }
        Ok(())
    }

    /// Learns the rules from the pages added.
    pub fn learn(self) -> Result<Learned, LearnError> {
        let mut timings = vec![("read".to_string(), ms(self.started))];
        let params = self.params.clone();
        if self.pages.len() < params.min_pages {
            return Err(LearnError::TooFewPages {
                site: self.site,
                found: self.pages.len(),
                needed: params.min_pages,
            });
        }
        if self.blocks.is_empty() {
            return Err(LearnError::NoBlocks { site: self.site });
        }
        let started = Instant::now();
        let Learner {
            site,
            vectoriser,
            pages,
            mut blocks,
            steps,
            terms,
            recurring,
            ..
        } = self;
        let feature_count = vectoriser.feature_count();
        let (vectors, kinds) = vectoriser.finish();

        // Template: a text (with its link flag) on enough pages. With one
        // page nothing recurs.
        let min_pages = params.template_pages as u32;
        let mut template_texts = Vec::new();
        let mut seen_template = HashSet::new();
        let nonlink_keys: HashSet<u64> = recurring
            .keys()
            .filter(|(_, l)| !l)
            .map(|(k, _)| *k)
            .collect();
        for block in blocks.iter_mut() {
            let count = recurring
                .get(&(block.text_key, block.link))
                .map_or(0, |e| e.0);
            block.template = count >= min_pages;
            // Rules keep non-link template texts, and link texts that never
            // stand alone as text (a page's headline listed as a link on the
            // other pages is not boilerplate of its own page).
            if block.template
                && (!block.link || !nonlink_keys.contains(&block.text_key))
                && template_texts.len() < MAX_TEMPLATE_STRINGS
                && block.text.chars().count() <= MAX_TEMPLATE_CHARS
                && seen_template.insert(block.text_key)
            {
                template_texts.push(normalize_text(&block.text));
            }
        }
        timings.push(("template".into(), ms(started)));

        let started = Instant::now();
        let dbscan = cluster::DbscanParams {
            eps: params.eps,
            min_points: params.min_points,
            weights: features::Weights {
                path: params.path_weight,
                geometry: params.geometry_scale,
            },
        };
        let labels: Vec<Option<usize>> = match params.clusterer {
            Clusterer::Indexed => {
                let distinct = cluster::dbscan_indexed(&vectors, &kinds, dbscan);
                blocks.iter().map(|b| distinct[b.vector as usize]).collect()
            }
            Clusterer::Linfa => {
                let ids: Vec<u32> = blocks.iter().map(|b| b.vector).collect();
                cluster::dbscan_linfa(&vectors, &kinds, &ids, dbscan)?
            }
        };
        let clusters = labels.iter().flatten().max().map_or(0, |m| m + 1);
        for (block, label) in blocks.iter_mut().zip(labels) {
            block.cluster = label;
        }
        timings.push(("cluster".into(), ms(started)));

        let mut model = Model {
            site,
            pages,
            blocks,
            steps,
            terms,
            clusters,
            template_texts,
        };
        let started = Instant::now();
        select::split_by_anchor(&mut model);
        let mut scores = score::score_clusters(&model);
        timings.push(("score".into(), ms(started)));

        let started = Instant::now();
        let mut selection = select::select(&model, &scores);
        if select::adopt_noise(&mut model, &mut selection).is_some() {
            scores = score::score_clusters(&model);
        }
        timings.push(("select".into(), ms(started)));

        let started = Instant::now();
        let chosen = selectors::choose(&model, &scores, &selection, &params);
        for &c in &chosen.excluded_clusters {
            selection.roles[c] = select::Role::Excluded;
            selection.reasons[c] = "chrome inside the container, removed by an exclusion".into();
        }
        timings.push(("selectors".into(), ms(started)));

        let mut rules = Rules {
            format: FORMAT_VERSION,
            site: model.site.clone(),
            version: 0,
            learned_at: OffsetDateTime::now_utc(),
            pages: model.pages.len(),
            container: chosen.container,
            title: chosen.title,
            content: chosen.content,
            exclude: chosen.exclude,
            template: model.template_texts.clone(),
            expected_words: None,
        };
        rules
            .validate()
            .map_err(|e| LearnError::Internal(e.to_string()))?;
        rules.expected_words = expected_words(&rules, &chosen.pages);
        let report = report(
            &model,
            &scores,
            &selection,
            &chosen.by_cluster,
            vectors.len(),
            feature_count,
            chosen.sample_pages,
            timings,
        );
        Ok(Learned { rules, report })
    }
}

/// Median words the rules extract from the sample pages the selectors
/// were tested on; `None` without content rules.
fn expected_words(rules: &Rules, pages: &[crate::extract::Page]) -> Option<u32> {
    if rules.content.is_empty() {
        return None;
    }
    let mut words: Vec<u32> = pages
        .iter()
        .map(|page| {
            let out = page.extract_with_rules(rules);
            out.blocks.iter().map(|b| text::word_count(b) as u32).sum()
        })
        .collect();
    words.sort_unstable();
    words.get(words.len() / 2).copied()
}

/// Learns from a list of captures.
pub fn learn_site(
    site: &Site,
    captures: Vec<Capture>,
    params: &ValidParams,
) -> Result<Learned, LearnError> {
    let mut learner = Learner::new(site.clone(), params.clone());
    for capture in captures {
        learner.add(capture)?;
    }
    learner.learn()
}

#[allow(clippy::too_many_arguments)]
fn report(
    model: &Model,
    scores: &[score::Score],
    selection: &select::Selection,
    selectors: &HashMap<usize, Vec<String>>,
    distinct_vectors: usize,
    features: usize,
    sample_pages: usize,
    timings: Vec<(String, f64)>,
) -> Report {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); model.clusters];
    for (i, b) in model.blocks.iter().enumerate() {
        if let Some(c) = b.cluster {
            members[c].push(i);
        }
    }
    let mut clusters: Vec<ClusterReport> = (0..model.clusters)
        .map(|c| {
            let blocks = &members[c];
            let pages: HashSet<u32> = blocks.iter().map(|&b| model.blocks[b].page).collect();
            let mut samples = Vec::new();
            let mut seen = HashSet::new();
            for &b in blocks {
                let text = &model.blocks[b].text;
                if samples.len() < 3 && seen.insert(text.clone()) {
                    samples.push(truncate(text, 100));
                }
            }
            let mut signatures: HashMap<String, usize> = HashMap::new();
            for &b in blocks {
                *signatures
                    .entry(signature(model, &model.blocks[b]))
                    .or_default() += 1;
            }
            let signature = signatures
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
                .map(|(s, _)| s)
                .unwrap_or_default();
            ClusterReport {
                id: c,
                blocks: blocks.len(),
                pages: pages.len(),
                score: scores[c].clone(),
                role: selection.roles[c],
                reason: selection.reasons[c].clone(),
                selectors: selectors.get(&c).cloned().unwrap_or_default(),
                signature,
                samples,
            }
        })
        .collect();
    clusters.sort_by(|a, b| {
        b.score
            .total
            .total_cmp(&a.score.total)
            .then(a.id.cmp(&b.id))
    });
    Report {
        site: model.site.clone(),
        pages: model.pages.len(),
        blocks: model.blocks.len(),
        distinct_vectors,
        features,
        template_blocks: model.blocks.iter().filter(|b| b.template).count(),
        noise_blocks: model.blocks.iter().filter(|b| b.cluster.is_none()).count(),
        selector_pages: sample_pages,
        headline_pages: model.pages.iter().filter(|p| p.headline.is_some()).count(),
        clusters,
        timings,
    }
}

/// The last three rendered steps of a block, `div.entry > p`.
fn signature(model: &Model, block: &BlockData) -> String {
    let start = block.steps.len().saturating_sub(3);
    block.steps[start..]
        .iter()
        .map(|&s| {
            let step = &model.steps[s as usize];
            let mut out = step.tag.clone();
            for class in step.classes.iter().take(2) {
                out.push('.');
                out.push_str(class);
            }
            out
        })
        .collect::<Vec<_>>()
        .join(" > ")
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

fn hash_str(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

fn bounds_of(block: &Block) -> [f32; 4] {
    let b = &block.bounds;
    [b.x as f32, b.y as f32, b.width as f32, b.height as f32]
}

/// The page's title metadata in normal form, plus the pieces of `<title>`
/// split at the usual separators (`Headline | Site`).
fn title_variants(capture: &Capture) -> Vec<String> {
    let meta = &capture.meta;
    let mut out = Vec::new();
    for title in [&meta.og_title, &meta.twitter_title, &meta.title]
        .into_iter()
        .flatten()
    {
        let norm = normalize_text(title);
        if norm.is_empty() {
            continue;
        }
        for separator in [" | ", " - ", " – ", " — ", " :: ", " · ", " » ", ": "] {
            if norm.contains(separator) {
                out.extend(
                    norm.split(separator)
                        .map(str::trim)
                        .filter(|p| p.chars().count() >= 8)
                        .map(String::from),
                );
            }
        }
        out.push(norm);
    }
    out.sort();
    out.dedup();
    out
}

/// Best normalised Levenshtein similarity of a block to a title variant.
fn headline_similarity(block: &str, titles: &[String]) -> f64 {
    let mut best: f64 = 0.0;
    let len = block.chars().count();
    for title in titles {
        let tlen = title.chars().count();
        // Lower bounds of the edit distance that rule a pair out without
        // the O(n·m) work: the length difference, and for ASCII text the
        // characters one string has more of than the other.
        let longest = len.max(tlen).max(1);
        let allowed = ((1.0 - HEADLINE_MIN_SIMILARITY) * longest as f64).floor() as usize;
        if len.abs_diff(tlen) > allowed {
            continue;
        }
        if block.is_ascii() && title.is_ascii() {
            let mut counts = [0i32; 128];
            for b in block.bytes() {
                counts[b as usize] += 1;
            }
            for b in title.bytes() {
                counts[b as usize] -= 1;
            }
            let more: i32 = counts.iter().filter(|&&c| c > 0).sum();
            let fewer: i32 = -counts.iter().filter(|&&c| c < 0).sum::<i32>();
            if more.max(fewer) as usize > allowed {
                continue;
            }
        }
        best = best.max(strsim::normalized_levenshtein(block, title));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::normalize_text;
    use crate::testutil;

    const TITLES: [&str; 4] = [
        "Otters return to the river",
        "Night trains run again",
        "The bread oven is lit",
        "Frost arrives early in the valley",
    ];

    /// A page of a small blog: nav, an article with a per-page id (its
    /// paragraphs in an extra wrapper on odd pages), a sidebar listing every
    /// title as text, comments, a footer.
    fn page(i: usize) -> String {
        let title = TITLES[i];
        let words = title.to_lowercase();
        let body: String = (0..4)
            .map(|k| {
                format!(
                    "<p>Paragraph {k} of the story about {words}: the committee met on day {i}{k} and \
                     agreed that the work on {words} should continue through the winter months.</p>"
                )
            })
            .collect();
        let body = if i % 2 == 1 {
            format!("<div class=\"inner\">{body}</div>")
        } else {
            body
        };
        let sidebar: String = TITLES.iter().map(|t| format!("<li>{t}</li>")).collect();
        let comments: String = (0..3)
            .map(|k| {
                format!(
                    "<div class=\"comment\"><p>Reader {k} on page {i} says this was a fine read and \
                     asks when the next piece comes out, thanks for writing it.</p></div>"
                )
            })
            .collect();
        format!(
            "<html><head><title>{title}</title></head><body>\
             <nav class=\"menu\"><ul><li><a href=\"/\">Home</a></li><li><a href=\"/a\">About</a></li></ul></nav>\
             <main><article class=\"post\" id=\"post-{n}\"><h1>{title}</h1><div class=\"entry\">{body}</div></article>\
             <section class=\"comments\">{comments}</section></main>\
             <aside class=\"sidebar\"><ul class=\"recent\">{sidebar}</ul></aside>\
             <footer class=\"foot\"><p>Written by neighbours. Copyright 2026.</p></footer></body></html>",
            n = 3586 + i * 7
        )
    }

    fn learned() -> (Vec<String>, Learned) {
        let pages: Vec<String> = (0..TITLES.len()).map(page).collect();
        let captures = pages
            .iter()
            .enumerate()
            .map(|(i, html)| {
                testutil::capture(
                    "blog.test",
                    &format!("https://blog.test/{i}"),
                    TITLES[i],
                    html,
                )
            })
            .collect();
        let site = Site::new("blog.test").unwrap();
        (
            pages,
            learn_site(&site, captures, &ValidParams::default()).unwrap(),
        )
    }

    #[test]
    fn learns_the_article_from_pages_with_per_page_ids_and_extra_wrappers() {
        let (pages, learned) = learned();
        let rules = &learned.rules;
        assert!(!rules.content.is_empty());
        for rule in &rules.content {
            assert!(
                !rule.selector.contains("post-"),
                "per-page id in {}",
                rule.selector
            );
        }
        for (i, html) in pages.iter().enumerate() {
            let out = crate::extract::extract(html, rules);
            let text = out.text();
            for k in 0..4 {
                assert!(
                    text.contains(&format!("Paragraph {k} of the story")),
                    "page {i}: paragraph {k} missing: {text}"
                );
            }
            assert!(
                !text.contains("Reader"),
                "page {i}: comments extracted: {text}"
            );
            assert!(!text.contains("Copyright"), "page {i}: footer extracted");
            assert!(!text.contains("Home"), "page {i}: nav extracted");
            assert_eq!(out.title.as_deref(), Some(TITLES[i]));
        }
        // The footer recurs on every page: a template string.
        assert!(
            rules
                .template
                .contains(&normalize_text("Written by neighbours. Copyright 2026."))
        );
    }

    #[test]
    fn a_sidebar_listing_every_title_is_not_relevant() {
        let (_, learned) = learned();
        let by_sample = |needle: &str| {
            learned
                .report
                .clusters
                .iter()
                .find(|c| c.samples.iter().any(|s| s.contains(needle)))
                .unwrap_or_else(|| panic!("no cluster holds {needle}"))
        };
        let article = by_sample("Paragraph 0");
        let sidebar = by_sample("Night trains run again");
        assert!(article.score.relevance > 0.2, "{:?}", article.score);
        assert!(sidebar.score.relevance < 0.05, "{:?}", sidebar.score);
        assert!(article.score.total > sidebar.score.total);
        assert_eq!(article.role, select::Role::Content);
    }

    #[test]
    fn pages_without_source_still_learn_clusters_but_write_no_untested_selectors() {
        let site = Site::new("blog.test").unwrap();
        let captures = (0..TITLES.len())
            .map(|i| {
                let mut c = testutil::capture(
                    "blog.test",
                    &format!("https://blog.test/{i}"),
                    TITLES[i],
                    &page(i),
                );
                c.html.clear();
                c
            })
            .collect();
        let learned = learn_site(&site, captures, &ValidParams::default()).unwrap();
        assert_eq!(learned.report.selector_pages, 0);
        assert!(learned.rules.content.is_empty());
        assert!(
            learned
                .report
                .clusters
                .iter()
                .any(|c| c.role == select::Role::Content)
        );
        assert!(!learned.rules.template.is_empty());
    }

    #[test]
    fn too_few_pages_and_other_sites_are_refused() {
        let site = Site::new("blog.test").unwrap();
        let one = testutil::capture("blog.test", "https://blog.test/0", TITLES[0], &page(0));
        let err = learn_site(&site, vec![one], &ValidParams::default()).unwrap_err();
        assert!(
            matches!(err, LearnError::TooFewPages { found: 1, .. }),
            "{err}"
        );
        let other = testutil::capture("other.test", "https://other.test/0", TITLES[0], &page(0));
        let err = learn_site(&site, vec![other], &ValidParams::default()).unwrap_err();
        assert!(matches!(err, LearnError::WrongSite { .. }), "{err}");
    }
}
