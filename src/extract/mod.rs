//! Extract: apply a site's [`Rules`] to a page's HTML, without a browser.
//!
//! Pure and synchronous: bytes or text plus rules in, an [`Extraction`] out.
//! The learner uses the same parse ([`Page`]) to test candidate selectors on
//! the training pages' source, so a rule behaves at extraction exactly as it
//! did when it was chosen (html5ever semantics: `tbody` is inserted, scripts
//! do not run, classes added by scripts do not exist).

use std::collections::{HashMap, HashSet};

use ego_tree::NodeId;
use scraper::{ElementRef, Html, Node, Selector};
use serde::Serialize;

use crate::rules::{Rules, normalize_text, parse_selector};

mod lexer;
mod stream;

pub use stream::tokens_only;

/// Below this share of the words the rules extract on the training pages,
/// a page gets the fallback too.
const FALLBACK_SHARE: f64 = 0.35;

/// Below this share of the words in their container, the rules missed
/// part of it: the container's text is used instead.
const CONTAINER_SHARE: f64 = 0.6;

/// Elements whose text is never page text.
pub(crate) const SKIPPED_TAGS: &[&str] =
    &["script", "style", "noscript", "template", "head", "title"];

/// A parsed page.
pub struct Page {
    html: Html,
}

/// What extraction found on one page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Extraction {
    /// The title rule's text, when it matched.
    pub title: Option<String>,
    /// Text blocks in document order, title first, whitespace normalised.
    pub blocks: Vec<String>,
    /// Each rule and how many elements it matched.
    pub matched: Vec<RuleMatch>,
    /// Why the text came from the single-page fallback instead of the
    /// rules, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// How many elements one rule matched on the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleMatch {
    /// `container`, `title`, `content` or `exclude`.
    pub kind: &'static str,
    /// The selector.
    pub selector: String,
    /// Elements matched.
    pub count: usize,
}

impl Extraction {
    /// The rules' extraction, title first.
    fn of_rules(title: Option<String>, blocks: Vec<String>, matched: Vec<RuleMatch>) -> Extraction {
        let mut out = Extraction {
            title,
            blocks,
            matched,
            fallback: None,
        };
        put_title_first(&mut out);
        out
    }

    /// The main text: blocks separated by blank lines.
    pub fn text(&self) -> String {
        self.blocks.join("\n\n")
    }

    /// True when no content rule matched anything.
    pub fn content_matched_nothing(&self) -> bool {
        self.matched
            .iter()
            .filter(|m| m.kind == "content")
            .all(|m| m.count == 0)
    }
}

impl Page {
    /// Parses an HTML document (never fails: html5ever repairs what it must).
    pub fn parse(html: &str) -> Page {
        Page {
            html: Html::parse_document(html),
        }
    }

