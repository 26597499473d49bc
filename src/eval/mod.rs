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
}
