use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{CWD, Mode, OFlags, openat};
use rustix::io::Errno;
use std::ffi::CStr;

/// Linux's limit on a path handed to one system call, terminating NUL included.
pub const PATH_MAX: usize = 4096;

fn dir_flags(follow: bool) -> OFlags {
    let base = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOCTTY;
    if follow { base } else { base | OFlags::NOFOLLOW }
}

/// Opens directory `name` inside the directory `dir`. Without `follow`, a symlink (even one swapped in
/// during the walk) is refused with `ELOOP`/`ENOTDIR` instead of being followed out of the tree.
pub fn open_dir_at<Fd: AsFd>(dir: Fd, name: &CStr, follow: bool) -> Result<OwnedFd, Errno> {
    super::timed_open(|| retry_on_fd_exhaustion(|| openat(&dir, name, dir_flags(follow), Mode::empty())))
}

/// Opens a directory by a path of any length: short paths in one call, longer ones (past `PATH_MAX`)
/// component-group by component-group, each `openat` relative to the previous fd.
/// Intermediate symlinks are followed as the kernel does; `follow` applies to the last component.
pub fn open_path(path: &[u8], follow: bool) -> Result<OwnedFd, Errno> {
    if path.is_empty() {
        return Err(Errno::NOENT);
    }
    if path.len() < PATH_MAX {
        return open_dir_at(CWD, &to_cstring(path)?, follow);
    }
    let mut fd: Option<OwnedFd> = None;
    let mut rest = path;
    while !rest.is_empty() {
        let (piece, tail) = take_piece(rest);
        let piece = to_cstring(piece)?;
        let last = tail.is_empty();
        let next = match &fd {
            None => open_dir_at(CWD, &piece, !last || follow)?,
            Some(f) => open_dir_at(f, &piece, !last || follow)?,
        };
        fd = Some(next);
        rest = tail;
    }
    fd.ok_or(Errno::NOENT)
}

/// Opens the directory `relative` (components separated by `/`) below the directory `root` (a path of
/// any length, its last component followed if `follow_root`), one component at a time — without
/// `follow`, with `O_NOFOLLOW`: a symlink anywhere below the root is refused, never followed out of
/// the tree.
pub fn open_beneath(root: &[u8], follow_root: bool, relative: &[u8], follow: bool) -> Result<OwnedFd, Errno> {
    let mut fd = open_path(root, follow_root)?;
    for component in relative.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
        fd = open_dir_at(&fd, &to_cstring(component)?, follow)?;
    }
    Ok(fd)
}

/// The longest prefix of `path` below `PATH_MAX` that ends at a component boundary.
fn take_piece(path: &[u8]) -> (&[u8], &[u8]) {
    if path.len() < PATH_MAX {
        return (path, &[]);
    }
    let window = &path[..PATH_MAX - 1];
    match window.iter().rposition(|&b| b == b'/') {
        // A leading "/" alone is a valid first piece.
        Some(0) => (&path[..1], &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        // One component longer than PATH_MAX cannot exist; let the kernel say so.
        None => (path, &[]),
    }
}

pub(crate) fn to_cstring(bytes: &[u8]) -> Result<std::ffi::CString, Errno> {
    std::ffi::CString::new(bytes).map_err(|_| Errno::INVAL)
}

/// Out of fds (`EMFILE`/`ENFILE`): close the least recently used cached directory fd and try again;
/// with none left to close, other threads are about to close theirs — back off briefly a few times
/// before reporting, so a walk never fails just because it was momentarily at the limit.
fn retry_on_fd_exhaustion<T>(mut op: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    let mut delay = std::time::Duration::from_micros(50);
    let mut waits = 0;
    loop {
        match op() {
            Err(Errno::MFILE | Errno::NFILE) if super::evict_one() => {}
            Err(Errno::MFILE | Errno::NFILE) if waits < 12 => {
                std::thread::sleep(delay);
                delay *= 2;
                waits += 1;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_stay_below_path_max() {
        let comp = vec![b'd'; 200];
        let mut path = Vec::new();
        for _ in 0..50 {
            path.extend_from_slice(&comp);
            path.push(b'/');
        }
        let mut rest = &path[..];
        let mut rebuilt = Vec::new();
        while !rest.is_empty() {
            let (piece, tail) = take_piece(rest);
            assert!(piece.len() < PATH_MAX);
            if !rebuilt.is_empty() {
                rebuilt.push(b'/');
            }
            rebuilt.extend_from_slice(piece);
            rest = tail;
        }
        assert!(rebuilt == path, "pieces joined with '/' give back the path");
    }
}
