//! What one member's operation produces: the input of every aggregation.

use crate::aggr::decimal::{self, Decimal};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One member's contribution to an aggregation: its status for a status aggregation, its data for a data
/// aggregation.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Value {
    /// A status: bytes read or written, an offset, or 0.
    Int(i64),
    /// Bytes read from the member.
    Bytes(Vec<u8>),
    /// The member's `fstat`.
    Stat(FileStat),
}

/// The portable part of a member's `fstat`: what can be compared across hosts (device and inode numbers
/// cannot, so they are left out).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FileStat {
    /// Size in bytes.
    pub size: u64,
    /// File type and permission bits (`st_mode`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Number of hard links.
    pub nlink: u64,
    /// Modification time, seconds since the epoch.
    pub mtime: i64,
    /// Nanoseconds of the modification time.
    pub mtime_nsec: u32,
}

impl FileStat {
    /// Names of the numeric columns of a stat, in [`Value::numbers`] order.
    pub const COLUMNS: [&'static str; 6] = ["size", "mode", "uid", "gid", "nlink", "mtime"];

    /// The portable fields of `meta`.
    pub fn from_metadata(meta: &std::fs::Metadata) -> FileStat {
        use std::os::unix::fs::MetadataExt;
        FileStat {
            size: meta.size(),
            mode: meta.mode(),
            uid: meta.uid(),
            gid: meta.gid(),
            nlink: meta.nlink(),
            mtime: meta.mtime(),
            mtime_nsec: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
        }
    }
}

impl Value {
    /// The value as numbers, column by column, for sum / min / max / average: a status is one column, data
    /// is its whitespace-separated tokens (non-numeric tokens are `None`), a stat is [`FileStat::COLUMNS`].
    pub fn numbers(&self) -> Vec<Option<Decimal>> {
        match self {
            Value::Int(v) => vec![Some(Decimal::from_int(*v))],
            Value::Bytes(bytes) => decimal::columns(bytes),
            Value::Stat(st) => [st.size, u64::from(st.mode), u64::from(st.uid), u64::from(st.gid), st.nlink]
                .into_iter()
                .map(|v| Some(Decimal::from_u64(v)))
                .chain([Some(Decimal::from_seconds(st.mtime, st.mtime_nsec))])
                .collect(),
        }
    }

    /// The bytes a checksum covers: data as is, a status as decimal text, a stat as its `Debug` text.
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        match self {
            Value::Bytes(bytes) => Cow::Borrowed(bytes),
            Value::Int(v) => Cow::Owned(v.to_string().into_bytes()),
            Value::Stat(st) => Cow::Owned(format!("{st:?}").into_bytes()),
        }
    }
}
