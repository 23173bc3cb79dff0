//! Sets of `u64` stored as sorted, disjoint, non-adjacent inclusive intervals.
//!
//! The storage under [`RangeSet`](super::RangeSet): member and rank sets of large groups stay a handful of
//! intervals instead of one entry per element.

use serde::{Deserialize, Serialize};

/// A set of `u64` values as sorted, disjoint, non-adjacent inclusive intervals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Intervals(Vec<(u64, u64)>);

impl Intervals {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn len(&self) -> u64 {
        self.0.iter().map(|&(lo, hi)| hi - lo + 1).sum()
    }

    pub(crate) fn first(&self) -> Option<u64> {
        self.0.first().map(|&(lo, _)| lo)
    }

    pub(crate) fn last(&self) -> Option<u64> {
        self.0.last().map(|&(_, hi)| hi)
    }

    pub(crate) fn contains(&self, value: u64) -> bool {
        // The last interval starting at or before `value` is the only candidate.
        let after = self.0.partition_point(|&(lo, _)| lo <= value);
        after > 0 && self.0[after - 1].1 >= value
    }

    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = u64> + '_ {
        self.0.iter().flat_map(|&(lo, hi)| lo..=hi)
    }

    /// Adds `lo..=hi`, keeping the representation canonical.
    pub(crate) fn insert_span(&mut self, lo: u64, hi: u64) {
        debug_assert!(lo <= hi);
        // Intervals that overlap or touch [lo, hi] form one contiguous run in the sorted list.
        let start = self.0.partition_point(|&(_, h)| h.saturating_add(1) < lo);
        let end = self.0.partition_point(|&(l, _)| l <= hi.saturating_add(1));
        if start == end {
            self.0.insert(start, (lo, hi));
        } else {
            let merged = (lo.min(self.0[start].0), hi.max(self.0[end - 1].1));
            self.0.splice(start..end, [merged]);
        }
    }

    pub(crate) fn insert(&mut self, value: u64) {
        self.insert_span(value, value);
    }

    pub(crate) fn union(&self, other: &Self) -> Self {
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.0.len() + other.0.len());
        let mut push = |(lo, hi): (u64, u64)| match out.last_mut() {
            Some((_, last_hi)) if lo <= last_hi.saturating_add(1) => *last_hi = (*last_hi).max(hi),
            _ => out.push((lo, hi)),
        };
        let (mut a, mut b) = (self.0.iter().peekable(), other.0.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.0 <= y.0 => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            push(*next.expect("peeked"));
        }
        Intervals(out)
    }

    pub(crate) fn intersection(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (self.0[i], other.0[j]);
            let (lo, hi) = (a.0.max(b.0), a.1.min(b.1));
            if lo <= hi {
                out.push((lo, hi));
            }
            if a.1 < b.1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        Intervals(out)
    }

    pub(crate) fn difference(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        let mut j = 0;
        for &(lo, hi) in &self.0 {
            let mut lo = lo;
            // Skip removals entirely below this interval.
            while j < other.0.len() && other.0[j].1 < lo {
                j += 1;
            }
            let mut k = j;
            let mut alive = true;
            while k < other.0.len() && other.0[k].0 <= hi {
                let (rlo, rhi) = other.0[k];
                if rlo > lo {
                    out.push((lo, rlo - 1));
                }
                if rhi >= hi {
                    alive = false;
                    break;
                }
                lo = rhi + 1;
                k += 1;
            }
            if alive {
                out.push((lo, hi));
            }
        }
        Intervals(out)
    }

    pub(crate) fn is_subset(&self, other: &Self) -> bool {
        self.difference(other).is_empty()
    }
}

impl FromIterator<u64> for Intervals {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Self {
        let mut values: Vec<u64> = iter.into_iter().collect();
        values.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for v in values {
            match out.last_mut() {
                Some((_, hi)) if v <= hi.saturating_add(1) => *hi = (*hi).max(v),
                _ => out.push((v, v)),
            }
        }
        Intervals(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn model(values: &[u64]) -> BTreeSet<u64> {
        values.iter().copied().collect()
    }

    proptest! {
        #[test]
        fn set_operations_match_a_btreeset(a in proptest::collection::vec(0u64..60, 0..40),
                                           b in proptest::collection::vec(0u64..60, 0..40)) {
            let (ia, ib): (Intervals, Intervals) = (a.iter().copied().collect(), b.iter().copied().collect());
            let (ma, mb) = (model(&a), model(&b));
            prop_assert_eq!(ia.union(&ib).iter().collect::<BTreeSet<_>>(), &ma | &mb);
            prop_assert_eq!(ia.intersection(&ib).iter().collect::<BTreeSet<_>>(), &ma & &mb);
            prop_assert_eq!(ia.difference(&ib).iter().collect::<BTreeSet<_>>(), &ma - &mb);
            prop_assert_eq!(ia.len(), ma.len() as u64);
            prop_assert_eq!(ia.is_subset(&ib), ma.is_subset(&mb));
            for v in 0..60 {
                prop_assert_eq!(ia.contains(v), ma.contains(&v));
            }
            // Canonical form: inserting spans one by one gives the same representation.
            let mut spans = Intervals::default();
            for v in &a {
                spans.insert_span(*v, *v);
            }
            prop_assert_eq!(&spans, &ia);
            for w in ia.0.windows(2) {
                prop_assert!(w[0].1 + 1 < w[1].0, "intervals must be disjoint and non-adjacent");
            }
        }
    }
}
