//! The inodes the kernel holds references to. Inode number = object id. A non-directory's
//! attributes live in its one directory entry, so the mount remembers each inode's (parent, name)
//! to reach it; the kernel's lookups and forgets tell how long to remember.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use fuser::Errno;

use crate::client::{DirEntry, FileKind};
use crate::ids::ROOT_ID;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub parent: u64,
    /// Empty once the name was removed while the file was still open here.
    pub name: Vec<u8>,
    pub kind: FileKind,
    /// A symlink's target (symlinks never change).
    pub target: Vec<u8>,
    lookups: u64,
}

#[derive(Default)]
struct Table {
    nodes: HashMap<u64, Node>,
    names: HashMap<(u64, Vec<u8>), u64>,
}

pub struct Nodes {
    table: Mutex<Table>,
}

impl Nodes {
    /// The root directory, which the kernel never forgets.
    pub fn new() -> Self {
        let mut table = Table::default();
        let root = Node {
            parent: ROOT_ID,
            name: Vec::new(),
            kind: FileKind::Directory,
            target: Vec::new(),
            lookups: 1,
        };
        table.nodes.insert(ROOT_ID, root);
        Self { table: Mutex::new(table) }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that the kernel got a reference to `entry`, found as `entry.name` in `parent`.
    pub fn remember(&self, parent: u64, entry: &DirEntry) {
        let mut guard = self.lock();
        let table = &mut *guard;
        let key = (parent, entry.name.clone());
        if let Some(previous) = table.names.insert(key, entry.id)
            && previous != entry.id
            && let Some(old) = table.nodes.get_mut(&previous)
            && old.parent == parent
            && old.name == entry.name
        {
            old.name.clear(); // that name now leads elsewhere
        }
        let node = table.nodes.entry(entry.id).or_insert_with(|| Node {
            parent,
            name: entry.name.clone(),
            kind: entry.attrs.kind,
            target: entry.target.clone(),
            lookups: 0,
        });
        if node.parent != parent || node.name != entry.name {
            // Renamed elsewhere (by another client): the name we knew is not its name any more.
            let stale = (node.parent, std::mem::replace(&mut node.name, entry.name.clone()));
            node.parent = parent;
            if table.names.get(&stale) == Some(&entry.id) {
                table.names.remove(&stale);
            }
        }
        table.nodes.get_mut(&entry.id).expect("inserted above").lookups += 1;
    }

    /// The kernel dropped `count` references.
    pub fn forget(&self, ino: u64, count: u64) {
        let mut guard = self.lock();
        let table = &mut *guard;
        let Some(node) = table.nodes.get_mut(&ino) else {
            return;
        };
        node.lookups = node.lookups.saturating_sub(count);
        if node.lookups == 0 && ino != ROOT_ID {
            let node = table.nodes.remove(&ino).expect("present");
            let key = (node.parent, node.name);
            if table.names.get(&key) == Some(&ino) {
                table.names.remove(&key);
            }
        }
    }

    /// The node behind an inode the kernel asks about; ESTALE for one it has forgotten.
    pub fn get(&self, ino: u64) -> Result<Node, Errno> {
        self.lock().nodes.get(&ino).cloned().ok_or(Errno::ESTALE)
    }

    /// The inode known under `name` in `parent`.
    pub fn id_of(&self, parent: u64, name: &[u8]) -> Option<u64> {
        self.lock().names.get(&(parent, name.to_vec())).copied()
    }

    /// `name` in `parent` was removed.
    pub fn unlinked(&self, parent: u64, name: &[u8]) {
        let mut guard = self.lock();
        let table = &mut *guard;
        if let Some(id) = table.names.remove(&(parent, name.to_vec()))
            && let Some(node) = table.nodes.get_mut(&id)
        {
            node.name.clear();
        }
    }

    /// `id` moved from (parent, name) to (new_parent, new_name), replacing whatever was there.
    pub fn renamed(&self, (parent, name): (u64, &[u8]), (new_parent, new_name): (u64, &[u8]), id: u64) {
        self.unlinked(new_parent, new_name);
        let mut guard = self.lock();
        let table = &mut *guard;
        let old_key = (parent, name.to_vec());
        if table.names.get(&old_key) == Some(&id) {
            table.names.remove(&old_key);
        }
        if let Some(node) = table.nodes.get_mut(&id) {
            node.parent = new_parent;
            node.name = new_name.to_vec();
            table.names.insert((new_parent, new_name.to_vec()), id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Attributes;

    fn entry(name: &str, id: u64) -> DirEntry {
        let attrs = Attributes {
            kind: FileKind::File,
            mode: 0o644,
            uid: 0,
            gid: 0,
            size: 0,
            atime_ns: 0,
            mtime_ns: 0,
            ctime_ns: 0,
            rdev: 0,
        };
        DirEntry { name: name.as_bytes().to_vec(), id, attrs, target: Vec::new() }
    }

    #[test]
    fn nodes_live_until_forgotten_and_follow_renames() {
        let nodes = Nodes::new();
        nodes.remember(ROOT_ID, &entry("a", 10));
        nodes.remember(ROOT_ID, &entry("a", 10));
        assert_eq!(nodes.id_of(ROOT_ID, b"a"), Some(10));
        nodes.renamed((ROOT_ID, b"a"), (20, b"b"), 10);
        assert_eq!((nodes.id_of(ROOT_ID, b"a"), nodes.id_of(20, b"b")), (None, Some(10)));
        assert_eq!(nodes.get(10).unwrap().parent, 20);
        nodes.forget(10, 1);
        assert!(nodes.get(10).is_ok(), "one reference left");
        nodes.forget(10, 1);
        assert_eq!(nodes.get(10), Err(Errno::ESTALE));
        assert_eq!(nodes.id_of(20, b"b"), None);
        nodes.forget(ROOT_ID, 5);
        assert!(nodes.get(ROOT_ID).is_ok(), "the root is never forgotten");
    }

    #[test]
    fn unlinked_and_replaced_names_lose_their_node() {
        let nodes = Nodes::new();
        nodes.remember(ROOT_ID, &entry("x", 10));
        nodes.remember(ROOT_ID, &entry("y", 11));
        nodes.renamed((ROOT_ID, b"y"), (ROOT_ID, b"x"), 11);
        assert!(nodes.get(10).unwrap().name.is_empty(), "the replaced file has no name");
        assert_eq!(nodes.id_of(ROOT_ID, b"x"), Some(11));
        nodes.unlinked(ROOT_ID, b"x");
        assert!(nodes.get(11).unwrap().name.is_empty());
        // Another client renamed 12 from "p" to "q": the next lookup of "q" moves the node.
        nodes.remember(ROOT_ID, &entry("p", 12));
        nodes.remember(ROOT_ID, &entry("q", 12));
        assert_eq!((nodes.id_of(ROOT_ID, b"p"), nodes.id_of(ROOT_ID, b"q")), (None, Some(12)));
    }
}
