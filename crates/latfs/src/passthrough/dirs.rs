//! Directory listings: opendir reads the whole source directory once, readdir pages through that
//! snapshot by offset (so listing stays consistent while entries are created or removed).

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use fuser::FileType;
use rustix::fs::{AtFlags, Dir, Mode, OFlags, Stat, fsync, openat, statat};
use rustix::io::{Errno, Result};

use super::{Entry, Passthrough};
use crate::attr::{entry_type, file_type};

/// One entry of a listing.
pub(crate) struct Listed {
    pub(crate) name: OsString,
    pub(crate) ino: u64,
    pub(crate) kind: FileType,
}

impl Listed {
    /// `.` and `..` are listed but never looked up: the kernel resolves them itself.
    pub(crate) fn is_dot_or_dot_dot(&self) -> bool {
        matches!(self.name.as_bytes(), b"." | b"..")
    }
}

pub(crate) struct DirHandle {
    /// Node id of the directory.
    pub(crate) id: u64,
    fd: OwnedFd,
    pub(crate) entries: Vec<Listed>,
}

impl Passthrough {
    pub(crate) fn opendir(&self, id: u64) -> Result<u64> {
        let location = self.locate(id)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(location.dir(self.root()), location.relative(), flags, Mode::empty())?;
        let entries = list(&fd)?;
        Ok(self.dirs.insert(DirHandle { id, fd, entries }))
    }

    pub(crate) fn dir(&self, handle: u64) -> Result<Arc<DirHandle>> {
        self.dirs.get(handle)
    }

    pub(crate) fn releasedir(&self, handle: u64) -> Result<()> {
        self.dirs.remove(handle).map(drop)
    }

    pub(crate) fn fsyncdir(&self, handle: u64) -> Result<()> {
        fsync(&self.dirs.get(handle)?.fd)
    }

    /// Attributes of a listed entry for readdirplus. The kernel's reference is recorded separately, by
    /// [`Passthrough::remember_listed`], once the entry really went into the reply.
    pub(crate) fn stat_listed(&self, dir: &DirHandle, entry: &Listed) -> Result<Entry> {
        let stat: Stat = statat(&dir.fd, entry.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)?;
        let id = self.inodes.id_of(stat.st_dev, stat.st_ino);
        Ok(Entry { id, stat })
    }

    pub(crate) fn remember_listed(&self, dir: &DirHandle, id: u64, name: &OsStr) {
        self.inodes.remember(id, dir.id, name);
    }
}

/// Every entry of the open directory `fd`, `.` and `..` included, as getdents returns them.
fn list(fd: &OwnedFd) -> Result<Vec<Listed>> {
    let mut dir = Dir::read_from(fd)?;
    let mut entries = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        let kind = match entry_type(entry.file_type()) {
            Some(kind) => kind,
            None => match statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => file_type(stat.st_mode),
                Err(Errno::NOENT) => continue, // removed since getdents saw it
                Err(error) => return Err(error),
            },
        };
        entries.push(Listed { name: name.to_owned(), ino: entry.ino(), kind });
    }
    Ok(entries)
}
