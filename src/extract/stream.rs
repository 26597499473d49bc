//! Streaming extraction: the rules applied in one pass over the page's
//! tokens, without building a tree.
//!
//! Why: building an html5ever tree costs about half of a whole Readability
//! run, so a tree-based extractor cannot be much faster than Readability.
//! `lol_html` streams faster, but with the per-element data this pass
//! needs (tag, id, class, hidden, end tags) it measured 0.5 ms a page, as
//! long as html5ever's whole parse of the small pages; the tokenizer here
//! ([`super::lexer`]) borrows from the page and allocates nothing per tag.
//!
//! It must give exactly what the tree path ([`super::Page`]) gives, because
//! the learner tested the rules on that tree. So it takes only what it can
//! guarantee and hands everything else back:
//! - selectors in the grammar the learner writes (`tag`, `.class`, `#id`,
//!   joined by descendant or child combinators); any other rule set goes to
//!   the tree;
//! - pages where the rules work: when a fallback could be needed (no
//!   content matched, a container that matched nothing or little of it
//!   extracted, far fewer words than on the training pages), the page goes
//!   to the tree path, which decides;
//! - the tree builder's repairs that change where text sits are followed
//!   for the common cases: implied `html`, `head` and `body`, implied end
//!   tags (`p`, `li`, `dd`/`dt`, `option`, table rows and cells, nested
//!   `a`, headings), end tags that close nothing or several elements, the
//!   empty `p` a stray `</p>` makes, and the `tbody` inserted into tables.
//!   The adoption agency (misnested inline markup around blocks) and foster
//!   parenting (text directly in tables) are not followed: the extract
//!   bench checks both paths give the same text on every dev page.

use std::borrow::Cow;
use std::collections::HashSet;

use super::lexer::{Lexer, Tag, Token};
use super::{Extraction, INLINE_TAGS, RuleMatch, SKIPPED_TAGS, hides, normalize_space};
use crate::rules::{Rules, normalize_text};

/// One compound selector: `tag`, `.class`, `#id` or a combination.
#[derive(Debug, Clone, PartialEq)]
struct Compound {
    tag: Option<String>,
    id: Option<String>,
    classes: Vec<String>,
}

/// A selector in the streamable grammar, compounds left to right; `child[i]`
/// tells whether compound `i + 1` is a child (`>`) or a descendant of `i`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamSelector {
    compounds: Vec<Compound>,
    child: Vec<bool>,
}

impl StreamSelector {
    /// Parses `selector`; `None` when it uses anything beyond tags, classes,
    /// ids and the descendant and child combinators.
    pub(crate) fn parse(selector: &str) -> Option<StreamSelector> {
        let mut compounds = Vec::new();
        let mut child = Vec::new();
        let mut pending_child = false;
        for token in selector.split_ascii_whitespace() {
            if token == ">" {
                if compounds.is_empty() || pending_child {
                    return None;
                }
                pending_child = true;
                continue;
            }
            if !compounds.is_empty() {
                child.push(pending_child);
            }
            pending_child = false;
            compounds.push(compound(token)?);
        }
        (!compounds.is_empty() && !pending_child).then_some(StreamSelector { compounds, child })
    }

