//! Eval: corpora in the `sites-dev` layout and the scores we report.
//!
//! A corpus is `<group>/<page>.html` plus gold `<group>/<page>.txt` and a
//! `manifest.tsv` (group, page, html, gold, split, url). Gold texts are read
//! by the scorer only ([`Entry::gold`]); learning sees captures of the
//! `train` pages, never a gold file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use regex::Regex;

/// One page of a corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Site group.
    pub group: String,
    /// Page name.
    pub page: String,
    /// The page's HTML file.
    pub html: PathBuf,
    /// The gold text file: for scoring only.
    gold: PathBuf,
    /// `train` or `test`.
    pub split: String,
    /// The page's original URL.
    pub url: String,
}

impl Entry {
    /// Reads the gold text. Only the scorer calls this.
    pub fn gold(&self) -> std::io::Result<String> {
        std::fs::read_to_string(&self.gold)
    }
}

/// Why a corpus could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The manifest is missing or unreadable.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The manifest lacks a column.
    #[error("{path}: no `{column}` column in the header")]
    Column {
        /// The file.
        path: String,
        /// The column.
        column: &'static str,
    },
}

/// Reads `dir/manifest.tsv`.
pub fn read_manifest(dir: &Path) -> Result<Vec<Entry>, EvalError> {
    let path = dir.join("manifest.tsv");
    let text = std::fs::read_to_string(&path).map_err(|source| EvalError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let col = |column: &'static str| {
        header
            .iter()
            .position(|h| h.trim() == column)
            .ok_or(EvalError::Column {
                path: path.display().to_string(),
                column,
            })
    };
    let (g, p, h, gold, s, u) = (
        col("group")?,
        col("page")?,
        col("html")?,
        col("gold")?,
        col("split")?,
        col("url")?,
    );
    Ok(lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let get = |i: usize| f.get(i).copied().unwrap_or_default().to_string();
            Entry {
                group: get(g),
                page: get(p),
                html: dir.join(get(h)),
                gold: dir.join(get(gold)),
                split: get(s),
                url: get(u),
            }
        })
        .collect())
}

/// Lower-cased `\w+` tokens as a multiset.
pub fn tokens(text: &str) -> HashMap<String, usize> {
    static WORD: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let word = WORD.get_or_init(|| Regex::new(r"\w+").expect("valid regex"));
    let lower = text.to_lowercase();
    let mut out = HashMap::new();
    for m in word.find_iter(&lower) {
        *out.entry(m.as_str().to_string()).or_default() += 1;
    }
    out
}

/// Token precision, recall and F1 of `output` against `gold` (multiset
/// overlap; empty output scores 0).
pub fn token_prf(output: &str, gold: &str) -> (f64, f64, f64) {
    let (o, g) = (tokens(output), tokens(gold));
    let (no, ng): (usize, usize) = (o.values().sum(), g.values().sum());
    if no == 0 || ng == 0 {
        return (0.0, 0.0, 0.0);
    }
    let overlap: usize = o
        .iter()
        .map(|(t, &n)| n.min(g.get(t).copied().unwrap_or(0)))
        .sum();
    let (p, r) = (overlap as f64 / no as f64, overlap as f64 / ng as f64);
    let f1 = if overlap == 0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    };
    (p, r, f1)
}

/// The words the 2013 system compared: case kept, `[A-Za-z0-9]+`, the
/// first 3000.
pub fn sequence_words(text: &str) -> Vec<&str> {
    static WORD: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let word = WORD.get_or_init(|| Regex::new(r"[A-Za-z0-9]+").expect("valid regex"));
    word.find_iter(text)
        .take(3000)
        .map(|m| m.as_str())
        .collect()
}

/// Python's `difflib.SequenceMatcher(None, a, b).ratio()`: 2M / (|a| + |b|),
/// M the total size of the matching blocks found by recursively taking the
/// longest match, with difflib's "popular element" heuristic (autojunk: in
/// a `b` of 200 or more items, items that make up more than 1 % of it are
/// ignored when looking for matches). Both empty: 1.
pub fn sequence_ratio(a: &[&str], b: &[&str]) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    // b2j: positions of each item of b, minus popular items.
    let mut b2j: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, item) in b.iter().enumerate() {
        b2j.entry(item).or_default().push(j);
    }
    if b.len() >= 200 {
        let limit = b.len() / 100 + 1;
        b2j.retain(|_, js| js.len() <= limit);
    }
    let mut matched = 0;
    let mut queue = vec![(0, a.len(), 0, b.len())];
    while let Some((alo, ahi, blo, bhi)) = queue.pop() {
        let (i, j, k) = longest_match(a, b, &b2j, (alo, ahi, blo, bhi));
        if k > 0 {
            matched += k;
            if alo < i && blo < j {
                queue.push((alo, i, blo, j));
            }
            if i + k < ahi && j + k < bhi {
                queue.push((i + k, ahi, j + k, bhi));
            }
        }
    }
    2.0 * matched as f64 / total as f64
}

