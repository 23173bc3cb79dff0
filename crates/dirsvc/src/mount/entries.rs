//! Names: lookup, create, mknod, mkdir, symlink, link, readlink, unlink, rmdir, rename.

use fuser::{Errno, FileAttr, RenameFlags};

use super::attr::{file_attr, kind_of_mode};
use super::core::{Answer, Caller, MountCore, OrErrno};
use crate::client::{DirEntry, FileKind, MkdirOptions, NewNode};
use crate::error::ErrorKind;

impl MountCore {
    pub async fn lookup(&self, parent: u64, name: &[u8]) -> Answer<FileAttr> {
        let entry = self.client.lookup(parent, name).await.or_errno()?;
        Ok(self.entered(&entry))
    }

    /// The kernel gets a reference to `entry`'s object.
    fn entered(&self, entry: &DirEntry) -> FileAttr {
        self.nodes.remember(entry.id, entry.attrs.kind, &entry.target);
        file_attr(entry.id, &entry.attrs)
    }

    /// A new non-directory; a regular file made with this mount's session is open in it (see
    /// `create`).
    pub async fn make_node(
        &self,
        parent: u64,
        name: &[u8],
        (kind, mode, rdev, target): (FileKind, u32, u32, &[u8]),
        caller: Caller,
        open_session: u64,
    ) -> Answer<FileAttr> {
        let owner = self.owner_for(parent, mode, caller, false).await?;
        let node = NewNode { kind, owner, rdev, target };
        let entry = self.client.create_node(parent, name, &node, open_session).await.or_errno()?;
        Ok(self.entered(&entry))
    }

    pub async fn mknod(
        &self,
        parent: u64,
        name: &[u8],
        mode: u32,
        rdev: u32,
        caller: Caller,
    ) -> Answer<FileAttr> {
        let kind = kind_of_mode(mode).ok_or(Errno::EINVAL)?;
        self.make_node(parent, name, (kind, mode, rdev, &[]), caller, 0).await
    }

    pub async fn symlink(&self, parent: u64, name: &[u8], target: &[u8], caller: Caller) -> Answer<FileAttr> {
        self.make_node(parent, name, (FileKind::Symlink, 0o777, 0, target), caller, 0).await
    }

    pub async fn readlink(&self, ino: u64) -> Answer<Vec<u8>> {
        let node = self.nodes.get(ino)?;
        if node.kind != FileKind::Symlink {
            return Err(Errno::EINVAL);
        }
        if !node.target.is_empty() {
            return Ok(node.target);
        }
        Ok(self.client.object(ino).await.or_stale()?.target)
    }

    pub async fn mkdir(&self, parent: u64, name: &[u8], mode: u32, caller: Caller) -> Answer<FileAttr> {
        let owner = self.owner_for(parent, mode, caller, true).await?;
        let options = MkdirOptions {
            owner,
            initial_partitions: self.settings.initial_partitions,
            split_threshold: None,
        };
        let entry = self.client.mkdir(parent, name, options).await.or_errno()?;
        Ok(self.entered(&entry))
    }

    /// A hard link: another name for file `ino`.
    pub async fn link(&self, ino: u64, new_parent: u64, new_name: &[u8]) -> Answer<FileAttr> {
        let entry = self.client.link(ino, new_parent, new_name).await.or_errno()?;
        Ok(self.entered(&entry))
    }

    /// Removes a non-directory's name. The object goes with its last name, or with its last close
    /// when a mount has it open.
    pub async fn unlink(&self, parent: u64, name: &[u8]) -> Answer<()> {
        self.client.unlink(parent, name).await.or_errno().map(drop)
    }

    pub async fn rmdir(&self, parent: u64, name: &[u8]) -> Answer<()> {
        self.client.rmdir(parent, name).await.or_errno()
    }

    /// rename(2): replaces a destination of the same type (an empty directory for a directory).
    /// RENAME_NOREPLACE is checked before the move (another client could still create the name in
    /// between); RENAME_EXCHANGE is not supported.
    pub async fn rename(
        &self,
        (parent, name): (u64, &[u8]),
        (new_parent, new_name): (u64, &[u8]),
        flags: RenameFlags,
    ) -> Answer<()> {
        if flags.contains(RenameFlags::RENAME_EXCHANGE) || flags.contains(RenameFlags::RENAME_WHITEOUT) {
            return Err(Errno::EINVAL);
        }
        if flags.contains(RenameFlags::RENAME_NOREPLACE) {
            match self.client.lookup_name(new_parent, new_name).await {
                Ok(_) => return Err(Errno::EEXIST),
                Err(e) if e.kind == ErrorKind::NotFound => {}
                Err(e) => return Err(super::core::errno(&e)),
            }
        }
        self.client.rename(parent, name, new_parent, new_name).await.or_errno().map(drop)
    }
}
