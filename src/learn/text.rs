//! Text: tokenise, drop stop words, stem, and weigh terms by TF-IDF.
//!
//! Tokens are lower-cased runs of letters and digits. Words are stemmed with
//! the Snowball stemmer of the page's language (`lang`, English when unknown
//! or unsupported) after stop words of that language are dropped. Scripts
//! written without spaces (Han, Hiragana, Katakana) give overlapping
//! character bigrams instead, so a Chinese title still shares terms with
//! its article.

use std::collections::{HashMap, HashSet};

use rust_stemmers::{Algorithm, Stemmer};

/// Stems and filters words for one language.
pub struct Analyzer {
    stemmer: Option<Stemmer>,
    stop: HashSet<&'static str>,
}

impl Analyzer {
    /// An analyzer for a `lang` value such as `en`, `de-AT`, `es_ES`.
    pub fn new(lang: Option<&str>) -> Analyzer {
        let code = lang
            .and_then(|l| l.split(['-', '_']).next())
            .map(|l| l.trim().to_ascii_lowercase())
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| "en".to_string());
        let algorithm = match code.as_str() {
            "ar" => Some(Algorithm::Arabic),
            "da" => Some(Algorithm::Danish),
            "nl" => Some(Algorithm::Dutch),
            "en" => Some(Algorithm::English),
            "fi" => Some(Algorithm::Finnish),
            "fr" => Some(Algorithm::French),
            "de" => Some(Algorithm::German),
            "el" => Some(Algorithm::Greek),
            "hu" => Some(Algorithm::Hungarian),
            "it" => Some(Algorithm::Italian),
            "no" | "nb" | "nn" => Some(Algorithm::Norwegian),
            "pt" => Some(Algorithm::Portuguese),
            "ro" => Some(Algorithm::Romanian),
            "ru" => Some(Algorithm::Russian),
            "es" => Some(Algorithm::Spanish),
            "sv" => Some(Algorithm::Swedish),
            "ta" => Some(Algorithm::Tamil),
            "tr" => Some(Algorithm::Turkish),
            _ => None,
        };
        // An unknown language: no stemming, but still its stop words when the
        // list exists (`stop-words` knows more languages than Snowball).
        let stop_code = match code.as_str() {
            "nb" | "nn" => "no",
            c => c,
        };
        let stop = stop_words::lookup(stop_code)
            .or_else(|| {
                algorithm
                    .is_none()
                    .then(|| stop_words::lookup("en"))
                    .flatten()
            })
            .unwrap_or(&[])
            .iter()
            .copied()
            .collect();
        Analyzer {
            stemmer: algorithm.map(Stemmer::create),
            stop,
        }
    }

    /// The terms of `text`, in order, repeats kept.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for word in words(text) {
            if is_unspaced(&word) {
                let chars: Vec<char> = word.chars().collect();
                if chars.len() == 1 {
                    out.push(word);
                } else {
                    out.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
                }
                continue;
            }
            if self.stop.contains(word.as_str()) {
                continue;
            }
            let stem = match &self.stemmer {
                Some(s) => s.stem(&word).into_owned(),
                None => word,
            };
            out.push(stem);
        }
        out
    }
}

/// Lower-cased words: runs of alphanumeric characters. A run that switches
/// between a spaced and an unspaced script is split there.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

/// Calls `f` with each lower-cased word of `text` (as [`words`] splits
/// it), reusing one buffer.
pub fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut unspaced = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            let u = is_unspaced_char(c);
            if !word.is_empty() && u != unspaced {
                f(&word);
                word.clear();
            }
            unspaced = u;
            if c.is_ascii() {
                word.push(c.to_ascii_lowercase());
            } else {
                word.extend(c.to_lowercase());
            }
        } else if !word.is_empty() {
            f(&word);
            word.clear();
        }
    }
    if !word.is_empty() {
        f(&word);
    }
}

