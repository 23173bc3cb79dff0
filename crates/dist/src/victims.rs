//! Whom an idle rank asks for work: a random rank (DRQS), or ranks in order of proximity — those
//! on the same node first, except that a node's local root asks remote ranks first (PA-DRQS, the
//! seed's refinement that keeps every co-located rank from asking remote ranks at once).

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

    /// The order in which to ask for work: co-located ranks then remote ranks, or — for the
    /// node's local root — remote ranks first.
    pub fn proximity_order(&self) -> Vec<u32> {
        let local: Vec<u32> = self.local_ranks().into_iter().filter(|&r| r != self.rank).collect();
        let remote: Vec<u32> = (0..self.size()).filter(|&r| self.node[r as usize] != self.node[self.rank as usize]).collect();
        if self.is_local_root() { remote.into_iter().chain(local).collect() } else { local.into_iter().chain(remote).collect() }
    }
}

/// Picks the next rank to ask.
pub enum Victims {
    Random { rank: u32, size: u32, rng: fastrand::Rng },
    Ordered { order: Vec<u32>, next: usize },
}

impl Victims {
    pub fn random(rank: u32, size: u32) -> Self {
        Victims::Random { rank, size, rng: fastrand::Rng::with_seed(0x5eed ^ u64::from(rank)) }
    }

    pub fn proximity(topology: &Topology) -> Self {
        Victims::Ordered { order: topology.proximity_order(), next: 0 }
    }

    /// The next victim, or `None` when this is the only rank.
    pub fn next(&mut self) -> Option<u32> {
        match self {
            Victims::Random { rank, size, rng } => {
                if *size <= 1 {
                    return None;
                }
                let pick = rng.u32(0..*size - 1);
                Some(if pick >= *rank { pick + 1 } else { pick })
            }
            Victims::Ordered { order, next } => {
                let victim = *order.get(*next % order.len().max(1))?;
                *next += 1;
                Some(victim)
            }
        }
    }

    /// A fruitful request restarts the proximity order from the closest ranks.
    pub fn succeeded(&mut self) {
        if let Victims::Ordered { next, .. } = self {
            *next = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn random_never_picks_itself() {
        let mut v = Victims::random(2, 5);
        let picks: std::collections::BTreeSet<u32> = (0..200).filter_map(|_| v.next()).collect();
        assert_eq!(picks, [0, 1, 3, 4].into_iter().collect());
        assert_eq!(Victims::random(0, 1).next(), None);
    }

    #[test]
    fn ordered_cycles_and_restarts_after_success() {
        let mut v = Victims::proximity(&topo(1));
        let first: Vec<u32> = (0..6).filter_map(|_| v.next()).collect();
        assert_eq!(first, vec![0, 2, 3, 4, 5, 0]);
        v.succeeded();
        assert_eq!(v.next(), Some(0));
    }
}
