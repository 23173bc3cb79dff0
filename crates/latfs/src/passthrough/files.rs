//! Open files: open, read, write, flush, fsync, release. Handles stand for source file
//! descriptors.

use std::os::fd::AsRawFd;

use rustix::fs::{CWD, Mode, OFlags, fdatasync, fsync, openat};
use rustix::io::{Result, pread, pwrite};

use super::Passthrough;

impl Passthrough {
    /// Opens node `id` with the caller's open flags (the kernel has already dropped O_CREAT and O_EXCL).
    /// A file unlinked while open (reopened through `/proc/PID/fd`) is reopened through its open
    /// descriptor, as it has no path.
    pub(crate) fn open(&self, id: u64, flags: i32) -> Result<u64> {
        // The kernel resolved symlinks already: the node is the file itself, never a link to follow.
        let flags = OFlags::from_bits_retain(flags as u32) | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match self.locate(id) {
            Ok(location) => openat(location.dir(self.root()), location.relative(), flags, Mode::empty())?,
            Err(unreachable) => {
                let open = self.files.of(id, None).ok_or(unreachable)?;
                let path = format!("/proc/self/fd/{}", open.fd.as_raw_fd());
                openat(CWD, path.as_str(), flags - OFlags::NOFOLLOW, Mode::empty())?
            }
        };
        Ok(self.files.insert(id, fd))
    }

    pub(crate) fn read(&self, handle: u64, offset: u64, size: u32) -> Result<Vec<u8>> {
        let file = self.files.get(handle)?;
        let mut buffer = vec![0; size as usize];
        let mut filled = 0;
        // pread may return less than asked before the end of the file; only 0 means the end.
        while filled < buffer.len() {
            let read = pread(&file.fd, &mut buffer[filled..], offset + filled as u64)?;
            if read == 0 {
                break;
            }
            filled += read;
        }
        buffer.truncate(filled);
        Ok(buffer)
    }

    pub(crate) fn write(&self, handle: u64, offset: u64, data: &[u8]) -> Result<u32> {
        let file = self.files.get(handle)?;
        let written = pwrite(&file.fd, data, offset)?;
        Ok(written as u32)
    }

    /// close(2) on the mount; nothing is buffered here, so only the handle's existence is checked.
    pub(crate) fn flush(&self, handle: u64) -> Result<()> {
        self.files.get(handle).map(drop)
    }

    pub(crate) fn fsync(&self, handle: u64, data_only: bool) -> Result<()> {
        let file = self.files.get(handle)?;
        if data_only { fdatasync(&file.fd) } else { fsync(&file.fd) }
    }

    pub(crate) fn release(&self, handle: u64) -> Result<()> {
        self.files.remove(handle)
    }
}
