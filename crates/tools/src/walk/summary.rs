//! The reduction behind `canopy walk`: one `TreeSummary` per worker thread, filled without locks and
//! merged when the walk ends. Serialisable, and its merge is associative and commutative, so the
//! same merge combines the summaries of MPI ranks.

use super::histogram::{AgeHistogram, SizeHistogram};
use super::top::TopN;
use super::totals::{ByKind, Totals};
use canopy_engine::{FileKind, Metadata, Timestamp};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeSummary {
    pub by_kind: ByKind,
    /// Regular files only.
    pub file_sizes: SizeHistogram,
    /// Regular files only, by mtime.
    pub file_ages: AgeHistogram,
    /// Every entry, by owner and by group id.
    pub users: HashMap<u32, Totals>,
    pub groups: HashMap<u32, Totals>,
    /// Regular files by size.
    pub largest_files: TopN,
    /// Directories by number of entries.
    pub widest_dirs: TopN,
    /// The one deepest entry.
    pub deepest: TopN,
}

/// One entry as the summary sees it.
pub struct Seen<'a> {
    pub kind: FileKind,
    pub meta: &'a Metadata,
    pub depth: u32,
}

impl TreeSummary {
    /// An empty summary keeping `top` largest files and widest directories.
    pub fn new(top: usize) -> Self {
        TreeSummary {
            by_kind: ByKind::default(),
            file_sizes: SizeHistogram::default(),
            file_ages: AgeHistogram::default(),
            users: HashMap::new(),
            groups: HashMap::new(),
            largest_files: TopN::new(top),
            widest_dirs: TopN::new(top),
            deepest: TopN::new(1),
        }
    }

    /// Adds an entry; `path` is called only when the entry enters a top list. Ages are measured
    /// from `reference`.
    pub fn add(&mut self, entry: &Seen<'_>, reference: Timestamp, path: impl Fn() -> Vec<u8>) {
        let meta = entry.meta;
        self.by_kind.get_mut(entry.kind).add(meta);
        self.users.entry(meta.uid).or_default().add(meta);
        self.groups.entry(meta.gid).or_default().add(meta);
        if entry.kind == FileKind::File {
            self.file_sizes.add(meta);
            self.file_ages.add(meta, reference);
            self.largest_files.offer(meta.size, &path);
        }
        self.deepest.offer(u64::from(entry.depth), &path);
    }

    /// Records that the directory at `path` held `entries` entries.
    pub fn add_dir_width(&mut self, entries: u64, path: impl FnOnce() -> Vec<u8>) {
        self.widest_dirs.offer(entries, path);
    }

    pub fn merge(&mut self, other: TreeSummary) {
        self.by_kind.merge(&other.by_kind);
        self.file_sizes.merge(&other.file_sizes);
        self.file_ages.merge(&other.file_ages);
        merge_owners(&mut self.users, &other.users);
        merge_owners(&mut self.groups, &other.groups);
        self.largest_files.merge(other.largest_files);
        self.widest_dirs.merge(other.widest_dirs);
        self.deepest.merge(other.deepest);
    }
}

fn merge_owners(into: &mut HashMap<u32, Totals>, other: &HashMap<u32, Totals>) {
    for (id, totals) in other {
        into.entry(*id).or_default().merge(totals);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(i: u64) -> Metadata {
        let kind_bits = [0o100000, 0o040000, 0o120000, 0o010000][(i % 4) as usize];
        Metadata {
            mode: kind_bits | 0o644,
            nlink: 1,
            uid: (i % 3) as u32,
            gid: (i % 5) as u32,
            size: i * i * 37 % 100_000,
            blocks: i % 17,
            blksize: 4096,
            ino: i,
            dev: 1,
            rdev: 0,
            atime: Timestamp::default(),
            mtime: Timestamp { sec: 1_700_000_000 - (i as i64) * 50_000, nsec: 0 },
            ctime: Timestamp::default(),
        }
    }

    fn summarise(range: std::ops::Range<u64>) -> TreeSummary {
        let reference = Timestamp { sec: 1_700_000_000, nsec: 0 };
        let mut s = TreeSummary::new(5);
        for i in range {
            let m = meta(i);
            let seen = Seen { kind: m.kind(), meta: &m, depth: (i % 11) as u32 };
            s.add(&seen, reference, || format!("/t/{i}").into_bytes());
            if m.kind() == FileKind::Dir {
                s.add_dir_width(i % 23, || format!("/t/{i}").into_bytes());
            }
        }
        s
    }

    #[test]
    fn merge_is_associative_and_equals_a_single_pass() {
        let whole = summarise(0..3000);
        let (a, b, c) = (summarise(0..1000), summarise(1000..1800), summarise(1800..3000));

        let mut left = a.clone();
        left.merge(b.clone());
        left.merge(c.clone());

        let mut bc = b;
        bc.merge(c);
        let mut right = a;
        right.merge(bc);

        assert_eq!(left, whole);
        assert_eq!(right, whole);
        assert_eq!(whole.by_kind.total().entries, 3000);
        assert_eq!(whole.by_kind.file.entries, 750);
    }

    #[test]
    fn state_survives_serialisation() {
        let s = summarise(0..500);
        let json = serde_json::to_string(&s).unwrap();
        let back: TreeSummary = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
    }
}
