//! Size and age histograms of regular files.
//!
//! * Size: power-of-two buckets. Bucket 0 holds empty files; bucket `k ≥ 1` holds sizes in
//!   `[2^(k-1), 2^k − 1]` (1, 2–3, 4–7, …, 1 KiB–2 KiB−1, …), 65 buckets in all.
//! * Age: `reference − mtime`, with the walk's start as the reference: `future` (mtime after the
//!   reference), then under 1 day, 7 days, 30 days, 90 days, 365 days, 3 × 365 days, and older.

use super::totals::{Totals, merge_slots};
use canopy_engine::{Metadata, Timestamp};
use serde::{Deserialize, Serialize};

const SIZE_BUCKETS: usize = u64::BITS as usize + 1;

const DAY_SECS: i64 = 86_400;
/// Exclusive upper ages of the buckets after `future`; one more, unbounded bucket follows.
pub const AGE_LIMITS_SECS: [i64; 6] =
    [DAY_SECS, 7 * DAY_SECS, 30 * DAY_SECS, 90 * DAY_SECS, 365 * DAY_SECS, 3 * 365 * DAY_SECS];
const AGE_BUCKETS: usize = AGE_LIMITS_SECS.len() + 2;

/// File counts and bytes per power-of-two size bucket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeHistogram {
    buckets: Vec<Totals>,
}

impl Default for SizeHistogram {
    fn default() -> Self {
        SizeHistogram { buckets: vec![Totals::default(); SIZE_BUCKETS] }
    }
}

impl SizeHistogram {
    pub fn add(&mut self, meta: &Metadata) {
        self.buckets[size_bucket(meta.size)].add(meta);
    }

    pub fn merge(&mut self, other: &SizeHistogram) {
        merge_slots(&mut self.buckets, &other.buckets);
    }

    /// `(smallest size, largest size, totals)` of every bucket, smallest sizes first.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, &Totals)> {
        self.buckets.iter().enumerate().map(|(k, totals)| {
            let (low, high) = size_bounds(k);
            (low, high, totals)
        })
    }
}

fn size_bucket(size: u64) -> usize {
    (u64::BITS - size.leading_zeros()) as usize
}

/// Inclusive size range of bucket `k`.
fn size_bounds(k: usize) -> (u64, u64) {
    match k {
        0 => (0, 0),
        64 => (1 << 63, u64::MAX),
        k => (1 << (k - 1), (1 << k) - 1),
    }
}

/// File counts and bytes per modification-age bucket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgeHistogram {
    buckets: Vec<Totals>,
}

impl Default for AgeHistogram {
    fn default() -> Self {
        AgeHistogram { buckets: vec![Totals::default(); AGE_BUCKETS] }
    }
}

impl AgeHistogram {
    pub fn add(&mut self, meta: &Metadata, reference: Timestamp) {
        self.buckets[age_bucket(meta.mtime, reference)].add(meta);
    }

    pub fn merge(&mut self, other: &AgeHistogram) {
        merge_slots(&mut self.buckets, &other.buckets);
    }

    /// `(min age, max age, totals)` per bucket in seconds, newest first: the first bucket
    /// (`future`) has no minimum, the last no maximum; minimums are inclusive, maximums exclusive.
    pub fn buckets(&self) -> impl Iterator<Item = (Option<i64>, Option<i64>, &Totals)> {
        let mut limits = vec![None, Some(0)];
        limits.extend(AGE_LIMITS_SECS.iter().map(|&l| Some(l)));
        limits.push(None);
        self.buckets.iter().enumerate().map(move |(k, totals)| (limits[k], limits[k + 1], totals))
    }
}

fn age_bucket(mtime: Timestamp, reference: Timestamp) -> usize {
    let ns = |t: Timestamp| i128::from(t.sec) * 1_000_000_000 + i128::from(t.nsec);
    let age = ns(reference) - ns(mtime);
    if age < 0 {
        return 0;
    }
    1 + AGE_LIMITS_SECS.iter().take_while(|&&limit| age >= i128::from(limit) * 1_000_000_000).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_buckets_are_powers_of_two() {
        assert_eq!(size_bucket(0), 0);
        assert_eq!(size_bucket(1), 1);
        assert_eq!(size_bucket(3), 2);
        assert_eq!(size_bucket(1023), 10);
        assert_eq!(size_bucket(1024), 11);
        assert_eq!(size_bucket(u64::MAX), 64);
        for k in 0..SIZE_BUCKETS {
            let (low, high) = size_bounds(k);
            assert_eq!((size_bucket(low), size_bucket(high)), (k, k), "bucket {k}");
        }
    }

    #[test]
    fn age_buckets_split_at_their_limits() {
        let now = Timestamp { sec: 1_000_000_000, nsec: 500 };
        let ago = |secs: i64, nsec: u32| Timestamp { sec: now.sec - secs, nsec };
        assert_eq!(age_bucket(ago(0, 501), now), 0, "a nanosecond ahead is the future");
        assert_eq!(age_bucket(now, now), 1);
        assert_eq!(age_bucket(ago(DAY_SECS, 501), now), 1, "just under a day");
        assert_eq!(age_bucket(ago(DAY_SECS, 500), now), 2, "exactly a day");
        assert_eq!(age_bucket(ago(100 * DAY_SECS, 0), now), 5);
        assert_eq!(age_bucket(ago(3 * 365 * DAY_SECS, 500), now), 7);
        assert_eq!(age_bucket(Timestamp { sec: i64::MIN, nsec: 0 }, now), 7);
        let limits: Vec<_> = AgeHistogram::default().buckets().map(|(min, max, _)| (min, max)).collect();
        assert_eq!(limits.len(), AGE_BUCKETS);
        assert_eq!(limits[0], (None, Some(0)));
        assert_eq!(limits[1], (Some(0), Some(DAY_SECS)));
        assert_eq!(limits[7], (Some(3 * 365 * DAY_SECS), None));
    }
}
