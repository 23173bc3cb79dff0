//! Hard links, counted once and charged to a place that does not depend on timing.
//!
//! **The rule.** A file with several names inside the walked trees is counted once, for its *first*
//! name: the first PATH argument holding one of its names and, within it, the name whose path
//! below the argument sorts first comparing component by component (bytes within a component) —
//! the name a depth-first walk reading every directory in sorted order meets first. The same on
//! every run, thread count and number of MPI ranks. (GNU du charges the name its readdir order
//! meets first; the totals agree, and so does every directory line unless one file has names in
//! several of the directories listed.)
//!
//! Only inodes with more than one link go into the table (and, under `-L`, every inode: a symlink
//! may lead to anything twice). When all of a file's names turn up in one directory while that
//! directory is being read, the file is counted there and then and its record dropped; otherwise
//! the record waits for the end of the walk, and the directories above its names keep their sizes
//! open until then.

use super::usage::Usage;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Mutex;

/// Where a name was met: the PATH argument (by position) and the path below it (`""` for the
/// argument itself).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Place {
    pub root: u32,
    pub rel: Vec<u8>,
}

impl Place {
    /// Depth below the argument: the number of components of `rel`.
    pub fn depth(&self) -> u32 {
        if self.rel.is_empty() { 0 } else { 1 + self.rel.iter().filter(|&&b| b == b'/').count() as u32 }
    }

    /// The components of `rel`.
    pub fn components(&self) -> impl Iterator<Item = &[u8]> {
        self.rel.split(|&b| b == b'/').filter(|c| !c.is_empty())
    }
}

impl Ord for Place {
    fn cmp(&self, other: &Self) -> Ordering {
        self.root.cmp(&other.root).then_with(|| component_order(&self.rel, &other.rel))
    }
}

impl PartialOrd for Place {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Compares two relative paths component by component: a `/` sorts before every byte a name can
/// hold (names hold neither `/` nor NUL), so `a/b` < `a-c` < `a.c`, and a directory before
/// everything inside it.
pub fn component_order(a: &[u8], b: &[u8]) -> Ordering {
    let key = |&c: &u8| if c == b'/' { 0 } else { c };
    a.iter().map(key).cmp(b.iter().map(key))
}

/// An inode met under one or more names, with the place it is charged to so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    pub id: (u64, u64),
    pub usage: Usage,
    pub owner: Place,
    pub is_dir: bool,
}

impl LinkRecord {
    /// Folds in the same inode met elsewhere (another thread or rank): the first place wins.
    fn absorb(&mut self, other: LinkRecord) {
        if other.owner < self.owner {
            self.owner = other.owner;
            self.is_dir = other.is_dir;
        }
    }
}

/// Every rank's and thread's records combined: one per inode, charged to its first place.
pub fn merge_records(records: Vec<LinkRecord>) -> Vec<LinkRecord> {
    let mut by_id: HashMap<(u64, u64), LinkRecord> = HashMap::with_capacity(records.len());
    for record in records {
        match by_id.entry(record.id) {
            Entry::Occupied(mut kept) => kept.get_mut().absorb(record),
            Entry::Vacant(slot) => {
                slot.insert(record);
            }
        }
    }
    by_id.into_values().collect()
}

/// What meeting a name decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Met {
    /// Every name of the file has been met, all in the directory being read: count the file there
    /// now, under `owner`. `earlier` names of it were met before this one (each left the directory
    /// a pending link to take back).
    Counted { owner: Place, usage: Usage, earlier: u64 },
    /// Counted at the end of the walk (or already elsewhere).
    Pending,
}

struct Open<H> {
    record: LinkRecord,
    links: u64,
    seen: u64,
    /// The directory holding every name met so far, while there is only one.
    only_dir: Option<H>,
}

type Shard<H> = Mutex<HashMap<(u64, u64), Open<H>>>;

/// The inodes met so far, in shards so that workers rarely wait on each other.
pub struct LinkTable<H> {
    shards: Box<[Shard<H>]>,
}

const SHARDS: usize = 64;

impl<H: PartialEq> LinkTable<H> {
    pub fn new() -> Self {
        LinkTable { shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect() }
    }

