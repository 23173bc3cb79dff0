//! Open files: open, read, write, flush, fsync, release. Handles are source file descriptors.

use rustix::fs::{Mode, OFlags, fdatasync, fsync, openat};
use rustix::io::{Result, pread, pwrite};

use super::Passthrough;

impl Passthrough {
    /// Opens node `id` with the caller's open flags (the kernel has already dropped O_CREAT and O_EXCL).
    pub(crate) fn open(&self, id: u64, flags: i32) -> Result<u64> {
        let location = self.locate(id)?;
        // The kernel resolved symlinks already: the node is the file itself, never a link to follow.
        let flags = OFlags::from_bits_retain(flags as u32) | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(location.dir(self.root()), location.relative(), flags, Mode::empty())?;
        Ok(self.files.insert(fd))
    }

    pub(crate) fn read(&self, handle: u64, offset: u64, size: u32) -> Result<Vec<u8>> {
        let fd = self.files.get(handle)?;
        let mut buffer = vec![0; size as usize];
        let mut filled = 0;
        // pread may return less than asked before the end of the file; only 0 means the end.
        while filled < buffer.len() {
            let read = pread(&*fd, &mut buffer[filled..], offset + filled as u64)?;
            if read == 0 {
                break;
            }
            filled += read;
        }
        buffer.truncate(filled);
        Ok(buffer)
    }

    pub(crate) fn write(&self, handle: u64, offset: u64, data: &[u8]) -> Result<u32> {
        let fd = self.files.get(handle)?;
        let written = pwrite(&*fd, data, offset)?;
        Ok(written as u32)
    }

    /// close(2) on the mount; nothing is buffered here, so only the handle's existence is checked.
    pub(crate) fn flush(&self, handle: u64) -> Result<()> {
        self.files.get(handle).map(drop)
    }

    pub(crate) fn fsync(&self, handle: u64, data_only: bool) -> Result<()> {
        let fd = self.files.get(handle)?;
        if data_only { fdatasync(&*fd) } else { fsync(&*fd) }
    }

    pub(crate) fn release(&self, handle: u64) -> Result<()> {
        self.files.remove(handle).map(drop)
    }
}
