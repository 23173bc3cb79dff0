//! The inodes the kernel holds references to. Inode number = object id, and every object is
//! reached by its id on the server in the id, so a node needs no name: only its kind (which
//! requests fit it), a symlink's target, and how many references the kernel holds (its lookups
//! and forgets say how long to remember it).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use fuser::Errno;

use crate::client::FileKind;
use crate::ids::ROOT_ID;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub kind: FileKind,
    /// A symlink's target (symlinks never change).
    pub target: Vec<u8>,
    lookups: u64,
}

pub struct Nodes {
    table: Mutex<HashMap<u64, Node>>,
}

impl Nodes {
    /// The root directory, which the kernel never forgets.
    pub fn new() -> Self {
        let root = Node { kind: FileKind::Directory, target: Vec::new(), lookups: 1 };
        Self { table: Mutex::new(HashMap::from([(ROOT_ID, root)])) }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Node>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that the kernel got a reference to object `id`.
    pub fn remember(&self, id: u64, kind: FileKind, target: &[u8]) {
        let mut table = self.lock();
        let node = table.entry(id).or_insert_with(|| Node { kind, target: target.to_vec(), lookups: 0 });
        node.lookups += 1;
    }

    /// The kernel dropped `count` references.
    pub fn forget(&self, ino: u64, count: u64) {
        let mut table = self.lock();
        let Some(node) = table.get_mut(&ino) else {
            return;
        };
        node.lookups = node.lookups.saturating_sub(count);
        if node.lookups == 0 && ino != ROOT_ID {
            table.remove(&ino);
        }
    }

    /// The node behind an inode the kernel asks about; ESTALE for one it has forgotten.
    pub fn get(&self, ino: u64) -> Result<Node, Errno> {
        self.lock().get(&ino).cloned().ok_or(Errno::ESTALE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_live_until_forgotten() {
        let nodes = Nodes::new();
        nodes.remember(10, FileKind::File, b"");
        nodes.remember(10, FileKind::File, b"");
        nodes.forget(10, 1);
        assert_eq!(nodes.get(10).unwrap().kind, FileKind::File, "one reference left");
        nodes.forget(10, 1);
        assert_eq!(nodes.get(10), Err(Errno::ESTALE));
        nodes.forget(ROOT_ID, 5);
        assert!(nodes.get(ROOT_ID).is_ok(), "the root is never forgotten");
    }
}
