//! Regular files: create, open, read, write, fsync, release. A write goes to the file's server,
//! which stores the data and the file's new size and mtime in one transaction: durable when
//! acknowledged, and seen by every mount at once. Opens are registered with the file's server, so
//! a file unlinked (or replaced by a rename) while open keeps its data until its last close.

use fuser::{Errno, FileAttr};

use super::core::{Answer, Caller, MountCore, OpenFile, OrErrno};
use crate::client::FileKind;

impl MountCore {
    /// Creates and opens a file (the kernel's O_CREAT).
    pub async fn create(
        &self,
        parent: u64,
        name: &[u8],
        mode: u32,
        caller: Caller,
    ) -> Answer<(FileAttr, u64)> {
        let attr = self.make_node(parent, name, (FileKind::File, mode, 0, &[]), caller, self.session).await?;
        Ok((attr, self.file_handles.insert(OpenFile { ino: attr.ino.0 })))
    }

    /// Opens a file, reading its attributes afresh (close-to-open consistency).
    pub async fn open(&self, ino: u64) -> Answer<u64> {
        if self.nodes.get(ino)?.kind != FileKind::File {
            return Err(Errno::EINVAL);
        }
        self.client.object_opened(ino, self.session).await.or_stale()?;
        Ok(self.file_handles.insert(OpenFile { ino }))
    }

    pub async fn read(&self, fh: u64, offset: u64, length: u32) -> Answer<Vec<u8>> {
        let file = self.open_file(fh)?;
        self.client.read_data(file.ino, offset, length).await.or_stale()
    }

    pub async fn write(&self, fh: u64, offset: u64, data: Vec<u8>) -> Answer<u32> {
        let file = self.open_file(fh)?;
        let written = u32::try_from(data.len()).map_err(|_| Errno::EFBIG)?;
        offset.checked_add(data.len() as u64).ok_or(Errno::EFBIG)?;
        self.client.write_data(file.ino, offset, data).await.or_stale()?;
        Ok(written)
    }

    /// The file's last handle here is closed: its server forgets this mount's open.
    pub async fn release(&self, fh: u64) -> Answer<()> {
        let file = self.file_handles.remove(fh).map_err(|_| Errno::EBADF)?;
        self.client.close(self.session, &[file.ino]).await.or_errno()
    }
}