    /// True when the top of `stack` matches.
    fn matches(&self, stack: &[Entry<'_>]) -> bool {
        match stack.len().checked_sub(1) {
            Some(top) => self.matches_at(self.compounds.len() - 1, stack, top),
            None => false,
        }
    }

    fn matches_at(&self, part: usize, stack: &[Entry<'_>], at: usize) -> bool {
        if !self.compounds[part].matches(&stack[at]) {
            return false;
        }
        if part == 0 {
            return true;
        }
        if self.child[part - 1] {
            at > 0 && self.matches_at(part - 1, stack, at - 1)
        } else {
            (0..at).rev().any(|j| self.matches_at(part - 1, stack, j))
        }
    }
}

/// Parses one compound (`div.body`, `#main`, `p`, `*`).
fn compound(token: &str) -> Option<Compound> {
    let name_end = token.find(['.', '#']).unwrap_or(token.len());
    let (tag, mut rest) = token.split_at(name_end);
    let tag = match tag {
        "" | "*" => None,
        t if is_name(t) => Some(t.to_ascii_lowercase()),
        _ => return None,
    };
    let mut out = Compound {
        tag,
        id: None,
        classes: Vec::new(),
    };
    while !rest.is_empty() {
        let marker = rest.as_bytes()[0];
        let body = &rest[1..];
        let end = body.find(['.', '#']).unwrap_or(body.len());
        let name = &body[..end];
        if !is_name(name) {
            return None;
        }
        if marker == b'#' {
            if out.id.is_some() {
                return None;
            }
            out.id = Some(name.to_string());
        } else {
            out.classes.push(name.to_string());
        }
        rest = &body[end..];
    }
    Some(out)
}

/// Identifiers the learner writes (no escapes, nothing a CSS parser would
/// read as something else).
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && !s.starts_with("--")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Compound {
    fn matches(&self, e: &Entry<'_>) -> bool {
        if self.tag.as_deref().is_some_and(|t| t != &*e.tag) {
            return false;
        }
        if let Some(id) = &self.id
            && e.id.as_deref() != Some(id.as_str())
        {
            return false;
        }
        self.classes.iter().all(|c| {
            e.class
                .as_deref()
                .is_some_and(|have| have.split_ascii_whitespace().any(|h| h == c))
        })
    }
}

/// A rule set compiled for streaming.
#[derive(Debug, Clone)]
pub(crate) struct StreamRules {
    exclude: Vec<(StreamSelector, String)>,
    container: Option<(StreamSelector, String)>,
    content: Vec<(StreamSelector, String)>,
    title: Option<(StreamSelector, String)>,
    template: HashSet<String>,
}

impl StreamRules {
    /// `None` when a selector is outside the streamable grammar.
    pub(crate) fn new(rules: &Rules) -> Option<StreamRules> {
        let compile = |s: &String| Some((StreamSelector::parse(s)?, s.clone()));
        Some(StreamRules {
            exclude: rules
                .exclude
                .iter()
                .map(|r| compile(&r.selector))
                .collect::<Option<_>>()?,
            container: match &rules.container {
                Some(c) => Some(compile(&c.selector)?),
                None => None,
            },
            content: rules
                .content
                .iter()
                .map(|r| compile(&r.selector))
                .collect::<Option<_>>()?,
            title: match &rules.title {
                Some(t) => Some(compile(&t.selector)?),
                None => None,
            },
            template: rules.template.iter().cloned().collect(),
        })
    }
}

/// What one streaming pass found.
#[derive(Debug)]
pub(crate) struct Streamed {
    /// The rules' extraction (as [`super::Page::extract_with_rules`] gives it).
    pub extraction: Extraction,
    /// Elements the container rule matched (0 without a container rule).
    pub containers: usize,
    /// The text of the first container match, exclusions left out.
    pub container_text: Option<String>,
}

/// Runs the rules over `html` in one pass.
pub(crate) fn run(html: &str, rules: &StreamRules) -> Streamed {
    let mut walk = Walk::new(rules);
    let mut lexer = Lexer::new(html);
    while let Some(token) = lexer.next(walk.stack.last().is_some_and(|e| e.foreign)) {
        match token {
            Token::Start(tag) => walk.start(tag),
            Token::End(name) => walk.end(&name),
            Token::Text { text, decode } => walk.text(text, decode),
            Token::Doctype {
                name,
                public_id,
                system_id,
            } => walk.doctype(name, public_id, system_id),
        }
    }
    walk.finish()
}

/// Runs the tokenizer alone over `html` (the floor the extract bench
/// shows); returns the number of tokens.
pub fn tokens_only(html: &str) -> usize {
    let mut lexer = Lexer::new(html);
    let mut n = 0;
    while lexer.next(false).is_some() {
        n += 1;
    }
    n
}

/// One open element.
#[derive(Debug)]
struct Entry<'a> {
    tag: Cow<'a, str>,
    id: Option<Cow<'a, str>>,
    class: Option<Cow<'a, str>>,
    /// Depth of the nearest excluded element at or above this one.
    excluded_at: Option<usize>,
    /// Depth of the nearest hidden or never-text element at or above.
    suppressed_at: Option<usize>,
    /// Inside (or is) a container match.
    in_container: bool,
    /// Starts and ends a block of text (not an inline element).
    breaks: bool,
    /// SVG or MathML.
    foreign: bool,
}

/// Text gathered below one element.
#[derive(Debug)]
struct Collector {
    depth: usize,
    text: String,
}

impl Collector {
    /// True when text at an element with these flags belongs to this
    /// collector: nothing excluded or hidden between its root and there
    /// (the tree path's [`super::Page::text`] from that root).
    fn sees(&self, e: &Entry<'_>) -> bool {
        e.excluded_at.is_none_or(|d| d < self.depth)
            && e.suppressed_at.is_none_or(|d| d < self.depth)
    }
}

/// The pass's state.
struct Walk<'r, 'a> {
    rules: &'r StreamRules,
    stack: Vec<Entry<'a>>,
    body_open: bool,
    head_seen: bool,
    doctype_seen: bool,
    quirks: bool,
    /// Open `p` and `a` elements (most start tags need not search for one).
    open_p: usize,
    open_a: usize,
    content: Option<Collector>,
    blocks: Vec<String>,
    title: Option<Collector>,
    title_done: bool,
    title_text: Option<String>,
    container: Option<Collector>,
    container_text: Option<String>,
    exclude_counts: Vec<usize>,
    container_count: usize,
    content_counts: Vec<usize>,
    title_count: usize,
}

/// True for elements a start tag of which closes an open `p` (in button
/// scope).
fn closes_p(tag: &str) -> bool {
    matches!(
        tag,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "center"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "header"
            | "hgroup"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "p"
            | "search"
            | "section"
            | "summary"
            | "ul"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "pre"
            | "listing"
            | "form"
            | "li"
            | "dd"
            | "dt"
            | "plaintext"
            | "xmp"
            | "hr"
    )
}

/// Elements that go into `<head>` when they come before the body.
const HEAD_TAGS: &[&str] = &[
    "base", "basefont", "bgsound", "link", "meta", "noscript", "script", "style", "template",
    "title",
];

/// The HTML standard's "special" elements (they stop the search for an
/// open `li`, `dd` or `dt`).
const SPECIAL: &[&str] = &[
    "address",
    "applet",
    "area",
    "article",
    "aside",
    "base",
    "basefont",
    "bgsound",
    "blockquote",
    "body",
    "br",
    "button",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dir",
    "div",
    "dl",
    "dt",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "iframe",
    "img",
    "input",
    "keygen",
    "li",
    "link",
    "listing",
    "main",
    "marquee",
    "menu",
    "meta",
    "nav",
    "noembed",
    "noframes",
    "noscript",
    "object",
    "ol",
    "p",
    "param",
    "plaintext",
    "pre",
    "script",
    "search",
    "section",
    "select",
    "source",
    "style",
    "summary",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
    "wbr",
    "xmp",
];

/// Elements that bound the default scope.
const SCOPE: &[&str] = &[
    "applet", "caption", "html", "table", "td", "th", "marquee", "object", "template",
];

/// Elements that bound button scope.
const BUTTON_SCOPE: &[&str] = &[
    "applet", "caption", "html", "table", "td", "th", "marquee", "object", "template", "button",
];

/// Elements that bound list item scope.
const LIST_ITEM_SCOPE: &[&str] = &[
    "applet", "caption", "html", "table", "td", "th", "marquee", "object", "template", "ol", "ul",
];

/// Elements that bound table scope.
const TABLE_SCOPE: &[&str] = &["html", "table", "template"];

/// Elements that have no end tag.
fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "area"
            | "base"
            | "basefont"
            | "bgsound"
            | "br"
            | "col"
            | "embed"
            | "frame"
            | "hr"
            | "img"
            | "input"
            | "keygen"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
    )
}

