//! Unmounting from outside the server (`umount` subcommands, tests, benchmarks): works on healthy,
//! busy and stale mounts alike. A stale mount is one whose server died ("Transport endpoint is not
//! connected"): every access fails, but `fusermount3 -u` still removes it.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How an unmount went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unmounted {
    /// Gone at once.
    Now,
    /// Busy (a process has a file open or its working directory there): detached from the
    /// namespace now, released by the kernel when its last user leaves.
    Lazily,
}

/// The mountpoint as the kernel lists it: absolute, with symlinks in its parent resolved. The last
/// component is not resolved, so a stale mount (where every `stat` fails) is still found.
pub fn mount_path(path: &Path) -> io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    match (absolute.parent(), absolute.file_name()) {
        (Some(parent), Some(name)) => Ok(parent.canonicalize()?.join(name)),
        _ => Ok(absolute),
    }
}

/// Whether something is mounted exactly at `path`.
pub fn is_mounted(path: &Path) -> io::Result<bool> {
    let wanted = mount_path(path)?;
    let table = std::fs::read_to_string("/proc/self/mountinfo")?;
    Ok(table.lines().any(|line| line.split(' ').nth(4).is_some_and(|field| unescape(field) == wanted)))
}

/// Refuses a mountpoint that is already mounted or not empty: mounting there would hide what is
/// there (or stack a second mount), which fusermount3 no longer refuses by itself.
pub fn check_mountpoint(path: &Path) -> Result<(), String> {
    match is_mounted(path) {
        Ok(true) => return Err(format!("{} is already a mountpoint", path.display())),
        Ok(false) => {}
        Err(error) => return Err(format!("cannot check {}: {error}", path.display())),
    }
    let mut entries = std::fs::read_dir(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if entries.next().is_some() {
        return Err(format!("{} is not empty", path.display()));
    }
    Ok(())
}

/// Mount table fields escape space, tab, newline and backslash as octal (`\040`).
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// Unmounts the FUSE mount at `path` with `fusermount3` (so unprivileged mounts work too); when it
/// is busy, detaches it lazily. Fails when nothing is mounted there.
pub fn unmount(path: &Path) -> io::Result<Unmounted> {
    if !is_mounted(path)? {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} is not a mountpoint", path.display()),
        ));
    }
    let first = fusermount(path, false)?;
    if first.status.success() {
        return Ok(Unmounted::Now);
    }
    let lazy = fusermount(path, true)?;
    if lazy.status.success() {
        return Ok(Unmounted::Lazily);
    }
    Err(io::Error::other(format!(
        "fusermount3 -u {}: {}",
        path.display(),
        String::from_utf8_lossy(&lazy.stderr).trim()
    )))
}

fn fusermount(path: &Path, lazy: bool) -> io::Result<std::process::Output> {
    let mut command = Command::new("fusermount3");
    command.arg("-u");
    if lazy {
        command.arg("-z");
    }
    command.arg("--").arg(path).output().map_err(|error| {
        io::Error::new(error.kind(), format!("cannot run fusermount3 (install the fuse3 package): {error}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_table_escapes_are_decoded() {
        assert_eq!(unescape(r"/mnt/with\040space\011tab\134"), PathBuf::from("/mnt/with space\ttab\\"));
        assert_eq!(unescape(r"/plain"), PathBuf::from("/plain"));
        assert_eq!(unescape(r"/odd\09"), PathBuf::from(r"/odd\09"), "not an escape: kept as is");
    }

    #[test]
    fn only_an_empty_directory_that_is_no_mountpoint_is_a_fit_mountpoint() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(check_mountpoint(dir.path()), Ok(()));
        std::fs::write(dir.path().join("x"), b"").unwrap();
        let refused = check_mountpoint(dir.path()).unwrap_err();
        assert!(refused.ends_with("is not empty"), "{refused}");
        let refused = check_mountpoint(Path::new("/")).unwrap_err();
        assert!(refused.ends_with("is already a mountpoint"), "{refused}");
    }

    #[test]
    fn directories_are_not_mountpoints_and_cannot_be_unmounted() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_mounted(dir.path()).unwrap());
        assert!(is_mounted(Path::new("/")).unwrap());
        let error = unmount(dir.path()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert!(error.to_string().contains("not a mountpoint"), "{error}");
    }
}
