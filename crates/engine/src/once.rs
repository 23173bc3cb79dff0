//! The directories a walk has entered, by (device, inode), for walks that enter each directory
//! once however many paths lead to it ([`crate::WalkOptions::each_dir_once`]): GNU du's way under
//! `-L`, where a ladder of symlinks would otherwise be walked once per path — 2^n times for n rungs.

use std::collections::HashSet;
use std::sync::Mutex;

/// Shards, so workers claiming directories at once rarely share a lock.
const SHARDS: usize = 64;

/// (device, inode) of a directory.
type DirId = (u64, u64);

pub(crate) struct EnteredDirs {
    shards: Box<[Mutex<HashSet<DirId>>]>,
}

impl EnteredDirs {
    pub fn new() -> Self {
        EnteredDirs { shards: (0..SHARDS).map(|_| Mutex::new(HashSet::new())).collect() }
    }

    /// Claims directory `id`; true only for the first claim.
    pub fn first_visit(&self, id: DirId) -> bool {
        let shard = (id.1 ^ id.0.rotate_left(17)) as usize % SHARDS;
        self.shards[shard].lock().unwrap_or_else(|e| e.into_inner()).insert(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_directory_is_claimed_once() {
        let entered = EnteredDirs::new();
        assert!(entered.first_visit((1, 10)));
        assert!(!entered.first_visit((1, 10)));
        assert!(entered.first_visit((2, 10)), "the same inode on another device is another directory");
    }
}
