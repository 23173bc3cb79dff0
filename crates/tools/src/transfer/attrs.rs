//! The attributes a copy carries over, like `cp -a`: owner and group (as far as permitted),
//! permission bits with setuid/setgid/sticky, extended attributes (POSIX ACLs are among them), and
//! access and modification times to the nanosecond. New entries get them by fd, in the order that
//! keeps each step from undoing an earlier one: owner (a chown clears setuid bits), xattrs, mode,
//! times. Existing entries whose data is already right are corrected by name, never following a
//! symlink.

use canopy_engine::{FileKind, Metadata, Timestamp};
use rustix::fd::{AsFd, AsRawFd, BorrowedFd};
use rustix::fs::{
    AtFlags, CWD, Mode, OFlags, Timespec, Timestamps, XattrFlags, chmodat, chownat, fchmod, fchown,
    fgetxattr, fgetxattr_query, flistxattr, flistxattr_query, fsetxattr, futimens, openat, utimensat,
};
use rustix::io::Errno;
use rustix::process::{Gid, Uid};
use std::ffi::CStr;

/// An attribute that could not be set: the verb for the message and the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrError {
    pub verb: &'static str,
    pub errno: Errno,
}

fn fail(verb: &'static str) -> impl Fn(Errno) -> AttrError {
    move |errno| AttrError { verb, errno }
}

/// Which owner and group copies may get.
pub struct OwnerPolicy {
    root: bool,
    groups: Vec<u32>,
}

impl OwnerPolicy {
    pub fn current() -> Self {
        let mut groups: Vec<u32> =
            rustix::process::getgroups().unwrap_or_default().into_iter().map(Gid::as_raw).collect();
        groups.push(rustix::process::getegid().as_raw());
        OwnerPolicy { root: rustix::process::geteuid().is_root(), groups }
    }

    /// The source's owner and group as far as this process may give them: root gives both; anyone
    /// else the group when they are a member of it (what `cp -a` and `rsync -a` do).
    fn wanted(&self, meta: &Metadata) -> (Option<Uid>, Option<Gid>) {
        let uid = self.root.then(|| Uid::from_raw(meta.uid));
        let gid = (self.root || self.groups.contains(&meta.gid)).then(|| Gid::from_raw(meta.gid));
        (uid, gid)
    }

    /// Whether `dest` has the owner and group a copy of `src` would get.
    pub fn matches(&self, src: &Metadata, dest: &Metadata) -> bool {
        let (uid, gid) = self.wanted(src);
        uid.is_none_or(|u| u.as_raw() == dest.uid) && gid.is_none_or(|g| g.as_raw() == dest.gid)
    }

    /// Only root must get the owner right; for others a refusal is what `cp -a` shrugs off too.
    fn tolerate(&self, errno: Errno) -> bool {
        !self.root && errno == Errno::PERM
    }
}

pub fn timestamps(meta: &Metadata) -> Timestamps {
    let spec = |t: Timestamp| Timespec { tv_sec: t.sec, tv_nsec: i64::from(t.nsec) as _ };
    Timestamps { last_access: spec(meta.atime), last_modification: spec(meta.mtime) }
}

/// Gives the open file or directory `fd` the attributes of `meta`, its xattrs copied from
/// `xattrs_from` when given.
pub fn apply(
    fd: BorrowedFd<'_>,
    xattrs_from: Option<BorrowedFd<'_>>,
    meta: &Metadata,
    policy: &OwnerPolicy,
) -> Result<(), AttrError> {
    let (uid, gid) = policy.wanted(meta);
    if uid.is_some() || gid.is_some() {
        match fchown(fd, uid, gid) {
            Err(errno) if !policy.tolerate(errno) => return Err(fail("set the owner of")(errno)),
            _ => {}
        }
    }
    if let Some(source) = xattrs_from {
        copy_xattrs(source, fd, policy).map_err(fail("copy the extended attributes to"))?;
    }
    fchmod(fd, Mode::from_raw_mode(meta.permissions())).map_err(fail("set the permissions of"))?;
    futimens(fd, &timestamps(meta)).map_err(fail("set the times of"))
}

/// Gives the entry `name` in `dir` the owner, mode and times of `meta`, by name and without
/// following it if it is a symlink.
pub fn apply_by_name(
    dir: impl AsFd,
    name: &CStr,
    meta: &Metadata,
    policy: &OwnerPolicy,
) -> Result<(), AttrError> {
    let (uid, gid) = policy.wanted(meta);
    if uid.is_some() || gid.is_some() {
        match chownat(&dir, name, uid, gid, AtFlags::SYMLINK_NOFOLLOW) {
            Err(errno) if !policy.tolerate(errno) => return Err(fail("set the owner of")(errno)),
            _ => {}
        }
    }
    if meta.kind() != FileKind::Symlink {
        chmod_nofollow(&dir, name, meta.permissions()).map_err(fail("set the permissions of"))?;
    }
    utimensat(&dir, name, &timestamps(meta), AtFlags::SYMLINK_NOFOLLOW).map_err(fail("set the times of"))
}