    /// The `<html>` element.
    pub fn root(&self) -> ElementRef<'_> {
        self.html.root_element()
    }

    /// The element at `path`: for each step from `<html>` down, its index
    /// among its parent's element children (the capture's `node` path).
    /// `None` when the static parse has no such element or its tag differs
    /// from `tags` (the page's scripts changed the tree).
    pub fn element_at(&self, path: &[u32], tags: &[&str]) -> Option<NodeId> {
        let mut element = self.root();
        if path.first() != Some(&0) || tags.first().is_some_and(|t| *t != element.value().name()) {
            return None;
        }
        for (depth, &index) in path.iter().enumerate().skip(1) {
            element = element.child_elements().nth(index as usize)?;
            if tags
                .get(depth)
                .is_some_and(|t| *t != element.value().name())
            {
                return None;
            }
        }
        Some(element.id())
    }

    /// An element by id.
    pub fn element(&self, id: NodeId) -> Option<ElementRef<'_>> {
        self.html.tree.get(id).and_then(ElementRef::wrap)
    }

    /// Every element matching `selector`, in document order.
    pub fn select(&self, selector: &Selector) -> Vec<NodeId> {
        self.html.select(selector).map(|e| e.id()).collect()
    }

    /// True when `ancestor` is `node` or contains it.
    pub fn contains(&self, ancestor: NodeId, node: NodeId) -> bool {
        if ancestor == node {
            return true;
        }
        let Some(node) = self.html.tree.get(node) else {
            return false;
        };
        node.ancestors().any(|a| a.id() == ancestor)
    }

    /// Ids of the element's ancestors, nearest first, up to `<html>`.
    pub fn ancestors(&self, id: NodeId) -> Vec<NodeId> {
        match self.html.tree.get(id) {
            Some(node) => node
                .ancestors()
                .filter(|a| a.value().is_element())
                .map(|a| a.id())
                .collect(),
            None => Vec::new(),
        }
    }

    /// The element's visible text, whitespace normalised, skipping scripts,
    /// styles, hidden elements and the subtrees in `skip`.
    pub fn text(&self, id: NodeId, skip: &HashSet<NodeId>) -> String {
        let mut collector = BlockCollector::default();
        if let Some(node) = self.html.tree.get(id) {
            collector.walk(node, skip, false);
        }
        collector.flush();
        let texts: Vec<String> = collector.blocks.into_iter().map(|(text, _)| text).collect();
        texts.join(" ")
    }

    /// Applies `rules`; where they match nothing, or far less than on the
    /// training pages, falls back to a single-page extractor (Readability,
    /// via `dom_smoothie`) on the page with the site's template strings and
    /// exclusions removed, and keeps whichever found more.
    pub fn extract(&self, rules: &Rules) -> Extraction {
        let Applied {
            extraction: mut out,
            container,
            excluded,
        } = self.apply(rules);
        let words: usize = out.blocks.iter().map(|b| word_count(b)).sum();
        let reason = fallback_reason(rules, &out, words);
        // The container's own text, computed once: when no reason yet, only
        // past a cheap bound (its raw text, template strings still in, holds
        // at least as many words as its filtered blocks).
        let held = container.and_then(|root| {
            if reason.is_none() {
                let raw = word_count(&self.text(root, &excluded));
                if !misses_container(words, raw) {
                    return None;
                }
            }
            self.container_blocks(root, &excluded, rules)
        });
        let held_words: usize = held.iter().flatten().map(|b| word_count(b)).sum();
        // The rules found much less than their container holds: text in a
        // part of the container the training pages left empty.
        let reason = reason.or_else(|| {
            misses_container(words, held_words).then(|| {
                format!(
                    "rules for {} matched {words} of the {held_words} words in their container",
                    rules.site
                )
            })
        });
        let Some(reason) = reason else { return out };
        if let Some(blocks) = held
            && held_words > words
            && covers(&blocks, &out.blocks, FALLBACK_COVER)
        {
            out.blocks = blocks;
            put_title_first(&mut out);
            out.fallback = Some(reason);
            return out;
        }
        let Some(blocks) = self.fallback_blocks(rules) else {
            return out;
        };
        // The fallback must find more; and when the rules found a real
        // amount of text, hold most of it: a Readability pick elsewhere on
        // the page (a comment thread longer than a short article) is not
        // better than the rules' article.
        let fallback_words: usize = blocks.iter().map(|b| word_count(b)).sum();
        let little = rules
            .expected_words
            .is_none_or(|e| (words as f64) < FALLBACK_LITTLE * f64::from(e));
        if fallback_words > words && (little || covers(&blocks, &out.blocks, FALLBACK_COVER)) {
            out.blocks = blocks;
            put_title_first(&mut out);
            out.fallback = Some(reason);
        }
        out
    }

    /// The text blocks of the container `root`: exclusions, template
    /// strings and link lists left out.
    fn container_blocks(
        &self,
        root: NodeId,
        skip: &HashSet<NodeId>,
        rules: &Rules,
    ) -> Option<Vec<String>> {
        let template: HashSet<&str> = rules.template.iter().map(String::as_str).collect();
        let mut collector = BlockCollector::default();
        collector.walk(self.html.tree.get(root)?, skip, false);
        collector.flush();
        let blocks: Vec<String> = collector
            .blocks
            .into_iter()
            .filter(|(text, link_chars)| {
                *link_chars * 2 < text.chars().count()
                    && !template.contains(normalize_text(text).as_str())
            })
            .map(|(text, _)| text)
            .collect();
        (!blocks.is_empty()).then_some(blocks)
    }

    /// The single-page extractor's blocks, on the page without template
    /// strings and exclusions (on the whole page when that leaves nothing).
    fn fallback_blocks(&self, rules: &Rules) -> Option<Vec<String>> {
        let cleaned = self.without_boilerplate(rules);
        readability(&cleaned).or_else(|| readability(&self.html.html()))
    }

    /// The page's HTML without exclusion matches and without elements whose
    /// whole text is one of the site's template strings.
    fn without_boilerplate(&self, rules: &Rules) -> String {
        let template: HashSet<&str> = rules.template.iter().map(String::as_str).collect();
        let none = HashSet::new();
        let mut remove: Vec<NodeId> = Vec::new();
        for rule in &rules.exclude {
            if let Ok(sel) = parse_selector(&rule.selector) {
                remove.extend(self.select(&sel));
            }
        }
        if !template.is_empty() {
            for id in self.short_text_elements(TEMPLATE_ELEMENT_BYTES) {
                let Some(e) = self.element(id) else { continue };
                if matches!(e.value().name(), "html" | "head" | "body" | "title") {
                    continue;
                }
                let text = self.text(id, &none);
                if !text.is_empty()
                    && text.len() <= TEMPLATE_ELEMENT_BYTES
                    && template.contains(normalize_text(&text).as_str())
                {
                    remove.push(id);
                }
            }
        }
        let mut html = self.html.clone();
        for id in remove {
            if let Some(mut node) = html.tree.get_mut(id) {
                node.detach();
            }
        }
        html.html()
    }

    /// Elements with some visible text but no more than `most`
    /// non-whitespace characters of it, in one pass (a bound that spares
    /// computing the text of every large element).
    fn short_text_elements(&self, most: usize) -> Vec<NodeId> {
        let mut open: Vec<(NodeId, usize)> = Vec::new();
        let mut hidden_depth = 0usize;
        let mut out = Vec::new();
        for edge in self.html.tree.root().traverse() {
            match edge {
                ego_tree::iter::Edge::Open(node) => match node.value() {
                    Node::Element(e) => {
                        if hidden_depth > 0 || suppressed(e) {
                            hidden_depth += 1;
                        }
                        open.push((node.id(), 0));
                    }
                    Node::Text(t) if hidden_depth == 0 => {
                        if let Some(top) = open.last_mut() {
                            top.1 += t.chars().filter(|c| !c.is_whitespace()).count();
                        }
                    }
                    _ => {}
                },
                ego_tree::iter::Edge::Close(node) if node.value().is_element() => {
                    hidden_depth = hidden_depth.saturating_sub(1);
                    let Some((id, n)) = open.pop() else { continue };
                    if (1..=most).contains(&n) {
                        out.push(id);
                    }
                    if let Some(parent) = open.last_mut() {
                        parent.1 += n;
                    }
                }
                ego_tree::iter::Edge::Close(_) => {}
            }
        }
        out
    }

    /// Applies `rules` alone, without the fallback.
    pub fn extract_with_rules(&self, rules: &Rules) -> Extraction {
        self.apply(rules).extraction
    }

    /// Applies `rules` alone; also returns what the fallbacks need.
    fn apply(&self, rules: &Rules) -> Applied {
        let mut matched = Vec::new();
        // Selectors were validated when the rules were loaded; one that still
        // fails to parse matches nothing rather than failing the page.
        let select = |selector: &str| match parse_selector(selector) {
            Ok(s) => self.select(&s),
            Err(_) => Vec::new(),
        };

        let mut excluded: HashSet<NodeId> = HashSet::new();
        for rule in &rules.exclude {
            let ids = select(&rule.selector);
            matched.push(RuleMatch {
                kind: "exclude",
                selector: rule.selector.clone(),
                count: ids.len(),
            });
            excluded.extend(ids);
        }

        let scopes: Vec<NodeId> = match &rules.container {
            Some(container) => {
                let ids = select(&container.selector);
                matched.push(RuleMatch {
                    kind: "container",
                    selector: container.selector.clone(),
                    count: ids.len(),
                });
                ids
            }
            None => Vec::new(),
        };

        let mut content: HashSet<NodeId> = HashSet::new();
        let mut content_matches = Vec::new();
        for rule in &rules.content {
            let ids: Vec<NodeId> = select(&rule.selector)
                .into_iter()
                .filter(|&id| scopes.is_empty() || scopes.iter().any(|&s| self.contains(s, id)))
                .collect();
            content_matches.push(RuleMatch {
                kind: "content",
                selector: rule.selector.clone(),
                count: ids.len(),
            });
            content.extend(ids);
        }
        // A container that matched nothing must not hide content the
        // selectors find: retry without it.
        if content.is_empty() && !scopes.is_empty() {
            content_matches.clear();
            for rule in &rules.content {
                let ids = select(&rule.selector);
                content_matches.push(RuleMatch {
                    kind: "content",
                    selector: rule.selector.clone(),
                    count: ids.len(),
                });
                content.extend(ids);
            }
        }
        matched.extend(content_matches);

        let title = rules.title.as_ref().and_then(|rule| {
            let ids = select(&rule.selector);
            matched.push(RuleMatch {
                kind: "title",
                selector: rule.selector.clone(),
                count: ids.len(),
            });
            let first = *ids.first()?;
            // A headline under a hidden element is no headline.
            if self.ancestors(first).iter().any(|&a| self.suppresses(a)) {
                return None;
            }
            let text = self.text(first, &excluded);
            (!text.is_empty()).then_some(text)
        });

        let template: HashSet<&str> = rules.template.iter().map(String::as_str).collect();
        let mut blocks: Vec<String> = Vec::new();
        for id in self.outermost_in_order(&content) {
            if excluded.contains(&id)
                || self
                    .ancestors(id)
                    .iter()
                    .any(|&a| excluded.contains(&a) || self.suppresses(a))
            {
                continue;
            }
            let text = self.text(id, &excluded);
            if text.is_empty() || template.contains(normalize_text(&text).as_str()) {
                continue;
            }
            blocks.push(text);
        }
        Applied {
            extraction: Extraction::of_rules(title, blocks, matched),
            container: match scopes[..] {
                [root] => Some(root),
                _ => None,
            },
            excluded,
        }
    }

    /// True for an element whose text is never page text (scripts,
    /// styles, hidden elements...).
    fn suppresses(&self, id: NodeId) -> bool {
        self.element(id).is_some_and(|e| suppressed(e.value()))
    }

    /// The elements of `set` in document order, leaving out those inside
    /// another element of the set (their text is already in the outer one).
    pub fn outermost_in_order(&self, set: &HashSet<NodeId>) -> Vec<NodeId> {
        if set.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut inside: Option<NodeId> = None;
        for edge in self.html.tree.root().traverse() {
            match edge {
                ego_tree::iter::Edge::Open(node) => {
                    if inside.is_none() && set.contains(&node.id()) {
                        inside = Some(node.id());
                        out.push(node.id());
                    }
                }
                ego_tree::iter::Edge::Close(node) => {
                    if inside == Some(node.id()) {
                        inside = None;
                    }
                }
            }
        }
        out
    }
}

