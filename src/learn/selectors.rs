//! Selectors: turn the chosen clusters into CSS that works on raw HTML.
//!
//! The 2013 method wrote each cluster's full ancestor path with every id and
//! class seen; per-page ids, classes that scripts add at render time, an
//! extra wrapper or the browser's inserted `tbody` made those rules match
//! nothing on new pages. Here candidates are generated from each block's
//! rendered path (suffixes of one to three steps, the nearest id or class
//! anchor plus a descendant or child chain, the bare tag path as a last
//! resort) and every candidate is *tested* on the source of the training
//! pages, parsed as extraction parses it ([`crate::extract::Page`]). A block
//! is found again in the source by its element index path.
//!
//! A candidate is ranked by its mean F1 over the sample pages: recall
//! against the cluster's blocks, precision against all content blocks (a
//! selector that also picks another content cluster's paragraphs is not
//! wrong), minus a small penalty per step, so the simplest selector that
//! works wins and stable anchors beat long paths. Ids that differ per page
//! fail the test by themselves. Selectors ending on `a` are never written.
//!
//! Then: the container (nearest ancestor of the content that one simple
//! selector finds on every sample page), exclusions (chrome the content
//! selectors or the container would let in), and the title selector.

use std::collections::{HashMap, HashSet};

use ego_tree::NodeId;
use scraper::Selector;

use super::score::Score;
use super::select::{Role, Selection};
use super::{Model, ValidParams};
use crate::capture::SelectorStep;
use crate::extract::Page;
use crate::rules::{
    Container, ContentRule, ExcludeRule, TitleRule, normalize_text, parse_selector,
};

/// Selectors tried per cluster beyond the first (greedy additions).
const MAX_SELECTORS_PER_CLUSTER: usize = 3;
/// A greedy addition must raise the cluster's F1 by this much.
const MIN_GAIN: f64 = 0.02;
/// Penalty per selector step and per class or id.
const STEP_PENALTY: f64 = 0.01;
/// Most exclusion rules.
const MAX_EXCLUSIONS: usize = 12;
/// Exclusion candidates tested.
const MAX_EXCLUSION_CANDIDATES: usize = 60;
/// Share of sample pages a container or title selector must work on.
const MIN_PAGE_SHARE: f64 = 0.6;
/// Blocks per cluster used to generate candidates.
const MAX_CANDIDATE_BLOCKS: usize = 2000;

/// What was chosen.
#[derive(Default)]
pub struct Chosen {
    /// Container.
    pub container: Option<Container>,
    /// Title.
    pub title: Option<TitleRule>,
    /// Content rules.
    pub content: Vec<ContentRule>,
    /// Exclusions.
    pub exclude: Vec<ExcludeRule>,
    /// Selectors per cluster, for the report.
    pub by_cluster: HashMap<usize, Vec<String>>,
    /// Clusters found to be chrome inside the container.
    pub excluded_clusters: Vec<usize>,
    /// Sample pages parsed.
    pub sample_pages: usize,
    /// The parsed sample pages, when content selectors were chosen (the
    /// learner measures the rules on them once more).
    pub pages: Vec<Page>,
}

/// One parsed sample page and where the model's blocks are in it.
struct Sample {
    page: Page,
    /// Block index -> element.
    elements: HashMap<usize, NodeId>,
    /// Elements of content clusters (all of them).
    content: HashSet<NodeId>,
    /// The headline element.
    headline: Option<NodeId>,
    /// Content elements, the headline, and all their ancestors: an element
    /// here holds content, so excluding it would lose some.
    holders: HashSet<NodeId>,
    cache: HashMap<String, Vec<NodeId>>,
}

impl Sample {
    /// True when `node` is one of `roots` or inside one.
    fn under(&self, roots: &HashSet<NodeId>, node: NodeId) -> bool {
        roots.contains(&node) || self.page.ancestors(node).iter().any(|a| roots.contains(a))
    }

    /// The elements `selector` matches that have text (an image-only `<p>`
    /// matched or not changes nothing at extraction).
    fn select(&mut self, selector: &str, parsed: &Selector) -> Vec<NodeId> {
        if let Some(hit) = self.cache.get(selector) {
            return hit.clone();
        }
        let none = HashSet::new();
        let ids: Vec<NodeId> = self
            .page
            .select(parsed)
            .into_iter()
            .filter(|&id| !self.page.text(id, &none).is_empty())
            .collect();
        self.cache.insert(selector.to_string(), ids.clone());
        ids
    }
}

