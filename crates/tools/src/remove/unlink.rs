//! The removal system calls: relative to the holding directory's fd, or for a starting point, to its
//! parent opened by path.

use canopy_engine::Errno;
use canopy_engine::sys::{open_path, split_parent};
use rustix::fd::AsFd;
use rustix::fs::{AtFlags, unlinkat};
use std::ffi::{CStr, CString};

fn flags(is_dir: bool) -> AtFlags {
    if is_dir { AtFlags::REMOVEDIR } else { AtFlags::empty() }
}

/// Removes `name` from the directory open as `dir`; never follows a symlink.
pub fn remove_at(dir: impl AsFd, name: &CStr, is_dir: bool) -> Result<(), Errno> {
    unlinkat(dir, name, flags(is_dir))
}

/// Removes a starting point given by path (of any length).
pub fn remove_path(path: &[u8], is_dir: bool) -> Result<(), Errno> {
    let (parent, name) = split_parent(path);
    let name = CString::new(name).map_err(|_| Errno::INVAL)?;
    remove_at(open_path(parent, true)?, &name, is_dir)
}
