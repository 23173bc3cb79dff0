//! Request counters: how many requests of each kind reached the mount, and how many were in flight at
//! once. The in-flight maximum is what shows whether a client really overlaps its metadata calls.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The kinds of FUSE requests the mount answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Lookup,
    Getattr,
    Setattr,
    Readlink,
    Access,
    Statfs,
    Opendir,
    Readdir,
    Readdirplus,
    Releasedir,
    Fsyncdir,
    Open,
    Create,
    Flush,
    Release,
    Mknod,
    Mkdir,
    Symlink,
    Link,
    Unlink,
    Rmdir,
    Rename,
    Read,
    Write,
    Fsync,
}

impl Op {
    pub const ALL: [Op; 25] = [
        Op::Lookup,
        Op::Getattr,
        Op::Setattr,
        Op::Readlink,
        Op::Access,
        Op::Statfs,
        Op::Opendir,
        Op::Readdir,
        Op::Readdirplus,
        Op::Releasedir,
        Op::Fsyncdir,
        Op::Open,
        Op::Create,
        Op::Flush,
        Op::Release,
        Op::Mknod,
        Op::Mkdir,
        Op::Symlink,
        Op::Link,
        Op::Unlink,
        Op::Rmdir,
        Op::Rename,
        Op::Read,
        Op::Write,
        Op::Fsync,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Lookup => "lookup",
            Op::Getattr => "getattr",
            Op::Setattr => "setattr",
            Op::Readlink => "readlink",
            Op::Access => "access",
            Op::Statfs => "statfs",
            Op::Opendir => "opendir",
            Op::Readdir => "readdir",
            Op::Readdirplus => "readdirplus",
            Op::Releasedir => "releasedir",
            Op::Fsyncdir => "fsyncdir",
            Op::Open => "open",
            Op::Create => "create",
            Op::Flush => "flush",
            Op::Release => "release",
            Op::Mknod => "mknod",
            Op::Mkdir => "mkdir",
            Op::Symlink => "symlink",
            Op::Link => "link",
            Op::Unlink => "unlink",
            Op::Rmdir => "rmdir",
            Op::Rename => "rename",
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
        }
    }

    /// Data requests pay `--data-delay`; everything else is metadata and pays `--delay`.
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write | Op::Fsync)
    }

    /// Slot in the counter array: `ALL` lists the kinds in declaration order.
    fn index(self) -> usize {
        self as usize
    }
}

/// Live counters, shared by all FUSE worker threads.
#[derive(Default)]
pub struct Stats {
    counts: [AtomicU64; Op::ALL.len()],
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// The maximum since the last [`Stats::restart_window`], to measure one client run at a time.
    window_max_in_flight: AtomicUsize,
}

/// A point-in-time copy of [`Stats`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Requests answered (or being answered) per kind, in [`Op::ALL`] order.
    pub counts: Vec<(Op, u64)>,
    /// The most requests that were being served at the same moment.
    pub max_in_flight: usize,
    /// The same, since the window last restarted.
    pub window_max_in_flight: usize,
}

impl Snapshot {
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    pub fn count(&self, op: Op) -> u64 {
        self.counts.iter().find(|(o, _)| *o == op).map_or(0, |(_, n)| *n)
    }

    /// One line for humans: totals and the non-zero kinds, busiest first.
    pub fn summary(&self) -> String {
        let mut kinds: Vec<_> = self.counts.iter().filter(|(_, n)| *n > 0).collect();
        kinds.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        let kinds: Vec<String> = kinds.iter().map(|(op, n)| format!("{} {n}", op.name())).collect();
        format!(
            "{} requests ({}), at most {} in flight",
            self.total(),
            if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") },
            self.max_in_flight
        )
    }

    pub fn to_json(&self) -> serde_json::Value {
        let requests: serde_json::Map<String, serde_json::Value> =
            self.counts.iter().map(|(op, n)| (op.name().to_string(), (*n).into())).collect();
        serde_json::json!({
            "total": self.total(),
            "max_in_flight": self.max_in_flight,
            "window_max_in_flight": self.window_max_in_flight,
            "requests": requests,
        })
    }
}

impl Stats {
    /// Counts a request as started; it stays in flight until the returned guard is dropped.
    pub(crate) fn start(&self, op: Op) -> InFlight<'_> {
        self.counts[op.index()].fetch_add(1, Ordering::Relaxed);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        self.window_max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight { stats: self }
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            counts: Op::ALL.iter().map(|&op| (op, self.counts[op.index()].load(Ordering::Relaxed))).collect(),
            max_in_flight: self.max_in_flight.load(Ordering::SeqCst),
            window_max_in_flight: self.window_max_in_flight.load(Ordering::SeqCst),
        }
    }

    /// Restarts the window maximum from the current level, to measure one client run on its own.
    pub fn restart_window(&self) {
        self.window_max_in_flight.store(self.in_flight.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// A snapshot that also restarts the window, in one step: a request starting right after the
    /// snapshot is counted in the new window, never lost between reading and restarting.
    pub fn snapshot_and_restart_window(&self) -> Snapshot {
        let mut snapshot = self.snapshot();
        let current = self.in_flight.load(Ordering::SeqCst);
        snapshot.window_max_in_flight = self.window_max_in_flight.swap(current, Ordering::SeqCst);
        snapshot
    }
}

/// A request being served; dropping it takes the request out of flight.
pub(crate) struct InFlight<'a> {
    stats: &'a Stats,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.stats.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_tracks_the_in_flight_maximum() {
        let stats = Stats::default();
        let a = stats.start(Op::Lookup);
        let b = stats.start(Op::Getattr);
        drop(a);
        let c = stats.start(Op::Lookup);
        drop((b, c));
        let snap = stats.snapshot();
        assert_eq!(snap.count(Op::Lookup), 2);
        assert_eq!(snap.count(Op::Getattr), 1);
        assert_eq!(snap.total(), 3);
        assert_eq!(snap.max_in_flight, 2);
        assert_eq!(snap.window_max_in_flight, 2);
        assert_eq!(snap.summary(), "3 requests (lookup 2, getattr 1), at most 2 in flight");
        let open = stats.start(Op::Readdir);
        stats.restart_window();
        let snap = stats.snapshot();
        assert_eq!((snap.max_in_flight, snap.window_max_in_flight), (2, 1));
        let second = stats.start(Op::Readdir);
        assert_eq!(stats.snapshot_and_restart_window().window_max_in_flight, 2);
        drop(second);
        assert_eq!(stats.snapshot().window_max_in_flight, 2, "restarted at the level then in flight");
        drop(open);
    }

    #[test]
    fn every_op_has_its_own_slot_and_name() {
        let names: std::collections::HashSet<_> = Op::ALL.iter().map(|op| op.name()).collect();
        assert_eq!(names.len(), Op::ALL.len());
        for (slot, op) in Op::ALL.iter().enumerate() {
            assert_eq!(op.index(), slot, "{op:?}");
        }
    }
}