/// A candidate selector and its complexity.
#[derive(Debug, Clone, PartialEq)]
struct Candidate {
    css: String,
    complexity: f64,
}

/// Chooses all selectors.
pub fn choose(
    model: &Model,
    scores: &[Score],
    selection: &Selection,
    params: &ValidParams,
) -> Chosen {
    let mut chosen = Chosen::default();
    let content_clusters = selection.content();
    let mut samples = samples(model, selection, params.selector_pages);
    chosen.sample_pages = samples.len();
    if samples.is_empty() || content_clusters.is_empty() {
        return chosen;
    }

    // Content selectors, best cluster first.
    let mut ordered = content_clusters.clone();
    ordered.sort_by(|&a, &b| scores[b].total.total_cmp(&scores[a].total));
    for &c in &ordered {
        let targets: Vec<HashSet<NodeId>> = samples
            .iter()
            .map(|s| {
                s.elements
                    .iter()
                    .filter(|(b, _)| model.blocks[**b].cluster == Some(c))
                    .map(|(_, e)| *e)
                    .collect()
            })
            .collect();
        if targets.iter().all(HashSet::is_empty) {
            continue;
        }
        let candidates = generate(
            model,
            model
                .blocks
                .iter()
                .filter(|b| b.cluster == Some(c))
                .map(|b| &b.steps[..]),
            params.candidates,
            false,
        );
        let picked = cover(&mut samples, &targets, &candidates, params.min_selector_f1);
        for (css, f1, pages, blocks) in picked {
            chosen.by_cluster.entry(c).or_default().push(css.clone());
            if chosen.content.iter().any(|r| r.selector == css) {
                continue;
            }
            chosen.content.push(ContentRule {
                selector: css,
                score: round3(scores[c].total),
                confidence: round3(f1),
                pages,
                blocks,
                cluster: c,
            });
        }
    }
    if chosen.content.is_empty() {
        return chosen;
    }

    // What the content rules pick on each sample page, split into content
    // and leaks (matches that are not content blocks).
    let parsed: Vec<(String, Selector)> = chosen
        .content
        .iter()
        .filter_map(|r| {
            parse_selector(&r.selector)
                .ok()
                .map(|s| (r.selector.clone(), s))
        })
        .collect();
    let mut picked_content: Vec<Vec<NodeId>> = Vec::new();
    let mut leaks: Vec<HashSet<NodeId>> = Vec::new();
    for s in samples.iter_mut() {
        let mut good = Vec::new();
        let mut bad = HashSet::new();
        for (css, sel) in &parsed {
            for id in s.select(css, sel) {
                if s.content.contains(&id) {
                    good.push(id);
                } else {
                    bad.insert(id);
                }
            }
        }
        picked_content.push(good);
        leaks.push(bad);
    }

    chosen.container = container(&mut samples, &picked_content);
    if let Some(container) = &chosen.container
        && let Ok(sel) = parse_selector(&container.selector)
    {
        // Non-content blocks inside the container are chrome to exclude.
        for (i, s) in samples.iter_mut().enumerate() {
            let roots: HashSet<NodeId> = s.select(&container.selector, &sel).into_iter().collect();
            let inside: Vec<NodeId> = s
                .elements
                .iter()
                .filter(|(b, e)| {
                    let role = model.blocks[**b].cluster.map(|c| selection.roles[c]);
                    !matches!(role, Some(Role::Content) | Some(Role::Title))
                        && !s.content.contains(e)
                        && Some(**e) != s.headline
                        && s.under(&roots, **e)
                })
                .map(|(_, e)| *e)
                .collect();
            leaks[i].extend(inside);
        }
    }
    // A leak that holds content (a wrapper) is not a leak.
    for (i, s) in samples.iter().enumerate() {
        leaks[i].retain(|l| !s.holders.contains(l));
    }
    chosen.exclude = exclusions(&mut samples, &leaks);
    chosen.excluded_clusters = excluded_clusters(model, &mut samples, &chosen.exclude, selection);
    chosen.title = title(model, &mut samples);
    chosen.pages = samples.into_iter().map(|s| s.page).collect();
    chosen
}

