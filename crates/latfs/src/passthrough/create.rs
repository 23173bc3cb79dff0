//! Requests that make new names: create, mknod, mkdir, symlink, link.

use std::ffi::OsStr;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, fstat, linkat, mkdirat, mknodat, openat, symlinkat};
use rustix::io::Result;

use super::{Caller, Entry, Passthrough};
use crate::attr::decode_dev;

impl Passthrough {
    /// Creates and opens a regular file; returns its entry and open handle.
    pub(crate) fn create(
        &self,
        parent: u64,
        name: &OsStr,
        mode: u32,
        flags: i32,
        caller: Caller,
    ) -> Result<(Entry, u64)> {
        let location = self.locate_child(parent, name)?;
        let flags =
            OFlags::from_bits_retain(flags as u32) | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(location.dir(self.root()), location.relative(), flags, Mode::from_raw_mode(mode))?;
        self.give_to_caller(parent, &location, caller)?;
        let entry = self.record(parent, name, fstat(&fd)?);
        let handle = self.files.insert(entry.id, fd);
        Ok((entry, handle))
    }

    /// Makes a FIFO, socket, device or empty regular file; `device` is in FUSE's encoding.
    pub(crate) fn mknod(
        &self,
        parent: u64,
        name: &OsStr,
        mode: u32,
        device: u32,
        caller: Caller,
    ) -> Result<Entry> {
        let location = self.locate_child(parent, name)?;
        mknodat(
            location.dir(self.root()),
            location.relative(),
            FileType::from_raw_mode(mode),
            Mode::from_raw_mode(mode),
            decode_dev(device),
        )?;
        self.give_to_caller(parent, &location, caller)?;
        self.enter(parent, name, &location)
    }

    pub(crate) fn mkdir(&self, parent: u64, name: &OsStr, mode: u32, caller: Caller) -> Result<Entry> {
        let location = self.locate_child(parent, name)?;
        mkdirat(location.dir(self.root()), location.relative(), Mode::from_raw_mode(mode))?;
        self.give_to_caller(parent, &location, caller)?;
        self.enter(parent, name, &location)
    }

    pub(crate) fn symlink(&self, parent: u64, name: &OsStr, target: &Path, caller: Caller) -> Result<Entry> {
        let location = self.locate_child(parent, name)?;
        symlinkat(target, location.dir(self.root()), location.relative())?;
        self.give_to_caller(parent, &location, caller)?;
        self.enter(parent, name, &location)
    }

    /// A new hard link `name` in `parent` to node `id`.
    pub(crate) fn link(&self, id: u64, parent: u64, name: &OsStr) -> Result<Entry> {
        let existing = self.locate(id)?;
        let location = self.locate_child(parent, name)?;
        linkat(
            existing.dir(self.root()),
            existing.relative(),
            location.dir(self.root()),
            location.relative(),
            AtFlags::empty(),
        )?;
        self.enter(parent, name, &location)
    }
}
