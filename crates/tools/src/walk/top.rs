//! The N paths with the largest value (file size, directory width, depth), mergeable across threads
//! and ranks.

use serde::{Deserialize, Serialize};

/// A path and the value it is ranked by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ranked {
    pub value: u64,
    pub path: Vec<u8>,
}

impl Ranked {
    /// Larger values first; equal values by path, so every merge order gives the same list.
    fn outranks(&self, other: &Ranked) -> bool {
        (self.value, &other.path) > (other.value, &self.path)
    }
}

/// The best `limit` entries seen so far, best first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopN {
    limit: usize,
    items: Vec<Ranked>,
}

impl TopN {
    pub fn new(limit: usize) -> Self {
        TopN { limit, items: Vec::new() }
    }

    /// Considers an entry; its path is built only if it may enter the list.
    pub fn offer(&mut self, value: u64, path: impl FnOnce() -> Vec<u8>) {
        let full = self.items.len() >= self.limit;
        if full && self.items.last().is_none_or(|worst| value < worst.value) {
            return;
        }
        self.insert(Ranked { value, path: path() });
    }

    fn insert(&mut self, item: Ranked) {
        let at = self.items.partition_point(|kept| kept.outranks(&item));
        if at < self.limit {
            self.items.insert(at, item);
            self.items.truncate(self.limit);
        }
    }

    /// Adds another list's entries (associative and commutative: the result is the top of the union).
    pub fn merge(&mut self, other: TopN) {
        for item in other.items {
            self.insert(item);
        }
    }

    pub fn items(&self) -> &[Ranked] {
        &self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(values: &[(u64, &str)], limit: usize) -> TopN {
        let mut top = TopN::new(limit);
        for (v, p) in values {
            top.offer(*v, || p.as_bytes().to_vec());
        }
        top
    }

    #[test]
    fn keeps_the_largest_with_ties_broken_by_path() {
        let top = collect(&[(5, "e"), (9, "b"), (1, "z"), (9, "a"), (7, "c")], 3);
        let got: Vec<_> = top.items().iter().map(|r| (r.value, &r.path[..])).collect();
        assert_eq!(got, vec![(9, &b"a"[..]), (9, b"b"), (7, b"c")]);
    }

    #[test]
    fn merging_in_any_grouping_equals_one_pass() {
        let values: Vec<(u64, String)> = (0..200u64).map(|i| ((i * 7919) % 53, format!("p{i}"))).collect();
        let refs: Vec<(u64, &str)> = values.iter().map(|(v, p)| (*v, p.as_str())).collect();
        let whole = collect(&refs, 10);
        let (a, rest) = refs.split_at(70);
        let (b, c) = rest.split_at(65);
        let mut left = collect(a, 10);
        left.merge(collect(b, 10));
        left.merge(collect(c, 10));
        let mut right = collect(b, 10);
        right.merge(collect(c, 10));
        let mut right_first = collect(a, 10);
        right_first.merge(right);
        assert_eq!(left, whole);
        assert_eq!(right_first, whole);
    }

    #[test]
    fn zero_limit_keeps_nothing() {
        assert!(collect(&[(1, "a")], 0).items().is_empty());
    }
}
