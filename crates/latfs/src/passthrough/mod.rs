//! The passthrough itself: every request becomes the same operation on the source tree, done with
//! `*at` system calls relative to the source root. Nothing here knows about latency or FUSE replies;
//! results are plain `stat`s, bytes and handle numbers.

mod caller;
mod create;
mod dirs;
mod files;
mod lookup;
mod modify;
mod open_files;

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags, Stat, fstat, statat};
use rustix::io::Result;

pub(crate) use caller::Caller;
pub(crate) use dirs::DirHandle;
pub(crate) use modify::AttrChanges;

use self::open_files::OpenFiles;
use crate::inodes::Inodes;
use crate::location::Location;
use canopy_fusekit::HandleTable;

/// A file the kernel now knows: its node id and its attributes.
pub(crate) struct Entry {
    pub(crate) id: u64,
    pub(crate) stat: Stat,
}

pub(crate) struct Passthrough {
    root: OwnedFd,
    pub(crate) inodes: Inodes,
    files: OpenFiles,
    dirs: HandleTable<DirHandle>,
}

impl Passthrough {
    /// Opens the source directory; its fd stays valid even if something is later mounted over it.
    pub(crate) fn new(source: &Path) -> std::io::Result<Self> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let root = rustix::fs::open(source, flags, Mode::empty())?;
        let stat = fstat(&root)?;
        Ok(Passthrough {
            inodes: Inodes::new(stat.st_dev, stat.st_ino),
            root,
            files: OpenFiles::default(),
            dirs: HandleTable::default(),
        })
    }

    fn root(&self) -> BorrowedFd<'_> {
        self.root.as_fd()
    }

    /// Where node `id` is in the source.
    fn locate(&self, id: u64) -> Result<Location> {
        let components = self.inodes.path(id)?;
        Location::resolve(self.root(), &components)
    }

    /// Where `name` inside directory node `parent` is in the source.
    fn locate_child(&self, parent: u64, name: &OsStr) -> Result<Location> {
        let mut components = self.inodes.path(parent)?;
        components.push(name.to_owned());
        Location::resolve(self.root(), &components)
    }

    fn stat_at(&self, location: &Location) -> Result<Stat> {
        statat(location.dir(self.root()), location.relative(), AtFlags::SYMLINK_NOFOLLOW)
    }

    /// Stats `name` in `parent` and records the kernel's new reference to it.
    fn enter(&self, parent: u64, name: &OsStr, location: &Location) -> Result<Entry> {
        let stat = self.stat_at(location)?;
        Ok(self.record(parent, name, stat))
    }

    /// Records the kernel's new reference to the file `stat` describes, found as `name` in `parent`.
    fn record(&self, parent: u64, name: &OsStr, stat: Stat) -> Entry {
        let id = self.inodes.id_of(stat.st_dev, stat.st_ino);
        self.inodes.remember(id, parent, name);
        Entry { id, stat }
    }

    /// The node id `name` in `parent` has now, if it exists (for unlink and rename bookkeeping).
    fn existing_id(&self, parent: u64, name: &OsStr) -> Option<u64> {
        let location = self.locate_child(parent, name).ok()?;
        let stat = self.stat_at(&location).ok()?;
        Some(self.inodes.id_of(stat.st_dev, stat.st_ino))
    }
}