/// Number of words in `text` (as [`words`] splits it), without allocating.
pub fn word_count(text: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for c in text.chars() {
        let alnum = c.is_alphanumeric();
        if alnum && (!in_word || is_unspaced_char(c)) {
            count += 1;
        }
        in_word = alnum;
    }
    count
}

fn is_unspaced_char(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified
        | 0xF900..=0xFAFF // CJK compatibility
        | 0x0E00..=0x0E7F // Thai
    )
}

fn is_unspaced(word: &str) -> bool {
    word.chars().next().is_some_and(is_unspaced_char)
}

/// Term weights of one document, TF-IDF over a collection.
pub type Weights = HashMap<String, f64>;

/// Inverse document frequencies over a collection of documents (term sets).
#[derive(Debug, Default)]
pub struct Idf {
    docs: usize,
    df: HashMap<String, usize>,
}

impl Idf {
    /// Counts each document's distinct terms.
    pub fn new<'a>(docs: impl IntoIterator<Item = &'a [String]>) -> Idf {
        let mut idf = Idf::default();
        for doc in docs {
            idf.docs += 1;
            let distinct: HashSet<&String> = doc.iter().collect();
            for term in distinct {
                *idf.df.entry(term.clone()).or_default() += 1;
            }
        }
        idf
    }

    /// ln(N / df): 0 for a term in every document (a site name in every
    /// title says nothing about any one page).
    pub fn idf(&self, term: &str) -> f64 {
        match self.df.get(term) {
            Some(&df) if df > 0 => (self.docs as f64 / df as f64).ln(),
            _ => (self.docs.max(1) as f64).ln(),
        }
    }

    /// TF-IDF weights of a document's terms.
    pub fn weigh(&self, doc: &[String]) -> Weights {
        let mut tf: HashMap<&String, usize> = HashMap::new();
        for term in doc {
            *tf.entry(term).or_default() += 1;
        }
        tf.into_iter()
            .map(|(t, n)| (t.clone(), n as f64 * self.idf(t)))
            .filter(|(_, w)| *w > 0.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_drops_stop_words_and_stems() {
        let a = Analyzer::new(Some("en-GB"));
        assert_eq!(
            a.terms("The Runners were RUNNING to the gardens"),
            ["runner", "run", "garden"]
        );
    }

    #[test]
    fn german_and_spanish_stem_in_their_language() {
        let de = Analyzer::new(Some("de"));
        assert_eq!(de.terms("Die Häuser und die Gärten"), ["haus", "gart"]);
        let es = Analyzer::new(Some("es_ES"));
        assert_eq!(es.terms("Las canciones de los niños"), ["cancion", "niñ"]);
    }

    #[test]
    fn unknown_language_falls_back_to_english_stop_words() {
        let a = Analyzer::new(Some("xx"));
        assert_eq!(a.terms("the gardens"), ["gardens"]);
        let a = Analyzer::new(None);
        assert_eq!(a.terms("the gardens"), ["garden"]);
    }

    #[test]
    fn chinese_and_japanese_use_character_bigrams() {
        let a = Analyzer::new(Some("zh"));
        assert_eq!(a.terms("北京天气"), ["北京", "京天", "天气"]);
        // Mixed scripts split where the script changes.
        assert_eq!(words("iPhone手机"), ["iphone", "手机"]);
        assert_eq!(word_count("iPhone 手机 is"), 4);
        let mut seen = Vec::new();
        for_each_word("iPhone手机, Straße!", |w| seen.push(w.to_string()));
        assert_eq!(seen, words("iPhone手机, Straße!"));
    }

    #[test]
    fn idf_is_zero_for_terms_on_every_page() {
        let docs: Vec<Vec<String>> = vec![
            vec!["frost".into(), "valley".into()],
            vec!["otter".into(), "valley".into()],
            vec!["train".into(), "valley".into()],
        ];
        let idf = Idf::new(docs.iter().map(Vec::as_slice));
        assert_eq!(idf.idf("valley"), 0.0);
        let w = idf.weigh(&docs[0]);
        assert!(w["frost"] > 1.0);
        assert!(!w.contains_key("valley"));
    }
}