/// The sample pages: up to `n` evenly spread pages with source, parsed.
fn samples(model: &Model, selection: &Selection, n: usize) -> Vec<Sample> {
    let with_html: Vec<usize> = (0..model.pages.len())
        .filter(|&p| model.pages[p].html.is_some())
        .collect();
    let step = (with_html.len() as f64 / n as f64).max(1.0);
    let picks: Vec<usize> = (0..n.min(with_html.len()))
        .map(|i| with_html[(i as f64 * step) as usize])
        .collect();
    let content: HashSet<usize> = selection.content().into_iter().collect();
    picks
        .into_iter()
        .map(|p| {
            let data = &model.pages[p];
            let page = Page::parse(data.html.as_deref().unwrap_or_default());
            let mut elements = HashMap::new();
            let mut content_elements = HashSet::new();
            let mut by_text: Option<HashMap<(String, String), Vec<NodeId>>> = None;
            let mut used = HashSet::new();
            for b in model.page_blocks(p) {
                let block = &model.blocks[b];
                let tags = model.tags(block);
                let text = normalize_text(&block.text);
                // By index path first, checked by text: scripts that insert
                // or move elements shift the paths of what follows.
                let by_path = page
                    .element_at(&block.node, &tags)
                    .filter(|&e| normalize_text(&page.text(e, &HashSet::new())).contains(&text));
                let found = by_path.or_else(|| {
                    let index = by_text.get_or_insert_with(|| text_index(&page));
                    let tag = tags.last().copied().unwrap_or_default();
                    index
                        .get(&(tag.to_string(), text.clone()))
                        .and_then(|ids| ids.iter().find(|id| !used.contains(*id)).copied())
                });
                if let Some(e) = found {
                    used.insert(e);
                    elements.insert(b, e);
                    if block.cluster.is_some_and(|c| content.contains(&c)) {
                        content_elements.insert(e);
                    }
                }
            }
            let headline = data.headline.and_then(|(h, _)| elements.get(&h).copied());
            let mut holders = HashSet::new();
            for &e in content_elements.iter().chain(headline.iter()) {
                if holders.insert(e) {
                    holders.extend(page.ancestors(e));
                }
            }
            Sample {
                page,
                elements,
                content: content_elements,
                headline,
                holders,
                cache: HashMap::new(),
            }
        })
        .collect()
}

/// Elements of the source by (tag, normalised text), for blocks whose index
/// path no longer leads to them.
fn text_index(page: &Page) -> HashMap<(String, String), Vec<NodeId>> {
    let mut index: HashMap<(String, String), Vec<NodeId>> = HashMap::new();
    let none = HashSet::new();
    for e in page
        .root()
        .descendants()
        .filter_map(scraper::ElementRef::wrap)
    {
        let text = normalize_text(&page.text(e.id(), &none));
        if !text.is_empty() && text.len() <= 20_000 {
            index
                .entry((e.value().name().to_string(), text))
                .or_default()
                .push(e.id());
        }
    }
    index
}

/// Candidate selectors from rendered paths, most frequent first.
fn generate<'a>(
    model: &Model,
    paths: impl Iterator<Item = &'a [u32]>,
    limit: usize,
    allow_links: bool,
) -> Vec<Candidate> {
    let mut counts: HashMap<String, (usize, f64, usize)> = HashMap::new();
    for (order, path) in paths.take(MAX_CANDIDATE_BLOCKS).enumerate() {
        let steps: Vec<&SelectorStep> = path.iter().map(|&s| &model.steps[s as usize]).collect();
        let mut seen = HashSet::new();
        for c in candidates_for(&steps, allow_links) {
            if seen.insert(c.css.clone()) {
                let e = counts.entry(c.css).or_insert((0, c.complexity, order));
                e.0 += 1;
            }
        }
    }
    let mut list: Vec<(String, (usize, f64, usize))> = counts.into_iter().collect();
    list.sort_by(|a, b| {
        b.1.0
            .cmp(&a.1.0)
            .then(a.1.1.total_cmp(&b.1.1))
            .then(a.0.cmp(&b.0))
    });
    list.into_iter()
        .take(limit)
        .map(|(css, (_, complexity, _))| Candidate { css, complexity })
        .collect()
}

