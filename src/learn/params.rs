//! Learning parameters: the same for every site (no per-site tuning).
//!
//! [`Params`] is a builder; [`Params::check`] returns [`ValidParams`], the
//! only thing the learner accepts.

use serde::Serialize;

use super::LearnError;

/// Learning parameters, unchecked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params {
    /// DBSCAN radius. Distances are Euclidean over the block vectors of
    /// [`super::features`]: each differing style `property=value` adds 1 to
    /// the squared distance per side (a property whose value differs adds 2),
    /// a differing tag path adds 2 × 1.5, geometry adds (Δwidth·g)² and
    /// (Δx·g)². 2.12 (squared 4.5) lets two blocks differ in two property
    /// values, or in one wrapper on the tag path plus a little geometry,
    /// and still be neighbours; three differing values are not.
    pub eps: f64,
    /// DBSCAN minimum neighbourhood weight, the block itself included: two
    /// blocks that look alike (on one page or two) make a pattern; a block
    /// styled like nothing else is noise.
    pub min_points: usize,
    /// Geometry scale: viewport-relative width and x are multiplied by this
    /// before they enter the distance, so 1/g of the viewport width (128 px
    /// at 1280 and g = 10) counts like one differing property.
    pub geometry_scale: f64,
    /// Weight of the tag path feature (one wrapper more or less changes it).
    pub path_weight: f64,
    /// A block text found on this many pages or more is template.
    pub template_pages: usize,
    /// Pages whose source is parsed to test selectors (evenly spread over
    /// the site's pages): the cost of learning grows with this, not with the
    /// number of pages.
    pub selector_pages: usize,
    /// Candidate selectors tested per cluster.
    pub candidates: usize,
    /// Minimum mean F1 on the training pages for a content selector.
    pub min_selector_f1: f64,
    /// Fewer pages than this: refuse to learn.
    pub min_pages: usize,
    /// Which DBSCAN runs.
    pub clusterer: Clusterer,
}

/// DBSCAN implementations; both give the same labels (tested).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Clusterer {
    /// spider's own: distinct vectors weighted by their count, neighbours
    /// found through a pigeonhole index on the discrete features. Cost grows
    /// with distinct vectors and the size of dense regions.
    Indexed,
    /// `linfa-clustering`'s DBSCAN (KdTree) over the dense vectors, every
    /// block one row. Slow past a few thousand blocks; kept as the
    /// reference the indexed one is tested against.
    Linfa,
}

/// Parameters that passed [`Params::check`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidParams(Params);

impl Default for Params {
    fn default() -> Params {
        Params {
            eps: 4.5f64.sqrt(),
            min_points: 2,
            geometry_scale: 10.0,
            path_weight: 1.5,
            template_pages: 2,
            selector_pages: 12,
            candidates: 40,
            min_selector_f1: 0.5,
            min_pages: 2,
            clusterer: Clusterer::Indexed,
        }
    }
}

impl Params {
    /// Checks the values.
    pub fn check(self) -> Result<ValidParams, LearnError> {
        let bad = |what: &str| Err(LearnError::Params(what.to_string()));
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return bad("eps must be a positive number");
        }
        if self.min_points < 1 {
            return bad("min_points must be at least 1");
        }
        if !(self.geometry_scale.is_finite() && self.geometry_scale >= 0.0) {
            return bad("geometry_scale must be zero or more");
        }
        if !(self.path_weight.is_finite() && self.path_weight >= 1.0) {
            return bad("path_weight must be at least 1 (the index relies on it)");
        }
        if self.template_pages < 2 {
            return bad("template_pages must be at least 2");
        }
        if self.selector_pages < 1 || self.candidates < 1 {
            return bad("selector_pages and candidates must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.min_selector_f1) {
            return bad("min_selector_f1 must be between 0 and 1");
        }
        if self.min_pages < 1 {
            return bad("min_pages must be at least 1");
        }
        Ok(ValidParams(self))
    }
}

impl std::ops::Deref for ValidParams {
    type Target = Params;
    fn deref(&self) -> &Params {
        &self.0
    }
}

impl Default for ValidParams {
    fn default() -> ValidParams {
        // The defaults pass their own check (tested below).
        Params::default()
            .check()
            .expect("default parameters are valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_refused() {
        let _ = ValidParams::default();
        let bad = Params {
            eps: -1.0,
            ..Params::default()
        };
        assert!(bad.check().is_err());
        let bad = Params {
            path_weight: 0.5,
            ..Params::default()
        };
        assert!(bad.check().is_err());
    }
}
