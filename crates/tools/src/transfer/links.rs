//! Hard links, with `rsync -H` semantics: the names of one source inode become names of one copy.
//! The first name met is copied; every later name is linked to that copy — at once if it is already
//! in place, otherwise once it is (its directory's `leave_dir` is held back with a reservation
//! meanwhile, so the directory's times are set after the link appears). Only inodes with more than
//! one link are tracked, and each is forgotten once all its links were seen.

use super::dest::{DestDir, Place};
use canopy_engine::{Errno, Metadata, Reservation};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const SHARDS: usize = 64;

/// Where the first name of an inode was copied to.
#[derive(Serialize, Deserialize)]
pub struct Placed {
    pub place: Place,
    /// (device, inode) of the copy; `None` in a dry run.
    pub id: Option<(u64, u64)>,
    /// The source inode's metadata (that of every name), to itemize the later names against what
    /// their destinations held.
    pub source: Metadata,
}

/// A later name waiting for the first one's copy.
pub struct Waiter {
    pub reservation: Reservation<DestDir>,
    pub place: Place,
}

/// What a name of a multiply linked inode is to do.
pub enum Arrival {
    /// It is the first: copy it, then [`LinkGroups::settle`].
    First,
    /// Link to this copy.
    Link(Arc<Placed>),
    /// The first name could not be copied, for this reason.
    Failed(Errno),
    /// Queued until the first name is settled.
    Waiting,
}

enum State {
    Placing(Vec<Waiter>),
    Placed(Arc<Placed>),
    Failed(Errno),
}

struct Group {
    links: u64,
    seen: u64,
    state: State,
}

type Shard = Mutex<HashMap<(u64, u64), Group>>;

pub struct LinkGroups {
    shards: Box<[Shard]>,
}

impl Default for LinkGroups {
    fn default() -> Self {
        LinkGroups { shards: (0..SHARDS).map(|_| Mutex::default()).collect() }
    }
}

impl LinkGroups {
    fn shard(&self, id: (u64, u64)) -> std::sync::MutexGuard<'_, HashMap<(u64, u64), Group>> {
        let index = (id.1 ^ id.0.rotate_left(17)) as usize % SHARDS;
        self.shards[index].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A name of inode `id` (with `links` links) was met; `wait` makes its waiter if it must wait.
    pub fn arrive(&self, id: (u64, u64), links: u64, wait: impl FnOnce() -> Waiter) -> Arrival {
        let mut groups = self.shard(id);
        let Some(group) = groups.get_mut(&id) else {
            groups.insert(id, Group { links, seen: 1, state: State::Placing(Vec::new()) });
            return Arrival::First;
        };
        group.seen += 1;
        let arrival = match &mut group.state {
            State::Placing(waiters) => {
                waiters.push(wait());
                return Arrival::Waiting;
            }
            State::Placed(placed) => Arrival::Link(Arc::clone(placed)),
            State::Failed(errno) => Arrival::Failed(*errno),
        };
        if group.seen >= group.links {
            groups.remove(&id);
        }
        arrival
    }

    /// The first name's copy is in place (or failed); returns the names that waited for it.
    pub fn settle(&self, id: (u64, u64), outcome: Result<Arc<Placed>, Errno>) -> Vec<Waiter> {
        let mut groups = self.shard(id);
        let Some(group) = groups.get_mut(&id) else { return Vec::new() };
        let state = match outcome {
            Ok(placed) => State::Placed(placed),
            Err(errno) => State::Failed(errno),
        };
        let waiters = match std::mem::replace(&mut group.state, state) {
            State::Placing(waiters) => waiters,
            _ => Vec::new(),
        };
        if group.seen >= group.links {
            groups.remove(&id);
        }
        waiters
    }

    /// Inodes still tracked (all of their links not yet seen).
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    fn placed() -> Arc<Placed> {
        let pair = Arc::new(super::super::dest::RootPair::new(b"s".to_vec(), false, b"d".to_vec(), false));
        let place = Place::Root { pair, name: CString::new("d").unwrap() };
        let source = canopy_engine::sys::stat_path(b"/", false).unwrap();
        Arc::new(Placed { place, id: Some((1, 2)), source })
    }

    #[test]
    fn first_copies_later_ones_link_and_the_group_is_forgotten() {
        let groups = LinkGroups::default();
        let no_wait = || -> Waiter { panic!("nobody waits once placed") };
        assert!(matches!(groups.arrive((1, 9), 3, no_wait), Arrival::First));
        assert!(groups.settle((1, 9), Ok(placed())).is_empty());
        assert!(matches!(groups.arrive((1, 9), 3, no_wait), Arrival::Link(_)));
        assert_eq!(groups.tracked(), 1);
        assert!(matches!(groups.arrive((1, 9), 3, no_wait), Arrival::Link(_)));
        assert_eq!(groups.tracked(), 0, "all three links seen");
    }

    #[test]
    fn a_failed_first_copy_fails_the_others() {
        let groups = LinkGroups::default();
        assert!(matches!(groups.arrive((2, 9), 2, || unreachable!()), Arrival::First));
        groups.settle((2, 9), Err(Errno::ACCESS));
        assert!(matches!(groups.arrive((2, 9), 2, || unreachable!()), Arrival::Failed(Errno::ACCESS)));
        assert_eq!(groups.tracked(), 0);
    }
}
