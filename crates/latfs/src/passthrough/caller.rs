//! Who asked: files created through the mount belong to the calling user, as on a real file system.

use rustix::fs::{AtFlags, Gid, Uid, chownat};
use rustix::io::Result;

use crate::location::Location;

/// The user and group a request came from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Caller {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

impl super::Passthrough {
    /// Gives a file just created in `parent` to the caller when a root server serves someone else
    /// (`--allow-other`). In a set-group-ID directory the file keeps the inherited group. A server that
    /// is not root serves only its own user (or cannot change owners anyway).
    pub(super) fn give_to_caller(&self, parent: u64, location: &Location, caller: Caller) -> Result<()> {
        if !rustix::process::geteuid().is_root() {
            return Ok(());
        }
        let uid = (caller.uid != rustix::process::geteuid().as_raw()).then(|| Uid::from_raw(caller.uid));
        let mut gid = (caller.gid != rustix::process::getegid().as_raw()).then(|| Gid::from_raw(caller.gid));
        if gid.is_some() && self.is_set_group_id(parent)? {
            gid = None;
        }
        if uid.is_none() && gid.is_none() {
            return Ok(());
        }
        chownat(location.dir(self.root()), location.relative(), uid, gid, AtFlags::SYMLINK_NOFOLLOW)
    }

    fn is_set_group_id(&self, directory: u64) -> Result<bool> {
        let location = self.locate(directory)?;
        Ok(self.stat_at(&location)?.st_mode & libc::S_ISGID != 0)
    }
}