fn is_heading(tag: &str) -> bool {
    matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// Public identifiers whose doctype puts a document in quirks mode (the
/// common ones of the HTML standard's list; `table` then leaves `p` open).
const QUIRKY_PUBLIC_IDS: &[&str] = &[
    "-//w3c//dtd html 4.0 transitional//",
    "-//w3c//dtd html 3.2",
    "-//w3c//dtd html 3.",
    "-//ietf//dtd html",
    "-//w3o//dtd w3 html",
    "-//w3c//dtd html experimental",
    "-//netscape comm. corp.//dtd",
    "-//microsoft//dtd internet explorer",
    "-//softquad",
    "-//spyglass//dtd html 2.0 extended//",
    "-//w3c//dtd w3 html//",
    "-//webtechs//dtd mozilla html",
];

impl<'r, 'a> Walk<'r, 'a> {
    fn new(rules: &'r StreamRules) -> Walk<'r, 'a> {
        Walk {
            exclude_counts: vec![0; rules.exclude.len()],
            content_counts: vec![0; rules.content.len()],
            rules,
            stack: Vec::with_capacity(64),
            body_open: false,
            head_seen: false,
            doctype_seen: false,
            quirks: true,
            open_p: 0,
            open_a: 0,
            content: None,
            blocks: Vec::new(),
            title: None,
            title_done: false,
            title_text: None,
            container: None,
            container_text: None,
            container_count: 0,
            title_count: 0,
        }
    }

    fn doctype(&mut self, name: Option<&str>, public_id: Option<&str>, has_system_id: bool) {
        if self.doctype_seen || !self.stack.is_empty() {
            return;
        }
        self.doctype_seen = true;
        let public = public_id.map(str::to_ascii_lowercase);
        let quirky_public = public.as_deref().is_some_and(|p| {
            QUIRKY_PUBLIC_IDS.iter().any(|q| p.starts_with(q))
                || (!has_system_id && p.starts_with("-//w3c//dtd html 4.01 transitional//"))
                || (!has_system_id && p.starts_with("-//w3c//dtd html 4.01 frameset//"))
        });
        self.quirks = !name.is_some_and(|n| n.eq_ignore_ascii_case("html")) || quirky_public;
    }

    /// Text of the page: to every collector that sees it.
    fn text(&mut self, text: &str, decode: bool) {
        if !self.body_open
            && !text.trim_ascii().is_empty()
            && self
                .stack
                .last()
                .is_none_or(|top| top.suppressed_at.is_none())
        {
            // Text before the body opens it (the tree builder does the same).
            self.open_body(None, None);
        }
        let Some(top) = self.stack.last() else {
            return;
        };
        // Collected text is decoded at the end; raw text keeps its
        // references as written.
        let text = if !decode && text.contains('&') {
            Cow::Owned(text.replace('&', "&amp;"))
        } else {
            Cow::Borrowed(text)
        };
        for collector in [&mut self.content, &mut self.title, &mut self.container]
            .into_iter()
            .flatten()
        {
            if collector.sees(top) {
                collector.text.push_str(&text);
            }
        }
    }

    /// A block boundary at element `at`: a space for the collectors that
    /// see it (the tree path separates blocks with one).
    fn boundary(&mut self, at: usize) {
        let e = &self.stack[at];
        if !e.breaks {
            return;
        }
        for collector in [&mut self.content, &mut self.title, &mut self.container]
            .into_iter()
            .flatten()
        {
            if collector.depth < at && collector.sees(e) {
                collector.text.push(' ');
            }
        }
    }

    /// A start tag.
    fn start(&mut self, tag: Tag<'a>) {
        if !self.prepare(&tag) {
            return;
        }
        let foreign =
            self.stack.last().is_some_and(|e| e.foreign) || matches!(&*tag.name, "svg" | "math");
        let void = if foreign {
            tag.self_closing
        } else {
            is_void(&tag.name)
        };
        let hidden = tag.hidden || tag.style.as_deref().is_some_and(hides);
        self.push(tag.name, tag.id, tag.class, hidden);
        if void {
            self.stack_pop();
        }
    }

    /// The tree builder's repairs before a start tag; false when the tag
    /// opens no element (a second `html`, `head` or `body`).
    fn prepare(&mut self, tag: &Tag<'a>) -> bool {
        let name: &str = &tag.name;
        if self.stack.is_empty() {
            if name == "html" {
                return true;
            }
            self.push_virtual("html");
        } else if name == "html" {
            return false;
        }
        if !self.body_open {
            match name {
                "head" => {
                    if self.head_seen {
                        return false;
                    }
                    self.head_seen = true;
                    return true;
                }
                "body" => {
                    self.open_body(tag.id.clone(), tag.class.clone());
                    return false;
                }
                t if HEAD_TAGS.contains(&t) => {
                    if self.stack.last().is_some_and(|e| &*e.tag == "html") {
                        self.head_seen = true;
                        self.push_virtual("head");
                    }
                    return true;
                }
                _ => self.open_body(None, None),
            }
        } else if matches!(name, "head" | "body") {
            return false;
        }
        self.implied_ends(name);
        true
    }

    /// Opens `<body>` (after closing `<head>`), once.
    fn open_body(&mut self, id: Option<Cow<'a, str>>, class: Option<Cow<'a, str>>) {
        if self.body_open {
            return;
        }
        if let Some(head) = self.stack.iter().position(|e| &*e.tag == "head") {
            self.pop_to(head);
        }
        if self.stack.is_empty() {
            self.push_virtual("html");
        }
        self.body_open = true;
        self.push(Cow::Borrowed("body"), id, class, false);
    }

    /// An end tag, as the tree builder takes it in the body.
    fn end(&mut self, name: &str) {
        let found = match name {
            "html" | "body" => None,
            "p" => {
                let p = self.in_scope(&["p"], BUTTON_SCOPE);
                if p.is_none() && self.body_open {
                    // A stray </p> makes an empty paragraph.
                    self.push(Cow::Borrowed("p"), None, None, false);
                    self.stack_pop();
                }
                p
            }
            "br" => {
                // </br> is taken as <br>.
                self.start(Tag {
                    name: Cow::Borrowed("br"),
                    ..Tag::default()
                });
                None
            }
            "li" => self.in_scope(&["li"], LIST_ITEM_SCOPE),
            "dd" | "dt" => self.in_scope(&[name], SCOPE),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.in_scope(&["h1", "h2", "h3", "h4", "h5", "h6"], SCOPE)
            }
            "table" | "tbody" | "thead" | "tfoot" | "tr" | "td" | "th" | "caption" => {
                self.in_scope(&[name], TABLE_SCOPE)
            }
            n if SPECIAL.contains(&n) => self.in_scope(&[n], SCOPE),
            n => {
                // Any other end tag: the nearest open element of that
                // name, unless a special element comes first.
                let mut found = None;
                for i in (0..self.stack.len()).rev() {
                    let t: &str = &self.stack[i].tag;
                    if t == n {
                        found = Some(i);
                        break;
                    }
                    if SPECIAL.contains(&t) {
                        break;
                    }
                }
                found
            }
        };
        if let Some(i) = found {
            self.pop_to(i);
        }
    }

    /// Implied end tags and inserted elements for a start tag in the body.
    fn implied_ends(&mut self, tag: &str) {
        match tag {
            "li" => self.close_list_item(&["li"]),
            "dd" | "dt" => self.close_list_item(&["dd", "dt"]),
            "button" => {
                if let Some(i) = self.in_scope(&["button"], SCOPE) {
                    self.pop_to(i);
                }
            }
            "a" if self.open_a > 0 => {
                // A second <a> closes the first (the adoption agency, in
                // its common case).
                let markers = [
                    "td", "th", "caption", "object", "marquee", "applet", "template",
                ];
                if let Some(i) = self.in_scope(&["a"], &markers) {
                    self.pop_to(i);
                }
            }
            "option" => self.pop_if_top(&["option"]),
            "optgroup" => {
                self.pop_if_top(&["option"]);
                self.pop_if_top(&["optgroup"]);
            }
            "tr" => {
                if let Some(i) = self.in_scope(&["tr"], TABLE_SCOPE) {
                    self.pop_to(i);
                }
                if self.top_is(&["table"]) {
                    self.push_virtual("tbody");
                }
            }
            "td" | "th" => {
                if let Some(i) = self.in_scope(&["td", "th"], TABLE_SCOPE) {
                    self.pop_to(i);
                }
                if self.top_is(&["table"]) {
                    self.push_virtual("tbody");
                }
                if self.top_is(&["tbody", "thead", "tfoot"]) {
                    self.push_virtual("tr");
                }
            }
            "tbody" | "thead" | "tfoot" => {
                if let Some(i) = self.in_scope(&["tbody", "thead", "tfoot"], TABLE_SCOPE) {
                    self.pop_to(i);
                }
            }
            _ => {}
        }
        if closes_p(tag) || (tag == "table" && !self.quirks) {
            if self.open_p > 0
                && let Some(i) = self.in_scope(&["p"], BUTTON_SCOPE)
            {
                self.pop_to(i);
            }
            if is_heading(tag) && self.stack.last().is_some_and(|e| is_heading(&e.tag)) {
                self.stack_pop();
            }
        }
    }

    /// An `li` (or `dd`/`dt`) closes the open one, unless a special
    /// element other than address, div and p comes first.
    fn close_list_item(&mut self, names: &[&str]) {
        for i in (0..self.stack.len()).rev() {
            let t: &str = &self.stack[i].tag;
            if names.contains(&t) {
                self.pop_to(i);
                return;
            }
            if SPECIAL.contains(&t) && !matches!(t, "address" | "div" | "p") {
                return;
            }
        }
    }

    /// Index of the nearest open element named in `names`, unless an
    /// element of `bounds` comes first.
    fn in_scope(&self, names: &[&str], bounds: &[&str]) -> Option<usize> {
        for i in (0..self.stack.len()).rev() {
            let t: &str = &self.stack[i].tag;
            if names.contains(&t) {
                return Some(i);
            }
            if bounds.contains(&t) {
                return None;
            }
        }
        None
    }

    fn top_is(&self, names: &[&str]) -> bool {
        self.stack.last().is_some_and(|e| names.contains(&&*e.tag))
    }

    fn pop_if_top(&mut self, names: &[&str]) {
        if self.top_is(names) {
            self.stack_pop();
        }
    }

    /// Pushes an element the tree builder inserts without a tag.
    fn push_virtual(&mut self, tag: &'static str) {
        self.push(Cow::Borrowed(tag), None, None, false);
    }

    /// Pushes an element, matches the rules on it and opens collectors.
    fn push(
        &mut self,
        tag: Cow<'a, str>,
        id: Option<Cow<'a, str>>,
        class: Option<Cow<'a, str>>,
        hidden: bool,
    ) {
        let rules = self.rules;
        let depth = self.stack.len();
        let parent = self.stack.last();
        let parent_suppressed = parent.and_then(|p| p.suppressed_at);
        let name: &str = &tag;
        let entry = Entry {
            excluded_at: parent.and_then(|p| p.excluded_at),
            suppressed_at: if hidden || SKIPPED_TAGS.contains(&name) {
                Some(depth)
            } else {
                parent_suppressed
            },
            in_container: parent.is_some_and(|p| p.in_container),
            breaks: name == "br" || !INLINE_TAGS.contains(&name),
            foreign: parent.is_some_and(|p| p.foreign) || matches!(name, "svg" | "math"),
            tag,
            id,
            class,
        };
        match &*entry.tag {
            "p" => self.open_p += 1,
            "a" => self.open_a += 1,
            _ => {}
        }
        self.stack.push(entry);

        let mut excluded = false;
        for (count, (sel, _)) in self.exclude_counts.iter_mut().zip(&rules.exclude) {
            if sel.matches(&self.stack) {
                *count += 1;
                excluded = true;
            }
        }
        let is_container = rules
            .container
            .as_ref()
            .is_some_and(|(sel, _)| sel.matches(&self.stack));
        let is_title = rules
            .title
            .as_ref()
            .is_some_and(|(sel, _)| sel.matches(&self.stack));
        let entry = self.stack.last_mut().expect("just pushed");
        if excluded {
            entry.excluded_at = Some(depth);
        }
        if is_container {
            entry.in_container = true;
        }
        let in_scope = rules.container.is_none() || entry.in_container;
        let mut content = false;
        if in_scope {
            for (count, (sel, _)) in self.content_counts.iter_mut().zip(&rules.content) {
                if sel.matches(&self.stack) {
                    *count += 1;
                    content = true;
                }
            }
        }
        let entry = self.stack.last().expect("just pushed");
        let visible_root = entry.excluded_at.is_none() && entry.suppressed_at.is_none();
        if content && self.content.is_none() && visible_root {
            self.content = Some(Collector {
                depth,
                text: String::new(),
            });
        }
        if is_title {
            self.title_count += 1;
            // The first match is the headline, unless under a hidden element.
            if !self.title_done && parent_suppressed.is_none() {
                self.title = Some(Collector {
                    depth,
                    text: String::new(),
                });
            }
            self.title_done = true;
        }
        if is_container {
            self.container_count += 1;
            if self.container_count == 1 {
                self.container = Some(Collector {
                    depth,
                    text: String::new(),
                });
            }
        }
        self.boundary(depth);
    }

    /// Pops elements down to and including index `i`.
    fn pop_to(&mut self, i: usize) {
        while self.stack.len() > i {
            self.stack_pop();
        }
    }

    fn stack_pop(&mut self) {
        let at = self.stack.len() - 1;
        self.boundary(at);
        if self.content.as_ref().is_some_and(|c| c.depth == at) {
            let c = self.content.take().expect("checked");
            self.blocks.push(c.text);
        }
        if self.title.as_ref().is_some_and(|c| c.depth == at) {
            self.title_text = self.title.take().map(|c| c.text);
        }
        if self.container.as_ref().is_some_and(|c| c.depth == at) {
            self.container_text = self.container.take().map(|c| c.text);
        }
        match &*self.stack[at].tag {
            "p" => self.open_p -= 1,
            "a" => self.open_a -= 1,
            _ => {}
        }
        self.stack.pop();
    }

    /// The page's end: closes what is open and assembles the extraction.
    fn finish(mut self) -> Streamed {
        self.pop_to(0);
        let rules = self.rules;
        let mut matched = Vec::new();
        for ((_, selector), &count) in rules.exclude.iter().zip(&self.exclude_counts) {
            matched.push(rule_match("exclude", selector, count));
        }
        if let Some((_, selector)) = &rules.container {
            matched.push(rule_match("container", selector, self.container_count));
        }
        for ((_, selector), &count) in rules.content.iter().zip(&self.content_counts) {
            matched.push(rule_match("content", selector, count));
        }
        if let Some((_, selector)) = &rules.title {
            matched.push(rule_match("title", selector, self.title_count));
        }
        let blocks = self
            .blocks
            .iter()
            .map(|raw| normalize_space(&decode_entities(raw)))
            .filter(|text| !text.is_empty() && !rules.template.contains(&normalize_text(text)))
            .collect();
        let title = self
            .title_text
            .map(|raw| normalize_space(&decode_entities(&raw)))
            .filter(|t| !t.is_empty());
        Streamed {
            extraction: Extraction::of_rules(title, blocks, matched),
            containers: self.container_count,
            container_text: self
                .container_text
                .map(|raw| normalize_space(&decode_entities(&raw))),
        }
    }
}

