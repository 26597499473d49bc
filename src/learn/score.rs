//! Score: how likely each cluster is the article.
//!
//! The 2013 method scored clusters by TF-IDF similarity to the titles alone
//! and summed over blocks, so long comment threads won and, when sidebars
//! listed every post's title, every title word had IDF 0 and every cluster
//! scored 0. Here the score is a product of parts, each in a fixed range:
//!
//! - `mass`: mean non-template words per page (its square root enters, so
//!   length helps but does not dominate);
//! - `coverage`: share of the site's pages the cluster is on;
//! - `prose`: non-template words per block over 15, capped at 1 (sentences,
//!   not fragments);
//! - `link_density`: share of characters inside links, entering as (1-d)²;
//! - `template_share`: share of words in text that recurs on other pages;
//! - `relevance`: per page, the TF-IDF-weighted share of *this* page's title
//!   and description terms found in the cluster minus the mean share of the
//!   *other* pages' terms (a sidebar listing every post's title finds all
//!   of them and nets zero), floored at 0, averaged over pages; enters as
//!   (1 + 2r). IDF is over the site's pages, so the site name weighs 0.
//! - `headline`: 1 / (1 + d), d the distance in viewport heights from the
//!   headline (the top of the page when none was found) to the cluster's
//!   first block, so a comment thread far below scores less than the text
//!   right under the headline.
//! - `repeats`: 1 / (1 + ln n), n the mean number of elements per page that
//!   its blocks' nearest stable anchors are: the article sits in one
//!   `div.entry-content`, a comment thread in one `div.comment` per comment
//!   (a thread can be longer and as relevant as the article it discusses).
//!
//! Pages without metadata still score: relevance is then 0 and the other
//! parts decide.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::Model;
use super::text::Idf;

/// Words per block at which a cluster counts as full prose.
const PROSE_WORDS: f64 = 15.0;

/// A cluster's score and its parts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Score {
    /// The product of the parts.
    pub total: f64,
    /// Mean non-template words per page the cluster is on.
    pub mass: f64,
    /// Share of the site's pages it is on.
    pub coverage: f64,
    /// Non-template words per block / 15, at most 1.
    pub prose: f64,
    /// Share of characters inside links.
    pub link_density: f64,
    /// Share of words in recurring (template) text.
    pub template_share: f64,
    /// Title/description relevance, 0 to 1.
    pub relevance: f64,
    /// Closeness to the headline, 0 to 1.
    pub headline: f64,
    /// 1 / (1 + ln n), n the mean number of containers per page its blocks
    /// sit in: an article is one container, a comment thread one per
    /// comment.
    #[serde(default)]
    pub repeats: f64,
}

#[derive(Default)]
struct PageAgg {
    words: f64,
    content_words: f64,
    content_blocks: f64,
    min_y: f64,
    terms: HashSet<u32>,
    anchors: HashSet<u64>,
}

/// Scores every cluster of the model.
pub fn score_clusters(model: &Model) -> Vec<Score> {
    let n = model.pages.len();
    let term_docs: Vec<Vec<String>> = model
        .pages
        .iter()
        .map(|p| {
            p.meta_terms
                .iter()
                .map(|&t| model.terms[t as usize].clone())
                .collect()
        })
        .collect();
    let idf = Idf::new(term_docs.iter().map(Vec::as_slice));
    // Per page: term -> weight / page's total weight (its share).
    let shares: Vec<HashMap<u32, f64>> = model
        .pages
        .iter()
        .map(|p| {
            let weights: Vec<(u32, f64)> = p
                .meta_terms
                .iter()
                .map(|&t| (t, idf.idf(&model.terms[t as usize])))
                .filter(|(_, w)| *w > 0.0)
                .collect();
            let total: f64 = weights.iter().map(|(_, w)| w).sum();
            weights.into_iter().map(|(t, w)| (t, w / total)).collect()
        })
        .collect();
    // Sum of every page's share per term, to get "the other pages" in O(1).
    let mut global: HashMap<u32, f64> = HashMap::new();
    for page in &shares {
        for (&t, &s) in page {
            *global.entry(t).or_default() += s;
        }
    }

    let mut per_cluster: Vec<HashMap<u32, PageAgg>> =
        (0..model.clusters).map(|_| HashMap::new()).collect();
    let mut totals = vec![(0.0f64, 0.0f64, 0.0f64, 0.0f64); model.clusters]; // words, template words, chars, link chars
    for block in &model.blocks {
        let Some(c) = block.cluster else { continue };
        let agg = per_cluster[c].entry(block.page).or_insert_with(|| PageAgg {
            min_y: f64::INFINITY,
            ..PageAgg::default()
        });
        let words = f64::from(block.words);
        agg.words += words;
        if !block.template {
            agg.content_words += words;
            agg.content_blocks += 1.0;
            if !shares[block.page as usize].is_empty() {
                agg.terms.extend(block.terms.iter().copied());
            }
        }
        agg.min_y = agg.min_y.min(f64::from(block.bounds[1]));
        agg.anchors.insert(block.anchor);
        let t = &mut totals[c];
        t.0 += words;
        if block.template {
            t.1 += words;
        }
        t.2 += f64::from(block.chars);
        t.3 += f64::from(block.link_chars);
    }

    per_cluster
        .iter()
        .zip(&totals)
        .map(|(pages, &(words, template_words, chars, link_chars))| {
            let present = pages.len() as f64;
            if present == 0.0 {
                return Score::default();
            }
            let content_words: f64 = pages.values().map(|a| a.content_words).sum();
            let content_blocks: f64 = pages.values().map(|a| a.content_blocks).sum();
            let mass = content_words / present;
            let coverage = present / n as f64;
            let prose = if content_blocks > 0.0 {
                (content_words / content_blocks / PROSE_WORDS).min(1.0)
            } else {
                0.0
            };
            let link_density = if chars > 0.0 { link_chars / chars } else { 0.0 };
            let template_share = if words > 0.0 {
                template_words / words
            } else {
                0.0
            };

            let mut relevance = 0.0;
            let mut headline_sum = 0.0;
            let mut instances = 0.0;
            for (&p, agg) in pages {
                let own = &shares[p as usize];
                let mut own_share = 0.0;
                let mut other_share = 0.0;
                for t in &agg.terms {
                    let mine = own.get(t).copied().unwrap_or(0.0);
                    own_share += mine;
                    other_share += global.get(t).copied().unwrap_or(0.0) - mine;
                }
                let others = (n - 1).max(1) as f64;
                relevance += (own_share - other_share / others).max(0.0);
                let page = &model.pages[p as usize];
                // Without a headline, the top of the page stands in: the
                // article still comes before the comments.
                let reference = page
                    .headline
                    .map_or(0.0, |(h, _)| f64::from(model.blocks[h].bounds[1]));
                let vh = f64::from(page.viewport.1.max(1));
                let d = (agg.min_y - reference) / vh;
                headline_sum += 1.0 / (1.0 + d.abs());
                instances += agg.anchors.len() as f64;
            }
            let repeats = 1.0 / (1.0 + (instances / present).ln());
            let relevance = relevance / present;
            let headline = headline_sum / present;
            let total = mass.sqrt()
                * coverage
                * prose
                * (1.0 - link_density).powi(2)
                * (1.0 - template_share)
                * (1.0 + 2.0 * relevance)
                * headline
                * repeats;
            Score {
                total,
                mass,
                coverage,
                prose,
                link_density,
                template_share,
                relevance,
                headline,
                repeats,
            }
        })
        .collect()
}
