//! The changes a server makes to its store, all applied by the group-commit writer in arrival
//! order. Requests are validated into these before they reach the writer.

use crate::mapping::Bitmap;
use crate::proto::{AttrChange, Attrs, DirMeta, Entry, Failure, FailureKind};

/// A directory partition: (directory id, partition index).
pub type PartKey = (u64, u32);

#[derive(Clone, Debug)]
pub enum Mutation {
    /// First start: record who this server is and create its share of the root directory.
    Format {
        index: u32,
        servers: u32,
        root_partitions: u32,
        split_threshold: u64,
    },
    Create {
        at: PartKey,
        name: Vec<u8>,
        hash: u64,
        attrs: Attrs,
        id: u64,
        replace_id: u64,
        target: Vec<u8>,
    },
    Unlink {
        at: PartKey,
        name: Vec<u8>,
        hash: u64,
        expect_id: u64,
        directory: bool,
        keep_data: bool,
    },
    SetAttr {
        at: PartKey,
        name: Vec<u8>,
        hash: u64,
        expect_id: u64,
        change: AttrChange,
    },
    SetDirAttr {
        dir: u64,
        change: AttrChange,
    },
    WriteData {
        file: u64,
        offset: u64,
        data: Vec<u8>,
        valid_size: u64,
    },
    TruncateData {
        file: u64,
        size: u64,
    },
    Rename {
        from: PartKey,
        from_name: Vec<u8>,
        from_hash: u64,
        to: PartKey,
        to_name: Vec<u8>,
        to_hash: u64,
        expect_id: u64,
        replace_id: u64,
    },
    CreateDir {
        parent: u64,
        attrs: Attrs,
        initial_partitions: u32,
        split_threshold: u64,
    },
    RemoveDir {
        dir: u64,
    },
    MergeBitmap {
        dir: u64,
        bitmap: Bitmap,
    },
    SetParent {
        dir: u64,
        parent: u64,
    },
    InitPartitions {
        meta: DirMeta,
    },
    Seal {
        at: PartKey,
        seal: bool,
    },
    DropPartition {
        at: PartKey,
    },
    InstallSplit {
        at: PartKey,
        reset: bool,
        entries: Vec<Entry>,
        activate: bool,
        bitmap: Bitmap,
    },
    SplitBegin {
        at: PartKey,
    },
    SplitFinish {
        at: PartKey,
    },
    SplitAbort {
        at: PartKey,
    },
}

/// What a split moves: the half of partition `at` (at `level`) whose hash bit `level` is set goes to
/// `child` = index + 2^level on `child_server`; the directory's metadata object is on `meta_server`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    pub at: PartKey,
    pub child: u32,
    pub level: u32,
    pub child_server: u32,
    pub meta_server: u32,
    pub bitmap_after: Bitmap,
}

#[derive(Debug)]
pub enum Outcome {
    Entry(Entry),
    Dir(DirMeta),
    Done,
    /// The change was already made (a retried idempotent request).
    AlreadyDone,
    Split(SplitPlan),
    NoSplit,
}

#[derive(Debug)]
pub enum Refusal {
    /// A domain outcome sent back in-band.
    Failure(Failure),
    /// The name is in the half of a partition that a split is moving: wait for it, then resubmit.
    Frozen,
    /// The store failed.
    Internal(String),
}

pub fn failure(kind: FailureKind, message: impl Into<String>) -> Refusal {
    Refusal::Failure(Failure { kind: kind as i32, message: message.into(), bitmap: Vec::new() })
}

pub fn wrong_partition(bitmap: &Bitmap, message: impl Into<String>) -> Refusal {
    Refusal::Failure(Failure {
        kind: FailureKind::WrongPartition as i32,
        message: message.into(),
        bitmap: bitmap.as_bytes().to_vec(),
    })
}
