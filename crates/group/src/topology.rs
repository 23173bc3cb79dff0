//! The aggregation tree over ranks: a k-ary tree with a per-node level.
//!
//! Ranks that share a physical node (equal node labels) aggregate under their node's leader (its lowest
//! rank) first; leaders form a k-ary tree rooted at rank 0. Both levels are built by splitting an ordered
//! list into contiguous chunks, so every subtree covers a contiguous run of the tree's pre-order. Members are
//! numbered in that order (see [`ReductionTree::order`]), so a subtree's members are contiguous, and merging a
//! node's own partial and then its children's in order only needs an associative merge. The member order does
//! not depend on the fan-out, which is why every fan-out gives the same results.
//!
//! A leader has up to `fanout` children on its own node plus up to `fanout` children leaders.

use std::num::NonZeroUsize;
use std::str::FromStr;

/// A rank: one process serving one host's files (an MPI rank, or a thread in a simulation).
pub type Rank = usize;

/// The largest number of children of a tree node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fanout {
    /// Every leader is a child of the root (a one-level tree).
    Flat,
    /// At most this many children per node.
    Max(NonZeroUsize),
}

impl Default for Fanout {
    /// 64, as ClusterShell and STAT use.
    fn default() -> Self {
        Fanout::Max(NonZeroUsize::new(64).expect("64 is not zero"))
    }
}

impl FromStr for Fanout {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text == "flat" {
            return Ok(Fanout::Flat);
        }
        match text.parse::<usize>().ok().and_then(NonZeroUsize::new) {
            Some(n) => Ok(Fanout::Max(n)),
            None => Err(format!("invalid fan-out {text:?}: expected a positive number or \"flat\"")),
        }
    }
}

/// The tree: parent and ordered children of every rank. Every rank must build the same topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReductionTree {
    parent: Vec<Option<Rank>>,
    children: Vec<Vec<Rank>>,
    height: Vec<u32>,
    order: Vec<Rank>,
    fingerprint: u64,
}

impl ReductionTree {
    /// The tree over `node_labels.len()` ranks, where ranks with equal labels share a node.
    pub fn new<S: AsRef<str>>(node_labels: &[S], fanout: Fanout) -> ReductionTree {
        let size = node_labels.len();
        assert!(size > 0, "a topology needs at least one rank");
        // Nodes in order of their lowest rank; each node's ranks ascending, the first being its leader.
        let mut nodes: Vec<Vec<Rank>> = Vec::new();
        let mut node_of_label: std::collections::HashMap<&str, usize> = Default::default();
        for (rank, label) in node_labels.iter().enumerate() {
            let node = *node_of_label.entry(label.as_ref()).or_insert_with(|| {
                nodes.push(Vec::new());
                nodes.len() - 1
            });
            nodes[node].push(rank);
        }
        let mut children = vec![Vec::new(); size];
        for ranks in &nodes {
            link_chunks(ranks, fanout, &mut children);
        }
        let leaders: Vec<Rank> = nodes.iter().map(|ranks| ranks[0]).collect();
        // Node-local children come first, so a leader's own node precedes the other nodes in pre-order.
        link_chunks(&leaders, fanout, &mut children);

        let mut parent = vec![None; size];
        for (rank, kids) in children.iter().enumerate() {
            for &kid in kids {
                parent[kid] = Some(rank);
            }
        }
        let mut order = Vec::with_capacity(size);
        let mut stack = vec![0];
        while let Some(rank) = stack.pop() {
            order.push(rank);
            stack.extend(children[rank].iter().rev());
        }
        let mut height = vec![0; size];
        for &rank in order.iter().rev() {
            height[rank] = children[rank].iter().map(|&c| height[c] + 1).max().unwrap_or(0);
        }
        let fingerprint = parent.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, p| {
            let word = p.map_or(u64::MAX, |p| p as u64);
            (hash ^ word).wrapping_mul(0x0100_0000_01b3)
        });
        ReductionTree { parent, children, height, order, fingerprint }
    }

    /// The tree over `size` ranks on distinct nodes.
    pub fn uniform(size: usize, fanout: Fanout) -> ReductionTree {
        let labels: Vec<String> = (0..size).map(|r| r.to_string()).collect();
        ReductionTree::new(&labels, fanout)
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.parent.len()
    }

    /// `None` for rank 0, the root.
    pub fn parent(&self, rank: Rank) -> Option<Rank> {
        self.parent[rank]
    }

    /// The children of `rank`, in member order.
    pub fn children(&self, rank: Rank) -> &[Rank] {
        &self.children[rank]
    }

    /// Distance from `rank` to the deepest rank of its subtree (0 for a leaf).
    pub fn height(&self, rank: Rank) -> u32 {
        self.height[rank]
    }

    /// Ranks in pre-order: the order in which hosts' members are numbered.
    pub fn order(&self) -> &[Rank] {
        &self.order
    }

    /// `rank` and every rank below it.
    pub fn subtree(&self, rank: Rank) -> Vec<Rank> {
        let mut out = Vec::new();
        let mut stack = vec![rank];
        while let Some(r) = stack.pop() {
            out.push(r);
            stack.extend(self.children[r].iter().rev());
        }
        out
    }

    /// A hash of the tree's shape, sent with requests so that a rank built with other parameters refuses
    /// them instead of waiting for the wrong children.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// Links `items[0]` as the root of the others: they are split into at most `fanout` contiguous chunks of