/// Text blocks of a subtree: each run of text between block-level
/// boundaries (and `<br>`s) is one block, with the characters of it that
/// sit inside links.
#[derive(Default)]
struct BlockCollector {
    blocks: Vec<(String, usize)>,
    text: String,
    link_chars: usize,
}

impl BlockCollector {
    fn flush(&mut self) {
        let text = normalize_space(&self.text);
        if !text.is_empty() {
            self.blocks.push((text, self.link_chars));
        }
        self.text.clear();
        self.link_chars = 0;
    }

    fn walk(&mut self, node: ego_tree::NodeRef<'_, Node>, skip: &HashSet<NodeId>, in_link: bool) {
        match node.value() {
            Node::Text(text) => {
                self.text.push_str(text);
                if in_link {
                    self.link_chars += text.trim().chars().count();
                }
            }
            Node::Element(element) => {
                if skip.contains(&node.id()) || suppressed(element) {
                    return;
                }
                let breaks = element.name() == "br" || !INLINE_TAGS.contains(&element.name());
                if breaks {
                    self.flush();
                }
                let link = in_link || element.name() == "a";
                for child in node.children() {
                    self.walk(child, skip, link);
                }
                if breaks {
                    self.flush();
                }
            }
            _ => {
                for child in node.children() {
                    self.walk(child, skip, in_link);
                }
            }
        }
    }
}

