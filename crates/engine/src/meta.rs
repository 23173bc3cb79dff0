//! Entry metadata, read with `statx` relative to the parent directory's fd.

use rustix::fs::{FileType, Statx, StatxTimestamp};
use serde::{Deserialize, Serialize};

/// What kind of file an entry is. `Unknown` only comes from `d_type` and is resolved by a stat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    BlockDevice,
    CharDevice,
    Unknown,
}

impl FileKind {
    pub fn from_file_type(t: FileType) -> Self {
        match t {
            FileType::RegularFile => FileKind::File,
            FileType::Directory => FileKind::Dir,
            FileType::Symlink => FileKind::Symlink,
            FileType::Fifo => FileKind::Fifo,
            FileType::Socket => FileKind::Socket,
            FileType::BlockDevice => FileKind::BlockDevice,
            FileType::CharacterDevice => FileKind::CharDevice,
            FileType::Unknown => FileKind::Unknown,
        }
    }

    pub fn from_mode(mode: u32) -> Self {
        Self::from_file_type(FileType::from_raw_mode(mode as _))
    }

    /// The letter find's `-type` and `%y` use.
    pub fn letter(self) -> char {
        match self {
            FileKind::File => 'f',
            FileKind::Dir => 'd',
            FileKind::Symlink => 'l',
            FileKind::Fifo => 'p',
            FileKind::Socket => 's',
            FileKind::BlockDevice => 'b',
            FileKind::CharDevice => 'c',
            FileKind::Unknown => 'U',
        }
    }

    /// Stable lowercase name used in JSON and Parquet outputs.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::File => "file",
            FileKind::Dir => "dir",
            FileKind::Symlink => "symlink",
            FileKind::Fifo => "fifo",
            FileKind::Socket => "socket",
            FileKind::BlockDevice => "block",
            FileKind::CharDevice => "char",
            FileKind::Unknown => "unknown",
        }
    }
}

/// A timestamp with nanoseconds, as the kernel reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp {
    pub sec: i64,
    pub nsec: u32,
}

impl Timestamp {
    fn from_statx(t: StatxTimestamp) -> Self {
        Timestamp { sec: t.tv_sec, nsec: t.tv_nsec }
    }

    /// Seconds as a float, for find's `%T@`-style output and age arithmetic.
    pub fn as_secs_f64(self) -> f64 {
        self.sec as f64 + f64::from(self.nsec) / 1e9
    }
}

/// The fields of `struct statx` the tools use; plain data, cheap to copy and serialise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    pub mode: u32,
    pub nlink: u64,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    /// 512-byte blocks allocated, as `st_blocks`.
    pub blocks: u64,
    pub blksize: u32,
    pub ino: u64,
    pub dev: u64,
    pub rdev: u64,
    pub atime: Timestamp,
    pub mtime: Timestamp,
    pub ctime: Timestamp,
}

impl Metadata {
    pub fn from_statx(s: &Statx) -> Self {
        Metadata {
            mode: u32::from(s.stx_mode),
            nlink: u64::from(s.stx_nlink),
            uid: s.stx_uid,
            gid: s.stx_gid,
            size: s.stx_size,
            blocks: s.stx_blocks,
            blksize: s.stx_blksize,
            ino: s.stx_ino,
            dev: rustix::fs::makedev(s.stx_dev_major, s.stx_dev_minor),
            rdev: rustix::fs::makedev(s.stx_rdev_major, s.stx_rdev_minor),
            atime: Timestamp::from_statx(s.stx_atime),
            mtime: Timestamp::from_statx(s.stx_mtime),
            ctime: Timestamp::from_statx(s.stx_ctime),
        }
    }

    pub fn kind(&self) -> FileKind {
        FileKind::from_mode(self.mode)
    }

    /// Permission bits including setuid/setgid/sticky.
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }

    pub fn is_dir(&self) -> bool {
        self.kind() == FileKind::Dir
    }

    /// Bytes allocated on disk (`st_blocks` × 512), what `du` counts by default.
    pub fn allocated_bytes(&self) -> u64 {
        self.blocks * 512
    }

    /// The identity hard links and loop detection use.
    pub fn file_id(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }
}
