//! Group file operations, open flags, and the default aggregations of the paper's Table 2.

use crate::aggr::{AggrSpec, Builtin};
use serde::{Deserialize, Serialize};
use std::ops::BitOr;

/// Flags of [`Runtime::gopen`](crate::Runtime::gopen): an access mode, creation flags, and
/// [`OpenFlags::BESTEFFORT`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OpenFlags(u32);

impl OpenFlags {
    /// Open for reading only (`O_RDONLY`).
    pub const RDONLY: OpenFlags = OpenFlags(0);
    /// Open for writing only (`O_WRONLY`).
    pub const WRONLY: OpenFlags = OpenFlags(1);
    /// Open for reading and writing (`O_RDWR`).
    pub const RDWR: OpenFlags = OpenFlags(2);
    const ACCESS_MODE: u32 = 3;
    /// Create missing files (`O_CREAT`), with the mode given to gopen.
    pub const CREAT: OpenFlags = OpenFlags(1 << 2);
    /// Truncate to zero length on open (`O_TRUNC`).
    pub const TRUNC: OpenFlags = OpenFlags(1 << 3);
    /// Every write goes to the end of the file (`O_APPEND`).
    pub const APPEND: OpenFlags = OpenFlags(1 << 4);
    /// Succeed when any member opens (the paper's `O_BESTEFFORT`); by default gopen fails unless all do.
    pub const BESTEFFORT: OpenFlags = OpenFlags(1 << 5);

    /// Whether every flag of `other` is set (`RDONLY` is always contained, being 0).
    pub fn contains(self, other: OpenFlags) -> bool {
        self.0 & other.0 == other.0
    }

    pub(crate) fn readable(self) -> bool {
        self.0 & Self::ACCESS_MODE != Self::WRONLY.0
    }

    pub(crate) fn writable(self) -> bool {
        self.0 & Self::ACCESS_MODE != Self::RDONLY.0
    }
}

impl BitOr for OpenFlags {
    type Output = OpenFlags;
    fn bitor(self, rhs: OpenFlags) -> OpenFlags {
        OpenFlags(self.0 | rhs.0)
    }
}

/// Origin of an [`FileOp::Lseek`] offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Whence {
    /// From the start of the file (`SEEK_SET`).
    Set,
    /// From the current offset (`SEEK_CUR`).
    Cur,
    /// From the end of the file (`SEEK_END`).
    End,
}

/// One file operation, applied to every member of a group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileOp {
    /// Read up to `len` bytes at each member's offset (short only at end of file).
    Read {
        /// Most bytes to read per member.
        len: u64,
    },
    /// Read up to `len` bytes at `offset`, leaving the offset alone.
    Pread {
        /// Most bytes to read per member.
        len: u64,
        /// Where to read from.
        offset: u64,
    },
    /// Write the same bytes to every member at its offset.
    Write {
        /// The bytes every member receives.
        data: Vec<u8>,
    },
    /// Write the same bytes to every member at `offset`, leaving the offset alone.
    Pwrite {
        /// The bytes every member receives.
        data: Vec<u8>,
        /// Where to write.
        offset: u64,
    },
    /// Move every member's offset; the status is the new offset.
    Lseek {
        /// Distance from `whence`.
        offset: i64,
        /// Origin of `offset`.
        whence: Whence,
    },
    /// Stat every member; the data is a [`crate::FileStat`].
    Fstat,
    /// Flush every member to stable storage.
    Fsync,
    /// Set every member's length.
    Ftruncate {
        /// The new length.
        len: u64,
    },
    /// Close every member; the group is gone afterwards.
    Close,
    /// Rename every member's file to `name` in its own directory (the file stays open and a member); how
    /// a file written under a temporary name replaces the real one in one step.
    Rename {
        /// The new name: one path component (no `/`, not `.` or `..`).
        name: Vec<u8>,
    },
    /// Remove every member's file name (the file stays open and a member until closed).
    Unlink,
    /// Write `pieces` one after another at every member's offset: literal bytes, or byte ranges of the
    /// member at the same position on the same host of another open group (rsync's reconstruction of a
    /// new version from the blocks of the old one, done on each host). The status is the bytes written.
    Assemble {
        /// The group the copied ranges come from (see [`crate::Group::assemble`]).
        source: u64,
        /// What to write, in order.
        pieces: Vec<Piece>,
    },
}

/// A piece of a file rebuilt by [`FileOp::Assemble`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    /// These bytes.
    Data(Vec<u8>),
    /// `len` bytes at `offset` of the source member.
    Copy {
        /// Where the range starts in the source member.
        offset: u64,
        /// How many bytes.
        len: u64,
    },
}

