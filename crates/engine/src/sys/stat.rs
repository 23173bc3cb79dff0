use super::open::{PATH_MAX, open_path, to_cstring};
use crate::meta::Metadata;
use canopy_util::path::split_parent;
use rustix::fd::AsFd;
use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
use rustix::io::Errno;
use std::ffi::CStr;

/// The fields every tool may read; on local file systems asking for fewer saves nothing.
const MASK: StatxFlags = StatxFlags::BASIC_STATS;

/// `statx` of `name` inside directory `dir`. With `follow`, a dangling symlink falls back to the link
/// itself (what find -L reports for broken links); a looping one is an error, as in GNU find.
pub fn stat_at<Fd: AsFd>(dir: Fd, name: &CStr, follow: bool) -> Result<Metadata, Errno> {
    super::timed_stat(|| stat_at_untimed(dir, name, follow))
}

fn stat_at_untimed<Fd: AsFd>(dir: Fd, name: &CStr, follow: bool) -> Result<Metadata, Errno> {
    let nofollow = AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT;
    if follow {
        match statx(&dir, name, AtFlags::NO_AUTOMOUNT, MASK) {
            Ok(s) => return Ok(Metadata::from_statx(&s)),
            Err(Errno::NOENT | Errno::NOTDIR) => {}

            Err(e) => return Err(e),
        }
    }
    statx(&dir, name, nofollow, MASK).map(|s| Metadata::from_statx(&s))
}

/// `statx` of a path of any length (roots given on the command line).
pub fn stat_path(path: &[u8], follow: bool) -> Result<Metadata, Errno> {
    if path.is_empty() {
        return Err(Errno::NOENT);
    }
    if path.len() < PATH_MAX {
        return stat_at(CWD, &to_cstring(path)?, follow);
    }
    let (parent, name) = split_parent(path);
    let dir = open_path(parent, true)?;
    stat_at(&dir, &to_cstring(name)?, follow)
}
