//! The attributes a copy carries over, as far as [`Keep`] says: owner and group (as far as
//! permitted), permission bits with setuid/setgid/sticky, extended attributes and POSIX ACLs, and
//! access and modification times to the nanosecond. New entries get them by fd, in the order that
//! keeps each step from undoing an earlier one: owner (a chown clears setuid bits), xattrs, mode,
//! times. Existing entries whose data is already right are corrected by name, never following a
//! symlink.

use super::policy::Keep;
use canopy_engine::{FileKind, Metadata, Timestamp};
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use rustix::fs::{
    AtFlags, CWD, Mode, OFlags, Timespec, Timestamps, XattrFlags, chmodat, chownat, fchmod, fchown,
    fgetxattr, fgetxattr_query, flistxattr, flistxattr_query, fremovexattr, fsetxattr, futimens, getxattr,
    getxattr_query, listxattr, listxattr_query, openat, removexattr, setxattr, utimensat,
};
use rustix::io::Errno;
use rustix::process::{Gid, Uid};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString};

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

    /// Whether `dest`'s owner and group differ from those a copy of `src` would get.
    pub fn differs(&self, src: &Metadata, dest: &Metadata) -> (bool, bool) {
        let (uid, gid) = self.wanted(src);
        (uid.is_some_and(|u| u.as_raw() != dest.uid), gid.is_some_and(|g| g.as_raw() != dest.gid))
    }

    /// Only root must get the owner right; for others a refusal is what `cp -a` shrugs off too.
    fn tolerate(&self, errno: Errno) -> bool {
        !self.root && errno == Errno::PERM
    }
}

/// The attributes an entry is to get.
#[derive(Clone, Copy)]
pub struct Wanted<'a> {
    /// The source's metadata.
    pub meta: &'a Metadata,
    pub keep: Keep,
    /// Permission bits to set (the source's when kept); `None` leaves them.
    pub mode: Option<u32>,
    /// Owner and group to give when the source's are not kept (cp writing over a file keeps its
    /// owner); `None` leaves them.
    pub owner: Option<(u32, u32)>,
}

impl Wanted<'_> {
    fn chown_ids(&self, policy: &OwnerPolicy) -> (Option<Uid>, Option<Gid>) {
        let (uid, gid) = policy.wanted(self.meta);
        let inherited = self.owner.map(|(u, g)| (Uid::from_raw(u), Gid::from_raw(g)));
        let uid = if self.keep.owner { uid } else { inherited.map(|i| i.0) };
        let gid = if self.keep.group { gid } else { inherited.map(|i| i.1) };
        (uid, gid)
    }
}

pub fn timestamps(meta: &Metadata) -> Timestamps {
    let spec = |t: Timestamp| Timespec { tv_sec: t.sec, tv_nsec: i64::from(t.nsec) as _ };
    Timestamps { last_access: spec(meta.atime), last_modification: spec(meta.mtime) }
}

/// Gives the open file or directory `fd` its attributes, its xattrs copied from `xattrs_from`.
pub fn apply(
    fd: BorrowedFd<'_>,
    xattrs_from: Option<BorrowedFd<'_>>,
    wanted: &Wanted<'_>,
    policy: &OwnerPolicy,
) -> Result<(), AttrError> {
    let (uid, gid) = wanted.chown_ids(policy);
    if uid.is_some() || gid.is_some() {
        match fchown(fd, uid, gid) {
            Err(errno) if !policy.tolerate(errno) => return Err(fail("set the owner of")(errno)),
            _ => {}
        }
    }
    if let Some(source) = xattrs_from.filter(|_| wanted.keep.xattrs || wanted.keep.acls) {
        copy_xattrs(&Handle::Fd(source), &Handle::Fd(fd), wanted.keep, policy)
            .map_err(fail("copy the extended attributes to"))?;
    }
    if let Some(mode) = wanted.mode {
        fchmod(fd, Mode::from_raw_mode(mode)).map_err(fail("set the permissions of"))?;
    }
    if wanted.keep.times {
        futimens(fd, &timestamps(wanted.meta)).map_err(fail("set the times of"))?;
    }
    Ok(())
}

/// Gives the entry `name` in `dir` its attributes by name, without following it if it is a
/// symlink; its xattrs (not a symlink's) are copied from `xattrs_from` (an `O_PATH` fd will do).
pub fn apply_by_name(
    dir: impl AsFd,
    name: &CStr,
    xattrs_from: Option<BorrowedFd<'_>>,
    wanted: &Wanted<'_>,
    policy: &OwnerPolicy,
) -> Result<(), AttrError> {
    let (uid, gid) = wanted.chown_ids(policy);
    if uid.is_some() || gid.is_some() {
        match chownat(&dir, name, uid, gid, AtFlags::SYMLINK_NOFOLLOW) {
            Err(errno) if !policy.tolerate(errno) => return Err(fail("set the owner of")(errno)),
            _ => {}
        }
    }
    let symlink = wanted.meta.kind() == FileKind::Symlink;
    if let Some(source) = xattrs_from.filter(|_| !symlink && (wanted.keep.xattrs || wanted.keep.acls)) {
        let copy = |target: OwnedFd| {
            copy_xattrs(&Handle::of_path(source), &Handle::of_path(target.as_fd()), wanted.keep, policy)
        };
        open_path_fd(&dir, name).and_then(copy).map_err(fail("copy the extended attributes to"))?;
    }
    if let Some(mode) = wanted.mode.filter(|_| !symlink) {
        chmod_nofollow(&dir, name, mode).map_err(fail("set the permissions of"))?;
    }
    if wanted.keep.times {
        utimensat(&dir, name, &timestamps(wanted.meta), AtFlags::SYMLINK_NOFOLLOW)
            .map_err(fail("set the times of"))?;
    }
    Ok(())
}