/// The kind of a [`FileOp`], to which aggregations are bound.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OpKind {
    /// [`FileOp::Read`]
    Read,
    /// [`FileOp::Pread`]
    Pread,
    /// [`FileOp::Write`]
    Write,
    /// [`FileOp::Pwrite`]
    Pwrite,
    /// [`FileOp::Lseek`]
    Lseek,
    /// [`FileOp::Fstat`]
    Fstat,
    /// [`FileOp::Fsync`]
    Fsync,
    /// [`FileOp::Ftruncate`]
    Ftruncate,
    /// [`FileOp::Close`]
    Close,
    /// [`FileOp::Rename`]
    Rename,
    /// [`FileOp::Unlink`]
    Unlink,
    /// [`FileOp::Assemble`]
    Assemble,
}

impl FileOp {
    /// Which operation this is.
    pub fn kind(&self) -> OpKind {
        match self {
            FileOp::Read { .. } => OpKind::Read,
            FileOp::Pread { .. } => OpKind::Pread,
            FileOp::Write { .. } => OpKind::Write,
            FileOp::Pwrite { .. } => OpKind::Pwrite,
            FileOp::Lseek { .. } => OpKind::Lseek,
            FileOp::Fstat => OpKind::Fstat,
            FileOp::Fsync => OpKind::Fsync,
            FileOp::Ftruncate { .. } => OpKind::Ftruncate,
            FileOp::Close => OpKind::Close,
            FileOp::Rename { .. } => OpKind::Rename,
            FileOp::Unlink => OpKind::Unlink,
            FileOp::Assemble { .. } => OpKind::Assemble,
        }
    }
}

impl OpKind {
    /// Every operation kind.
    pub const ALL: [OpKind; 12] = [
        OpKind::Read,
        OpKind::Pread,
        OpKind::Write,
        OpKind::Pwrite,
        OpKind::Lseek,
        OpKind::Fstat,
        OpKind::Fsync,
        OpKind::Ftruncate,
        OpKind::Close,
        OpKind::Rename,
        OpKind::Unlink,
        OpKind::Assemble,
    ];

    /// Whether the operation produces data (and so takes a data aggregation).
    pub fn has_data(self) -> bool {
        matches!(self, OpKind::Read | OpKind::Pread | OpKind::Fstat)
    }

    /// Table 2: sum of bytes for reads and writes (and assembly), the common offset for lseek, zero otherwise.
    pub fn default_status_aggregation(self) -> Builtin {
        match self {
            OpKind::Read | OpKind::Pread | OpKind::Write | OpKind::Pwrite | OpKind::Assemble => Builtin::Sum,
            OpKind::Lseek => Builtin::Equal,
            OpKind::Fstat
            | OpKind::Fsync
            | OpKind::Ftruncate
            | OpKind::Close
            | OpKind::Rename
            | OpKind::Unlink => Builtin::Zero,
        }
    }
}

/// Status aggregations aggregate each member's return value; data aggregations its output (bytes read, a
/// stat).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AggrType {
    /// The aggregation of members' return values (the group status result).
    Status,
    /// The aggregation of members' output (the group data result).
    Data,
}

/// The aggregations bound to each operation of a group (`gbindaggr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bindings {
    status: Vec<AggrSpec>,
    data: Vec<AggrSpec>,
}

impl Default for Bindings {
    /// Table 2's status aggregations and concatenation for data.
    fn default() -> Self {
        Bindings {
            status: OpKind::ALL.iter().map(|k| k.default_status_aggregation().into()).collect(),
            data: OpKind::ALL.iter().map(|_| Builtin::Concat.into()).collect(),
        }
    }
}

impl Bindings {
    fn slot(kind: OpKind) -> usize {
        OpKind::ALL.iter().position(|&k| k == kind).expect("every kind is in ALL")
    }

    pub(crate) fn bind(&mut self, kind: OpKind, ty: AggrType, spec: AggrSpec) -> Result<(), String> {
        match ty {
            AggrType::Status => self.status[Self::slot(kind)] = spec,
            AggrType::Data if kind.has_data() => self.data[Self::slot(kind)] = spec,
            AggrType::Data => return Err(format!("{kind:?} produces no data to aggregate")),
        }
        Ok(())
    }

    pub(crate) fn status(&self, kind: OpKind) -> &AggrSpec {
        &self.status[Self::slot(kind)]
    }

    pub(crate) fn data(&self, kind: OpKind) -> Option<&AggrSpec> {
        kind.has_data().then(|| &self.data[Self::slot(kind)])
    }
}