/// Inline elements: text on either side joins without a space.
pub(crate) const INLINE_TAGS: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr",
    "big", "tt", "strike", "label", "ins", "del",
];

/// True for an element whose text is never page text: scripts, styles,
/// the head, hidden elements.
fn suppressed(element: &scraper::node::Element) -> bool {
    SKIPPED_TAGS.contains(&element.name())
        || element.attr("hidden").is_some()
        || element.attr("style").is_some_and(hides)
}

/// True for an inline style that hides the element.
pub(crate) fn hides(style: &str) -> bool {
    let style: String = style
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    style.contains("display:none") || style.contains("visibility:hidden")
}

/// Why the rules' extraction `out` (of `words` words) needs a fallback,
/// before looking at its container: it matched nothing, or far less than
/// on the training pages.
fn fallback_reason(rules: &Rules, out: &Extraction, words: usize) -> Option<String> {
    if out.content_matched_nothing() {
        return Some(format!(
            "rules for {} matched nothing on this page",
            rules.site
        ));
    }
    rules
        .expected_words
        .filter(|&e| (words as f64) < FALLBACK_SHARE * f64::from(e))
        .map(|e| {
            format!(
                "rules for {} matched {words} words, against {e} on the training pages",
                rules.site
            )
        })
}

/// True when the rules' `words` are too few for their container's
/// `held` words: text in a part of the container the training pages left
/// empty.
fn misses_container(words: usize, held: usize) -> bool {
    (words as f64) < CONTAINER_SHARE * held as f64
}