    /// Meets a name of inode `id` (with `links` names in all, or `None` when its names cannot be
    /// counted — directories and `-L`) at `place`, in directory `dir` (`None` for an argument).
    pub fn meet(
        &self,
        id: (u64, u64),
        usage: Usage,
        links: Option<u64>,
        place: Place,
        is_dir: bool,
        dir: Option<H>,
    ) -> Met {
        let shard = (id.1 ^ id.0.rotate_left(17)) as usize % SHARDS;
        let mut table = self.shards[shard].lock().unwrap_or_else(|e| e.into_inner());
        let open = match table.entry(id) {
            Entry::Vacant(slot) => {
                slot.insert(Open {
                    record: LinkRecord { id, usage, owner: place, is_dir },
                    links: links.unwrap_or(u64::MAX),
                    seen: 1,
                    only_dir: dir,
                });
                return Met::Pending;
            }
            Entry::Occupied(open) => open,
        };
        let entry = open.into_mut();
        entry.seen += 1;
        if place < entry.record.owner {
            entry.record.owner = place;
            entry.record.is_dir = is_dir;
        }
        if entry.only_dir.is_some() && entry.only_dir != dir {
            entry.only_dir = None;
        }
        if entry.seen < entry.links || entry.only_dir.is_none() {
            return Met::Pending;
        }
        let done = table.remove(&id).expect("just found");
        Met::Counted { owner: done.record.owner, usage: done.record.usage, earlier: done.seen - 1 }
    }

    /// The records still open when the walk ends.
    pub fn into_records(self) -> Vec<LinkRecord> {
        let mut records = Vec::new();
        for shard in self.shards.into_vec() {
            let shard = shard.into_inner().unwrap_or_else(|e| e.into_inner());
            records.extend(shard.into_values().map(|open| open.record));
        }
        records
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(root: u32, rel: &str) -> Place {
        Place { root, rel: rel.as_bytes().to_vec() }
    }

    const ONE: Usage = Usage { allocated: 4096, apparent: 10, inodes: 1, latest: None };

    #[test]
    fn component_order_puts_directories_before_their_contents() {
        let mut paths = vec!["a.c", "a/b", "a-c", "a", "b", "a/b/c", "a/a", "", "A"];
        paths.sort_by(|x, y| component_order(x.as_bytes(), y.as_bytes()));
        assert_eq!(paths, ["", "A", "a", "a/a", "a/b", "a/b/c", "a-c", "a.c", "b"]);
        assert!(place(0, "z") < place(1, "a"), "an earlier argument wins whatever the path");
        assert_eq!(place(0, "a/bb/c").depth(), 3);
        assert_eq!(place(0, "").depth(), 0);
    }

    #[test]
    fn all_names_in_one_directory_are_counted_at_once() {
        let table = LinkTable::new();
        assert_eq!(table.meet((1, 7), ONE, Some(3), place(0, "d/y"), false, Some(5)), Met::Pending);
        assert_eq!(table.meet((1, 7), ONE, Some(3), place(0, "d/x"), false, Some(5)), Met::Pending);
        assert_eq!(
            table.meet((1, 7), ONE, Some(3), place(0, "d/z"), false, Some(5)),
            Met::Counted { owner: place(0, "d/x"), usage: ONE, earlier: 2 }
        );
        assert!(table.into_records().is_empty(), "the record is dropped once counted");
    }

    #[test]
    fn names_in_several_directories_wait_for_the_end() {
        let table = LinkTable::new();
        assert_eq!(table.meet((1, 7), ONE, Some(2), place(0, "b/x"), false, Some(2)), Met::Pending);
        assert_eq!(table.meet((1, 7), ONE, Some(2), place(0, "a/x"), false, Some(1)), Met::Pending);
        assert_eq!(table.meet((1, 8), ONE, None, place(0, "c"), true, None), Met::Pending);
        let mut records = table.into_records();
        records.sort_by_key(|r| r.id);
        assert_eq!(records[0].owner, place(0, "a/x"));
        assert_eq!(records[1].owner, place(0, "c"));
        assert!(records[1].is_dir);
    }

    #[test]
    fn merging_in_any_order_picks_the_first_place() {
        let rec =
            |root, rel: &str| LinkRecord { id: (3, 4), usage: ONE, owner: place(root, rel), is_dir: false };
        let parts = [rec(1, "a"), rec(0, "z/z"), rec(0, "z/a"), rec(0, "z")];
        for rotation in 0..parts.len() {
            let mut input = parts.to_vec();
            input.rotate_left(rotation);
            let merged = merge_records(input);
            assert_eq!(merged.len(), 1);
            assert_eq!(merged[0].owner, place(0, "z"));
        }
    }
}
