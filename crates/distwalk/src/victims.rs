//! Whom an idle rank asks for work.
//!
//! * [`Victims::random`] — DRQS: a uniformly random other rank, each rank drawing from its own
//!   random sequence.
//! * [`Victims::proximity`] — PA-DRQS as the seed defines it: ranks on the same node first, then
//!   remote ranks in ascending rank order, except that a node's local root asks remote ranks first;
//!   the list starts over after a fruitful request. The seed notes the flaw that comes with it: every
//!   rank's remote list is the same, so the lowest ranks are asked most (at 10⁴ ranks, rank 0 gets a
//!   request from nearly every idle rank).
//! * [`Victims::hierarchical`] — what the balancing scheduler uses: the other ranks of this node
//!   once each in this rank's own random order, then random remote ranks; a fruitful request starts
//!   over with the node. No rank is anyone's fixed first choice, so there is no hot spot.
//!
//! None of them keeps a list of all ranks: at 10⁴ ranks a per-rank copy would cost 40 KB per rank.

/// Which node each rank is on, as found by a shared-memory communicator split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub rank: u32,
    /// node[r] = node index of rank r.
    pub node: Vec<u32>,
}

impl Topology {
    pub fn size(&self) -> u32 {
        self.node.len() as u32
    }

    /// Ranks on this rank's node, in rank order.
    pub fn local_ranks(&self) -> Vec<u32> {
        let mine = self.node[self.rank as usize];
        (0..self.size()).filter(|&r| self.node[r as usize] == mine).collect()
    }

    /// Whether this rank is its node's local root (lowest rank on the node).
    pub fn is_local_root(&self) -> bool {
        self.local_ranks().first() == Some(&self.rank)
    }

    /// The seed's PA-DRQS order, spelled out: co-located ranks then remote ranks, or — for the
    /// node's local root — remote ranks first.
    pub fn proximity_order(&self) -> Vec<u32> {
        let mut victims = Victims::proximity(self);
        (1..self.size()).filter_map(|_| victims.pick()).collect()
    }
}

/// Picks the next rank to ask.
pub enum Victims {
    Random {
        rank: u32,
        size: u32,
        rng: fastrand::Rng,
    },
    /// The seed's proximity list: `local` (this node's other ranks, ascending) and the remote ranks
    /// ascending, remote first for a local root; `next` counts picks since the last success.
    Ordered {
        rank: u32,
        size: u32,
        local: Vec<u32>,
        remote_first: bool,
        next: usize,
    },
    /// This node's other ranks in a random order of this rank's own, then random remote ranks.
    Hierarchical {
        rank: u32,
        size: u32,
        local: Vec<u32>,
        next: usize,
        rng: fastrand::Rng,
    },
}

impl Victims {
    pub fn random(rank: u32, size: u32) -> Self {
        Victims::Random { rank, size, rng: rank_rng(rank) }
    }

    pub fn proximity(topology: &Topology) -> Self {
        let rank = topology.rank;
        let local: Vec<u32> = topology.local_ranks().into_iter().filter(|&r| r != rank).collect();
        Victims::Ordered {
            rank,
            size: topology.size(),
            remote_first: topology.is_local_root(),
            local,
            next: 0,
        }
    }

    pub fn hierarchical(topology: &Topology) -> Self {
        let rank = topology.rank;
        let mut rng = rank_rng(rank);
        let mut local: Vec<u32> = topology.local_ranks().into_iter().filter(|&r| r != rank).collect();
        rng.shuffle(&mut local);
        Victims::Hierarchical { rank, size: topology.size(), local, next: 0, rng }
    }

    /// The next victim, or `None` when this is the only rank.
    pub fn pick(&mut self) -> Option<u32> {
        match self {
            Victims::Random { rank, size, rng } => random_other(*rank, *size, rng),
            Victims::Ordered { rank, size, local, remote_first, next } => {
                let others = (*size as usize).checked_sub(1).filter(|&n| n > 0)?;
                let remotes = others - local.len();
                let k = *next % others;
                *next += 1;
                let (first_len, in_first) =
                    if *remote_first { (remotes, k < remotes) } else { (local.len(), k < local.len()) };
                let remote_index = |i: usize| nth_remote(i, *rank, local);
                Some(match (*remote_first, in_first) {
                    (true, true) => remote_index(k),
                    (true, false) => local[k - first_len],
                    (false, true) => local[k],
                    (false, false) => remote_index(k - first_len),
                })
            }
            Victims::Hierarchical { rank, size, local, next, rng } => {
                if *next < local.len() {
                    *next += 1;
                    return Some(local[*next - 1]);
                }
                let remotes = (*size as usize).checked_sub(1 + local.len()).filter(|&n| n > 0);
                match remotes {
                    Some(n) => Some(nth_remote(rng.usize(0..n), *rank, local)),
                    None => {
                        // A single node: keep cycling through it.
                        *next = 0;
                        let first = *local.first()?;
                        *next = 1;
                        Some(first)
                    }
                }
            }
        }
    }

    /// A fruitful request restarts a proximity order from the closest ranks.
    pub fn succeeded(&mut self) {
        match self {
            Victims::Ordered { next, .. } | Victims::Hierarchical { next, .. } => *next = 0,
            Victims::Random { .. } => {}
        }
    }
}

