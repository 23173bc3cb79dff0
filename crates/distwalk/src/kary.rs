//! A k-ary tree over ranks numbered breadth-first: the children of rank r are r·k+1 … r·k+k. Its
//! depth is log_k(P), and a rank needs only arithmetic, no table, to find its parent and children —
//! at 10⁴ ranks a per-rank table would cost more than the walk's own state.

/// The fan-out of the termination waves: depth 4 at 10⁴ ranks.
pub const FANOUT: u32 = 16;

/// The parent of `rank` (`None` for rank 0).
pub fn parent(rank: u32, fanout: u32) -> Option<u32> {
    (rank > 0).then(|| (rank - 1) / fanout.max(1))
}

/// The children of `rank` among `size` ranks.
pub fn children(rank: u32, size: u32, fanout: u32) -> impl Iterator<Item = u32> {
    let fanout = u64::from(fanout.max(1));
    let first = u64::from(rank) * fanout + 1;
    let end = (first + fanout).min(u64::from(size)).max(first);
    (first..end).map(|c| c as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_and_children_agree() {
        assert_eq!(children(0, 10, 3).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(children(2, 10, 3).collect::<Vec<_>>(), vec![7, 8, 9]);
        assert_eq!(children(3, 10, 3).count(), 0);
        assert_eq!(parent(0, 3), None);
        for size in [1, 2, 17, 1000] {
            for rank in 1..size {
                let p = parent(rank, 16).unwrap();
                assert!(children(p, size, 16).any(|c| c == rank), "{rank} of {size}");
            }
        }
        assert_eq!(children(u32::MAX / 2, u32::MAX, 16).count(), 0, "no overflow");
    }
}
