//! DBSCAN alone: spider's indexed DBSCAN vs `linfa-clustering`'s, on block
//! vectors where (nearly) every vector is distinct, so collapsing duplicates
//! does not help and the neighbour search itself is measured.
//!
//! ```text
//! cargo bench --bench cluster -- [--sizes 1000,5000,10000,28000,100000] [--linfa-max 10000]
//! ```
//!
//! Blocks are generated like a site's: 40 block kinds (tag path, 3 to 8 style
//! properties), each block with a random variation in zero to three
//! properties and a width and x jittered over ±40 px, so vectors are
//! distinct but dense regions exist. Both implementations run on the same
//! input, side by side; wherever both run the labels are compared and must
//! be identical. linfa runs only up to `--linfa-max` blocks (it grows about
//! quadratically: 48 s at 50k in our earlier measurements).

use std::collections::BTreeMap;
use std::time::Instant;

use spider::capture::{Block, Bounds, SelectorStep};
use spider::learn::cluster::{DbscanParams, dbscan_indexed, dbscan_linfa};
use spider::learn::features::{Vectoriser, Weights};

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

/// A kind of block: tag path, style, width, x.
type Kind = (Vec<String>, Vec<(String, String)>, f64, f64);

fn blocks(n: usize, seed: u64) -> Vec<Block> {
    let mut rng = Lcg(seed);
    let tags = ["p", "li", "div", "h2", "span", "td"];
    let props = [
        "color",
        "font-size",
        "line-height",
        "margin-top",
        "margin-bottom",
        "font-weight",
        "font-family",
        "padding-left",
        "text-align",
        "background-color",
    ];
    let kinds: Vec<Kind> = (0..40)
        .map(|k| {
            let depth = 3 + rng.next(6) as usize;
            let path: Vec<String> = (0..depth)
                .map(|d| {
                    if d == depth - 1 {
                        tags[k % tags.len()].to_string()
                    } else {
                        "div".into()
                    }
                })
                .collect();
            let style = (0..3 + rng.next(6) as usize)
                .map(|_| {
                    let p = props[rng.next(props.len() as u64) as usize];
                    (p.to_string(), format!("v{}", rng.next(40)))
                })
                .collect();
            (
                path,
                style,
                100.0 + rng.next(1000) as f64,
                rng.next(900) as f64,
            )
        })
        .collect();
    (0..n)
        .map(|_| {
            let (path, style, width, x) = &kinds[rng.next(kinds.len() as u64) as usize];
            let mut style: BTreeMap<String, String> = style.iter().cloned().collect();
            for _ in 0..rng.next(4) {
                let p = props[rng.next(props.len() as u64) as usize];
                style.insert(p.to_string(), format!("w{}", rng.next(40)));
            }
            let selector: Vec<SelectorStep> = ["html", "body"]
                .iter()
                .map(|t| t.to_string())
                .chain(path.iter().cloned())
                .map(|tag| SelectorStep {
                    tag,
                    id: None,
                    classes: vec![],
                })
                .collect();
            Block {
                text: "x".into(),
                tag: selector.last().map(|s| s.tag.clone()).unwrap_or_default(),
                link_text_len: 0,
                node: vec![0; selector.len()],
                selector,
                bounds: Bounds {
                    x: x + rng.next(81) as f64 - 40.0,
                    y: 0.0,
                    width: width + rng.next(81) as f64 - 40.0,
                    height: 20.0,
                },
                style,
            }
        })
        .collect()
}

fn main() {
    let mut sizes = vec![1000, 5000, 10_000, 28_000, 100_000];
    let mut linfa_max = 10_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                sizes = args
                    .next()
                    .expect("--sizes a,b")
                    .split(',')
                    .map(|s| s.parse().expect("a number"))
                    .collect()
            }
            "--linfa-max" => {
                linfa_max = args
                    .next()
                    .expect("--linfa-max N")
                    .parse()
                    .expect("a number")
            }
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let params = DbscanParams {
        eps: 4.5f64.sqrt(),
        min_points: 2,
        weights: Weights {
            path: 1.5,
            geometry: 10.0,
        },
    };
    println!(
        "| blocks | distinct vectors | clusters | noise blocks | indexed s | linfa s | linfa / indexed | labels |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---|");
    for &n in &sizes {
        let blocks = blocks(n, 7);
        let mut vectoriser = Vectoriser::new();
        let ids: Vec<u32> = blocks.iter().map(|b| vectoriser.add(b, 1280)).collect();
        let (vectors, kinds) = vectoriser.finish();
        let started = Instant::now();
        let distinct = dbscan_indexed(&vectors, &kinds, params);
        let indexed_s = started.elapsed().as_secs_f64();
        let labels: Vec<Option<usize>> = ids.iter().map(|&i| distinct[i as usize]).collect();
        let clusters = labels.iter().flatten().max().map_or(0, |m| m + 1);
        let noise = labels.iter().filter(|l| l.is_none()).count();
        let (linfa_s, ratio, same) = if n <= linfa_max {
            let started = Instant::now();
            let reference = dbscan_linfa(&vectors, &kinds, &ids, params).expect("linfa runs");
            let s = started.elapsed().as_secs_f64();
            let same = if reference == labels {
                "identical"
            } else {
                "DIFFERENT"
            };
            assert_eq!(reference, labels, "indexed DBSCAN must give linfa's labels");
            (format!("{s:.3}"), format!("{:.0}×", s / indexed_s), same)
        } else {
            ("-".into(), "-".into(), "-")
        };
        println!(
            "| {n} | {} | {clusters} | {noise} | {indexed_s:.3} | {linfa_s} | {ratio} | {same} |",
            vectors.len()
        );
    }
}