/// `chmod` that cannot be redirected through a symlink swapped in under `name`: the entry is opened
/// with `O_PATH | O_NOFOLLOW` and changed through its `/proc/self/fd` link, which names the inode
/// itself (Linux's `fchmodat` has no working `AT_SYMLINK_NOFOLLOW` before `fchmodat2`).
pub(super) fn chmod_nofollow(dir: impl AsFd, name: &CStr, mode: u32) -> Result<(), Errno> {
    let fd = openat(dir, name, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
    if rustix::fs::fstat(&fd)?.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Ok(());
    }
    let proc_path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    chmodat(CWD, proc_path.as_str(), Mode::from_raw_mode(mode), AtFlags::empty())
}

/// Copies every extended attribute of `from` to `to`. A file system without xattrs on either side
/// has none to copy; attributes an unprivileged user may not set (`trusted.*`) are skipped for them.
fn copy_xattrs(from: BorrowedFd<'_>, to: BorrowedFd<'_>, policy: &OwnerPolicy) -> Result<(), Errno> {
    let unsupported = |e: Errno| e == Errno::NOTSUP || e == Errno::OPNOTSUPP;
    let size = match flistxattr_query(from) {
        Ok(0) => return Ok(()),
        Ok(size) => size,
        Err(e) if unsupported(e) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut names = vec![0u8; size];
    let len = flistxattr(from, &mut names[..])?;
    let mut value = Vec::new();
    for name in names[..len].split_inclusive(|&b| b == 0) {
        let Ok(name) = CStr::from_bytes_with_nul(name) else { continue };
        value.resize(fgetxattr_query(from, name)?, 0);
        let len = fgetxattr(from, name, &mut value[..])?;
        match fsetxattr(to, name, &value[..len], XattrFlags::empty()) {
            Ok(()) => {}
            Err(e) if unsupported(e) => return Ok(()),
            Err(e) if policy.tolerate(e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn meta_of(path: &std::path::Path) -> Metadata {
        canopy_engine::sys::stat_path(path.as_os_str().as_encoded_bytes(), false).unwrap()
    }

    #[test]
    fn mode_times_and_xattrs_by_fd() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("src"), tmp.path().join("dst"));
        std::fs::write(&src, b"x").unwrap();
        std::fs::write(&dst, b"x").unwrap();
        std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o2751)).unwrap();
        let src_file = std::fs::File::open(&src).unwrap();
        let has_xattrs = fsetxattr(&src_file, c"user.canopy", b"v", XattrFlags::empty()).is_ok();
        let times = Timestamps {
            last_access: Timespec { tv_sec: 1_000_000_000, tv_nsec: 1 },
            last_modification: Timespec { tv_sec: 1_100_000_000, tv_nsec: 999_999_999 },
        };
        futimens(&src_file, &times).unwrap();
        let meta = meta_of(&src);
        let dst_file = std::fs::OpenOptions::new().write(true).open(&dst).unwrap();
        apply(dst_file.as_fd(), Some(src_file.as_fd()), &meta, &OwnerPolicy::current()).unwrap();
        let got = std::fs::metadata(&dst).unwrap();
        assert_eq!(got.mode() & 0o7777, 0o2751);
        assert_eq!((got.mtime(), got.mtime_nsec()), (1_100_000_000, 999_999_999));
        assert_eq!((got.atime(), got.atime_nsec()), (1_000_000_000, 1));
        if has_xattrs {
            let mut v = [0u8; 8];
            let n = fgetxattr(&dst_file, c"user.canopy", &mut v[..]).unwrap();
            assert_eq!(&v[..n], b"v");
        }
    }

    #[test]
    fn by_name_never_follows_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, b"x").unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&outside, tmp.path().join("link")).unwrap();
        std::fs::write(tmp.path().join("f"), b"x").unwrap();
        let mut meta = meta_of(&tmp.path().join("f"));
        meta.mode = (meta.mode & !0o7777) | 0o755;
        let dir = std::fs::File::open(tmp.path()).unwrap();
        apply_by_name(&dir, c"link", &meta, &OwnerPolicy::current()).unwrap();
        assert_eq!(std::fs::metadata(&outside).unwrap().mode() & 0o7777, 0o600, "the target is untouched");
        apply_by_name(&dir, c"f", &meta, &OwnerPolicy::current()).unwrap();
        assert_eq!(std::fs::metadata(tmp.path().join("f")).unwrap().mode() & 0o7777, 0o755);
    }
}
