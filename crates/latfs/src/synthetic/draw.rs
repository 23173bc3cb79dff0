//! The tree's only source of randomness: every property is a pure function of (seed, inode, purpose),
//! so any entry is computed on its own, in any order, on any thread, and always the same.

/// What a draw decides; each purpose draws independently of the others for the same inode.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Purpose {
    Name = 1,
    Kind,
    Size,
    SizeLow,
    Mode,
    Mtime,
    Atime,
    Ctime,
    Files,
    Subdirs,
    Split,
    Content,
}

/// splitmix64's finaliser: a bijection of u64 whose outputs look independent for consecutive inputs.
pub(crate) const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The draw for `purpose` of the entry at inode `ino` in the tree of `seed`.
pub(crate) fn draw(seed: u64, ino: u64, purpose: Purpose) -> u64 {
    mix(mix(seed ^ mix(ino)).wrapping_add((purpose as u64).wrapping_mul(GOLDEN)))
}

/// A Pareto (power-law, exponent 1) count with median `median`: P(value ≥ x) = median / (x + median).
/// Integer arithmetic only, so every platform draws the same tree.
pub(crate) fn pareto(random: u64, median: u64) -> u64 {
    let uniform = (random >> 32) + 1; // 1 ..= 2^32
    (u128::from(median) << 32).div_euclid(u128::from(uniform)).min(u128::from(u64::MAX)) as u64 - median
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_differ_by_seed_inode_and_purpose_and_repeat_exactly() {
        let base = draw(1, 42, Purpose::Size);
        assert_eq!(base, draw(1, 42, Purpose::Size));
        assert_ne!(base, draw(2, 42, Purpose::Size));
        assert_ne!(base, draw(1, 43, Purpose::Size));
        assert_ne!(base, draw(1, 42, Purpose::Mtime));
        assert_eq!(mix(0), 0, "splitmix64's finaliser fixes 0");
        assert_eq!(mix(1), 0x5692_161d_100b_05e5, "the reference value");
    }

    #[test]
    fn pareto_counts_have_the_asked_median_and_a_heavy_tail() {
        let samples: Vec<u64> = (0..100_000).map(|i| pareto(mix(i + 1), 16)).collect();
        let below = samples.iter().filter(|&&n| n < 16).count();
        assert!((45_000..55_000).contains(&below), "half below the median: {below}");
        let huge = samples.iter().filter(|&&n| n >= 1_600).count();
        assert!((500..1_500).contains(&huge), "about 1% at 100x the median: {huge}");
        assert_eq!(pareto(u64::MAX, 16), 0, "the largest uniform draw gives the smallest count");
        assert_eq!(pareto(0, 16), (16 << 32) - 16, "the smallest gives the largest");
    }
}
