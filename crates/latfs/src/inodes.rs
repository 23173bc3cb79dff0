//! The node table: which source file each FUSE node id stands for, and the names it is known by.
//!
//! A node id is the source file's inode number, so `stat` on the mount reports the source's inode numbers
//! and hard links stay one inode. A node remembers every (parent, name) link the kernel looked it up by,
//! and its path is rebuilt from the most recent one on each request: no file descriptor is held per node,
//! so a million-entry tree in the kernel's cache costs memory here, not a million open files.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rustix::io::{Errno, Result};

/// FUSE's fixed node id of the mount's root directory.
pub(crate) const ROOT_ID: u64 = 1;

/// Files on other devices under the source (nested mounts) get made-up ids from here on, far above any
/// inode number of the source's own file system, so ids never collide.
const FIRST_FOREIGN_ID: u64 = 1 << 62;

/// A path longer than this many components means a cycle in the table, not a real tree.
const MAX_DEPTH: usize = 1 << 20;

#[derive(Clone, PartialEq, Eq)]
struct Link {
    parent: u64,
    name: OsString,
}

#[derive(Default)]
struct Node {
    /// Lookup references the kernel holds (entries replied minus forgotten); the node goes at zero.
    lookups: u64,
    /// Names the node is known by, the most recently used last.
    links: Vec<Link>,
}

#[derive(Default)]
struct ForeignIds {
    ids: HashMap<(u64, u64), u64>,
    next: u64,
}

