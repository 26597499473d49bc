//! Select: which clusters are the article.
//!
//! Paragraphs, subheadings, quotes and lists of one article usually fall in
//! different clusters, so taking the top cluster alone loses recall (0.60
//! F1 for the 2013 method). The top cluster sets the region: on each page,
//! the bounding box of its blocks. Another cluster joins when most of its
//! blocks sit inside that region *and* it is text of the page's own
//! (mostly non-template), not links; clusters under `nav`, `aside`,
//! `header` or `footer` join only when relevant to the page's title.
//! Position alone is not enough: share bars and ad slots sit inside the
//! article too, and they are template or link text.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use super::Model;
use super::score::Score;

/// Slack around the top cluster's box, CSS pixels.
const REGION_MARGIN: f32 = 16.0;
/// Share of a cluster's blocks that must be inside the region.
const MIN_INSIDE: f64 = 0.7;
/// Above this template share a cluster is boilerplate.
const MAX_TEMPLATE_SHARE: f64 = 0.5;
/// Above this link density a cluster is navigation.
const MAX_LINK_DENSITY: f64 = 0.5;
/// Relevance a chrome-tagged cluster needs to join.
const CHROME_MIN_RELEVANCE: f64 = 0.1;
/// Prose share a cluster needs to count as inside between the headline and
/// the region.
const PROSE_ABOVE: f64 = 0.5;
/// Tags that mark page chrome when on a block's path.
const CHROME_TAGS: &[&str] = &["nav", "aside", "header", "footer", "form", "menu"];

/// What a cluster is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Article text.
    Content,
    /// The headline.
    Title,
    /// Not content, and inside the content's container: excluded by rule.
    Excluded,
    /// Not content.
    Other,
}

/// The selection.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Top cluster.
    pub top: Option<usize>,
    /// Role per cluster.
    pub roles: Vec<Role>,
    /// Why, per cluster.
    pub reasons: Vec<String>,
    /// Per page: the region (x0, y0, x1, y1).
    pub regions: HashMap<u32, [f32; 4]>,
}

impl Selection {
    /// Clusters with role [`Role::Content`].
    pub fn content(&self) -> Vec<usize> {
        (0..self.roles.len())
            .filter(|&c| self.roles[c] == Role::Content)
            .collect()
    }
}

/// Chooses the content clusters.
pub fn select(model: &Model, scores: &[Score]) -> Selection {
    let k = model.clusters;
    let mut roles = vec![Role::Other; k];
    let mut reasons = vec![String::new(); k];
    let top = (0..k)
        .filter(|&c| scores[c].total > 0.0)
        .max_by(|&a, &b| scores[a].total.total_cmp(&scores[b].total).then(b.cmp(&a)));

    // The headline's cluster: where most pages' headlines fall.
    let mut headline_votes: HashMap<usize, usize> = HashMap::new();
    for page in &model.pages {
        if let Some((h, _)) = page.headline
            && let Some(c) = model.blocks[h].cluster
        {
            *headline_votes.entry(c).or_default() += 1;
        }
    }
    let title = headline_votes
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(c, _)| c);

    let Some(top) = top else {
        for reason in &mut reasons {
            *reason = "no cluster has a positive score".into();
        }
        return Selection {
            top: None,
            roles,
            reasons,
            regions: HashMap::new(),
        };
    };
    roles[top] = Role::Content;
    reasons[top] = "top score".into();

    let mut regions: HashMap<u32, [f32; 4]> = HashMap::new();
    for block in model.blocks.iter().filter(|b| b.cluster == Some(top)) {
        let [x, y, w, h] = block.bounds;
        let r = regions.entry(block.page).or_insert([
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
        ]);
        r[0] = r[0].min(x - REGION_MARGIN);
        r[1] = r[1].min(y - REGION_MARGIN);
        r[2] = r[2].max(x + w + REGION_MARGIN);
        r[3] = r[3].max(y + h + REGION_MARGIN);
    }

    // Per cluster: (blocks on region pages, blocks inside, blocks with
    // chrome tags, blocks).
    let mut counts = vec![(0usize, 0usize, 0usize, 0usize); k];
    for block in &model.blocks {
        let Some(c) = block.cluster else { continue };
        counts[c].3 += 1;
        if model.tags(block).iter().any(|t| CHROME_TAGS.contains(t)) {
            counts[c].2 += 1;
        }
        let Some(r) = regions.get(&block.page) else {
            continue;
        };
        counts[c].0 += 1;
        let [x, y, w, h] = block.bounds;
        let (cx, cy) = (x + w / 2.0, y + h / 2.0);
        // Prose between the headline and the top cluster (an intro in its
        // own wrapper) is inside too; short strips there (bylines) are not.
        let mut top_edge = r[1];
        if scores[c].prose >= PROSE_ABOVE
            && let Some((hb, _)) = model.pages[block.page as usize].headline
        {
            top_edge = top_edge.min(model.blocks[hb].bounds[1]);
        }
        if cx >= r[0] && cx <= r[2] && cy >= top_edge && cy <= r[3] {
            counts[c].1 += 1;
        }
    }

    for c in 0..k {
        if c == top {
            continue;
        }
        let s = &scores[c];
        let (on_region_pages, inside, chrome, blocks) = counts[c];
        let inside_share = if on_region_pages > 0 {
            inside as f64 / on_region_pages as f64
        } else {
            0.0
        };
        let chrome_tagged = chrome * 2 > blocks;
        reasons[c] = if inside_share < MIN_INSIDE {
            format!(
                "outside the content region ({:.0}% inside)",
                inside_share * 100.0
            )
        } else if s.template_share > MAX_TEMPLATE_SHARE {
            format!(
                "template text ({:.0}% recurs on other pages)",
                s.template_share * 100.0
            )
        } else if s.link_density > MAX_LINK_DENSITY {
            format!("links ({:.0}% of its text)", s.link_density * 100.0)
        } else if chrome_tagged && s.relevance < CHROME_MIN_RELEVANCE {
            "navigation/aside/header/footer, not relevant to the titles".into()
        } else if s.total <= 0.0 {
            "no non-template text".into()
        } else {
            roles[c] = Role::Content;
            format!("inside the content region ({:.0}%)", inside_share * 100.0)
        };
        if Some(c) == title && roles[c] != Role::Content {
            roles[c] = Role::Title;
            reasons[c] = "holds the headlines".into();
        }
    }
    Selection {
        top: Some(top),
        roles,
        reasons,
        regions,
    }
}

