//! Folding of multi-dimensional node names (`rack[1-2]n[1-4]`): ClusterShell's `RangeSetND` folding.
//!
//! A set of points is written as a list of vectors, each vector a product of one [`RangeSet`] per axis.
//! ClusterShell writes a point set that is a full product (a box) as one vector and otherwise runs its
//! multivariate merge (`_fold_multivariate`); this module does the same from the canonical point set.

use super::rangeset::{Index, RangeSet};
use std::collections::BTreeSet;

/// One folded vector: the product of its per-axis sets.
pub(crate) type Vector = Vec<RangeSet>;

pub(crate) fn fold(points: &BTreeSet<Vec<Index>>) -> Vec<Vector> {
    let Some(first) = points.first() else {
        return Vec::new();
    };
    let axes: Vec<RangeSet> =
        (0..first.len()).map(|axis| points.iter().map(|p| p[axis].clone()).collect()).collect();
    let box_size = axes.iter().try_fold(1u64, |acc, rs| acc.checked_mul(rs.len()));
    if box_size == Some(points.len() as u64) {
        return vec![axes];
    }
    let mut vectors: Vec<Vector> =
        points.iter().map(|p| p.iter().map(|i| std::iter::once(i.clone()).collect()).collect()).collect();
    merge(&mut vectors);
    vectors
}

/// `RangeSetND._fold_multivariate_merge`: repeated passes that merge two vectors differing on one axis only,
/// cheap passes first (each vector compared with its successors until the first miss), then full passes.
fn merge(vectors: &mut Vec<Vector>) {
    let mut full = false;
    let mut changed = true;
    while changed {
        changed = false;
        sort(vectors);
        let mut index1 = 0;
        while index1 + 1 < vectors.len() {
            let mut index2 = index1 + 1;
            index1 += 1;
            while index2 < vectors.len() {
                match merged(&vectors[index1 - 1], &vectors[index2]) {
                    Some(new_item) => {
                        changed = true;
                        vectors[index1 - 1] = new_item;
                        vectors.remove(index2);
                    }
                    None if !full => break,
                    None => index2 += 1,
                }
            }
        }
        if !changed && !full {
            changed = true;
            full = true;
        }
    }
}

/// The union of two vectors when it is again one vector: equal on every axis but at most one, where the sets
/// are disjoint or one contains the other.
fn merged(a: &Vector, b: &Vector) -> Option<Vector> {
    let mut differing = 0;
    let mut out = Vec::with_capacity(a.len());
    for (rg1, rg2) in a.iter().zip(b) {
        if rg1 == rg2 {
            out.push(rg1.clone());
            continue;
        }
        differing += 1;
        if differing > 1 {
            return None;
        }
        if rg1.intersection(rg2).is_empty() {
            out.push(rg1.union(rg2));
        } else if rg2.is_subset(rg1) {
            out.push(rg1.clone());
        } else if rg1.is_subset(rg2) {
            out.push(rg2.clone());
        } else {
            return None;
        }
    }
    Some(out)
}

/// `RangeSetND._sort`: larger vectors first, then per axis larger sets first, then by the first and last
/// element compared as strings (as Python compares ClusterShell's string elements). Stable, like Python's sort.
fn sort(vectors: &mut [Vector]) {
    vectors.sort_by_cached_key(|vector| {
        let size: u128 = vector.iter().map(|rs| u128::from(rs.len())).product();
        let axes: Vec<(std::cmp::Reverse<u64>, String, String)> = vector
            .iter()
            .map(|rs| {
                let text = |i: Option<Index>| i.map(|i| i.to_string()).unwrap_or_default();
                (std::cmp::Reverse(rs.len()), text(rs.first()), text(rs.last()))
            })
            .collect();
        (std::cmp::Reverse(size), axes)
    });
}