/// Longest text (bytes) of an element removed before the fallback as a
/// template string.
const TEMPLATE_ELEMENT_BYTES: usize = 600;

/// Share of the rules' words the fallback must hold to replace them...
const FALLBACK_COVER: f64 = 0.5;
/// ...unless the rules found less than this share of the training pages'
/// words (next to nothing: whatever they found is likely stray).
const FALLBACK_LITTLE: f64 = 0.1;

/// True when `outer` holds at least `share` of the words of `inner`
/// (as multisets, lower case).
fn covers(outer: &[String], inner: &[String], share: f64) -> bool {
    let mut counts: HashMap<String, i64> = HashMap::new();
    for block in outer {
        crate::learn::text::for_each_word(block, |w| {
            *counts.entry(w.to_string()).or_default() += 1
        });
    }
    let (mut total, mut held) = (0usize, 0usize);
    for block in inner {
        crate::learn::text::for_each_word(block, |w| {
            total += 1;
            if let Some(n) = counts.get_mut(w)
                && *n > 0
            {
                *n -= 1;
                held += 1;
            }
        });
    }
    total == 0 || held as f64 >= share * total as f64
}

/// The rules' extraction, with what the fallbacks need from the same pass.
struct Applied {
    extraction: Extraction,
    /// The container's element, when it matched exactly one.
    container: Option<NodeId>,
    /// Exclusion matches.
    excluded: HashSet<NodeId>,
}

