//! `--stats FILE.json`: per-rank instrumentation, the seed's Fig. 3b profile and the data behind
//! the bytes-exchanged heat map (Fig. 1/5) and the work-distribution histogram (Fig. 6).

use serde::{Deserialize, Serialize};

/// Version of the JSON layout written by `--stats`.
pub const STATS_VERSION: u32 = 1;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RankStats {
    pub rank: u32,
    pub host: String,
    /// Node index (ranks sharing memory share a node).
    pub node: u32,
    pub threads: usize,
    /// Units of work run here: directory reads, chunks of big directories, jobs.
    pub tasks: u64,
    pub entries: u64,
    pub dirs: u64,
    /// Messages and bytes this rank sent to each rank (index = destination).
    pub messages_to: Vec<u64>,
    pub bytes_to: Vec<u64>,
    pub work_requests_sent: u64,
    pub work_requests_fruitful: u64,
    /// Batches of work sent unasked to peers refused earlier (H-DRQS).
    #[serde(default)]
    pub work_offers_sent: u64,
    pub tasks_exported: u64,
    pub tasks_imported: u64,
    /// Wall time with no local work.
    pub idle_secs: f64,
    /// Time in getdents64 / statx, summed over threads.
    pub readdir_secs: f64,
    pub stat_secs: f64,
    /// Time in MPI calls on the communication thread.
    pub comm_secs: f64,
    pub elapsed_secs: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClusterStats {
    pub version: u32,
    pub scheduler: String,
    pub ranks: Vec<RankStats>,
}

impl ClusterStats {
    pub fn total_messages(&self) -> u64 {
        self.ranks.iter().flat_map(|r| &r.messages_to).sum()
    }

    pub fn total_bytes(&self) -> u64 {
        self.ranks.iter().flat_map(|r| &r.bytes_to).sum()
    }

    /// The ranks that walk: all of them, except the centralised scheduler's master (rank 0), which
    /// only hands out work.
    pub fn workers(&self) -> &[RankStats] {
        match self.ranks.split_first() {
            Some((_, rest)) if self.scheduler == "cp" && !rest.is_empty() => rest,
            _ => &self.ranks,
        }
    }

    /// max/min over the workers of `work` (entries visited, tasks run…): 1.0 is perfect balance.
    pub fn imbalance(&self, work: impl Fn(&RankStats) -> u64) -> f64 {
        let values: Vec<u64> = self.workers().iter().map(work).collect();
        let (min, max) =
            (values.iter().min().copied().unwrap_or(0), values.iter().max().copied().unwrap_or(0));
        if min == 0 { f64::INFINITY } else { max as f64 / min as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(rank: u32, entries: u64) -> RankStats {
        RankStats { rank, entries, tasks: entries / 2, ..RankStats::default() }
    }

    #[test]
    fn balance_leaves_out_only_the_centralised_master() {
        let ranks = vec![rank(0, 0), rank(1, 100), rank(2, 125)];
        let cp = ClusterStats { version: STATS_VERSION, scheduler: "cp".into(), ranks: ranks.clone() };
        assert_eq!(cp.workers().len(), 2);
        assert_eq!(cp.imbalance(|r| r.entries), 1.25);
        let drqs = ClusterStats { version: STATS_VERSION, scheduler: "drqs".into(), ranks };
        assert_eq!(drqs.workers().len(), 3);
        assert_eq!(drqs.imbalance(|r| r.entries), f64::INFINITY, "a rank that did nothing");
        let alone = ClusterStats { version: STATS_VERSION, scheduler: "cp".into(), ranks: vec![rank(0, 7)] };
        assert_eq!(alone.imbalance(|r| r.tasks), 1.0, "a one-rank run walks on rank 0");
    }
}
