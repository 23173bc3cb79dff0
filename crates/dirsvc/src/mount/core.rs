//! The mount's state and the helpers its operations share. Operations are async methods on
//! `MountCore` returning an errno on failure; `fs.rs` runs them as tasks and replies to the kernel.

use std::sync::Arc;
use std::time::Duration;

use fuser::Errno;
use tokio::sync::Mutex;

use super::dirs::DirStream;
use super::nodes::Nodes;
use crate::client::{Attributes, Client, FileKind, Owner};
use crate::error::{Error, ErrorKind};
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

/// An open file: which object (its data is on the object's server).
pub struct OpenFile {
    pub ino: u64,
}

pub struct MountCore {
    pub client: Client,
    pub settings: Settings,
    /// This mount among the clients: the servers keep what it has open under this number.
    pub session: u64,
    pub nodes: Nodes,
    pub file_handles: HandleTable<OpenFile>,
    pub dir_handles: HandleTable<Mutex<DirStream>>,
}

pub fn errno(error: &Error) -> Errno {
    Errno::from_i32(error.errno())
}

/// Converts a client error into the errno to answer with.
pub trait OrErrno<T> {
    fn or_errno(self) -> Answer<T>;
    /// For a request about an inode: an object that is gone is a stale handle (the kernel looks
    /// its name up again), not a missing name.
    fn or_stale(self) -> Answer<T>;
}

impl<T> OrErrno<T> for Result<T, Error> {
    fn or_errno(self) -> Answer<T> {
        self.map_err(|e| errno(&e))
    }

    fn or_stale(self) -> Answer<T> {
        self.map_err(|e| if e.kind == ErrorKind::NotFound { Errno::ESTALE } else { errno(&e) })
    }
}

impl MountCore {
    pub fn new(client: Client, settings: Settings, session: u64) -> Self {
        Self {
            client,
            settings,
            session,
            nodes: Nodes::new(),
            file_handles: HandleTable::default(),
            dir_handles: HandleTable::default(),
        }
    }

    /// Object `ino`'s attributes now, from its server.
    pub async fn attributes(&self, ino: u64, kind: FileKind) -> Answer<Attributes> {
        if kind == FileKind::Directory {
            return self.client.dir_attrs(ino).await.or_stale();
        }
        Ok(self.client.object(ino).await.or_stale()?.attrs)
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

    pub(super) fn open_file(&self, fh: u64) -> Answer<Arc<OpenFile>> {
        self.file_handles.get(fh).map_err(|_| Errno::EBADF)
    }
}
