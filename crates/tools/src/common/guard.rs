//! Directories a destructive tool must never remove or write into: `/`, the current directory and
//! its ancestors; and the "copy into itself" check. Identity is (device, inode), so no spelling of a
//! path (`..`, symlinks, bind mounts of the same directory) gets around it.

use canopy_util::path::last_component;
use rustix::fd::OwnedFd;
use rustix::fs::{CWD, Mode, OFlags, fstat, openat};
use rustix::io::Errno;

/// `/`, the current directory and every directory above it.
pub struct Protected {
    ids: Vec<(u64, u64)>,
    root: (u64, u64),
}

impl Protected {
    pub fn current() -> Result<Self, Errno> {
        let mut ids = ancestors_of(&open_dir(c".")?)?;
        let root = file_id(&open_dir(c"/")?)?;
        if !ids.contains(&root) {
            ids.push(root);
        }
        Ok(Protected { ids, root })
    }

    pub fn contains(&self, id: (u64, u64)) -> bool {
        self.ids.contains(&id)
    }

    /// Whether `id` is `/` itself.
    pub fn is_root(&self, id: (u64, u64)) -> bool {
        self.root == id
    }
}

/// Whether the directory `inner` is `outer` or lies below it (following `..` from `inner`).
pub fn is_within(inner: &OwnedFd, outer: (u64, u64)) -> Result<bool, Errno> {
    Ok(ancestors_of(inner)?.contains(&outer))
}

/// (device, inode) of a directory and of each directory above it, up to `/` of its mount namespace.
pub fn ancestors_of(start: &OwnedFd) -> Result<Vec<(u64, u64)>, Errno> {
    let mut ids = vec![file_id(start)?];
    let mut current: Option<OwnedFd> = None;
    loop {
        let dir = current.as_ref().unwrap_or(start);
        let parent = openat(dir, c"..", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        let id = file_id(&parent)?;
        if ids.last() == Some(&id) {
            return Ok(ids);
        }
        ids.push(id);
        current = Some(parent);
    }
}

fn open_dir(path: &std::ffi::CStr) -> Result<OwnedFd, Errno> {
    openat(CWD, path, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
}

/// `a/.`, `..`, `x/../`: GNU rm refuses to remove these, and removing them would not mean what it
/// says.
pub fn last_component_is_dot(path: &[u8]) -> bool {
    let last = last_component(path);
    last == b"." || last == b".."
}

pub fn file_id(fd: &OwnedFd) -> Result<(u64, u64), Errno> {
    let st = fstat(fd)?;
    Ok((st.st_dev, st.st_ino))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_current_directory_are_protected() {
        let protected = Protected::current().unwrap();
        assert!(protected.contains(file_id(&open_dir(c"/").unwrap()).unwrap()));
        assert!(protected.contains(file_id(&open_dir(c".").unwrap()).unwrap()));
        let tmp = tempfile::tempdir().unwrap();
        let tmp_fd = openat(CWD, tmp.path(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        assert!(!protected.contains(file_id(&tmp_fd).unwrap()), "a fresh temp dir is not an ancestor of cwd");
    }

    #[test]
    fn dot_components() {
        for p in [&b"."[..], b"..", b"a/.", b"a/..", b"a/./", b"../"] {
            assert!(last_component_is_dot(p), "{}", String::from_utf8_lossy(p));
        }
        for p in [&b"a"[..], b".a", b"a/..b", b"/", b"./a"] {
            assert!(!last_component_is_dot(p), "{}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn within_follows_dotdot() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b/c")).unwrap();
        let open =
            |p: &str| openat(CWD, tmp.path().join(p), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty());
        let a = file_id(&open("a").unwrap()).unwrap();
        assert!(is_within(&open("a/b/c").unwrap(), a).unwrap());
        assert!(is_within(&open("a").unwrap(), a).unwrap());
        std::fs::create_dir(tmp.path().join("x")).unwrap();
        assert!(!is_within(&open("x").unwrap(), a).unwrap());
    }
}