/// Candidates for one block path (`<html>` first).
fn candidates_for(steps: &[&SelectorStep], allow_links: bool) -> Vec<Candidate> {
    let mut out = Vec::new();
    let Some(last) = steps.last() else { return out };
    if !allow_links && last.tag == "a" || !is_ident(&last.tag) {
        return out;
    }
    let k = steps.len() - 1;
    let mut lasts = vec![(last.tag.clone(), 1.0)];
    for class in last.classes.iter().filter(|c| is_stable_ident(c)) {
        lasts.push((format!("{}.{}", last.tag, class), 1.5));
    }
    for (l, cl) in &lasts {
        out.push(Candidate {
            css: l.clone(),
            complexity: *cl,
        });
    }
    // Anchors: an ancestor's id or class, then the block by descent or by
    // a chain of children.
    for j in (1..k).rev().take(10) {
        let step = steps[j];
        let mut anchors = Vec::new();
        if let Some(id) = step.id.as_deref().filter(|i| is_stable_ident(i)) {
            anchors.push((format!("#{id}"), 1.5));
        }
        for class in step.classes.iter().filter(|c| is_stable_ident(c)) {
            anchors.push((format!("{}.{}", step.tag, class), 1.5));
        }
        if j == k - 1 && is_ident(&step.tag) && !matches!(step.tag.as_str(), "html" | "body") {
            anchors.push((step.tag.clone(), 1.0));
        }
        let between: Vec<&str> = steps[j + 1..k].iter().map(|s| s.tag.as_str()).collect();
        for (anchor, ca) in &anchors {
            for (l, cl) in &lasts {
                let distance = (k - j) as f64;
                out.push(Candidate {
                    css: format!("{anchor} {l}"),
                    complexity: ca + cl + 0.1 * distance,
                });
                if k - j <= 3 && between.iter().all(|t| is_ident(t)) {
                    let mut chain = anchor.clone();
                    for t in &between {
                        chain.push_str(" > ");
                        chain.push_str(t);
                    }
                    out.push(Candidate {
                        css: format!("{chain} > {l}"),
                        complexity: ca + cl + between.len() as f64 + 0.5,
                    });
                }
            }
        }
    }
    // Bare tag suffixes, then the whole tag path as a last resort.
    let tags: Vec<&str> = steps.iter().map(|s| s.tag.as_str()).collect();
    if tags.iter().all(|t| is_ident(t)) {
        for n in 2..=3.min(tags.len()) {
            out.push(Candidate {
                css: tags[tags.len() - n..].join(" > "),
                complexity: n as f64 + 0.5,
            });
        }
        out.push(Candidate {
            css: tags.join(" > "),
            complexity: tags.len() as f64 + 2.0,
        });
    }
    out
}

/// A CSS identifier we can write without escaping.
fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '-' && s.len() > 1)
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !s.starts_with("--")
        && !s[1..].starts_with(|c: char| c.is_ascii_digit() && first == '-')
}

/// An identifier that does not look generated per page (`post-3586`,
/// `ember123`): at most two digits in a row.
fn is_stable_ident(s: &str) -> bool {
    if !is_ident(s) {
        return false;
    }
    let mut run = 0;
    for c in s.chars() {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        if run > 2 {
            return false;
        }
    }
    true
}

/// F1 of a set of matched elements on one page.
fn page_f1(
    matched: &HashSet<NodeId>,
    targets: &HashSet<NodeId>,
    content: &HashSet<NodeId>,
) -> Option<f64> {
    let good = matched
        .iter()
        .filter(|m| content.contains(m) || targets.contains(m))
        .count();
    if targets.is_empty() {
        // The cluster is not on this page: only junk counts, against it.
        return (matched.len() > good).then(|| good as f64 / matched.len() as f64);
    }
    let tp = matched.iter().filter(|m| targets.contains(m)).count();
    if tp == 0 {
        return Some(0.0);
    }
    let precision = good as f64 / matched.len() as f64;
    let recall = tp as f64 / targets.len() as f64;
    Some(2.0 * precision * recall / (precision + recall))
}

/// Mean F1 over the sample pages of the union of `selectors`.
fn evaluate(
    samples: &mut [Sample],
    targets: &[HashSet<NodeId>],
    selectors: &[(&str, &Selector)],
) -> (f64, usize, usize) {
    let (mut sum, mut pages_counted, mut pages_matched, mut blocks) = (0.0, 0, 0, 0);
    for (s, t) in samples.iter_mut().zip(targets) {
        let mut matched = HashSet::new();
        for (css, sel) in selectors {
            matched.extend(s.select(css, sel));
        }
        if !matched.is_empty() {
            pages_matched += 1;
        }
        blocks += matched.iter().filter(|m| t.contains(m)).count();
        if let Some(f1) = page_f1(&matched, t, &s.content) {
            sum += f1;
            pages_counted += 1;
        }
    }
    let mean = if pages_counted > 0 {
        sum / pages_counted as f64
    } else {
        0.0
    };
    (mean, pages_matched, blocks)
}