/// Blocks in no cluster (one-offs: a figure caption, a table on one page)
/// that sit inside the content region and are text of the page's own,
/// gathered into one more cluster, selected as content. Returns its id.
pub fn adopt_noise(model: &mut Model, selection: &mut Selection) -> Option<usize> {
    let id = model.clusters;
    let mut adopted = 0;
    for i in 0..model.blocks.len() {
        let block = &model.blocks[i];
        if block.cluster.is_some() || block.template || block.link {
            continue;
        }
        let Some(r) = selection.regions.get(&block.page) else {
            continue;
        };
        let [x, y, w, h] = block.bounds;
        let (cx, cy) = (x + w / 2.0, y + h / 2.0);
        let inside = cx >= r[0] && cx <= r[2] && cy >= r[1] && cy <= r[3];
        if !inside || model.tags(block).iter().any(|t| CHROME_TAGS.contains(t)) {
            continue;
        }
        model.blocks[i].cluster = Some(id);
        adopted += 1;
    }
    if adopted == 0 {
        return None;
    }
    model.clusters += 1;
    selection.roles.push(Role::Content);
    selection.reasons.push(format!(
        "{adopted} unclustered block(s) inside the content region"
    ));
    Some(id)
}

/// (cluster, anchor key)
type AnchorGroup = (usize, Option<u32>);

/// Splits clusters by container.
///
/// Blocks styled alike but in different places of the page are different
/// things: comment threads are often styled like the article, and on an
/// unstyled page every `div` looks like every other. Each block is filed
/// under its nearest *stable anchor*: the closest ancestor with a class or
/// id found on most pages (`div.entry-content`, `div.comment-body`,
/// `#sidebar`). A cluster whose blocks fall under several anchors becomes
/// one cluster per anchor; scoring then picks the article's part
/// (relevance, closeness to the headline) and the others join it only when
/// they sit inside its region. Returns the number of clusters added.
pub fn split_by_anchor(model: &mut Model) -> usize {
    let n_pages = model.pages.len();
    // Anchor key per interned step: tag + classes, or #id. A step's id is
    // left out when it has classes, so a per-page id does not split a key.
    let mut key_ids: HashMap<String, u32> = HashMap::new();
    let step_keys: Vec<Option<u32>> = model
        .steps
        .iter()
        .map(|s| {
            let key = if !s.classes.is_empty() {
                format!("{}.{}", s.tag, s.classes.join("."))
            } else if let Some(id) = &s.id {
                format!("#{id}")
            } else {
                return None;
            };
            let next = key_ids.len() as u32;
            Some(*key_ids.entry(key).or_insert(next))
        })
        .collect();
    let mut key_pages: Vec<(u32, u32)> = vec![(u32::MAX, 0); key_ids.len()]; // last page, count
    for block in &model.blocks {
        for &s in block.steps.iter() {
            if let Some(k) = step_keys[s as usize] {
                let e = &mut key_pages[k as usize];
                if e.0 != block.page {
                    e.0 = block.page;
                    e.1 += 1;
                }
            }
        }
    }
    let min_pages = ((n_pages as f64 * 0.6).ceil() as u32).max(2);
    let stable = |k: u32| key_pages[k as usize].1 >= min_pages;

    // Per cluster, group by nearest stable anchor (the block's own step
    // excluded).
    let mut groups: HashMap<AnchorGroup, Vec<usize>> = HashMap::new();
    for (i, block) in model.blocks.iter_mut().enumerate() {
        let steps = &block.steps[..block.steps.len().saturating_sub(1)];
        let depth = steps
            .iter()
            .rposition(|&s| step_keys[s as usize].is_some_and(stable));
        let anchor = depth.and_then(|d| step_keys[steps[d] as usize]);
        // Which element the anchor is on its page: its index path.
        block.anchor = depth.map_or(0, |d| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            block.node[..=d.min(block.node.len().saturating_sub(1))].hash(&mut h);
            h.finish() | 1
        });
        let Some(c) = block.cluster else { continue };
        groups.entry((c, anchor)).or_default().push(i);
    }
    let mut groups: Vec<(AnchorGroup, Vec<usize>)> = groups.into_iter().collect();
    // Per cluster the biggest group keeps the id; the order is fixed so
    // ids do not change between runs.
    groups.sort_by(|a, b| {
        a.0.0
            .cmp(&b.0.0)
            .then(b.1.len().cmp(&a.1.len()))
            .then(a.0.1.cmp(&b.0.1))
    });
    let mut added = 0;
    let mut previous = None;
    for ((c, _), blocks) in groups {
        if previous == Some(c) {
            let id = model.clusters;
            model.clusters += 1;
            added += 1;
            for b in blocks {
                model.blocks[b].cluster = Some(id);
            }
        }
        previous = Some(c);
    }
    added
}
