//! Temporary names: every file, symlink and special file is created under a temporary name in its
//! destination directory and renamed over its final name only once complete, so no reader — and no
//! rerun after a crash — ever sees a half-made entry under a final name.
//!
//! The temporary name is derived from the final one (`canopy_util::temp_name`): a rerun after an
//! interruption finds the leftover of the same file under the same name and replaces it. Source
//! entries with such names are canopy's own leftovers and are not copied.

use canopy_engine::polite;
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, openat, renameat, unlinkat};
use rustix::io::Errno;
use std::ffi::CStr;

/// Runs `create` on `temp`; if a leftover of an interrupted run is in the way, removes it and tries
/// once more.
pub fn create_fresh<T>(
    dir: impl AsFd,
    temp: &CStr,
    mut create: impl FnMut(&CStr) -> Result<T, Errno>,
) -> Result<T, Errno> {
    match create(temp) {
        Err(Errno::EXIST) => {
            unlinkat(&dir, temp, AtFlags::empty())?;
            create(temp)
        }
        other => other,
    }
}

/// Creates a regular file under `temp` for writing (and reading back, for `--verify`), never
/// through a symlink.
pub fn create_file(dir: impl AsFd, temp: &CStr) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    create_fresh(&dir, temp, |name| polite(|| openat(&dir, name, flags, Mode::from_raw_mode(0o600))))
}

/// Moves the finished `temp` over `name` (atomically replacing any non-directory there).
pub fn rename_into_place(dir: impl AsFd, temp: &CStr, name: &CStr) -> Result<(), Errno> {
    polite(|| renameat(&dir, temp, &dir, name))
}

/// Removes a temporary that will not be renamed (its copy failed).
pub fn discard(dir: impl AsFd, temp: &CStr) {
    // Best effort: the failure that led here is what gets reported.
    let _ = unlinkat(dir, temp, AtFlags::empty());
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_util::temp_name::temp_name;

    #[test]
    fn a_leftover_is_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir =
            openat(rustix::fs::CWD, tmp.path(), OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        let temp = temp_name(c"f");
        std::fs::write(tmp.path().join(std::str::from_utf8(temp.to_bytes()).unwrap()), b"stale").unwrap();
        let fd = create_file(&dir, &temp).unwrap();
        rustix::io::write(&fd, b"new").unwrap();
        rename_into_place(&dir, &temp, c"f").unwrap();
        assert_eq!(std::fs::read(tmp.path().join("f")).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