/// Each rank's own random sequence.
fn rank_rng(rank: u32) -> fastrand::Rng {
    fastrand::Rng::with_seed(0x5eed ^ u64::from(rank))
}

fn random_other(rank: u32, size: u32, rng: &mut fastrand::Rng) -> Option<u32> {
    if size <= 1 {
        return None;
    }
    let pick = rng.u32(0..size - 1);
    Some(if pick >= rank { pick + 1 } else { pick })
}

/// The `i`-th rank, ascending, that is neither `rank` nor in `local` (sorted or not).
fn nth_remote(i: usize, rank: u32, local: &[u32]) -> u32 {
    let mut taken: Vec<u32> = local.iter().copied().chain([rank]).collect();
    taken.sort_unstable();
    let mut candidate = i as u32;
    for &t in &taken {
        if t <= candidate {
            candidate += 1;
        } else {
            break;
        }
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn topo(rank: u32) -> Topology {
        // Two nodes of three ranks: 0,1,2 | 3,4,5
        Topology { rank, node: vec![0, 0, 0, 1, 1, 1] }
    }

    #[test]
    fn co_located_first_but_local_roots_look_away() {
        assert_eq!(topo(1).proximity_order(), vec![0, 2, 3, 4, 5]);
        assert_eq!(topo(0).proximity_order(), vec![3, 4, 5, 1, 2], "local root asks remote ranks first");
        assert_eq!(topo(4).proximity_order(), vec![3, 5, 0, 1, 2]);
        assert!(topo(3).is_local_root());
        let interleaved = Topology { rank: 2, node: vec![0, 1, 0, 1, 0] };
        assert_eq!(interleaved.proximity_order(), vec![0, 4, 1, 3]);
    }

    #[test]
    fn random_never_picks_itself() {
        let mut v = Victims::random(2, 5);
        let picks: std::collections::BTreeSet<u32> = (0..200).filter_map(|_| v.pick()).collect();
        assert_eq!(picks, [0, 1, 3, 4].into_iter().collect());
        assert_eq!(Victims::random(0, 1).pick(), None);
        assert_eq!(Victims::proximity(&Topology { rank: 0, node: vec![0] }).pick(), None);
        assert_eq!(Victims::hierarchical(&Topology { rank: 0, node: vec![0] }).pick(), None);
    }

    #[test]
    fn ordered_cycles_and_restarts_after_success() {
        let mut v = Victims::proximity(&topo(1));
        let first: Vec<u32> = (0..6).filter_map(|_| v.pick()).collect();
        assert_eq!(first, vec![0, 2, 3, 4, 5, 0]);
        v.succeeded();
        assert_eq!(v.pick(), Some(0));
    }

    #[test]
    fn hierarchical_asks_its_node_first_then_anyone_else() {
        // Three nodes of four ranks.
        let node: Vec<u32> = (0..12).map(|r| r / 4).collect();
        let mut v = Victims::hierarchical(&Topology { rank: 5, node: node.clone() });
        let mut first: Vec<u32> = (0..3).filter_map(|_| v.pick()).collect();
        first.sort_unstable();
        assert_eq!(first, vec![4, 6, 7], "the node's other ranks, each once");
        let remote: std::collections::BTreeSet<u32> = (0..400).filter_map(|_| v.pick()).collect();
        assert_eq!(remote, [0, 1, 2, 3, 8, 9, 10, 11].into_iter().collect(), "then remote ranks only");
        v.succeeded();
        assert!([4, 6, 7].contains(&v.pick().unwrap()), "a success starts over on the node");
        // One node: cycle through it.
        let mut alone = Victims::hierarchical(&Topology { rank: 1, node: vec![0, 0, 0] });
        let picks: Vec<u32> = (0..5).filter_map(|_| alone.pick()).collect();
        assert!(picks.iter().all(|&p| p == 0 || p == 2) && picks.len() == 5, "{picks:?}");
    }

    /// The first request of every rank in a 2,000-rank job (one rank per node): the seed's order
    /// sends them all to rank 0 or 1; random and hierarchical choices spread them.
    #[test]
    fn no_hot_spot_at_thousands_of_ranks() {
        let size = 2_000u32;
        let mut topology = Topology { rank: 0, node: (0..size).collect() };
        let mut busiest = |first: &dyn Fn(&Topology) -> u32| -> usize {
            let mut hits: BTreeMap<u32, usize> = BTreeMap::new();
            for rank in 0..size {
                topology.rank = rank;
                *hits.entry(first(&topology)).or_default() += 1;
            }
            hits.values().copied().max().unwrap_or(0)
        };
        let seed_order = busiest(&|t| Victims::proximity(t).pick().unwrap());
        let hierarchical = busiest(&|t| Victims::hierarchical(t).pick().unwrap());
        let random = busiest(&|t| Victims::random(t.rank, size).pick().unwrap());
        assert!(seed_order >= 1_999, "the seed's order: rank 0 is everyone's first choice ({seed_order})");
        assert!(hierarchical <= 10 && random <= 10, "busiest first choice: {hierarchical} / {random} ranks");
    }
}
