//! `--stats FILE.json`: per-rank instrumentation, the seed's Fig. 3b profile and the data behind
//! the bytes-exchanged heat map (Fig. 1/5) and the work-distribution histogram (Fig. 6).

use serde::{Deserialize, Serialize};

/// Version of the JSON layout written by `--stats` (2: per-rank totals, top peers and a size
/// histogram instead of vectors as long as the job).
pub const STATS_VERSION: u32 = 2;

/// Peers a rank's record names, by messages and by bytes: the record's size does not grow with the
/// job, so rank 0 can collect it from 10⁴ ranks.
pub const TOP_PEERS: usize = 8;

/// What one rank sent to one peer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerTraffic {
    pub rank: u32,
    pub messages: u64,
    pub bytes: u64,
}

impl PeerTraffic {
    /// The `k` peers sent the most messages and the `k` sent the most bytes (each by rank on
    /// ties), by rank, from per-destination counters; peers sent nothing are left out.
    pub fn top(messages_to: &[u64], bytes_to: &[u64], k: usize) -> Vec<PeerTraffic> {
        let all: Vec<PeerTraffic> = messages_to
            .iter()
            .zip(bytes_to)
            .enumerate()
            .filter(|&(_, (&messages, _))| messages > 0)
            .map(|(rank, (&messages, &bytes))| PeerTraffic { rank: rank as u32, messages, bytes })
            .collect();
        let mut by_messages = all.clone();
        by_messages.sort_by_key(|p| (std::cmp::Reverse(p.messages), p.rank));
        let mut by_bytes = all;
        by_bytes.sort_by_key(|p| (std::cmp::Reverse(p.bytes), p.rank));
        let mut top: Vec<PeerTraffic> =
            by_messages.into_iter().take(k).chain(by_bytes.into_iter().take(k)).collect();
        top.sort_by_key(|p| p.rank);
        top.dedup();
        top
    }
}

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
    /// Messages and bytes this rank sent in all.
    pub messages_sent: u64,
    pub bytes_sent: u64,
    /// The peers it sent most to ([`PeerTraffic::top`], [`TOP_PEERS`]).
    pub top_peers: Vec<PeerTraffic>,
    /// Messages it sent by size: index 0 empty ones (work requests, refusals), index `c` sizes in
    /// [2^(c-1), 2^c) bytes.
    pub message_sizes: Vec<u64>,
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
    /// Metadata system calls of the walk (open, getdents64, statx), summed over threads.
    #[serde(default)]
    pub metadata_calls: u64,
    /// This rank's part of the politeness budget when its walk ended (it follows the work,
    /// [`crate::budget`]): calls per second and calls in flight; null without limits. (Every field
    /// is written: the statistics also travel to rank 0 as postcard, which skips nothing.)
    #[serde(default)]
    pub max_rate_end: Option<f64>,
    #[serde(default)]
    pub max_in_flight_end: Option<usize>,
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
        self.ranks.iter().map(|r| r.messages_sent).sum()
    }

    pub fn total_bytes(&self) -> u64 {
        self.ranks.iter().map(|r| r.bytes_sent).sum()
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
    fn top_peers_are_the_busiest_by_messages_and_by_bytes() {
        // Rank 1 gets many empty requests, rank 3 one big batch, rank 2 a little of both.
        let messages = [0, 500, 3, 1, 0];
        let bytes = [0, 0, 90, 70_000, 0];
        let peer = |rank, messages, bytes| PeerTraffic { rank, messages, bytes };
        assert_eq!(PeerTraffic::top(&messages, &bytes, 1), [peer(1, 500, 0), peer(3, 1, 70_000)]);
        assert_eq!(
            PeerTraffic::top(&messages, &bytes, 8),
            [peer(1, 500, 0), peer(2, 3, 90), peer(3, 1, 70_000)]
        );
        assert!(PeerTraffic::top(&[0; 10_000], &[0; 10_000], 8).is_empty());
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