/// `entry` opened to be named, never followed: for xattrs and `chmod` of any kind of entry.
pub fn open_path_fd(dir: impl AsFd, name: &CStr) -> Result<OwnedFd, Errno> {
    openat(dir, name, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
}

/// `chmod` that cannot be redirected through a symlink swapped in under `name`: the entry is opened
/// with `O_PATH | O_NOFOLLOW` and changed through its `/proc/self/fd` link, which names the inode
/// itself (Linux's `fchmodat` has no working `AT_SYMLINK_NOFOLLOW` before `fchmodat2`).
pub(super) fn chmod_nofollow(dir: impl AsFd, name: &CStr, mode: u32) -> Result<(), Errno> {
    let fd = open_path_fd(dir, name)?;
    if rustix::fs::fstat(&fd)?.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Ok(());
    }
    chmodat(CWD, proc_path(fd.as_fd()).as_c_str(), Mode::from_raw_mode(mode), AtFlags::empty())
}

fn proc_path(fd: BorrowedFd<'_>) -> CString {
    CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("no NUL in a formatted path")
}

/// Where extended attributes are read and written: an open file, or anything opened `O_PATH`
/// (a FIFO, a device, an entry named by its directory) through its `/proc/self/fd` link.
enum Handle<'a> {
    Fd(BorrowedFd<'a>),
    Path(CString),
}

