//! Entry counts and byte sums: the unit every part of the summary adds up.

use canopy_engine::{FileKind, Metadata};
use serde::{Deserialize, Serialize};

/// How many entries, and their apparent (`st_size`) and allocated (`st_blocks` × 512) bytes.
/// Sums saturate instead of overflowing (sparse files can claim exabytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub entries: u64,
    pub apparent_bytes: u64,
    pub allocated_bytes: u64,
}

impl Totals {
    pub fn add(&mut self, meta: &Metadata) {
        self.entries += 1;
        self.apparent_bytes = self.apparent_bytes.saturating_add(meta.size);
        self.allocated_bytes = self.allocated_bytes.saturating_add(meta.allocated_bytes());
    }

    pub fn merge(&mut self, other: &Totals) {
        self.entries += other.entries;
        self.apparent_bytes = self.apparent_bytes.saturating_add(other.apparent_bytes);
        self.allocated_bytes = self.allocated_bytes.saturating_add(other.allocated_bytes);
    }
}

/// Adds `other` into `into` slot by slot (both are fixed-size bucket lists).
pub fn merge_slots(into: &mut Vec<Totals>, other: &[Totals]) {
    if into.len() < other.len() {
        into.resize(other.len(), Totals::default());
    }
    for (mine, theirs) in into.iter_mut().zip(other) {
        mine.merge(theirs);
    }
}

/// Totals per file type, with the type names of the record outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByKind {
    pub file: Totals,
    pub dir: Totals,
    pub symlink: Totals,
    pub fifo: Totals,
    pub socket: Totals,
    pub block: Totals,
    pub char: Totals,
    /// Mode bits naming no known type (not seen on Linux file systems in practice).
    pub unknown: Totals,
}

impl ByKind {
    pub fn get_mut(&mut self, kind: FileKind) -> &mut Totals {
        match kind {
            FileKind::File => &mut self.file,
            FileKind::Dir => &mut self.dir,
            FileKind::Symlink => &mut self.symlink,
            FileKind::Fifo => &mut self.fifo,
            FileKind::Socket => &mut self.socket,
            FileKind::BlockDevice => &mut self.block,
            FileKind::CharDevice => &mut self.char,
            FileKind::Unknown => &mut self.unknown,
        }
    }

    /// Every type with its name, in a fixed order.
    pub fn iter(&self) -> [(&'static str, &Totals); 8] {
        [
            ("file", &self.file),
            ("dir", &self.dir),
            ("symlink", &self.symlink),
            ("fifo", &self.fifo),
            ("socket", &self.socket),
            ("block", &self.block),
            ("char", &self.char),
            ("unknown", &self.unknown),
        ]
    }

    pub fn total(&self) -> Totals {
        let mut sum = Totals::default();
        for (_, t) in self.iter() {
            sum.merge(t);
        }
        sum
    }

    pub fn merge(&mut self, other: &ByKind) {
        let theirs = other.iter();
        let mine = [
            &mut self.file,
            &mut self.dir,
            &mut self.symlink,
            &mut self.fifo,
            &mut self.socket,
            &mut self.block,
            &mut self.char,
            &mut self.unknown,
        ];
        for (mine, (_, theirs)) in mine.into_iter().zip(theirs) {
            mine.merge(theirs);
        }
    }
}
