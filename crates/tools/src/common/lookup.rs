//! Looking up one name in a directory fd, without following a symlink.

use canopy_engine::{Errno, Metadata, Timestamp};
use rustix::fd::AsFd;
use rustix::fs::{AtFlags, Stat, statat};
use std::ffi::CStr;

/// The metadata of `name` in `dir` (a symlink's own), or `None` when there is no such entry.
pub fn lookup(dir: impl AsFd, name: &CStr) -> Result<Option<Metadata>, Errno> {
    match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(metadata(&st))),
        Err(Errno::NOENT) => Ok(None),
        Err(errno) => Err(errno),
    }
}

fn metadata(st: &Stat) -> Metadata {
    let time = |sec: i64, nsec: i64| Timestamp { sec, nsec: nsec as u32 };
    Metadata {
        mode: st.st_mode,
        nlink: st.st_nlink,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u64,
        blocks: st.st_blocks as u64,
        blksize: st.st_blksize as u32,
        ino: st.st_ino,
        dev: st.st_dev,
        rdev: st.st_rdev,
        atime: time(st.st_atime, st.st_atime_nsec as i64),
        mtime: time(st.st_mtime, st.st_mtime_nsec as i64),
        ctime: time(st.st_ctime, st.st_ctime_nsec as i64),
    }
}
