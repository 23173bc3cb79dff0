//! The removal system calls: relative to the holding directory's fd, or for a starting point, to its
//! parent opened by path; and the emptiness check of `rm -d` and `rm -i`.

use canopy_engine::sys::{open_dir_at, open_path};
use canopy_engine::{Errno, polite};
use canopy_util::path::split_parent;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{AtFlags, Dir, unlinkat};
use std::ffi::{CStr, CString};

fn flags(is_dir: bool) -> AtFlags {
    if is_dir { AtFlags::REMOVEDIR } else { AtFlags::empty() }
}

/// Removes `name` from the directory open as `dir`; never follows a symlink.
pub fn remove_at(dir: impl AsFd, name: &CStr, is_dir: bool) -> Result<(), Errno> {
    polite(|| unlinkat(dir, name, flags(is_dir)))
}

/// Removes a starting point given by path (of any length).
pub fn remove_path(path: &[u8], is_dir: bool) -> Result<(), Errno> {
    let (parent, name) = split_parent(path);
    let name = CString::new(name).map_err(|_| Errno::INVAL)?;
    remove_at(open_path(parent, true)?, &name, is_dir)
}

/// Whether the directory `name` (in `dir`, or a path when `dir` is `None`) has no entries; never
/// follows a symlink.
pub fn is_empty_dir(dir: Option<BorrowedFd<'_>>, name: &CStr) -> Result<bool, Errno> {
    let fd = match dir {
        Some(dir) => open_dir_at(dir, name, false)?,
        None => open_path(name.to_bytes(), false)?,
    };
    for entry in Dir::read_from(&fd)? {
        let name = entry?.file_name().to_bytes().to_vec();
        if name != b"." && name != b".." {
            return Ok(false);
        }
    }
    Ok(true)
}
