//! The service's attributes as the kernel wants them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{FileAttr, FileType, INodeNo};

use crate::client::{Attributes, FileKind};
use crate::server::CHUNK;

pub fn file_type(kind: FileKind) -> FileType {
    match kind {
        FileKind::File => FileType::RegularFile,
        FileKind::Directory => FileType::Directory,
        FileKind::Symlink => FileType::Symlink,
        FileKind::Fifo => FileType::NamedPipe,
        FileKind::Socket => FileType::Socket,
        FileKind::CharDevice => FileType::CharDevice,
        FileKind::BlockDevice => FileType::BlockDevice,
    }
}

/// The kind of node `mknod` asks for (`mode & S_IFMT`); `None` for what the service cannot hold.
pub fn kind_of_mode(mode: u32) -> Option<FileKind> {
    match mode & libc::S_IFMT {
        libc::S_IFREG | 0 => Some(FileKind::File),
        libc::S_IFIFO => Some(FileKind::Fifo),
        libc::S_IFSOCK => Some(FileKind::Socket),
        libc::S_IFCHR => Some(FileKind::CharDevice),
        libc::S_IFBLK => Some(FileKind::BlockDevice),
        _ => None,
    }
}

pub fn time(ns: i64) -> SystemTime {
    let magnitude = Duration::from_nanos(ns.unsigned_abs());
    if ns >= 0 { UNIX_EPOCH + magnitude } else { UNIX_EPOCH - magnitude }
}

pub fn nanos(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// The attributes as stat shows them: the link count is the object's (a file's names; a
/// directory's 2 + its subdirectories, as ext4 counts them).
pub fn file_attr(id: u64, attrs: &Attributes) -> FileAttr {
    FileAttr {
        ino: INodeNo(id),
        size: attrs.size,
        blocks: attrs.size.div_ceil(512),
        atime: time(attrs.atime_ns),
        mtime: time(attrs.mtime_ns),
        ctime: time(attrs.ctime_ns),
        crtime: time(attrs.ctime_ns),
        kind: file_type(attrs.kind),
        perm: (attrs.mode & 0o7777) as u16,
        nlink: attrs.nlink,
        uid: attrs.uid,
        gid: attrs.gid,
        rdev: attrs.rdev,
        blksize: CHUNK as u32,
        flags: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_on_both_sides_of_the_epoch() {
        for ns in [0, 1, 1_700_000_000_123_456_789, -5_000_000_001] {
            assert_eq!(nanos(time(ns)), ns);
        }
    }

    #[test]
    fn mknod_modes_map_to_kinds() {
        assert_eq!(kind_of_mode(libc::S_IFREG | 0o644), Some(FileKind::File));
        assert_eq!(kind_of_mode(0o644), Some(FileKind::File), "mknod without a type makes a file");
        assert_eq!(kind_of_mode(libc::S_IFIFO | 0o600), Some(FileKind::Fifo));
        assert_eq!(kind_of_mode(libc::S_IFBLK), Some(FileKind::BlockDevice));
        assert_eq!(kind_of_mode(libc::S_IFDIR | 0o755), None);
    }
}
