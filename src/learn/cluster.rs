//! Cluster: DBSCAN over the site's block vectors.
//!
//! Two implementations that give the same labels (a test below runs both on
//! the same input):
//!
//! - [`dbscan_indexed`], the default. It runs on *distinct* vectors, each
//!   weighted by how many blocks share it, so cost grows with distinct
//!   vectors, not blocks. Neighbours are found through a pigeonhole index:
//!   every differing discrete feature adds at least 1 to the squared
//!   distance, so two vectors within `eps` differ in at most `k = ⌊eps²⌋`
//!   features, and if the features are split into `k + 1` partitions, at
//!   least one partition is identical in both. Each vector is filed under
//!   its projection on each partition (and its geometry cell); candidates
//!   are the vectors sharing a bucket, then checked exactly. Cost is
//!   O(n · bucket size), near-linear while dense regions stay small.
//! - [`dbscan_linfa`]: `linfa-clustering`'s DBSCAN (KdTree, L2) over one
//!   dense row per block. The reference; slow past a few thousand blocks.
//!
//! Label order follows linfa's: clusters are numbered in the order their
//! first core point appears; a border point joins the first cluster that
//! reaches it.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};

use linfa::prelude::*;
use linfa_clustering::Dbscan;
use ndarray::Array2;

use super::LearnError;
use super::features::{FeatureKind, Vector, Weights, dense_row, distance2, geometry};

/// DBSCAN settings.
#[derive(Debug, Clone, Copy)]
pub struct DbscanParams {
    /// Radius.
    pub eps: f64,
    /// Minimum neighbourhood weight (the point itself included).
    pub min_points: usize,
    /// Feature weights.
    pub weights: Weights,
}

/// Cluster label per distinct vector (`None`: noise).
pub type Labels = Vec<Option<usize>>;

/// The pigeonhole index (see the module docs).
struct Index<'a> {
    vectors: &'a [Vector],
    kinds: &'a [FeatureKind],
    params: DbscanParams,
    partitions: u64,
    cell: f64,
    buckets: HashMap<(u64, i64, i64), Vec<u32>>,
    keys: Vec<Vec<u64>>,
}

impl<'a> Index<'a> {
    fn build(vectors: &'a [Vector], kinds: &'a [FeatureKind], params: DbscanParams) -> Index<'a> {
        let eps2 = params.eps * params.eps;
        // Every differing feature adds ≥ 1 (path weight ≥ 1 is checked).
        let partitions = eps2.floor() as u64 + 1;
        // Geometry cells as wide as eps: a neighbour is in an adjacent cell.
        let cell = params.eps.max(1e-9);
        let mut index = Index {
            vectors,
            kinds,
            params,
            partitions,
            cell,
            buckets: HashMap::new(),
            keys: Vec::with_capacity(vectors.len()),
        };
        for (i, v) in vectors.iter().enumerate() {
            let keys = index.projection_keys(v);
            let (cw, cx) = index.cell_of(v);
            for &key in &keys {
                index
                    .buckets
                    .entry((key, cw, cx))
                    .or_default()
                    .push(i as u32);
            }
            index.keys.push(keys);
        }
        index
    }

    fn cell_of(&self, v: &Vector) -> (i64, i64) {
        let (w, x) = geometry(v, self.params.weights.geometry);
        (
            (w / self.cell).floor() as i64,
            (x / self.cell).floor() as i64,
        )
    }

    /// One hash per partition of the vector's features in that partition.
    fn projection_keys(&self, v: &Vector) -> Vec<u64> {
        let mut hashers: Vec<std::collections::hash_map::DefaultHasher> = (0..self.partitions)
            .map(|p| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                p.hash(&mut h);
                h
            })
            .collect();
        for &f in &v.features {
            let p = partition_of(f, self.partitions);
            f.hash(&mut hashers[p as usize]);
        }
        hashers.into_iter().map(|h| h.finish()).collect()
    }

    /// Calls `found` for every vector within eps of `i` (itself included).
    fn neighbours(&self, i: usize, seen: &mut [u32], stamp: u32, mut found: impl FnMut(usize)) {
        let eps2 = self.params.eps * self.params.eps;
        let v = &self.vectors[i];
        let (cw, cx) = self.cell_of(v);
        for &key in &self.keys[i] {
            for dw in -1..=1 {
                for dx in -1..=1 {
                    let Some(bucket) = self.buckets.get(&(key, cw + dw, cx + dx)) else {
                        continue;
                    };
                    for &j in bucket {
                        let j = j as usize;
                        if seen[j] == stamp {
                            continue;
                        }
                        seen[j] = stamp;
                        if distance2(v, &self.vectors[j], self.kinds, self.params.weights) <= eps2 {
                            found(j);
                        }
                    }
                }
            }
        }
    }
}

