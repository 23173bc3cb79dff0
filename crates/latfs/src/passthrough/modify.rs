//! Requests that change existing names or attributes: unlink, rmdir, rename, setattr.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;

use fuser::TimeOrNow;
use rustix::fs::{
    AtFlags, Gid, Mode, OFlags, RenameFlags, Stat, Timespec, Timestamps, UTIME_NOW, UTIME_OMIT, Uid, chmodat,
    chownat, fchmod, fchown, fstat, ftruncate, futimens, openat, renameat_with, unlinkat, utimensat,
};
use rustix::io::Result;

use super::Passthrough;
use crate::attr::requested_timespec;

/// What a setattr request changes; `None` leaves an attribute alone.
#[derive(Default)]
pub(crate) struct AttrChanges {
    pub(crate) mode: Option<u32>,
    pub(crate) uid: Option<u32>,
    pub(crate) gid: Option<u32>,
    pub(crate) size: Option<u64>,
    pub(crate) atime: Option<TimeOrNow>,
    pub(crate) mtime: Option<TimeOrNow>,
}

impl Passthrough {
    pub(crate) fn unlink(&self, parent: u64, name: &OsStr) -> Result<()> {
        self.remove(parent, name, AtFlags::empty())
    }

    pub(crate) fn rmdir(&self, parent: u64, name: &OsStr) -> Result<()> {
        self.remove(parent, name, AtFlags::REMOVEDIR)
    }

    fn remove(&self, parent: u64, name: &OsStr, flags: AtFlags) -> Result<()> {
        let location = self.locate_child(parent, name)?;
        let removed = self.existing_id(parent, name);
        unlinkat(location.dir(self.root()), location.relative(), flags)?;
        if let Some(id) = removed {
            self.inodes.unlinked(id, parent, name);
        }
        Ok(())
    }

    /// `rename`, `RENAME_NOREPLACE` and `RENAME_EXCHANGE` (`flags` as the kernel sends them).
    pub(crate) fn rename(&self, from: (u64, &OsStr), to: (u64, &OsStr), flags: u32) -> Result<()> {
        let source = self.locate_child(from.0, from.1)?;
        let target = self.locate_child(to.0, to.1)?;
        let moving = self.existing_id(from.0, from.1);
        let replaced = self.existing_id(to.0, to.1);
        let flags = RenameFlags::from_bits_retain(flags);
        renameat_with(
            source.dir(self.root()),
            source.relative(),
            target.dir(self.root()),
            target.relative(),
            flags,
        )?;
        if let Some(replaced) = replaced.filter(|&id| Some(id) != moving) {
            if flags.contains(RenameFlags::EXCHANGE) {
                self.inodes.renamed(replaced, to, from);
            } else {
                self.inodes.unlinked(replaced, to.0, to.1);
            }
        }
        if let Some(moving) = moving {
            self.inodes.renamed(moving, from, to);
        }
        Ok(())
    }

    /// Applies `changes` to node `id` (through a file open on it when there is one, so `fchmod` of an
    /// unlinked open file works) and returns the attributes afterwards.
    pub(crate) fn setattr(&self, id: u64, open_file: Option<u64>, changes: &AttrChanges) -> Result<Stat> {
        match self.files.of(id, open_file) {
            Some(file) => {
                change_open_file(&file.fd, changes)?;
                fstat(&file.fd)
            }
            None => {
                let location = self.locate(id)?;
                let (dir, path) = (location.dir(self.root()), location.relative());
                if let Some(mode) = changes.mode {
                    chmodat(dir, path, Mode::from_raw_mode(mode), AtFlags::empty())?;
                }
                if changes.uid.is_some() || changes.gid.is_some() {
                    chownat(dir, path, uid(changes), gid(changes), AtFlags::SYMLINK_NOFOLLOW)?;
                }
                if let Some(size) = changes.size {
                    let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    ftruncate(openat(dir, path, flags, Mode::empty())?, size)?;
                }
                if let Some(times) = timestamps(changes) {
                    utimensat(dir, path, &times, AtFlags::SYMLINK_NOFOLLOW)?;
                }
                self.stat_at(&location)
            }
        }
    }
}

fn change_open_file(fd: &OwnedFd, changes: &AttrChanges) -> Result<()> {
    if let Some(mode) = changes.mode {
        fchmod(fd, Mode::from_raw_mode(mode))?;
    }
    if changes.uid.is_some() || changes.gid.is_some() {
        fchown(fd, uid(changes), gid(changes))?;
    }
    if let Some(size) = changes.size {
        ftruncate(fd, size)?;
    }
    if let Some(times) = timestamps(changes) {
        futimens(fd, &times)?;
    }
    Ok(())
}

fn uid(changes: &AttrChanges) -> Option<Uid> {
    changes.uid.map(Uid::from_raw)
}

fn gid(changes: &AttrChanges) -> Option<Gid> {
    changes.gid.map(Gid::from_raw)
}

/// The `utimensat` argument for the requested times; `None` when neither time changes.
fn timestamps(changes: &AttrChanges) -> Option<Timestamps> {
    if changes.atime.is_none() && changes.mtime.is_none() {
        return None;
    }
    let spec = |time: Option<TimeOrNow>| match time {
        None => Timespec { tv_sec: 0, tv_nsec: UTIME_OMIT },
        Some(TimeOrNow::Now) => Timespec { tv_sec: 0, tv_nsec: UTIME_NOW },
        Some(TimeOrNow::SpecificTime(time)) => requested_timespec(time),
    };
    Some(Timestamps { last_access: spec(changes.atime), last_modification: spec(changes.mtime) })
}
