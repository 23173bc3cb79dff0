//! Where a source file is, in a form the `*at` system calls take: a directory fd and a relative path.
//!
//! Short paths are relative to the source root. Paths longer than [`MAX_RELATIVE_PATH`] are opened a
//! piece at a time, so trees deeper than PATH_MAX (4096 bytes) mirror correctly.

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{Mode, OFlags, openat};
use rustix::io::{Errno, Result};

/// Longest relative path handed to one system call; well below PATH_MAX.
const MAX_RELATIVE_PATH: usize = 2048;

pub(crate) struct Location {
    /// The directory `relative` starts from; `None` is the source root.
    base: Option<OwnedFd>,
    relative: CString,
}

impl Location {
    /// Locates the path made of `components` below `root` (the root itself when empty).
    pub(crate) fn resolve<S: AsRef<OsStr>>(root: BorrowedFd<'_>, components: &[S]) -> Result<Self> {
        let mut base: Option<OwnedFd> = None;
        let mut rest = components;
        loop {
            let fitting = components_fitting(rest);
            if fitting == rest.len() {
                return Ok(Location { base, relative: join(rest)? });
            }
            let from = base.as_ref().map_or(root, |fd| fd.as_fd());
            let prefix = join(&rest[..fitting])?;
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            base = Some(openat(from, prefix.as_c_str(), flags, Mode::empty())?);
            rest = &rest[fitting..];
        }
    }

    /// The directory fd the relative path starts from.
    pub(crate) fn dir<'a>(&'a self, root: BorrowedFd<'a>) -> BorrowedFd<'a> {
        self.base.as_ref().map_or(root, |fd| fd.as_fd())
    }

    pub(crate) fn relative(&self) -> &CStr {
        &self.relative
    }
}

/// How many leading components fit in one relative path (at least one, so progress is certain).
fn components_fitting<S: AsRef<OsStr>>(components: &[S]) -> usize {
    let mut length = 0;
    for (count, component) in components.iter().enumerate() {
        length += component.as_ref().len() + usize::from(count > 0);
        if count > 0 && length > MAX_RELATIVE_PATH {
            return count;
        }
    }
    components.len()
}

fn join<S: AsRef<OsStr>>(components: &[S]) -> Result<CString> {
    if components.is_empty() {
        return Ok(c".".to_owned());
    }
    let mut bytes = Vec::new();
    for (index, component) in components.iter().enumerate() {
        if index > 0 {
            bytes.push(b'/');
        }
        bytes.extend_from_slice(component.as_ref().as_bytes());
    }
    CString::new(bytes).map_err(|_| Errno::INVAL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{AtFlags, mkdirat, statat};

    #[test]
    fn joins_short_paths_relative_to_the_root() {
        let root = tempfile::tempdir().unwrap();
        let fd = rustix::fs::open(root.path(), OFlags::PATH, Mode::empty()).unwrap();
        let location = Location::resolve(fd.as_fd(), &["a", "b"]).unwrap();
        assert!(location.base.is_none());
        assert_eq!(location.relative(), c"a/b");
        assert_eq!(Location::resolve(fd.as_fd(), &[] as &[&str]).unwrap().relative(), c".");
    }

    #[test]
    fn reaches_paths_longer_than_path_max() {
        let root = tempfile::tempdir().unwrap();
        let name = "d".repeat(200);
        let mut dir = rustix::fs::open(root.path(), OFlags::DIRECTORY, Mode::empty()).unwrap();
        for _ in 0..30 {
            mkdirat(&dir, name.as_str(), Mode::from_bits_truncate(0o755)).unwrap();
            dir = openat(&dir, name.as_str(), OFlags::DIRECTORY, Mode::empty()).unwrap();
        }
        let components = vec![name.as_str(); 30];
        assert!(components.len() * 201 > 4096);
        let fd = rustix::fs::open(root.path(), OFlags::PATH, Mode::empty()).unwrap();
        let location = Location::resolve(fd.as_fd(), &components).unwrap();
        assert!(location.relative().to_bytes().len() <= MAX_RELATIVE_PATH);
        let deep = statat(location.dir(fd.as_fd()), location.relative(), AtFlags::SYMLINK_NOFOLLOW).unwrap();
        let direct = rustix::fs::fstat(&dir).unwrap();
        assert_eq!((deep.st_dev, deep.st_ino), (direct.st_dev, direct.st_ino));
    }

    #[test]
    fn names_with_nul_bytes_are_invalid() {
        assert_eq!(join(&["a\0b"]).err(), Some(Errno::INVAL));
    }
}
