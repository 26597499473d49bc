//! Features: turn a block's style, tag path and geometry into a vector, and
//! collapse identical vectors.
//!
//! A vector is sparse: the sorted ids of its discrete features (one per CSS
//! `property=value` in the block's style, one for its tag, one for its tag
//! path `html > body > div > p`) plus two continuous ones, width and x as a
//! share of the viewport width. Thousands of distinct property values are
//! normal on one site, so the discrete part is never expanded to a dense
//! row except for the linfa reference (see [`super::cluster`]).
//!
//! Geometry is rounded to whole CSS pixels before vectors are compared for
//! identity, so sub-pixel layout noise does not split a group of identical
//! blocks.

use rustc_hash::FxHashMap;

use crate::capture::Block;

/// Index of a distinct vector.
pub type VectorId = u32;

/// One distinct block vector and how many blocks share it.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// Sorted discrete feature ids.
    pub features: Vec<u32>,
    /// Width and x, in CSS pixels, rounded.
    pub width: i32,
    /// Left edge.
    pub x: i32,
    /// Viewport width the geometry is relative to.
    pub viewport_width: u32,
    /// Blocks with exactly this vector.
    pub count: u32,
}

/// What kind of feature an id stands for; the kind sets its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureKind {
    /// `property=value`.
    Style,
    /// The block's tag.
    Tag,
    /// The block's tag path.
    Path,
}

/// Interns features and collapses identical vectors.
#[derive(Debug, Default)]
pub struct Vectoriser {
    // One table per kind, so a lookup by &str needs no allocation.
    ids: [FxHashMap<String, u32>; 3],
    kinds: Vec<FeatureKind>,
    vectors: Vec<Vector>,
    index: FxHashMap<(Vec<u32>, i32, i32, u32), VectorId>,
}

impl Vectoriser {
    /// An empty vectoriser.
    pub fn new() -> Vectoriser {
        Vectoriser::default()
    }

    fn intern(&mut self, kind: FeatureKind, name: &str) -> u32 {
        let table = &mut self.ids[kind as usize];
        if let Some(&id) = table.get(name) {
            return id;
        }
        let id = self.kinds.len() as u32;
        self.kinds.push(kind);
        table.insert(name.to_string(), id);
        id
    }

    /// Adds one block and returns its vector's id.
    pub fn add(&mut self, block: &Block, viewport_width: u32) -> VectorId {
        let mut features = Vec::with_capacity(block.style.len() + 2);
        let mut name = String::new();
        for (property, value) in &block.style {
            name.clear();
            name.push_str(property);
            name.push('=');
            name.push_str(value);
            features.push(self.intern(FeatureKind::Style, &name));
        }
        features.push(self.intern(FeatureKind::Tag, &block.tag));
        let path = tag_path(block);
        features.push(self.intern(FeatureKind::Path, &path));
        features.sort_unstable();
        features.dedup();
        let width = round_px(block.bounds.width);
        let x = round_px(block.bounds.x);
        let key = (features, width, x, viewport_width);
        if let Some(&id) = self.index.get(&key) {
            self.vectors[id as usize].count += 1;
            return id;
        }
        let id = self.vectors.len() as VectorId;
        self.vectors.push(Vector {
            features: key.0.clone(),
            width,
            x,
            viewport_width: viewport_width.max(1),
            count: 1,
        });
        self.index.insert(key, id);
        id
    }

    /// The distinct vectors, in order of first occurrence.
    pub fn vectors(&self) -> &[Vector] {
        &self.vectors
    }

    /// Number of distinct features.
    pub fn feature_count(&self) -> usize {
        self.kinds.len()
    }

    /// Drops the lookup tables once all blocks are in (they can be large).
    pub fn finish(mut self) -> (Vec<Vector>, Vec<FeatureKind>) {
        self.index = FxHashMap::default();
        self.ids = Default::default();
        (self.vectors, self.kinds)
    }
}

/// `html > body > div > p`.
pub fn tag_path(block: &Block) -> String {
    let mut path = String::new();
    for (i, step) in block.selector.iter().enumerate() {
        if i > 0 {
            path.push_str(" > ");
        }
        path.push_str(&step.tag);
    }
    path
}

fn round_px(v: f64) -> i32 {
    if v.is_finite() {
        v.round().clamp(-1e9, 1e9) as i32
    } else {
        0
    }
}

/// Weights that turn the discrete features into squared distance.
#[derive(Debug, Clone, Copy)]
pub struct Weights {
    /// Tag path.
    pub path: f64,
    /// Geometry scale (see [`super::Params::geometry_scale`]).
    pub geometry: f64,
}