/// Picks the best candidate, then greedily adds others while the union's
/// F1 rises. Returns (selector, F1 of the union so far, pages, blocks).
fn cover(
    samples: &mut [Sample],
    targets: &[HashSet<NodeId>],
    candidates: &[Candidate],
    min_f1: f64,
) -> Vec<(String, f64, usize, usize)> {
    let parsed: Vec<(&Candidate, Selector)> = candidates
        .iter()
        .filter_map(|c| parse_selector(&c.css).ok().map(|s| (c, s)))
        .collect();
    let mut picked: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut best_f1 = 0.0;
    for _ in 0..MAX_SELECTORS_PER_CLUSTER {
        let mut best: Option<(usize, f64, f64, usize, usize)> = None; // index, rank, f1, pages, blocks
        for (i, (c, sel)) in parsed.iter().enumerate() {
            if picked.contains(&i) {
                continue;
            }
            let mut set: Vec<(&str, &Selector)> = picked
                .iter()
                .map(|&p| (parsed[p].0.css.as_str(), &parsed[p].1))
                .collect();
            set.push((c.css.as_str(), sel));
            let (f1, pages, blocks) = evaluate(samples, targets, &set);
            let rank = f1 - STEP_PENALTY * c.complexity;
            if best.is_none_or(|b| rank > b.1) {
                best = Some((i, rank, f1, pages, blocks));
            }
        }
        let Some((i, _, f1, pages, blocks)) = best else {
            break;
        };
        let enough = if picked.is_empty() {
            f1 >= min_f1
        } else {
            f1 >= best_f1 + MIN_GAIN
        };
        if !enough {
            break;
        }
        picked.push(i);
        best_f1 = f1;
        out.push((parsed[i].0.css.clone(), f1, pages, blocks));
        if f1 >= 0.999 {
            break;
        }
    }
    out
}

/// Lowest common ancestor of `ids`.
fn common_ancestor(page: &Page, ids: &[NodeId]) -> Option<NodeId> {
    let first = *ids.first()?;
    let mut chain: Vec<NodeId> = vec![first];
    chain.extend(page.ancestors(first));
    let mut best = 0;
    for &id in &ids[1..] {
        while best < chain.len() && !page.contains(chain[best], id) {
            best += 1;
        }
    }
    chain.get(best).copied()
}

/// Simple selectors for an element of the source: `#id`, `tag.class`, `tag`.
fn simple_selectors(page: &Page, id: NodeId) -> Vec<String> {
    let Some(e) = page.element(id) else {
        return Vec::new();
    };
    let v = e.value();
    let mut out = Vec::new();
    if let Some(i) = v.id().filter(|i| is_stable_ident(i)) {
        out.push(format!("#{i}"));
    }
    for class in v.classes().filter(|c| is_stable_ident(c)) {
        out.push(format!("{}.{}", v.name(), class));
    }
    if !matches!(v.name(), "html" | "body") && is_ident(v.name()) {
        out.push(v.name().to_string());
    }
    out
}

