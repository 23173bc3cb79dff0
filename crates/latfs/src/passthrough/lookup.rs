//! Requests that only read metadata: lookup, getattr, readlink, access, statfs.

use std::ffi::OsStr;

use rustix::fs::{Access, AtFlags, Stat, StatVfs, accessat, fstat, fstatvfs, readlinkat};
use rustix::io::Result;

use super::{Entry, Passthrough};

impl Passthrough {
    pub(crate) fn lookup(&self, parent: u64, name: &OsStr) -> Result<Entry> {
        let location = self.locate_child(parent, name)?;
        self.enter(parent, name, &location)
    }

    /// The attributes of node `id`; through a file open on it when there is one (the kernel's `fstat`
    /// does not say which), so a file unlinked while open still answers, with its link count of 0.
    pub(crate) fn getattr(&self, id: u64, open_file: Option<u64>) -> Result<Stat> {
        if let Some(file) = self.files.of(id, open_file) {
            return fstat(&file.fd);
        }
        self.stat_at(&self.locate(id)?)
    }

    pub(crate) fn readlink(&self, id: u64) -> Result<Vec<u8>> {
        let location = self.locate(id)?;
        let target = readlinkat(location.dir(self.root()), location.relative(), Vec::new())?;
        Ok(target.into_bytes())
    }

    /// `access(2)` as the server sees it; only asked when the kernel does not check permissions itself.
    pub(crate) fn access(&self, id: u64, mode: i32) -> Result<()> {
        let location = self.locate(id)?;
        let access = Access::from_bits_truncate(mode as u32);
        accessat(location.dir(self.root()), location.relative(), access, AtFlags::empty())
    }

    pub(crate) fn statfs(&self) -> Result<StatVfs> {
        fstatvfs(self.root())
    }
}
