//! What du adds up for each entry: allocated bytes (`st_blocks` × 512, what GNU du counts by
//! default — a sparse file's holes cost nothing), apparent bytes (`st_size`) and entries (inodes).
//! All three are kept, so one walk serves every output; the command line picks the one shown.
//! With `--time` the latest of a time stamp is kept too.

use canopy_engine::{Metadata, Timestamp};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which of the sums is shown and ranked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Allocated,
    Apparent,
    Inodes,
}

impl Metric {
    /// The name used in JSON and reports.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Allocated => "allocated_bytes",
            Metric::Apparent => "apparent_bytes",
            Metric::Inodes => "entries",
        }
    }
}

/// The time stamp `--time` shows: the latest over what a line counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeField {
    Modified,
    Accessed,
    Changed,
}

impl TimeField {
    fn of(self, meta: &Metadata) -> Timestamp {
        match self {
            TimeField::Modified => meta.mtime,
            TimeField::Accessed => meta.atime,
            TimeField::Changed => meta.ctime,
        }
    }
}

/// Sums over a set of entries. Additions saturate (sparse files can claim exabytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub allocated: u64,
    pub apparent: u64,
    pub inodes: u64,
    /// With `--time`: the latest time stamp of the entries.
    pub latest: Option<Timestamp>,
}

impl Usage {
    /// One entry's own usage, with its time stamp when `--time` asks for one.
    pub fn of(meta: &Metadata, time: Option<TimeField>) -> Usage {
        Usage {
            allocated: meta.allocated_bytes(),
            apparent: meta.size,
            inodes: 1,
            latest: time.map(|field| field.of(meta)),
        }
    }

    pub fn add(&mut self, other: Usage) {
        self.allocated = self.allocated.saturating_add(other.allocated);
        self.apparent = self.apparent.saturating_add(other.apparent);
        self.inodes = self.inodes.saturating_add(other.inodes);
        self.latest = self.latest.max(other.latest);
    }

    pub fn get(&self, metric: Metric) -> u64 {
        match metric {
            Metric::Allocated => self.allocated,
            Metric::Apparent => self.apparent,
            Metric::Inodes => self.inodes,
        }
    }
}

/// A [`Usage`] that worker threads add to concurrently (a directory whose chunks several workers
/// visit).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SharedUsage {
    allocated: AtomicU64,
    apparent: AtomicU64,
    inodes: AtomicU64,
    /// Only taken with `--time`.
    latest: Mutex<Option<Timestamp>>,
}

impl SharedUsage {
    pub fn add(&self, usage: Usage) {
        if usage.allocated > 0 {
            saturating_add(&self.allocated, usage.allocated);
        }
        if usage.apparent > 0 {
            saturating_add(&self.apparent, usage.apparent);
        }
        if usage.inodes > 0 {
            self.inodes.fetch_add(usage.inodes, Ordering::Relaxed);
        }
        if usage.latest.is_some() {
            let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
            *latest = (*latest).max(usage.latest);
        }
    }

    pub fn load(&self) -> Usage {
        Usage {
            allocated: self.allocated.load(Ordering::Relaxed),
            apparent: self.apparent.load(Ordering::Relaxed),
            inodes: self.inodes.load(Ordering::Relaxed),
            latest: *self.latest.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

fn saturating_add(sum: &AtomicU64, n: u64) {
    let _ = sum.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v.saturating_add(n)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_saturate_and_threads_add_up() {
        let at = |sec| Some(Timestamp { sec, nsec: 0 });
        let mut u = Usage { allocated: u64::MAX - 1, apparent: 5, inodes: 1, latest: at(7) };
        u.add(Usage { allocated: 10, apparent: 5, inodes: 1, latest: at(9) });
        assert_eq!(u, Usage { allocated: u64::MAX, apparent: 10, inodes: 2, latest: at(9) });
        u.add(Usage { latest: None, ..u });
        assert_eq!(u.latest, at(9), "no time stamp leaves the latest as it is");
        let shared = SharedUsage::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        shared.add(Usage { allocated: 512, apparent: 3, inodes: 1, latest: None });
                    }
                });
            }
        });
        assert_eq!(
            shared.load(),
            Usage { allocated: 2_048_000, apparent: 12_000, inodes: 4000, latest: None }
        );
    }
}