fn rule_match(kind: &'static str, selector: &str, count: usize) -> RuleMatch {
    RuleMatch {
        kind,
        selector: selector.to_string(),
        count,
    }
}

/// Decodes character references in text content as the HTML tokenizer
/// does (`lol_html` hands text over as written): named references with
/// the longest-match rule and the legacy ones without `;`, numeric ones
/// with the Windows-1252 remapping of 0x80–0x9F.
pub(crate) fn decode_entities(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(number) = rest.strip_prefix('#') {
            let (hex, digits) = match number.strip_prefix(['x', 'X']) {
                Some(h) => (true, h),
                None => (false, number),
            };
            let len = digits
                .bytes()
                .take_while(|b| {
                    if hex {
                        b.is_ascii_hexdigit()
                    } else {
                        b.is_ascii_digit()
                    }
                })
                .count();
            if len == 0 {
                out.push('&');
                continue;
            }
            let value = digits[..len].bytes().fold(0u32, |v, b| {
                let d = (b as char).to_digit(16).unwrap_or(0);
                v.saturating_mul(if hex { 16 } else { 10 })
                    .saturating_add(d)
            });
            out.push(numeric_char(value));
            rest = &digits[len..];
            rest = rest.strip_prefix(';').unwrap_or(rest);
            continue;
        }
        let bytes = rest.as_bytes();
        let mut best: Option<(usize, u32, u32)> = None;
        let mut n = 0;
        while n < bytes.len() && n < 40 {
            let b = bytes[n];
            if !(b.is_ascii_alphanumeric() || b == b';') {
                break;
            }
            n += 1;
            match markup5ever::data::NAMED_ENTITIES.get(&rest[..n]) {
                Some(&(a, b2)) => {
                    if a != 0 {
                        best = Some((n, a, b2));
                    }
                }
                None => break,
            }
            if b == b';' {
                break;
            }
        }
        match best {
            Some((len, a, b)) => {
                out.extend(char::from_u32(a));
                if b != 0 {
                    out.extend(char::from_u32(b));
                }
                rest = &rest[len..];
            }
            None => out.push('&'),
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The character a numeric reference stands for.
fn numeric_char(value: u32) -> char {
    match value {
        0 => '\u{FFFD}',
        0x80..=0x9F => markup5ever::data::C1_REPLACEMENTS[(value - 0x80) as usize]
            .unwrap_or_else(|| char::from_u32(value).unwrap_or('\u{FFFD}')),
        v => char::from_u32(v).unwrap_or('\u{FFFD}'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_learners_grammar_and_refuses_the_rest() {
        let s = StreamSelector::parse("div.post-body > p").unwrap();
        assert_eq!(s.compounds.len(), 2);
        assert_eq!(s.child, [true]);
        assert!(StreamSelector::parse("#main article  h2.title").is_some());
        assert!(StreamSelector::parse("html > body > div > p").is_some());
        for unsupported in [
            "p:first-child",
            "a[href]",
            "h1 + p",
            "p ~ p",
            "p, div",
            "> p",
            "p >",
            "div > > p",
            "",
            r"p.a\:b",
            "1p",
        ] {
            assert!(
                StreamSelector::parse(unsupported).is_none(),
                "{unsupported}"
            );
        }
    }

    #[test]
    fn decodes_references_like_the_tokenizer() {
        assert_eq!(decode_entities("a &amp; b"), "a & b");
        assert_eq!(decode_entities("&lt;p&gt;"), "<p>");
        assert_eq!(decode_entities("caf&eacute; &copy 2026"), "café © 2026");
        assert_eq!(decode_entities("&notit;"), "¬it;");
        assert_eq!(decode_entities("&#233;&#xE9;&#XE9"), "ééé");
        assert_eq!(
            decode_entities("&#150; &#0; &#x110000;"),
            "– \u{FFFD} \u{FFFD}"
        );
        assert_eq!(
            decode_entities("AT&T &; &# &unknown;"),
            "AT&T &; &# &unknown;"
        );
        assert_eq!(decode_entities("&nbsp;x"), "\u{a0}x");
    }
}