/// Whitespace runs to one space, trimmed.
pub(crate) fn normalize_space(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Puts the title first, once.
fn put_title_first(out: &mut Extraction) {
    if let Some(title) = &out.title
        && out.blocks.first() != Some(title)
    {
        out.blocks.retain(|b| b != title);
        out.blocks.insert(0, title.clone());
    }
}

/// Words in `text` (runs of letters and digits).
fn word_count(text: &str) -> usize {
    crate::learn::text::word_count(text)
}

/// Readability (`dom_smoothie`) on an HTML document: its text, one block
/// per line. `None` when it finds no article.
fn readability(html: &str) -> Option<Vec<String>> {
    let config = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Formatted,
        max_elements_to_parse: 0,
        ..Default::default()
    };
    let mut reader = dom_smoothie::Readability::new(html, None, Some(config)).ok()?;
    let article = reader.parse().ok()?;
    let blocks: Vec<String> = article
        .text_content
        .lines()
        .map(normalize_space)
        .filter(|l| !l.is_empty())
        .collect();
    (!blocks.is_empty()).then_some(blocks)
}

/// The page's own URL: `<link rel=canonical>`, else `og:url`. Only the
/// part before `<body` is parsed: both live in the head, and parsing the
/// whole page would cost more than extracting it.
pub fn page_url(html: &str) -> Option<String> {
    let head_end = [&b"<body"[..], b"<BODY"]
        .iter()
        .filter_map(|tag| memchr::memmem::find(html.as_bytes(), tag))
        .min()
        .unwrap_or(html.len());
    let page = Page::parse(&html[..head_end]);
    for css in ["link[rel=canonical]", "meta[property='og:url']"] {
        let sel = parse_selector(css).ok()?;
        for id in page.select(&sel) {
            let e = page.element(id)?;
            if let Some(v) = e.value().attr("href").or_else(|| e.value().attr("content")) {
                return Some(v.trim().to_string());
            }
        }
    }
    None
}

/// Applies `rules` to a page's HTML text (see [`Extractor`]).
pub fn extract(html: &str, rules: &Rules) -> Extraction {
    Extractor::new(rules).extract(html)
}

/// Extraction with one rule set, prepared once for many pages.
///
/// Two paths give the same result: a streaming pass over the page's tokens
/// (`lol_html`, no tree), taken when the rules' selectors are in the
/// grammar the learner writes and the rules work on the page; and the tree
/// path ([`Page::extract`]: html5ever, the rules, the fallbacks), taken for
/// everything else. The streaming pass is about three times faster.
pub struct Extractor<'r> {
    rules: &'r Rules,
    stream: Option<stream::StreamRules>,
}