/// near-equal size, each chunk's first item a child of the root and the root of its chunk.
fn link_chunks(items: &[Rank], fanout: Fanout, children: &mut [Vec<Rank>]) {
    let Some((&root, rest)) = items.split_first() else {
        return;
    };
    if rest.is_empty() {
        return;
    }
    let chunks = match fanout {
        Fanout::Flat => rest.len(),
        Fanout::Max(k) => k.get().min(rest.len()),
    };
    let (base, extra) = (rest.len() / chunks, rest.len() % chunks);
    let mut start = 0;
    for i in 0..chunks {
        let len = base + usize::from(i < extra);
        let chunk = &rest[start..start + len];
        children[root].push(chunk[0]);
        link_chunks(chunk, fanout, children);
        start += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fanout(k: usize) -> Fanout {
        Fanout::Max(NonZeroUsize::new(k).unwrap())
    }

    #[test]
    fn k_ary_trees_respect_the_fanout_and_cover_every_rank() {
        for size in [1, 2, 3, 7, 16, 100, 1000] {
            for k in [1, 2, 3, 8, 64] {
                let t = ReductionTree::uniform(size, fanout(k));
                assert_eq!(t.parent(0), None);
                assert!((0..size).all(|r| t.children(r).len() <= k));
                assert!((1..size).all(|r| t.parent(r).is_some()));
                let mut order = t.order().to_vec();
                order.sort();
                assert_eq!(order, (0..size).collect::<Vec<_>>());
                // Every subtree is a contiguous run of the pre-order.
                for r in 0..size {
                    let pos = t.order().iter().position(|&x| x == r).unwrap();
                    let sub = t.subtree(r);
                    assert_eq!(&t.order()[pos..pos + sub.len()], &sub[..]);
                }
            }
        }
    }

    #[test]
    fn depth_is_logarithmic() {
        assert_eq!(ReductionTree::uniform(1000, fanout(64)).height(0), 2);
        assert_eq!(ReductionTree::uniform(1000, fanout(2)).height(0), 9);
        assert_eq!(ReductionTree::uniform(1000, Fanout::Flat).height(0), 1);
        assert_eq!(ReductionTree::uniform(1000, fanout(32)).order(), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn ranks_of_a_node_aggregate_under_its_leader_first() {
        // Ranks 0-3 on node a, 4-7 on b, 8-11 on c.
        let labels: Vec<&str> = (0..12).map(|r| ["a", "b", "c"][r / 4]).collect();
        let t = ReductionTree::new(&labels, fanout(2));
        assert_eq!(t.children(0), &[1, 3, 4, 8]);
        assert_eq!(t.children(1), &[2]);
        assert_eq!(t.children(4), &[5, 7]);
        for r in [1, 2, 3] {
            assert!(t.subtree(0).contains(&r) && t.subtree(4).iter().all(|&x| x >= 4));
        }
        // Ranks of one node interleaved with another's: still grouped by node, in node order.
        let t = ReductionTree::new(&["x", "y", "x", "y"], Fanout::Flat);
        assert_eq!(t.children(0), &[2, 1]);
        assert_eq!(t.order(), &[0, 2, 1, 3]);
    }

    #[test]
    fn fanout_parses() {
        assert_eq!("flat".parse::<Fanout>(), Ok(Fanout::Flat));
        assert_eq!("8".parse::<Fanout>(), Ok(fanout(8)));
        assert!("0".parse::<Fanout>().is_err() && "x".parse::<Fanout>().is_err());
        assert_ne!(
            ReductionTree::uniform(9, fanout(2)).fingerprint(),
            ReductionTree::uniform(9, fanout(3)).fingerprint()
        );
    }
}
