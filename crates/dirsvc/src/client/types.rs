//! The client library's view of entries and attributes (plain Rust types, independent of the wire).

use serde::Serialize;

use crate::error::{Error, Result};
use crate::proto::{AttrChange, Attrs, Entry, Kind};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    File,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
}

impl FileKind {
    pub fn to_proto(self) -> Kind {
        match self {
            Self::File => Kind::File,
            Self::Directory => Kind::Directory,
            Self::Symlink => Kind::Symlink,
            Self::Fifo => Kind::Fifo,
            Self::Socket => Kind::Socket,
            Self::CharDevice => Kind::CharDevice,
            Self::BlockDevice => Kind::BlockDevice,
        }
    }

    pub fn from_proto(kind: Kind) -> Option<Self> {
        match kind {
            Kind::File => Some(Self::File),
            Kind::Directory => Some(Self::Directory),
            Kind::Symlink => Some(Self::Symlink),
            Kind::Fifo => Some(Self::Fifo),
            Kind::Socket => Some(Self::Socket),
            Kind::CharDevice => Some(Self::CharDevice),
            Kind::BlockDevice => Some(Self::BlockDevice),
            Kind::Unspecified => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Attributes {
    pub kind: FileKind,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub atime_ns: i64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    /// Device number of a character or block device.
    pub rdev: u32,
    /// Names of a file; a directory's 2 + its subdirectories.
    pub nlink: u32,
}

impl Attributes {
    pub fn from_proto(attrs: Option<&Attrs>) -> Result<Self> {
        let attrs =
            attrs.ok_or_else(|| Error::new(crate::error::ErrorKind::Protocol, "entry without attributes"))?;
        let kind = FileKind::from_proto(attrs.kind()).ok_or_else(|| {
            Error::new(crate::error::ErrorKind::Protocol, format!("entry of unknown kind {}", attrs.kind))
        })?;
        Ok(Self {
            kind,
            mode: attrs.mode,
            uid: attrs.uid,
            gid: attrs.gid,
            size: attrs.size,
            atime_ns: attrs.atime_ns,
            mtime_ns: attrs.mtime_ns,
            ctime_ns: attrs.ctime_ns,
            rdev: attrs.rdev,
            nlink: attrs.nlink,
        })
    }

    pub fn to_proto(&self) -> Attrs {
        Attrs {
            kind: self.kind.to_proto() as i32,
            mode: self.mode,
            uid: self.uid,
            gid: self.gid,
            size: self.size,
            atime_ns: self.atime_ns,
            mtime_ns: self.mtime_ns,
            ctime_ns: self.ctime_ns,
            rdev: self.rdev,
            nlink: self.nlink,
        }
    }
}

/// A directory entry: its name, the id of the object it names, and that object's attributes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DirEntry {
    #[serde(serialize_with = "lossy_name")]
    pub name: Vec<u8>,
    pub id: u64,
    pub attrs: Attributes,
    /// A symlink's target (empty for other kinds).
    #[serde(serialize_with = "lossy_name", skip_serializing_if = "Vec::is_empty")]
    pub target: Vec<u8>,
}

impl DirEntry {
    /// An entry whose answer carried its object's attributes (`None` when it did not).
    pub fn from_proto(entry: &Entry) -> Result<Option<Self>> {
        let Some(attrs) = entry.attrs.as_ref() else {
            return Ok(None);
        };
        let attrs = Attributes::from_proto(Some(attrs))?;
        Ok(Some(Self { name: entry.name.clone(), id: entry.id, attrs, target: entry.target.clone() }))
    }

    pub fn is_dir(&self) -> bool {
        self.attrs.kind == FileKind::Directory
    }

    pub fn name_lossy(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }
}

/// A name in a listing: what it names and its kind, as readdir gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub name: Vec<u8>,
    pub id: u64,
    pub kind: FileKind,
}

impl Listed {
    pub fn from_proto(entry: &Entry) -> Result<Self> {
        let kind = FileKind::from_proto(entry.kind()).ok_or_else(|| {
            Error::new(crate::error::ErrorKind::Protocol, format!("entry of unknown kind {}", entry.kind))
        })?;
        Ok(Self { name: entry.name.clone(), id: entry.id, kind })
    }

    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Directory
    }

    pub fn name_lossy(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }
}

fn lossy_name<S: serde::Serializer>(name: &[u8], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(name))
}

/// Who creates an entry, and with which permissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

impl Owner {
    /// The calling process's user and group with the given permission bits.
    pub fn current(mode: u32) -> Self {
        Self { mode, uid: rustix::process::getuid().as_raw(), gid: rustix::process::getgid().as_raw() }
    }
}

/// How a new directory is partitioned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MkdirOptions {
    pub owner: Owner,
    /// Partitions active from the start (the seed's "initial number of active dirdata objects");
    /// 0 means all N.
    pub initial_partitions: u32,
    /// Split a partition holding more entries than this; 0 never splits; `None`: cluster default.
    pub split_threshold: Option<u64>,
}

/// What a new non-directory entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewNode<'a> {
    pub kind: FileKind,
    pub owner: Owner,
    /// Device number (character and block devices).
    pub rdev: u32,
    /// A symlink's target.
    pub target: &'a [u8],
}

/// Attribute changes (chmod, chown, truncate, utimes); `None` leaves a field as it is. The server
/// sets ctime, and mtime when the size changes unless `mtime_ns` is given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetAttrs {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime_ns: Option<i64>,
    pub mtime_ns: Option<i64>,
}

impl SetAttrs {
    pub fn to_proto(self) -> AttrChange {
        AttrChange {
            mode: self.mode,
            uid: self.uid,
            gid: self.gid,
            size: self.size,
            atime_ns: self.atime_ns,
            mtime_ns: self.mtime_ns,
        }
    }
}

/// Space and entries over all servers (statfs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub total_bytes: u64,
    pub free_bytes: u64,
    pub available_bytes: u64,
    pub entries: u64,
}