impl<'a> Handle<'a> {
    fn of_path(fd: BorrowedFd<'_>) -> Handle<'a> {
        Handle::Path(proc_path(fd))
    }

    fn list(&self) -> Result<Vec<u8>, Errno> {
        loop {
            let size = match self {
                Handle::Fd(fd) => flistxattr_query(fd)?,
                Handle::Path(path) => listxattr_query(path.as_c_str())?,
            };
            let mut names = vec![0u8; size];
            let got = match self {
                Handle::Fd(fd) => flistxattr(fd, &mut names[..]),
                Handle::Path(path) => listxattr(path.as_c_str(), &mut names[..]),
            };
            match got {
                Ok(len) => {
                    names.truncate(len);
                    return Ok(names);
                }
                Err(Errno::RANGE) => continue, // grew meanwhile
                Err(errno) => return Err(errno),
            }
        }
    }

    fn get(&self, name: &CStr) -> Result<Vec<u8>, Errno> {
        loop {
            let size = match self {
                Handle::Fd(fd) => fgetxattr_query(fd, name)?,
                Handle::Path(path) => getxattr_query(path.as_c_str(), name)?,
            };
            let mut value = vec![0u8; size];
            let got = match self {
                Handle::Fd(fd) => fgetxattr(fd, name, &mut value[..]),
                Handle::Path(path) => getxattr(path.as_c_str(), name, &mut value[..]),
            };
            match got {
                Ok(len) => {
                    value.truncate(len);
                    return Ok(value);
                }
                Err(Errno::RANGE) => continue,
                Err(errno) => return Err(errno),
            }
        }
    }

    fn set(&self, name: &CStr, value: &[u8]) -> Result<(), Errno> {
        match self {
            Handle::Fd(fd) => fsetxattr(fd, name, value, XattrFlags::empty()),
            Handle::Path(path) => setxattr(path.as_c_str(), name, value, XattrFlags::empty()),
        }
    }

    fn remove(&self, name: &CStr) -> Result<(), Errno> {
        match self {
            Handle::Fd(fd) => fremovexattr(fd, name),
            Handle::Path(path) => removexattr(path.as_c_str(), name),
        }
    }

    /// The attributes `keep` covers, by name. A file system without xattrs has none.
    fn read(&self, keep: Keep) -> Result<BTreeMap<CString, Vec<u8>>, Errno> {
        let names = match self.list() {
            Ok(names) => names,
            Err(e) if unsupported(e) => return Ok(BTreeMap::new()),
            Err(e) => return Err(e),
        };
        let mut attrs = BTreeMap::new();
        for name in names.split_inclusive(|&b| b == 0) {
            let Ok(name) = CStr::from_bytes_with_nul(name) else { continue };
            if !covered(name, keep) {
                continue;
            }
            match self.get(name) {
                Ok(value) => {
                    attrs.insert(name.to_owned(), value);
                }
                Err(Errno::NODATA) => {} // removed meanwhile
                Err(e) => return Err(e),
            }
        }
        Ok(attrs)
    }
}

fn unsupported(e: Errno) -> bool {
    e == Errno::NOTSUP || e == Errno::OPNOTSUPP
}

fn is_acl(name: &CStr) -> bool {
    name.to_bytes().starts_with(b"system.posix_acl_")
}

/// ACLs go with `acls`, every other attribute with `xattrs`.
fn covered(name: &CStr, keep: Keep) -> bool {
    if is_acl(name) { keep.acls } else { keep.xattrs }
}

/// Makes the attributes of `to` that `keep` covers those of `from`: each set, and those `from`
/// lacks removed. Attributes an unprivileged user may not set (`trusted.*`) are skipped for them.
fn copy_xattrs(from: &Handle<'_>, to: &Handle<'_>, keep: Keep, policy: &OwnerPolicy) -> Result<(), Errno> {
    let wanted = from.read(keep)?;
    let present = to.read(keep)?;
    for (name, value) in &wanted {
        if present.get(name) == Some(value) {
            continue;
        }
        match to.set(name, value) {
            Ok(()) => {}
            Err(e) if unsupported(e) => return Ok(()),
            Err(e) if policy.tolerate(e) => {}
            Err(e) => return Err(e),
        }
    }
    for name in present.keys().filter(|name| !wanted.contains_key(*name)) {
        match to.remove(name) {
            Ok(()) | Err(Errno::NODATA) => {}
            Err(e) if policy.tolerate(e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether the attributes `keep` covers — ACLs alone with `acls`, the others without — differ
/// between two entries opened `O_PATH` (or plainly). An entry whose attributes cannot be read
/// counts as different.
pub fn xattrs_differ(from: BorrowedFd<'_>, to: BorrowedFd<'_>, acls: bool) -> bool {
    let keep = Keep { acls, xattrs: !acls, ..Keep::default() };
    let (from, to) = (Handle::of_path(from), Handle::of_path(to));
    match (from.read(keep), to.read(keep)) {
        (Ok(a), Ok(b)) => a != b,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn meta_of(path: &std::path::Path) -> Metadata {
        canopy_engine::sys::stat_path(path.as_os_str().as_encoded_bytes(), false).unwrap()
    }

    fn all(meta: &Metadata) -> Wanted<'_> {
        Wanted { meta, keep: Keep::ALL, mode: Some(meta.permissions()), owner: None }
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
        if has_xattrs {
            fsetxattr(&dst_file, c"user.extra", b"gone", XattrFlags::empty()).unwrap();
            assert!(xattrs_differ(src_file.as_fd(), dst_file.as_fd(), false));
        }
        apply(dst_file.as_fd(), Some(src_file.as_fd()), &all(&meta), &OwnerPolicy::current()).unwrap();
        let got = std::fs::metadata(&dst).unwrap();
        assert_eq!(got.mode() & 0o7777, 0o2751);
        assert_eq!((got.mtime(), got.mtime_nsec()), (1_100_000_000, 999_999_999));
        assert_eq!((got.atime(), got.atime_nsec()), (1_000_000_000, 1));
        if has_xattrs {
            let mut v = [0u8; 8];
            let n = fgetxattr(&dst_file, c"user.canopy", &mut v[..]).unwrap();
            assert_eq!(&v[..n], b"v");
            assert_eq!(fgetxattr(&dst_file, c"user.extra", &mut v[..]), Err(Errno::NODATA), "removed");
            assert!(!xattrs_differ(src_file.as_fd(), dst_file.as_fd(), false));
        }
    }

    #[test]
    fn only_what_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("src"), tmp.path().join("dst"));
        std::fs::write(&src, b"x").unwrap();
        std::fs::write(&dst, b"x").unwrap();
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o600)).unwrap();
        let before = std::fs::metadata(&dst).unwrap();
        let meta = meta_of(&src);
        let dst_file = std::fs::OpenOptions::new().write(true).open(&dst).unwrap();
        let nothing = Wanted { meta: &meta, keep: Keep::default(), mode: None, owner: None };
        apply(dst_file.as_fd(), None, &nothing, &OwnerPolicy::current()).unwrap();
        let after = std::fs::metadata(&dst).unwrap();
        assert_eq!((after.mode(), after.mtime_nsec()), (before.mode(), before.mtime_nsec()));
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
        let policy = OwnerPolicy::current();
        let mut link_meta = meta_of(&tmp.path().join("link"));
        link_meta.mode = (link_meta.mode & !0o7777) | 0o755;
        apply_by_name(&dir, c"link", None, &all(&link_meta), &policy).unwrap();
        assert_eq!(std::fs::metadata(&outside).unwrap().mode() & 0o7777, 0o600, "the target is untouched");
        apply_by_name(&dir, c"f", None, &all(&meta), &policy).unwrap();
        assert_eq!(std::fs::metadata(tmp.path().join("f")).unwrap().mode() & 0o7777, 0o755);
    }
}