/// difflib's `find_longest_match` without a junk function: the longest
/// block of `a[alo..ahi]` equal to one of `b[blo..bhi]` (earliest in `a`,
/// then in `b`, on ties), extended by equal popular items on both sides.
fn longest_match(
    a: &[&str],
    b: &[&str],
    b2j: &HashMap<&str, Vec<usize>>,
    (alo, ahi, blo, bhi): (usize, usize, usize, usize),
) -> (usize, usize, usize) {
    let (mut best_i, mut best_j, mut best_k) = (alo, blo, 0);
    let mut j2len: HashMap<usize, usize> = HashMap::new();
    for (i, item) in a.iter().enumerate().take(ahi).skip(alo) {
        let mut next: HashMap<usize, usize> = HashMap::new();
        if let Some(js) = b2j.get(item) {
            for &j in js {
                if j < blo {
                    continue;
                }
                if j >= bhi {
                    break;
                }
                let k = j
                    .checked_sub(1)
                    .and_then(|p| j2len.get(&p))
                    .copied()
                    .unwrap_or(0)
                    + 1;
                next.insert(j, k);
                if k > best_k {
                    best_i = i + 1 - k;
                    best_j = j + 1 - k;
                    best_k = k;
                }
            }
        }
        j2len = next;
    }
    // Popular items were left out of b2j: extend the match over equal
    // items on both ends, as difflib does (no item is junk here).
    while best_i > alo && best_j > blo && a[best_i - 1] == b[best_j - 1] {
        best_i -= 1;
        best_j -= 1;
        best_k += 1;
    }
    while best_i + best_k < ahi && best_j + best_k < bhi && a[best_i + best_k] == b[best_j + best_k]
    {
        best_k += 1;
    }
    (best_i, best_j, best_k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_f1_is_a_multiset_overlap() {
        let (p, r, f1) = token_prf("the cat the", "The cat sat");
        assert!((p - 2.0 / 3.0).abs() < 1e-9);
        assert!((r - 2.0 / 3.0).abs() < 1e-9);
        assert!((f1 - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(token_prf("", "gold").2, 0.0);
        assert_eq!(token_prf("Ünïcode wörds", "ünïcode WÖRDS").2, 1.0);
    }

    #[test]
    fn sequence_ratio_matches_difflib() {
        // Values from Python 3.11: difflib.SequenceMatcher(None, a, b).ratio()
        let words = |s: &'static str| sequence_words(s);
        assert_eq!(sequence_ratio(&words("a b c d"), &words("a b c d")), 1.0);
        // "abxcd" vs "abcd": matches ab, cd -> 2*4/9
        let r = sequence_ratio(&words("a b x c d"), &words("a b c d"));
        assert!((r - 8.0 / 9.0).abs() < 1e-12, "{r}");
        // Case is kept, punctuation splits words.
        let r = sequence_ratio(&words("The cat, sat"), &words("the cat sat"));
        assert!((r - 4.0 / 6.0).abs() < 1e-12, "{r}");
        assert_eq!(sequence_ratio(&[], &[]), 1.0);
        assert_eq!(sequence_ratio(&words("a"), &[]), 0.0);
        assert_eq!(sequence_words(&"w ".repeat(4000)).len(), 3000);
    }

    #[test]
    fn sequence_ratio_ignores_popular_items_like_difflib() {
        // Python: a = ['w%d' % (i % 7) for i in range(400)],
        // b = ['w%d' % ((i * 3) % 7) for i in range(300)] -> 0.002857142857142857;
        // with % 150 and * 7 % 150 -> 0.07714285714285714.
        let seq = |n: usize, m: usize, k: usize| -> Vec<String> {
            (0..n).map(|i| format!("w{}", (i * k) % m)).collect()
        };
        fn refs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        let (a, b) = (seq(400, 7, 1), seq(300, 7, 3));
        assert!((sequence_ratio(&refs(&a), &refs(&b)) - 0.002857142857142857).abs() < 1e-12);
        let (a, b) = (seq(400, 150, 1), seq(300, 150, 7));
        assert!((sequence_ratio(&refs(&a), &refs(&b)) - 0.07714285714285714).abs() < 1e-12);
    }
}
