//! getattr, setattr (chmod, chown, truncate, utimes) and statfs.

use fuser::{Errno, FileAttr, TimeOrNow};

use super::attr::{file_attr, nanos};
use super::core::{Answer, MountCore, OrErrno};
use crate::client::{Attributes, FileKind, SetAttrs};
use crate::ids::{ROOT_ID, now_ns};
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
        if node.kind == FileKind::Directory {
            let info = self.client.fetch_dir(ino).await.or_errno()?;
            return Ok(file_attr(ino, &info.attrs));
        }
        if node.name.is_empty() {
            // Unlinked while open here: only this mount still knows the file.
            let file = self.files.get(ino).ok_or(Errno::ENOENT)?;
            let state = file.state.lock().await;
            return Ok(file_attr(ino, &state.attrs));
        }
        let entry = self.entry_of(ino).await?;
        Ok(file_attr(ino, &self.with_unpushed(ino, entry.attrs).await))
    }

    pub async fn setattr(&self, ino: u64, changes: Changes) -> Answer<FileAttr> {
        let mut change = SetAttrs {
            mode: changes.mode.map(|m| m & 0o7777),
            uid: changes.uid,
            gid: changes.gid,
            size: changes.size,
            atime_ns: time_ns(changes.atime),
            mtime_ns: time_ns(changes.mtime),
        };
        let node = self.nodes.get(ino)?;
        if node.kind == FileKind::Directory {
            if change.size.is_some() {
                return Err(Errno::EISDIR);
            }
            let name = (ino != ROOT_ID && !node.name.is_empty()).then_some(node.name.as_slice());
            let info = self.client.set_dir_attr(ino, name, change).await.or_errno()?;
            return Ok(file_attr(ino, &info.attrs));
        }
        let open = self.files.get(ino);
        let mut state = match &open {
            Some(file) => Some(file.state.lock().await),
            None => None,
        };
        if let Some(size) = change.size {
            // Drop the bytes past the new end first: growing again must show zeros there.
            let current = match &state {
                Some(state) => state.attrs.size,
                None => self.entry_of(ino).await?.attrs.size,
            };
            self.client.truncate_data(ino, size.min(current)).await.or_errno()?;
        }
        if let Some(state) = state.as_deref_mut() {
            if state.unlinked {
                apply_locally(&mut state.attrs, change);
                return Ok(file_attr(ino, &state.attrs));
            }
            if let Some(mtime) = state.unpushed_mtime.take() {
                change.size = change.size.or(Some(state.attrs.size));
                change.mtime_ns = change.mtime_ns.or(Some(mtime));
            }
        }
        let (parent, name) = self.location(ino)?;
        let entry = self.client.set_attr(parent, &name, ino, change).await.or_errno()?;
        if let Some(state) = state.as_deref_mut() {
            state.attrs = entry.attrs;
        }
        Ok(file_attr(ino, &entry.attrs))
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

/// A file with no name left has its attributes only here.
fn apply_locally(attrs: &mut Attributes, change: SetAttrs) {
    let now = now_ns();
    attrs.mode = change.mode.unwrap_or(attrs.mode);
    attrs.uid = change.uid.unwrap_or(attrs.uid);
    attrs.gid = change.gid.unwrap_or(attrs.gid);
    if let Some(size) = change.size {
        attrs.size = size;
        attrs.mtime_ns = now;
    }
    attrs.atime_ns = change.atime_ns.unwrap_or(attrs.atime_ns);
    attrs.mtime_ns = change.mtime_ns.unwrap_or(attrs.mtime_ns);
    attrs.ctime_ns = now;
}
