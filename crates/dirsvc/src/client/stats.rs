//! Probe counting: how many partitions a name-routed operation had to contact. With a fresh
//! bitmap that is one; a stale bitmap costs one redirect and a bitmap refresh, so two.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Probes per operation; the last bucket counts everything from `BUCKETS` up.
pub const BUCKETS: usize = 8;

#[derive(Default)]
pub struct ProbeStats {
    histogram: [AtomicU64; BUCKETS],
    refreshes: AtomicU64,
}

impl ProbeStats {
    pub fn record(&self, probes: u32) {
        let bucket = (probes.max(1) as usize).min(BUCKETS) - 1;
        self.histogram[bucket].fetch_add(1, Ordering::Relaxed);
    }

    pub fn record_refresh(&self) {
        self.refreshes.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> ProbeHistogram {
        ProbeHistogram {
            counts: self.histogram.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
            refreshes: self.refreshes.load(Ordering::Relaxed),
        }
    }
}

/// `counts[i]` operations took `i + 1` probes (the last bucket: that many or more).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeHistogram {
    pub counts: Vec<u64>,
    /// Bitmap refreshes from directory metadata objects after a redirect.
    pub refreshes: u64,
}

impl ProbeHistogram {
    pub fn merge(&mut self, other: &ProbeHistogram) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.refreshes += other.refreshes;
    }

    /// The operations counted since `earlier` was taken.
    pub fn since(&self, earlier: &ProbeHistogram) -> ProbeHistogram {
        ProbeHistogram {
            counts: self
                .counts
                .iter()
                .enumerate()
                .map(|(i, n)| n - earlier.counts.get(i).copied().unwrap_or(0))
                .collect(),
            refreshes: self.refreshes - earlier.refreshes,
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The most probes any operation needed (0 when nothing was counted).
    pub fn max_probes(&self) -> usize {
        self.counts.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_and_differences() {
        let stats = ProbeStats::default();
        let before = stats.snapshot();
        for probes in [1, 1, 2, 9] {
            stats.record(probes);
        }
        let delta = stats.snapshot().since(&before);
        assert_eq!(delta.counts[..2], [2, 1]);
        assert_eq!(delta.counts[BUCKETS - 1], 1, "9 probes land in the last bucket");
        assert_eq!((delta.total(), delta.max_probes()), (4, BUCKETS));
    }
}
