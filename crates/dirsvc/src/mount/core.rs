//! The mount's state and the helpers its operations share. Operations are async methods on
//! `MountCore` returning an errno on failure; `fs.rs` runs them as tasks and replies to the kernel.

use std::sync::Arc;
use std::time::Duration;

use fuser::Errno;
use tokio::sync::Mutex;

use super::dirs::DirStream;
use super::nodes::Nodes;
use super::open_files::{OpenFile, OpenFiles};
use crate::client::{Attributes, Client, DirEntry, FileKind, Owner};
use crate::error::Error;
use canopy_fusekit::HandleTable;

pub type Answer<T> = Result<T, Errno>;

/// Who asks, from the FUSE request.
#[derive(Clone, Copy, Debug)]
pub struct Caller {
    pub uid: u32,
    pub gid: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// How long the kernel may cache names and attributes.
    pub ttl: Duration,
    /// Active partitions of directories made through the mount (0: all N).
    pub initial_partitions: u32,
}

pub struct MountCore {
    pub client: Client,
    pub settings: Settings,
    pub nodes: Nodes,
    pub files: OpenFiles,
    pub file_handles: HandleTable<Arc<OpenFile>>,
    pub dir_handles: HandleTable<Mutex<DirStream>>,
}

pub fn errno(error: &Error) -> Errno {
    Errno::from_i32(error.errno())
}

/// Converts a client error into the errno to answer with.
pub trait OrErrno<T> {
    fn or_errno(self) -> Answer<T>;
}

impl<T> OrErrno<T> for Result<T, Error> {
    fn or_errno(self) -> Answer<T> {
        self.map_err(|e| errno(&e))
    }
}

impl MountCore {
    pub fn new(client: Client, settings: Settings) -> Self {
        Self {
            client,
            settings,
            nodes: Nodes::new(),
            files: OpenFiles::default(),
            file_handles: HandleTable::default(),
            dir_handles: HandleTable::default(),
        }
    }

    /// An entry's current attributes: a directory's from its metadata object (the copy in its
    /// parent's entry may lag), a file's with what this mount wrote and has not pushed yet.
    pub async fn attributes(&self, entry: &DirEntry) -> Answer<Attributes> {
        if entry.attrs.kind == FileKind::Directory {
            return Ok(self.client.fetch_dir(entry.id).await.or_errno()?.attrs);
        }
        Ok(self.with_unpushed(entry.id, entry.attrs).await)
    }

    /// `attrs` overlaid with the size and mtime of writes this mount has not pushed to the entry.
    pub async fn with_unpushed(&self, ino: u64, mut attrs: Attributes) -> Attributes {
        if let Some(file) = self.files.get(ino) {
            let state = file.state.lock().await;
            if let Some(mtime) = state.unpushed_mtime {
                attrs.size = state.attrs.size;
                attrs.mtime_ns = mtime;
            }
        }
        attrs
    }

    /// The owner of a new entry in `parent`: the caller, with the mode the kernel masked with
    /// the caller's umask; in a set-group-ID directory, the directory's group (and directories
    /// inherit the bit), as on ext4.
    pub async fn owner_for(&self, parent: u64, mode: u32, caller: Caller, directory: bool) -> Answer<Owner> {
        let parent_attrs = self.client.dir_info(parent).await.or_errno()?.attrs;
        let mut owner = Owner { mode: mode & 0o7777, uid: caller.uid, gid: caller.gid };
        if parent_attrs.mode & libc::S_ISGID != 0 {
            owner.gid = parent_attrs.gid;
            if directory {
                owner.mode |= libc::S_ISGID;
            }
        }
        Ok(owner)
    }

    /// The (parent, name) through which a non-directory's entry is reached now.
    pub fn location(&self, ino: u64) -> Answer<(u64, Vec<u8>)> {
        let node = self.nodes.get(ino)?;
        if node.name.is_empty() {
            return Err(Errno::ENOENT);
        }
        Ok((node.parent, node.name))
    }

    /// A non-directory's entry, fresh; ESTALE when its name now leads to another object.
    pub async fn entry_of(&self, ino: u64) -> Answer<DirEntry> {
        let (parent, name) = self.location(ino)?;
        let entry = self.client.lookup(parent, &name).await.or_errno()?;
        if entry.id != ino {
            return Err(Errno::ESTALE);
        }
        Ok(entry)
    }
}