/// The container: the nearest ancestor of the content that one simple
/// selector finds, alone, on most sample pages.
fn container(samples: &mut [Sample], content: &[Vec<NodeId>]) -> Option<Container> {
    let mut candidates: Vec<(String, usize)> = Vec::new(); // selector, depth rank
    let mut lcas = Vec::new();
    for (s, ids) in samples.iter().zip(content) {
        let lca = common_ancestor(&s.page, ids);
        lcas.push(lca);
        let Some(lca) = lca else { continue };
        let mut chain = vec![lca];
        chain.extend(s.page.ancestors(lca));
        for (depth, id) in chain.iter().enumerate() {
            for css in simple_selectors(&s.page, *id) {
                if !candidates.iter().any(|(c, _)| *c == css) {
                    candidates.push((css, depth));
                }
            }
        }
    }
    let pages_with_content = content.iter().filter(|c| !c.is_empty()).count();
    let mut best: Option<(String, usize, usize)> = None; // css, ok pages, depth
    for (css, depth) in candidates {
        let Ok(sel) = parse_selector(&css) else {
            continue;
        };
        let mut ok = 0;
        for (s, ids) in samples.iter_mut().zip(content) {
            if ids.is_empty() {
                continue;
            }
            let hits = s.select(&css, &sel);
            if hits.len() == 1 && ids.iter().all(|&c| s.page.contains(hits[0], c)) {
                ok += 1;
            }
        }
        if best
            .as_ref()
            .is_none_or(|b| ok > b.1 || ok == b.1 && depth < b.2)
        {
            best = Some((css, ok, depth));
        }
    }
    let (selector, pages, _) = best?;
    (pages as f64 >= MIN_PAGE_SHARE * pages_with_content as f64 && pages > 0)
        .then_some(Container { selector, pages })
}

/// Exclusion rules covering the leaks, never touching content.
fn exclusions(samples: &mut [Sample], leaks: &[HashSet<NodeId>]) -> Vec<ExcludeRule> {
    // Candidates from the leaks and their nearest ancestors, most leaks
    // covered first.
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (s, page_leaks) in samples.iter().zip(leaks) {
        for &leak in page_leaks {
            let mut chain = vec![leak];
            chain.extend(s.page.ancestors(leak).into_iter().take(4));
            let mut seen = HashSet::new();
            for id in chain {
                for css in simple_selectors(&s.page, id) {
                    // A bare tag is too blunt for an exclusion.
                    if css.contains(['.', '#']) && seen.insert(css.clone()) {
                        *counts.entry(css).or_default() += 1;
                    }
                }
            }
        }
    }
    let mut candidates: Vec<(String, usize)> =
        counts.into_iter().filter(|(_, n)| *n >= 2).collect();
    candidates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let candidates: Vec<String> = candidates
        .into_iter()
        .take(MAX_EXCLUSION_CANDIDATES)
        .map(|(c, _)| c)
        .collect();
    let mut remaining: Vec<HashSet<NodeId>> = leaks.to_vec();
    let mut rules = Vec::new();
    while rules.len() < MAX_EXCLUSIONS {
        let mut best: Option<(String, usize, usize)> = None; // css, covered, pages
        for css in &candidates {
            let Ok(sel) = parse_selector(css) else {
                continue;
            };
            let (mut covered, mut pages, mut safe) = (0, 0, true);
            for (s, rem) in samples.iter_mut().zip(&remaining) {
                let hits = s.select(css, &sel);
                if hits.iter().any(|h| s.holders.contains(h)) {
                    safe = false;
                    break;
                }
                let hit_set: HashSet<NodeId> = hits.iter().copied().collect();
                let n = rem.iter().filter(|&&l| s.under(&hit_set, l)).count();
                covered += n;
                if !hits.is_empty() {
                    pages += 1;
                }
            }
            if safe && covered >= 2 && best.as_ref().is_none_or(|b| covered > b.1) {
                best = Some((css.clone(), covered, pages));
            }
        }
        let Some((css, covered, pages)) = best else {
            break;
        };
        if let Ok(sel) = parse_selector(&css) {
            for (s, rem) in samples.iter_mut().zip(remaining.iter_mut()) {
                let hits = s.select(&css, &sel);
                let hit_set: HashSet<NodeId> = hits.into_iter().collect();
                rem.retain(|&l| !s.under(&hit_set, l));
            }
        }
        rules.push(ExcludeRule {
            selector: css,
            pages,
            blocks: covered,
        });
    }
    rules
}

/// Clusters whose blocks the exclusions remove, mostly.
fn excluded_clusters(
    model: &Model,
    samples: &mut [Sample],
    exclude: &[ExcludeRule],
    selection: &Selection,
) -> Vec<usize> {
    let mut hit: HashMap<usize, (usize, usize)> = HashMap::new();
    for s in samples.iter_mut() {
        let mut roots = HashSet::new();
        for rule in exclude {
            if let Ok(sel) = parse_selector(&rule.selector) {
                roots.extend(s.select(&rule.selector, &sel));
            }
        }
        for (&b, &e) in &s.elements {
            let Some(c) = model.blocks[b].cluster else {
                continue;
            };
            if selection.roles[c] != Role::Other {
                continue;
            }
            let entry = hit.entry(c).or_default();
            entry.1 += 1;
            if s.under(&roots, e) {
                entry.0 += 1;
            }
        }
    }
    let mut out: Vec<usize> = hit
        .into_iter()
        .filter(|(_, (h, n))| *h * 2 > *n)
        .map(|(c, _)| c)
        .collect();
    out.sort_unstable();
    out
}