fn partition_of(feature: u32, partitions: u64) -> u64 {
    // A multiplicative hash spreads consecutive ids over the partitions.
    (u64::from(feature).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % partitions
}

/// DBSCAN over distinct vectors weighted by [`Vector::count`].
pub fn dbscan_indexed(vectors: &[Vector], kinds: &[FeatureKind], params: DbscanParams) -> Labels {
    let n = vectors.len();
    let index = Index::build(vectors, kinds, params);
    let mut labels: Labels = vec![None; n];
    let mut queued = vec![false; n];
    let mut seen = vec![u32::MAX; n];
    let mut stamp = 0u32;
    let mut queue = VecDeque::new();
    let min = params.min_points as u64;

    // (weight in range, unlabelled neighbours other than `i`)
    let mut query = |i: usize, labels: &Labels, seen: &mut Vec<u32>| {
        stamp = stamp.wrapping_add(1);
        if stamp == u32::MAX {
            seen.iter_mut().for_each(|s| *s = u32::MAX);
            stamp = 0;
        }
        let mut weight = 0u64;
        let mut out = Vec::new();
        index.neighbours(i, seen, stamp, |j| {
            weight += u64::from(vectors[j].count);
            if j != i && labels[j].is_none() {
                out.push(j);
            }
        });
        (weight, out)
    };

    let mut cluster = 0;
    for i in 0..n {
        if labels[i].is_some() {
            continue;
        }
        let (weight, neighbours) = query(i, &labels, &mut seen);
        if weight < min {
            continue;
        }
        labels[i] = Some(cluster);
        for j in neighbours {
            if !queued[j] {
                queued[j] = true;
                queue.push_back(j);
            }
        }
        while let Some(j) = queue.pop_front() {
            queued[j] = false;
            let (weight, neighbours) = query(j, &labels, &mut seen);
            labels[j] = Some(cluster);
            if weight >= min {
                for k in neighbours {
                    if !queued[k] {
                        queued[k] = true;
                        queue.push_back(k);
                    }
                }
            }
        }
        cluster += 1;
    }
    labels
}

/// linfa's DBSCAN over one dense row per block: `blocks[b]` is block `b`'s
/// distinct vector. Returns one label per *block*.
pub fn dbscan_linfa(
    vectors: &[Vector],
    kinds: &[FeatureKind],
    blocks: &[u32],
    params: DbscanParams,
) -> Result<Vec<Option<usize>>, LearnError> {
    let dims = kinds.len() + 2;
    let mut data = Array2::<f64>::zeros((blocks.len(), dims));
    for (row, &v) in blocks.iter().enumerate() {
        let dense = dense_row(&vectors[v as usize], kinds, params.weights);
        data.row_mut(row).assign(&ndarray::Array1::from(dense));
    }
    let labels = Dbscan::params(params.min_points)
        .tolerance(params.eps)
        .check()
        .map_err(|e| LearnError::Params(e.to_string()))?
        .transform(&data);
    Ok(labels.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::features::Vectoriser;
    use crate::testutil::block;

    const PARAMS: DbscanParams = DbscanParams {
        eps: 2.1213203435596424, // √4.5
        min_points: 2,
        weights: Weights {
            path: 1.5,
            geometry: 10.0,
        },
    };

    /// A deterministic pseudo-random generator (no dependency for tests).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// Blocks shaped like a site: a few styles, each with variants that
    /// differ in zero to three properties, some wrappers, noisy widths.
    fn site_blocks(seed: u64, n: usize) -> Vec<crate::capture::Block> {
        let mut rng = Lcg(seed);
        let paths: [&[&str]; 4] = [
            &["html", "body", "main", "p"],
            &["html", "body", "main", "div", "p"],
            &["html", "body", "nav", "li"],
            &["html", "body", "footer", "p"],
        ];
        (0..n)
            .map(|_| {
                let kind = rng.next(4) as usize;
                let mut style = vec![("font-size", ["18px", "14px", "12px", "16px"][kind])];
                let colours = ["red", "blue", "green", "black", "grey"];
                for (i, prop) in ["color", "margin-top", "line-height"].iter().enumerate() {
                    if rng.next(4) == 0 {
                        style.push((prop, colours[(rng.next(2) as usize + i) % 5]));
                    }
                }
                let width = [640.0, 200.0, 1280.0, 900.0][kind] + rng.next(3) as f64 * 40.0;
                let path = if kind == 0 && rng.next(3) == 0 {
                    paths[1]
                } else {
                    paths[kind]
                };
                block(path, &style, width, [100.0, 0.0, 0.0, 50.0][kind])
            })
            .collect()
    }

    fn same_partition(a: &[Option<usize>], b: &[Option<usize>]) {
        assert_eq!(a.len(), b.len());
        // Labels match exactly: same numbering, same noise.
        assert_eq!(a, b);
    }

    #[test]
    fn indexed_dbscan_gives_linfas_labels() {
        for seed in [1, 2, 3, 4, 5] {
            let blocks = site_blocks(seed, 400);
            let mut v = Vectoriser::new();
            let ids: Vec<u32> = blocks.iter().map(|b| v.add(b, 1280)).collect();
            let (vectors, kinds) = v.finish();
            let distinct = dbscan_indexed(&vectors, &kinds, PARAMS);
            let per_block: Vec<Option<usize>> = ids.iter().map(|&i| distinct[i as usize]).collect();
            let linfa = dbscan_linfa(&vectors, &kinds, &ids, PARAMS).unwrap();
            same_partition(&per_block, &linfa);
            let clusters = per_block.iter().flatten().max().map_or(0, |m| m + 1);
            assert!(
                clusters >= 3,
                "seed {seed}: a real clustering, not one blob: {clusters}"
            );
            assert!(vectors.len() < blocks.len() / 2, "duplicates collapsed");
        }
    }

    #[test]
    fn tolerates_one_differing_property_but_not_three() {
        let base = [
            ("font-size", "18px"),
            ("color", "black"),
            ("line-height", "28px"),
        ];
        let one = [
            ("font-size", "18px"),
            ("color", "grey"),
            ("line-height", "28px"),
        ];
        let three = [
            ("font-size", "12px"),
            ("color", "red"),
            ("line-height", "16px"),
        ];
        let p = ["html", "body", "p"];
        let blocks = [
            block(&p, &base, 600.0, 0.0),
            block(&p, &base, 600.0, 0.0),
            block(&p, &one, 600.0, 0.0),
            block(&p, &three, 600.0, 0.0),
            block(&p, &three, 600.0, 0.0),
        ];
        let mut v = Vectoriser::new();
        let ids: Vec<u32> = blocks.iter().map(|b| v.add(b, 1280)).collect();
        let (vectors, kinds) = v.finish();
        let labels = dbscan_indexed(&vectors, &kinds, PARAMS);
        let l: Vec<_> = ids.iter().map(|&i| labels[i as usize]).collect();
        assert_eq!(l, [Some(0), Some(0), Some(0), Some(1), Some(1)]);
    }

    #[test]
    fn a_one_off_block_is_noise() {
        let p = ["html", "body", "p"];
        let blocks = [
            block(&p, &[("color", "black")], 600.0, 0.0),
            block(&p, &[("color", "black")], 600.0, 0.0),
            block(
                &["html", "body", "h1"],
                &[("font-size", "40px"), ("color", "red")],
                900.0,
                300.0,
            ),
        ];
        let mut v = Vectoriser::new();
        let ids: Vec<u32> = blocks.iter().map(|b| v.add(b, 1280)).collect();
        let (vectors, kinds) = v.finish();
        let labels = dbscan_indexed(&vectors, &kinds, PARAMS);
        assert_eq!(labels[ids[0] as usize], Some(0));
        assert_eq!(labels[ids[2] as usize], None);
    }
}
