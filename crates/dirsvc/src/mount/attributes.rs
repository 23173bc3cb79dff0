//! getattr, setattr (chmod, chown, truncate, utimes) and statfs.

use fuser::{Errno, FileAttr, TimeOrNow};

use super::attr::{file_attr, nanos};
use super::core::{Answer, MountCore, OrErrno};
use crate::client::{FileKind, SetAttrs};
use crate::ids::now_ns;
use crate::names::NAME_MAX;

/// What setattr asks to change.
#[derive(Clone, Copy, Debug, Default)]
pub struct Changes {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime: Option<TimeOrNow>,
    pub mtime: Option<TimeOrNow>,
}

fn time_ns(time: Option<TimeOrNow>) -> Option<i64> {
    time.map(|t| match t {
        TimeOrNow::Now => now_ns(),
        TimeOrNow::SpecificTime(at) => nanos(at),
    })
}

/// statfs figures: 4 KiB blocks; an entry is counted as one block of the free space.
pub struct FsStats {
    pub blocks: u64,
    pub bfree: u64,
    pub bavail: u64,
    pub files: u64,
    pub ffree: u64,
    pub bsize: u32,
    pub namelen: u32,
}

const BLOCK: u64 = 4096;

impl MountCore {
    pub async fn getattr(&self, ino: u64) -> Answer<FileAttr> {
        let node = self.nodes.get(ino)?;
        Ok(file_attr(ino, &self.attributes(ino, node.kind).await?))
    }

    pub async fn setattr(&self, ino: u64, changes: Changes) -> Answer<FileAttr> {
        let change = SetAttrs {
            mode: changes.mode.map(|m| m & 0o7777),
            uid: changes.uid,
            gid: changes.gid,
            size: changes.size,
            atime_ns: time_ns(changes.atime),
            mtime_ns: time_ns(changes.mtime),
        };
        let node = self.nodes.get(ino)?;
        if node.kind == FileKind::Directory && change.size.is_some() {
            return Err(Errno::EISDIR);
        }
        let attrs = self.client.set_attrs(ino, change).await.or_stale()?;
        Ok(file_attr(ino, &attrs))
    }

    pub async fn statfs(&self) -> Answer<FsStats> {
        let usage = self.client.usage().await.or_errno()?;
        let ffree = usage.available_bytes / BLOCK;
        Ok(FsStats {
            blocks: usage.total_bytes / BLOCK,
            bfree: usage.free_bytes / BLOCK,
            bavail: usage.available_bytes / BLOCK,
            files: usage.entries + ffree,
            ffree,
            bsize: BLOCK as u32,
            namelen: NAME_MAX as u32,
        })
    }
}
