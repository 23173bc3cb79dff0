//! The per-rank table: work, messages, requests, time profile.

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
        "{:>5} {:>8} {:>7} {:>10} {:>8} {:>11} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "rank",
        "node",
        "threads",
        "entries",
        "tasks",
        "messages",
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
            "{:>5} {:>8} {:>7} {:>10} {:>8} {:>11} {:>9} {:>8} {:>8} {:>8.3} {:>8.3} {:>8.3}",
            r.rank,
            r.node,
            r.threads,
            r.entries,
            r.tasks,
            r.messages_to.iter().sum::<u64>(),
            r.bytes_to.iter().sum::<u64>(),
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
            messages_to: vec![1, 2],
            bytes_to: vec![bytes, 0],
            ..RankStats::default()
        };
        let stats =
            ClusterStats { version: 1, scheduler: "drqs".into(), ranks: vec![rank(0, 100), rank(1, 50)] };
        let text = render(&stats);
        assert!(text.starts_with(
            "scheduler drqs  ranks 2  messages 6  bytes 150  work max/min: entries 1.100, tasks 1.000"
        ));
        assert_eq!(text.lines().count(), 4);
    }
}
