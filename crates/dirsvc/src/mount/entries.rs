//! Names: lookup, create, mknod, mkdir, symlink, readlink, unlink, rmdir, rename.

use fuser::{Errno, FileAttr, RenameFlags};

use super::attr::{file_attr, kind_of_mode};
use super::core::{Answer, Caller, MountCore, OrErrno};
use crate::client::{DirEntry, FileKind, MkdirOptions, NewNode};
use crate::error::ErrorKind;

impl MountCore {
    pub async fn lookup(&self, parent: u64, name: &[u8]) -> Answer<FileAttr> {
        let entry = self.client.lookup(parent, name).await.or_errno()?;
        let attrs = self.attributes(&entry).await?;
        self.nodes.remember(parent, &entry);
        Ok(file_attr(entry.id, &attrs))
    }

    /// A new non-directory; for regular files the caller opens it too (see `create`).
    pub async fn make_node(
        &self,
        parent: u64,
        name: &[u8],
        (kind, mode, rdev, target): (FileKind, u32, u32, &[u8]),
        caller: Caller,
    ) -> Answer<DirEntry> {
        let owner = self.owner_for(parent, mode, caller, false).await?;
        let node = NewNode { kind, owner, rdev, target };
        let entry = self.client.create_node(parent, name, &node).await.or_errno()?;
        self.nodes.remember(parent, &entry);
        Ok(entry)
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
        let entry = self.make_node(parent, name, (kind, mode, rdev, &[]), caller).await?;
        Ok(file_attr(entry.id, &entry.attrs))
    }

    pub async fn symlink(&self, parent: u64, name: &[u8], target: &[u8], caller: Caller) -> Answer<FileAttr> {
        let entry = self.make_node(parent, name, (FileKind::Symlink, 0o777, 0, target), caller).await?;
        Ok(file_attr(entry.id, &entry.attrs))
    }

    pub async fn readlink(&self, ino: u64) -> Answer<Vec<u8>> {
        let node = self.nodes.get(ino)?;
        if node.kind != FileKind::Symlink {
            return Err(Errno::EINVAL);
        }
        if !node.target.is_empty() {
            return Ok(node.target);
        }
        Ok(self.entry_of(ino).await?.target)
    }

    pub async fn mkdir(&self, parent: u64, name: &[u8], mode: u32, caller: Caller) -> Answer<FileAttr> {
        let owner = self.owner_for(parent, mode, caller, true).await?;
        let options = MkdirOptions {
            owner,
            initial_partitions: self.settings.initial_partitions,
            split_threshold: None,
        };
        let entry = self.client.mkdir(parent, name, options).await.or_errno()?;
        self.nodes.remember(parent, &entry);
        Ok(file_attr(entry.id, &entry.attrs))
    }

    /// Removes a non-directory. A file open in this mount keeps its data until its last close.
    pub async fn unlink(&self, parent: u64, name: &[u8]) -> Answer<()> {
        let open_here = self.nodes.id_of(parent, name).and_then(|id| self.files.get(id));
        let removed = self.client.unlink_keeping_data(parent, name, open_here.is_some()).await.or_errno()?;
        self.nodes.unlinked(parent, name);
        match (open_here, self.files.get(removed.id)) {
            (_, Some(file)) => file.state.lock().await.unlinked = true,
            // The name led to another object than the one open here: nobody keeps its data.
            (Some(_), None) if removed.attrs.kind == FileKind::File => {
                let _ = self.client.truncate_data(removed.id, 0).await;
            }
            _ => {}
        }
        Ok(())
    }

    pub async fn rmdir(&self, parent: u64, name: &[u8]) -> Answer<()> {
        self.client.rmdir(parent, name).await.or_errno()?;
        self.nodes.unlinked(parent, name);
        Ok(())
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
            match self.client.lookup(new_parent, new_name).await {
                Ok(_) => return Err(Errno::EEXIST),
                Err(e) if e.kind == ErrorKind::NotFound => {}
                Err(e) => return Err(super::core::errno(&e)),
            }
        }
        let moved = self.client.rename(parent, name, new_parent, new_name).await.or_errno()?;
        self.nodes.renamed((parent, name), (new_parent, new_name), moved.id);
        Ok(())
    }
}