/// Squared distance between two vectors, as the dense embedding of
/// [`dense_row`] would give it.
pub fn distance2(a: &Vector, b: &Vector, kinds: &[FeatureKind], w: Weights) -> f64 {
    let mut d = 0.0;
    let (mut i, mut j) = (0, 0);
    let weight = |f: u32| feature_weight(kinds[f as usize], w);
    while i < a.features.len() && j < b.features.len() {
        let (fa, fb) = (a.features[i], b.features[j]);
        if fa == fb {
            i += 1;
            j += 1;
        } else if fa < fb {
            d += weight(fa);
            i += 1;
        } else {
            d += weight(fb);
            j += 1;
        }
    }
    d += a.features[i..].iter().map(|&f| weight(f)).sum::<f64>();
    d += b.features[j..].iter().map(|&f| weight(f)).sum::<f64>();
    let (ga, gb) = (geometry(a, w.geometry), geometry(b, w.geometry));
    d + (ga.0 - gb.0).powi(2) + (ga.1 - gb.1).powi(2)
}

/// Squared-distance contribution of one differing feature.
pub fn feature_weight(kind: FeatureKind, w: Weights) -> f64 {
    match kind {
        FeatureKind::Path => w.path,
        FeatureKind::Style | FeatureKind::Tag => 1.0,
    }
}

/// Scaled (width, x).
pub fn geometry(v: &Vector, scale: f64) -> (f64, f64) {
    let vw = f64::from(v.viewport_width);
    (f64::from(v.width) / vw * scale, f64::from(v.x) / vw * scale)
}

/// The dense row of a vector: √weight per present feature, then geometry.
/// Euclidean distance between rows equals √[`distance2`].
pub fn dense_row(v: &Vector, kinds: &[FeatureKind], w: Weights) -> Vec<f64> {
    let mut row = vec![0.0; kinds.len() + 2];
    for &f in &v.features {
        row[f as usize] = feature_weight(kinds[f as usize], w).sqrt();
    }
    let (gw, gx) = geometry(v, w.geometry);
    row[kinds.len()] = gw;
    row[kinds.len() + 1] = gx;
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::block;

    const W: Weights = Weights {
        path: 1.5,
        geometry: 10.0,
    };

    #[test]
    fn identical_blocks_share_one_vector() {
        let mut v = Vectoriser::new();
        let a = block(&["html", "body", "p"], &[("color", "red")], 600.2, 10.0);
        let b = block(&["html", "body", "p"], &[("color", "red")], 599.9, 10.0);
        assert_eq!(v.add(&a, 1280), v.add(&b, 1280));
        assert_eq!(v.vectors().len(), 1);
        assert_eq!(v.vectors()[0].count, 2);
        // One tag, one path, one style feature.
        assert_eq!(v.vectors()[0].features.len(), 3);
    }

    #[test]
    fn distance_counts_differing_properties_and_path() {
        let mut v = Vectoriser::new();
        let p = v.add(
            &block(
                &["html", "body", "p"],
                &[("color", "red"), ("font-size", "18px")],
                600.0,
                0.0,
            ),
            1280,
        );
        let one_value = v.add(
            &block(
                &["html", "body", "p"],
                &[("color", "blue"), ("font-size", "18px")],
                600.0,
                0.0,
            ),
            1280,
        );
        let wrapper = v.add(
            &block(
                &["html", "body", "div", "p"],
                &[("color", "red"), ("font-size", "18px")],
                600.0,
                0.0,
            ),
            1280,
        );
        let (vectors, kinds) = v.finish();
        let d = |a: u32, b: u32| distance2(&vectors[a as usize], &vectors[b as usize], &kinds, W);
        assert_eq!(d(p, one_value), 2.0);
        assert_eq!(d(p, wrapper), 3.0);
        // Dense rows give the same distance.
        let (ra, rb) = (
            dense_row(&vectors[0], &kinds, W),
            dense_row(&vectors[2], &kinds, W),
        );
        let dense: f64 = ra.iter().zip(&rb).map(|(a, b)| (a - b).powi(2)).sum();
        assert!((dense - 3.0).abs() < 1e-9);
    }

    #[test]
    fn geometry_is_relative_to_the_viewport() {
        let mut v = Vectoriser::new();
        v.add(&block(&["html", "p"], &[], 640.0, 0.0), 1280);
        v.add(&block(&["html", "p"], &[], 768.0, 0.0), 1280);
        let (vectors, kinds) = v.finish();
        // 128 px at 1280 wide and scale 10: one unit.
        assert!((distance2(&vectors[0], &vectors[1], &kinds, W) - 1.0).abs() < 1e-9);
    }
}
