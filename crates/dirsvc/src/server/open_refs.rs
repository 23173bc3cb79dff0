//! Which mount sessions have which of this server's files open: a file whose last name goes while
//! a mount has it open keeps its inode (link count 0) and data until the last close, as POSIX
//! wants. A session is a lease: a running mount renews it (every open and close does, and a
//! keepalive); one not heard from for a while is taken for dead and its opens are closed. Kept in
//! memory: a server restart forgets them (the orphans stay until `fsck` removes them).
//!
//! An open and a removal never cross: an open registers itself before it reads the inode, and the
//! writer decides to delete an inode only through `reap_unless_open`, which refuses while it is open
//! and, once it said yes, refuses opens of that inode until the deletion is committed.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Table {
    /// inode id -> session -> open handles.
    open: HashMap<u64, HashMap<u64, u32>>,
    /// When each session with opens was last heard from.
    seen: HashMap<u64, Instant>,
    /// Inodes the writer is deleting in the batch it is committing.
    reaped: HashSet<u64>,
}

#[derive(Default)]
pub struct OpenRefs {
    table: Mutex<Table>,
}

impl OpenRefs {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `session` opens `id`; false when the inode is being deleted (the open must fail).
    pub fn open(&self, id: u64, session: u64) -> bool {
        let mut table = self.lock();
        if table.reaped.contains(&id) {
            return false;
        }
        *table.open.entry(id).or_default().entry(session).or_default() += 1;
        table.seen.insert(session, Instant::now());
        true
    }

    /// `session` is alive.
    pub fn renew(&self, session: u64) {
        let mut table = self.lock();
        if let Some(seen) = table.seen.get_mut(&session) {
            *seen = Instant::now();
        }
    }

    /// Sessions not heard from for `lease`: their mounts are taken for dead.
    pub fn lapsed(&self, lease: Duration) -> Vec<u64> {
        let table = self.lock();
        table.seen.iter().filter(|(_, seen)| seen.elapsed() > lease).map(|(&session, _)| session).collect()
    }

    /// `session` closes `id` once; true when no session has it open any more.
    pub fn close(&self, id: u64, session: u64) -> bool {
        let mut table = self.lock();
        if let Some(seen) = table.seen.get_mut(&session) {
            *seen = Instant::now();
        }
        let Some(sessions) = table.open.get_mut(&id) else {
            return true;
        };
        if let Some(count) = sessions.get_mut(&session) {
            *count -= 1;
            if *count == 0 {
                sessions.remove(&session);
            }
        }
        if sessions.is_empty() {
            table.open.remove(&id);
            return true;
        }
        false
    }

    /// Everything `session` has open is closed (its mount ended); returns the ids nobody has open now.
    pub fn close_session(&self, session: u64) -> Vec<u64> {
        let mut table = self.lock();
        table.seen.remove(&session);
        let mut released = Vec::new();
        table.open.retain(|&id, sessions| {
            if sessions.remove(&session).is_some() && sessions.is_empty() {
                released.push(id);
                return false;
            }
            true
        });
        released
    }

    pub fn is_open(&self, id: u64) -> bool {
        self.lock().open.contains_key(&id)
    }

    /// The writer may delete `id` unless it is open; once allowed, opens of it fail until
    /// `reaped_committed`.
    pub fn reap_unless_open(&self, id: u64) -> bool {
        let mut table = self.lock();
        if table.open.contains_key(&id) {
            return false;
        }
        table.reaped.insert(id);
        true
    }

    /// The deletions of `ids` are committed (or abandoned).
    pub fn reaped_committed(&self, ids: &[u64]) {
        if ids.is_empty() {
            return;
        }
        let mut table = self.lock();
        for id in ids {
            table.reaped.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inode_is_open_until_every_session_closes_it() {
        let refs = OpenRefs::default();
        assert!(refs.open(7, 1) && refs.open(7, 1) && refs.open(7, 2));
        assert!(!refs.close(7, 1));
        assert!(!refs.close(7, 2));
        assert!(!refs.reap_unless_open(7), "session 1 still has it open");
        assert!(refs.close(7, 1));
        assert!(!refs.is_open(7));
        assert!(refs.close(7, 3), "closing what is not open changes nothing");
    }

    #[test]
    fn a_reaped_inode_cannot_be_opened_until_its_deletion_is_committed() {
        let refs = OpenRefs::default();
        assert!(refs.reap_unless_open(9));
        assert!(!refs.open(9, 1));
        refs.reaped_committed(&[9]);
        assert!(refs.open(9, 1));
    }

    #[test]
    fn a_session_not_heard_from_lapses() {
        let refs = OpenRefs::default();
        refs.open(1, 10);
        refs.open(2, 11);
        std::thread::sleep(Duration::from_millis(20));
        refs.renew(11);
        assert_eq!(refs.lapsed(Duration::from_millis(10)), vec![10]);
        assert!(refs.lapsed(Duration::from_secs(60)).is_empty());
    }

    #[test]
    fn an_ended_session_releases_what_only_it_had_open() {
        let refs = OpenRefs::default();
        refs.open(1, 10);
        refs.open(2, 10);
        refs.open(2, 11);
        assert_eq!(refs.close_session(10), vec![1]);
        assert!(refs.is_open(2) && !refs.is_open(1));
    }
}
