//! Helpers for unit tests: blocks and captures built by hand, without a
//! browser (the integration tests in `tests/` use real Chromium).

use std::collections::BTreeMap;

use crate::capture::{Block, Bounds, Capture, Meta, SCHEMA_VERSION, SelectorStep, Viewport};
use crate::site::Site;

/// A block with a tag path, style, width and x.
pub fn block(tag_path: &[&str], style: &[(&str, &str)], width: f64, x: f64) -> Block {
    Block {
        text: "text".into(),
        tag: tag_path.last().unwrap().to_string(),
        link_text_len: 0,
        selector: tag_path
            .iter()
            .map(|t| SelectorStep {
                tag: t.to_string(),
                id: None,
                classes: vec![],
            })
            .collect(),
        node: vec![0; tag_path.len()],
        bounds: Bounds {
            x,
            y: 0.0,
            width,
            height: 20.0,
        },
        style: style
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// A capture of `html` as a browser would record it, roughly: every
/// element in `block_tags` with direct text is a block; its style is
/// derived from its tag and classes and those of its ancestors (so elements
/// in the same place look alike), its y from document order.
pub fn capture(site: &str, url: &str, title: &str, html: &str) -> Capture {
    use scraper::{ElementRef, Html, Node};
    let doc = Html::parse_document(html);
    let block_tags = [
        "p",
        "h1",
        "h2",
        "h3",
        "li",
        "blockquote",
        "figcaption",
        "td",
        "div",
    ];
    let mut blocks = Vec::new();
    fn walk(
        e: ElementRef<'_>,
        path: &mut Vec<(SelectorStep, u32)>,
        index: u32,
        block_tags: &[&str],
        blocks: &mut Vec<Block>,
    ) {
        let v = e.value();
        let mut classes: Vec<String> = v.classes().map(String::from).collect();
        classes.sort();
        path.push((
            SelectorStep {
                tag: v.name().to_string(),
                id: v.id().map(String::from),
                classes,
            },
            index,
        ));
        let own_text: String = e
            .children()
            .filter_map(|c| match c.value() {
                Node::Text(t) => Some(t.to_string()),
                Node::Element(el) if el.name() == "a" || el.name() == "b" => {
                    ElementRef::wrap(c).map(|a| a.text().collect::<String>())
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" ");
        let text = own_text.split_whitespace().collect::<Vec<_>>().join(" ");
        if block_tags.contains(&v.name()) && !text.is_empty() {
            let link_text_len: usize = e
                .children()
                .filter_map(ElementRef::wrap)
                .filter(|c| c.value().name() == "a")
                .map(|a| {
                    a.text()
                        .collect::<String>()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .chars()
                        .count()
                })
                .sum();
            let mut style = BTreeMap::new();
            for (step, _) in path.iter().skip(2) {
                for class in &step.classes {
                    style.insert(format!("--{class}"), "1".into());
                }
            }
            style.insert("font-size".into(), format!("{}px", 10 + v.name().len()));
            let depth = path.len() as f64;
            blocks.push(Block {
                text: text.clone(),
                tag: v.name().to_string(),
                link_text_len: link_text_len.min(text.chars().count()),
                selector: path.iter().map(|(s, _)| s.clone()).collect(),
                node: path.iter().map(|(_, i)| *i).collect(),
                bounds: Bounds {
                    x: depth * 10.0,
                    y: blocks.len() as f64 * 30.0,
                    width: 600.0,
                    height: 24.0,
                },
                style,
            });
        }
        for (i, child) in e.child_elements().enumerate() {
            walk(child, path, i as u32, block_tags, blocks);
        }
        path.pop();
    }
    walk(
        doc.root_element(),
        &mut Vec::new(),
        0,
        &block_tags,
        &mut blocks,
    );
    Capture {
        schema: SCHEMA_VERSION,
        site: Site::new(site).unwrap(),
        url: url.to_string(),
        captured_at: time::OffsetDateTime::UNIX_EPOCH,
        viewport: Viewport::default(),
        lang: Some("en".into()),
        meta: Meta {
            title: Some(format!("{title} | The Site")),
            og_title: Some(title.to_string()),
            ..Meta::default()
        },
        html: html.to_string(),
        blocks,
        truncated: false,
        agent: None,
    }
}