impl<'r> Extractor<'r> {
    /// Prepares `rules` (compiles their selectors for streaming when they
    /// allow it).
    pub fn new(rules: &'r Rules) -> Extractor<'r> {
        Extractor {
            rules,
            stream: stream::StreamRules::new(rules),
        }
    }

    /// True when the rules can take the streaming path.
    pub fn streams(&self) -> bool {
        self.stream.is_some()
    }

    /// The page's text: by streaming when that result is final, else by the
    /// tree path.
    pub fn extract(&self, html: &str) -> Extraction {
        match self.extract_streaming(html) {
            Some(out) => out,
            None => self.extract_tree(html),
        }
    }

    /// The tree path alone.
    pub fn extract_tree(&self, html: &str) -> Extraction {
        Page::parse(html).extract(self.rules)
    }

    /// The streaming path alone: `None` when it does not apply to these
    /// rules or this page (the tree path decides then).
    pub fn extract_streaming(&self, html: &str) -> Option<Extraction> {
        let streamed = stream::run(html, self.stream.as_ref()?);
        let out = streamed.extraction;
        if self.rules.container.is_some() && streamed.containers == 0 {
            return None;
        }
        let words: usize = out.blocks.iter().map(|b| word_count(b)).sum();
        if fallback_reason(self.rules, &out, words).is_some() {
            return None;
        }
        if streamed.containers == 1
            && misses_container(words, word_count(streamed.container_text.as_deref()?))
        {
            return None;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Container, ContentRule, ExcludeRule, FORMAT_VERSION, TitleRule};
    use crate::site::Site;

    fn rules(content: &[&str], exclude: &[&str], template: &[&str]) -> Rules {
        Rules {
            format: FORMAT_VERSION,
            site: Site::new("example.test").unwrap(),
            version: 0,
            learned_at: time::OffsetDateTime::UNIX_EPOCH,
            pages: 1,
            container: Some(Container {
                selector: "article".into(),
                pages: 1,
            }),
            title: Some(TitleRule {
                selector: "h1".into(),
                pages: 1,
                similarity: 1.0,
            }),
            content: content
                .iter()
                .map(|s| ContentRule {
                    selector: s.to_string(),
                    score: 1.0,
                    confidence: 1.0,
                    pages: 1,
                    blocks: 1,
                    cluster: 0,
                })
                .collect(),
            exclude: exclude
                .iter()
                .map(|s| ExcludeRule {
                    selector: s.to_string(),
                    pages: 1,
                    blocks: 1,
                })
                .collect(),
            template: template.iter().map(|s| s.to_string()).collect(),
            expected_words: None,
        }
    }

    const PAGE: &str = r#"<html><body><h1>Head  line</h1><p>Outside</p>
        <article><div class="body"><p>One <b>bold</b> word</p><blockquote><p>Quoted</p></blockquote>
        <div class="share"><p>Share this</p></div><p>Share this</p><script>var x = 1;</script>
        <p hidden>Hidden</p><p style="display: none">Gone</p><table><tr><td>cell</td></tr></table></div></article>"#;

    #[test]
    fn applies_container_exclusions_template_and_title() {
        let rules = rules(
            &["p", "blockquote", "tbody td"],
            &[".share"],
            &["share this"],
        );
        let out = extract(PAGE, &rules);
        assert_eq!(out.blocks, ["Head line", "One bold word", "Quoted", "cell"]);
        assert_eq!(out.title.as_deref(), Some("Head line"));
        assert!(!out.content_matched_nothing());
    }

    #[test]
    fn reports_rules_that_match_nothing_and_falls_back() {
        let rules = rules(&[".missing"], &[".share"], &["share this"]);
        let page = Page::parse(PAGE);
        let only_rules = page.extract_with_rules(&rules);
        assert!(only_rules.content_matched_nothing());
        assert_eq!(only_rules.blocks, ["Head line"]);
        assert_eq!(only_rules.fallback, None);

        let out = page.extract(&rules);
        assert!(out.content_matched_nothing());
        let reason = out.fallback.as_deref().expect("a fallback");
        assert!(reason.contains("matched nothing"), "{reason}");
        let text = out.text();
        assert!(text.starts_with("Head line"), "{text}");
        assert!(text.contains("One bold word"), "{text}");
        // Template strings and exclusions are gone before the fallback runs.
        assert!(!text.contains("Share this"), "{text}");
    }

    #[test]
    fn text_the_rules_miss_in_their_container_comes_from_the_container() {
        // Trained on pages whose text was in <p>; this one has most of it in
        // bare text with <br>s, plus a link list and a share bar inside.
        let html = r#"<html><body><article><h1>Head line</h1><div class="body">
            <p>A short first paragraph.</p>
            Then the rest of the post sits directly in the container, line after line, as some blogs write it.<br>
            And a second line of that kind, with <a href="/x">a link</a> inside a sentence.<br>
            <ul><li><a href="/a">Related one</a></li><li><a href="/b">Related two</a></li></ul>
            <div class="share"><p>Share this</p></div></div></article></body></html>"#;
        let mut r = rules(&["div.body > p"], &[".share"], &["share this"]);
        r.container = Some(Container {
            selector: "div.body".into(),
            pages: 1,
        });
        let page = Page::parse(html);
        assert_eq!(
            page.extract_with_rules(&r).blocks,
            ["Head line", "A short first paragraph."]
        );
        let out = page.extract(&r);
        assert!(
            out.fallback
                .as_deref()
                .is_some_and(|f| f.contains("in their container")),
            "{out:?}"
        );
        assert_eq!(
            out.blocks,
            [
                "Head line",
                "A short first paragraph.",
                "Then the rest of the post sits directly in the container, line after line, as some blogs write it.",
                "And a second line of that kind, with a link inside a sentence.",
            ]
        );
    }

    #[test]
    fn the_fallback_must_hold_what_the_rules_found() {
        let found = vec!["the article about frost".to_string()];
        let elsewhere =
            vec!["a much longer comment thread about something else entirely".to_string()];
        let superset = vec![
            "intro".to_string(),
            "the article about frost".to_string(),
            "more".to_string(),
        ];
        assert!(!covers(&elsewhere, &found, FALLBACK_COVER));
        assert!(covers(&superset, &found, FALLBACK_COVER));
    }

    /// Pages whose markup the tree builder repairs: the streaming pass must
    /// give exactly what the tree gives.
    const TRICKY: &[&str] = &[
        r#"<!doctype html><html><head><title>T</title><script>var a = "<p>no</p>";</script></head><body>
        <h1>Head &amp; line</h1><article><div class="body"><P CLASS=lead>One <b>bold</b> word<p>Two &eacute;t&eacute;<div>block</div></p>
        <ul><li>first<li>second</ul><table><tr><td>cell one<td>cell two</table>
        <p>Three<!-- comment <p>not</p> --> after</p><p hidden>Hidden</p><p style="display: none">Gone</p>
        <div hidden><p>Hidden too</p></div><p>Four<br>lines</p><div class="share"><p>Share this</p></div><p>Share this</p>
        <noscript><p>no js</p></noscript><p>Five <iframe>Loading&#8230;</iframe> end &#150; &copy 2026</p></div></article></body></html>"#,
        "Intro <h1>Title</h1><article><div class=body><p>alpha<p>beta &lt;p&gt;</div></article>",
        "<h1>Title</h1><article><div class=body><h2>Sub<h3>subsub</h3><p>x <a href=1>one<a href=2>two</a></p>\
         <dl><dt>term<dd>def<dt>term2</dl><ul><li>a<ul><li>nested</ul><li>b</li></ul></div></article>",
        "<h1>Title</h1><article><div class=body><svg><title>icon</title><text>svg text</text></svg>\
         <p>text <span>in <em>line</em></span>s, enough of it to be the container's text</p></p></p><textarea>a &amp; b</textarea></div></article>",
    ];

    #[test]
    fn streaming_gives_what_the_tree_gives() {
        let rules = rules(
            &[
                "div.body p",
                "div.body li",
                "tbody td",
                "div.body dd",
                "div.body > h2",
            ],
            &[".share"],
            &["share this"],
        );
        let x = Extractor::new(&rules);
        assert!(x.streams());
        for page in TRICKY {
            let streamed = x.extract_streaming(page);
            let tree = x.extract_tree(page);
            assert_eq!(streamed.as_ref(), Some(&tree), "{page}");
            assert_eq!(x.extract(page), tree);
        }
        let first = x.extract(TRICKY[0]);
        assert_eq!(
            first.blocks,
            [
                "Head & line",
                "One bold word",
                "Two été",
                "first",
                "second",
                "cell one",
                "cell two",
                "Three after",
                "Four lines",
                "Five Loading&#8230; end – © 2026"
            ]
        );
    }

    #[test]
    fn rules_outside_the_streaming_grammar_take_the_tree_path() {
        let rules = rules(&["div.body p:first-child", "div.body li"], &[], &[]);
        let x = Extractor::new(&rules);
        assert!(!x.streams());
        assert!(x.extract_streaming(TRICKY[0]).is_none());
        let out = x.extract(TRICKY[0]);
        assert_eq!(out, x.extract_tree(TRICKY[0]));
        assert_eq!(
            &out.matched[1],
            &RuleMatch {
                kind: "content",
                selector: "div.body p:first-child".into(),
                count: 3
            }
        );
    }

    #[test]
    fn finds_elements_by_node_path() {
        let page = Page::parse(PAGE);
        // html > body > article(3rd element child, index 2) > div > p
        let id = page.element_at(&[0, 1, 2, 0, 0], &["html", "body", "article", "div", "p"]);
        assert_eq!(page.text(id.unwrap(), &HashSet::new()), "One bold word");
        assert!(
            page.element_at(&[0, 1, 2, 0, 0], &["html", "body", "div"])
                .is_none()
        );
    }
}
