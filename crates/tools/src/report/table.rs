//! The per-rank table: work, messages (and how many were empty: work requests and refusals),
//! bytes, requests, time profile.

use canopy_distwalk::ClusterStats;
use std::fmt::Write;

pub fn render(stats: &ClusterStats) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scheduler {}  ranks {}  messages {}  bytes {}  work max/min: entries {:.3}, tasks {:.3}",
        stats.scheduler,
        stats.ranks.len(),
        stats.total_messages(),
        stats.total_bytes(),
        stats.imbalance(|r| r.entries),
        stats.imbalance(|r| r.tasks)
    );
    let _ = writeln!(
        out,
        "{:>5} {:>8} {:>7} {:>10} {:>8} {:>11} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "rank",
        "node",
        "threads",
        "entries",
        "tasks",
        "messages",
        "empty",
        "bytes",
        "asked",
        "given",
        "idle s",
        "io s",
        "comm s"
    );
    for r in &stats.ranks {
        let _ = writeln!(
            out,
            "{:>5} {:>8} {:>7} {:>10} {:>8} {:>11} {:>9} {:>9} {:>8} {:>8} {:>8.3} {:>8.3} {:>8.3}",
            r.rank,
            r.node,
            r.threads,
            r.entries,
            r.tasks,
            r.messages_sent,
            r.message_sizes.first().copied().unwrap_or(0),
            r.bytes_sent,
            format!("{}/{}", r.work_requests_fruitful, r.work_requests_sent),
            r.tasks_exported,
            r.idle_secs,
            r.readdir_secs + r.stat_secs,
            r.comm_secs
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_distwalk::RankStats;

    #[test]
    fn one_line_per_rank_and_totals() {
        let rank = |rank, bytes: u64| RankStats {
            rank,
            entries: 10 + u64::from(rank),
            tasks: 5,
            messages_sent: 3,
            message_sizes: vec![1, 0, 2],
            bytes_sent: bytes,
            ..RankStats::default()
        };
        let stats =
            ClusterStats { version: 1, scheduler: "drqs".into(), ranks: vec![rank(0, 100), rank(1, 50)] };
        let text = render(&stats);
        assert!(text.starts_with(
            "scheduler drqs  ranks 2  messages 6  bytes 150  work max/min: entries 1.100, tasks 1.000"
        ));
        assert!(text.lines().nth(1).unwrap().contains(" empty "));
        assert_eq!(text.lines().count(), 4);
    }
}