/// The title selector: its first match is the headline on most pages.
fn title(model: &Model, samples: &mut [Sample]) -> Option<TitleRule> {
    let headlines: Vec<usize> = model
        .pages
        .iter()
        .filter_map(|p| p.headline.map(|h| h.0))
        .collect();
    if headlines.is_empty() {
        return None;
    }
    let candidates = generate(
        model,
        headlines.iter().map(|&h| &model.blocks[h].steps[..]),
        40,
        false,
    );
    let with_headline = samples.iter().filter(|s| s.headline.is_some()).count();
    let mut best: Option<(String, usize, f64)> = None;
    for c in candidates {
        let Ok(sel) = parse_selector(&c.css) else {
            continue;
        };
        let mut ok = 0;
        for s in samples.iter_mut() {
            let Some(h) = s.headline else { continue };
            if s.select(&c.css, &sel).first() == Some(&h) {
                ok += 1;
            }
        }
        let rank = ok as f64 - STEP_PENALTY * c.complexity;
        if best
            .as_ref()
            .is_none_or(|b| rank > b.1 as f64 - STEP_PENALTY * b.2)
        {
            best = Some((c.css, ok, c.complexity));
        }
    }
    let (selector, pages, _) = best?;
    if pages == 0 || (pages as f64) < MIN_PAGE_SHARE * with_headline as f64 {
        return None;
    }
    let sims: Vec<f64> = model
        .pages
        .iter()
        .filter_map(|p| p.headline.map(|h| h.1))
        .collect();
    Some(TitleRule {
        selector,
        pages,
        similarity: round3(sims.iter().sum::<f64>() / sims.len() as f64),
    })
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(tag: &str, id: Option<&str>, classes: &[&str]) -> SelectorStep {
        SelectorStep {
            tag: tag.into(),
            id: id.map(String::from),
            classes: classes.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn per_page_ids_and_generated_classes_are_not_anchors() {
        assert!(is_stable_ident("story-body"));
        assert!(!is_stable_ident("post-3586"));
        assert!(!is_stable_ident("ember123"));
        assert!(is_stable_ident("h2"));
        assert!(!is_ident("1col"));
        assert!(!is_ident("a:b"));
    }

    #[test]
    fn candidates_use_anchors_suffixes_and_never_end_on_links() {
        let steps = [
            step("html", None, &[]),
            step("body", None, &[]),
            step("main", Some("post-3586"), &["post"]),
            step("div", None, &["entry"]),
            step("p", None, &[]),
        ];
        let refs: Vec<&SelectorStep> = steps.iter().collect();
        let css: Vec<String> = candidates_for(&refs, false)
            .into_iter()
            .map(|c| c.css)
            .collect();
        for want in [
            "p",
            "div.entry p",
            "div.entry > p",
            "main.post p",
            "main.post > div > p",
            "div > p",
            "html > body > main > div > p",
        ] {
            assert!(
                css.contains(&want.to_string()),
                "{want} missing from {css:?}"
            );
        }
        assert!(!css.iter().any(|c| c.contains("3586")), "{css:?}");
        let link = [
            step("html", None, &[]),
            step("body", None, &[]),
            step("a", None, &[]),
        ];
        let refs: Vec<&SelectorStep> = link.iter().collect();
        assert!(candidates_for(&refs, false).is_empty());
    }

    #[test]
    fn f1_counts_other_content_as_precise() {
        let page = Page::parse("<p>a</p><p>b</p><p>c</p>");
        let sel = parse_selector("p").unwrap();
        let ps = page.select(&sel);
        let targets: HashSet<NodeId> = ps[..1].iter().copied().collect();
        let content: HashSet<NodeId> = ps[..2].iter().copied().collect();
        let matched: HashSet<NodeId> = ps.iter().copied().collect();
        // recall 1, precision 2/3
        let f1 = page_f1(&matched, &targets, &content).unwrap();
        assert!((f1 - 0.8).abs() < 1e-9, "{f1}");
    }
}