pub(crate) struct Inodes {
    root_dev: u64,
    root_ino: u64,
    nodes: Mutex<HashMap<u64, Node>>,
    foreign: Mutex<ForeignIds>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Inodes {
    pub(crate) fn new(root_dev: u64, root_ino: u64) -> Self {
        let nodes = HashMap::from([(ROOT_ID, Node::default())]);
        Inodes {
            root_dev,
            root_ino,
            nodes: Mutex::new(nodes),
            foreign: Mutex::new(ForeignIds { ids: HashMap::new(), next: FIRST_FOREIGN_ID }),
        }
    }

    /// The node id the kernel sees for the source file `(dev, ino)`.
    pub(crate) fn id_of(&self, dev: u64, ino: u64) -> u64 {
        if dev == self.root_dev {
            if ino == self.root_ino {
                return ROOT_ID;
            }
            if ino != ROOT_ID && ino < FIRST_FOREIGN_ID {
                return ino;
            }
        }
        let mut foreign = lock(&self.foreign);
        if let Some(&id) = foreign.ids.get(&(dev, ino)) {
            return id;
        }
        let id = foreign.next;
        foreign.next += 1;
        foreign.ids.insert((dev, ino), id);
        id
    }

    /// The id a directory entry gets in a readdir reply, which carries no device number.
    pub(crate) fn entry_id(&self, ino: u64) -> u64 {
        self.id_of(self.root_dev, ino)
    }

    /// Records one more kernel reference to `id`, found as `name` in `parent`.
    pub(crate) fn remember(&self, id: u64, parent: u64, name: &OsStr) {
        let mut nodes = lock(&self.nodes);
        let node = nodes.entry(id).or_default();
        node.lookups += 1;
        if id == ROOT_ID {
            return;
        }
        match node.links.iter().position(|l| l.parent == parent && l.name == name) {
            Some(last) if last + 1 == node.links.len() => {}
            Some(index) => {
                let link = node.links.remove(index);
                node.links.push(link);
            }
            None => node.links.push(Link { parent, name: name.to_owned() }),
        }
    }

    /// Drops `count` kernel references to `id`; the node is removed when none is left.
    pub(crate) fn forget(&self, id: u64, count: u64) {
        if id == ROOT_ID {
            return;
        }
        let mut nodes = lock(&self.nodes);
        if let Some(node) = nodes.get_mut(&id) {
            node.lookups = node.lookups.saturating_sub(count);
            if node.lookups == 0 {
                nodes.remove(&id);
            }
        }
    }

    /// The path of `id` below the source root, as components, following each node's most recent link
    /// whose parent is still known. `ESTALE` when the kernel asks about a node it has forgotten.
    pub(crate) fn path(&self, id: u64) -> Result<Vec<OsString>> {
        let nodes = lock(&self.nodes);
        let mut names = Vec::new();
        let mut current = id;
        while current != ROOT_ID {
            let node = nodes.get(&current).ok_or(Errno::STALE)?;
            let link = node.links.iter().rev().find(|l| nodes.contains_key(&l.parent)).ok_or(Errno::STALE)?;
            names.push(link.name.clone());
            current = link.parent;
            if names.len() > MAX_DEPTH {
                return Err(Errno::LOOP);
            }
        }
        names.reverse();
        Ok(names)
    }

    /// `name` in `parent` no longer names `id` (unlinked, or replaced by a rename).
    pub(crate) fn unlinked(&self, id: u64, parent: u64, name: &OsStr) {
        let mut nodes = lock(&self.nodes);
        if let Some(node) = nodes.get_mut(&id) {
            node.links.retain(|l| !(l.parent == parent && l.name == name));
        }
    }

    /// `id` moved from `from` to `to` (each a parent id and a name).
    pub(crate) fn renamed(&self, id: u64, from: (u64, &OsStr), to: (u64, &OsStr)) {
        let mut nodes = lock(&self.nodes);
        if let Some(node) = nodes.get_mut(&id) {
            node.links.retain(|l| !(l.parent == from.0 && l.name == from.1));
            node.links.push(Link { parent: to.0, name: to.1.to_owned() });
        }
    }

    #[cfg(test)]
    fn is_known(&self, id: u64) -> bool {
        lock(&self.nodes).contains_key(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(parts: &[&str]) -> Vec<OsString> {
        parts.iter().map(OsString::from).collect()
    }

    #[test]
    fn ids_are_inode_numbers_except_root_and_foreign_devices() {
        let inodes = Inodes::new(7, 2);
        assert_eq!(inodes.id_of(7, 2), ROOT_ID);
        assert_eq!(inodes.id_of(7, 1234), 1234);
        let foreign = inodes.id_of(8, 1234);
        assert!(foreign >= FIRST_FOREIGN_ID);
        assert_eq!(inodes.id_of(8, 1234), foreign, "stable");
        assert_ne!(inodes.id_of(8, 99), foreign);
        assert!(inodes.id_of(7, ROOT_ID) >= FIRST_FOREIGN_ID, "inode 1 is taken by the root");
    }

    #[test]
    fn paths_follow_the_most_recent_link() {
        let inodes = Inodes::new(7, 2);
        inodes.remember(10, ROOT_ID, OsStr::new("dir"));
        inodes.remember(11, 10, OsStr::new("a"));
        inodes.remember(11, ROOT_ID, OsStr::new("b"));
        assert_eq!(inodes.path(11).unwrap(), names(&["b"]));
        inodes.remember(11, 10, OsStr::new("a"));
        assert_eq!(inodes.path(11).unwrap(), names(&["dir", "a"]));
        inodes.unlinked(11, 10, OsStr::new("a"));
        assert_eq!(inodes.path(11).unwrap(), names(&["b"]));
        inodes.renamed(11, (ROOT_ID, OsStr::new("b")), (10, OsStr::new("c")));
        assert_eq!(inodes.path(11).unwrap(), names(&["dir", "c"]));
        assert_eq!(inodes.path(ROOT_ID).unwrap(), Vec::<OsString>::new());
    }

    #[test]
    fn forgotten_nodes_are_stale() {
        let inodes = Inodes::new(7, 2);
        inodes.remember(10, ROOT_ID, OsStr::new("x"));
        inodes.remember(10, ROOT_ID, OsStr::new("x"));
        inodes.forget(10, 1);
        assert!(inodes.is_known(10));
        inodes.forget(10, 1);
        assert!(!inodes.is_known(10));
        assert_eq!(inodes.path(10), Err(Errno::STALE));
        inodes.forget(ROOT_ID, 5);
        assert!(inodes.is_known(ROOT_ID));
    }

    #[test]
    fn a_link_through_a_forgotten_parent_is_skipped() {
        let inodes = Inodes::new(7, 2);
        inodes.remember(10, ROOT_ID, OsStr::new("d1"));
        inodes.remember(20, ROOT_ID, OsStr::new("d2"));
        inodes.remember(11, 20, OsStr::new("y"));
        inodes.remember(11, 10, OsStr::new("x"));
        inodes.forget(10, 1);
        assert_eq!(inodes.path(11).unwrap(), names(&["d2", "y"]));
    }
}
