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

    /// max/min tasks over ranks (1.0 is perfect balance).
    pub fn imbalance(&self) -> f64 {
        let tasks = self.ranks.iter().map(|r| r.tasks);
        let (min, max) = (tasks.clone().min().unwrap_or(0), tasks.max().unwrap_or(0));
        if min == 0 { f64::INFINITY } else { max as f64 / min as f64 }
    }
}
