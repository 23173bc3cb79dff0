//! The changes a server makes to its store, all applied by the group-commit writer in arrival
//! order. Requests are validated into these before they reach the writer.

use crate::mapping::Bitmap;
use crate::proto::{AttrChange, Attrs, DirMeta, Effect, Entry, Failure, FailureKind, Object, repair_request};

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
        link_intent: u64,
        open_session: u64,
    },
    Unlink {
        at: PartKey,
        name: Vec<u8>,
        hash: u64,
        expect_id: u64,
        directory: bool,
    },
    /// Settling a link intent from the inode's server: is its entry there? If not, never make it.
    FenceLink {
        at: PartKey,
        name: Vec<u8>,
        hash: u64,
        id: u64,
        intent: u64,
    },
    /// chmod, chown, utimes, truncate of an inode or a directory's metadata object.
    SetObjectAttr {
        id: u64,
        change: AttrChange,
    },
    WriteData {
        file: u64,
        offset: u64,
        data: Vec<u8>,
    },
    AddLink {
        id: u64,
        dir: u64,
        name: Vec<u8>,
    },
    /// A link intent is settled: its entry exists (`made`) or never will.
    SettleLink {
        id: u64,
        intent: u64,
        made: bool,
    },
    /// Inodes no session has open any more: those without a name go.
    Reclaim {
        ids: Vec<u64>,
    },
    /// Effects another server's operations had here, in its order.
    ApplyEffects {
        from: u32,
        effects: Vec<Effect>,
    },
    /// `dest` applied this server's effects up to `through`: drop them from the outbox.
    Delivered {
        dest: u32,
        through: u64,
    },
    /// Nothing but a commit: folds pending touches into the store.
    Fold,
    Repair(repair_request::Action),
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
    Object(Object),
    /// AddLink: the intent number and the inode counting the new name.
    Linked(u64, Object),
    /// ApplyEffects: the sender's last effect applied here.
    Applied(u64),
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
