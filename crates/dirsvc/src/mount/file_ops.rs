//! Regular files: create, open, read, write, flush, fsync, release.

use std::sync::Arc;

use fuser::{Errno, FileAttr};

use super::attr::file_attr;
use super::core::{Answer, Caller, MountCore, OrErrno};
use super::open_files::OpenFile;
use crate::client::FileKind;
use crate::ids::now_ns;

impl MountCore {
    /// Creates and opens a file (the kernel's O_CREAT).
    pub async fn create(
        &self,
        parent: u64,
        name: &[u8],
        mode: u32,
        caller: Caller,
    ) -> Answer<(FileAttr, u64)> {
        let entry = self.make_node(parent, name, (FileKind::File, mode, 0, &[]), caller).await?;
        let file = self.files.open(entry.id, entry.attrs).await;
        Ok((file_attr(entry.id, &entry.attrs), self.file_handles.insert(file)))
    }

    /// Opens a file, reading its entry afresh (close-to-open consistency).
    pub async fn open(&self, ino: u64) -> Answer<u64> {
        let node = self.nodes.get(ino)?;
        if node.kind != FileKind::File {
            return Err(Errno::EINVAL);
        }
        let unlinked_attrs = match self.files.get(ino) {
            Some(file) => {
                let state = file.state.lock().await;
                state.unlinked.then_some(state.attrs)
            }
            None => None,
        };
        let attrs = match unlinked_attrs {
            Some(attrs) => attrs,
            None => self.entry_of(ino).await?.attrs,
        };
        let file = self.files.open(ino, attrs).await;
        Ok(self.file_handles.insert(file))
    }

    fn handle(&self, fh: u64) -> Answer<Arc<OpenFile>> {
        self.file_handles.get(fh).map(|file| Arc::clone(&*file)).map_err(|_| Errno::EBADF)
    }

    pub async fn read(&self, fh: u64, offset: u64, length: u32) -> Answer<Vec<u8>> {
        let file = self.handle(fh)?;
        let size = file.state.lock().await.attrs.size;
        self.client.read_data(file.ino, offset, length, size).await.or_errno()
    }

    /// Writes through to the data server; the new size and mtime reach the entry at the next
    /// flush, fsync or release.
    pub async fn write(&self, fh: u64, offset: u64, data: Vec<u8>) -> Answer<u32> {
        let file = self.handle(fh)?;
        let written = u32::try_from(data.len()).map_err(|_| Errno::EFBIG)?;
        let end = offset.checked_add(data.len() as u64).ok_or(Errno::EFBIG)?;
        let mut state = file.state.lock().await;
        self.client.write_data(file.ino, offset, data, state.attrs.size).await.or_errno()?;
        state.attrs.size = state.attrs.size.max(end);
        state.unpushed_mtime = Some(now_ns());
        Ok(written)
    }

    /// Pushes the size and mtime of this mount's writes to the file's entry.
    pub async fn flush(&self, fh: u64) -> Answer<()> {
        let file = self.handle(fh)?;
        let mut state = file.state.lock().await;
        let Some(mtime) = state.unpushed_mtime else {
            return Ok(());
        };
        if state.unlinked {
            return Ok(());
        }
        let (parent, name) = self.location(file.ino)?;
        let change = crate::client::SetAttrs {
            size: Some(state.attrs.size),
            mtime_ns: Some(mtime),
            ..Default::default()
        };
        let entry = self.client.set_attr(parent, &name, file.ino, change).await.or_errno()?;
        state.attrs = entry.attrs;
        state.unpushed_mtime = None;
        Ok(())
    }

    /// Data is durable once a write is acknowledged; fsync makes the size durable too.
    pub async fn fsync(&self, fh: u64) -> Answer<()> {
        self.flush(fh).await
    }

    /// The last release of a file unlinked while open drops its data.
    pub async fn release(&self, fh: u64) -> Answer<()> {
        let pushed = self.flush(fh).await;
        let file = self.file_handles.remove(fh).map_err(|_| Errno::EBADF)?;
        if let Some(last) = self.files.close(file.ino)
            && last.state.lock().await.unlinked
        {
            self.client.truncate_data(last.ino, 0).await.or_errno()?;
        }
        pushed
    }
}
