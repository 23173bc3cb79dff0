//! Symlinks (copied as symlinks, their targets never followed), FIFOs, sockets and device nodes:
//! made under the temporary name, given owner, permissions and times, then renamed into place.

use super::attrs::{AttrError, OwnerPolicy, Wanted, apply_by_name};
use super::temp::{create_fresh, discard, rename_into_place};
use canopy_engine::FileKind;
use canopy_util::temp_name::temp_name;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{FileType, Mode, mknodat, symlinkat};
use std::ffi::CStr;

/// Makes `name` in `dir` a copy of the non-regular, non-directory entry `wanted.meta` (a symlink
/// pointing to `target`), its xattrs copied from `xattrs_from`.
pub fn make(
    dir: impl AsFd,
    name: &CStr,
    wanted: &Wanted<'_>,
    target: &[u8],
    xattrs_from: Option<BorrowedFd<'_>>,
    policy: &OwnerPolicy,
) -> Result<(), AttrError> {
    let meta = wanted.meta;
    let temp = temp_name(name);
    let created = create_fresh(&dir, &temp, |temp| match meta.kind() {
        FileKind::Symlink => symlinkat(target, &dir, temp),
        kind => mknodat(&dir, temp, file_type(kind), Mode::from_raw_mode(meta.permissions()), meta.rdev),
    });
    created.map_err(|errno| AttrError { verb: "create", errno })?;
    let placed = apply_by_name(&dir, &temp, xattrs_from, wanted, policy).and_then(|()| {
        rename_into_place(&dir, &temp, name).map_err(|errno| AttrError { verb: "create", errno })
    });
    if placed.is_err() {
        discard(&dir, &temp);
    }
    placed
}

fn file_type(kind: FileKind) -> FileType {
    match kind {
        FileKind::Fifo => FileType::Fifo,
        FileKind::Socket => FileType::Socket,
        FileKind::BlockDevice => FileType::BlockDevice,
        FileKind::CharDevice => FileType::CharacterDevice,
        other => unreachable!("{other:?} is not made by mknod"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    #[test]
    fn symlink_and_fifo_with_their_attributes() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir(&src).unwrap();
        std::os::unix::fs::symlink("../somewhere", src.join("link")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, src.join("fifo"), FileType::Fifo, Mode::from_raw_mode(0o640), 0)
            .unwrap();
        let dst = std::fs::File::open(tmp.path()).unwrap();
        let policy = OwnerPolicy::current();
        for name in ["link", "fifo"] {
            let meta =
                canopy_engine::sys::stat_path(src.join(name).as_os_str().as_encoded_bytes(), false).unwrap();
            let cname = std::ffi::CString::new(name).unwrap();
            let wanted = Wanted {
                meta: &meta,
                keep: super::super::policy::Keep::ALL,
                mode: Some(meta.permissions()),
                owner: None,
            };
            make(&dst, &cname, &wanted, b"../somewhere", None, &policy).unwrap();
            let got = std::fs::symlink_metadata(tmp.path().join(name)).unwrap();
            assert_eq!(
                (got.mode(), got.mtime(), got.mtime_nsec()),
                (meta.mode, meta.mtime.sec, i64::from(meta.mtime.nsec))
            );
        }
        assert_eq!(std::fs::read_link(tmp.path().join("link")).unwrap().as_os_str(), "../somewhere");
        assert!(std::fs::symlink_metadata(tmp.path().join("fifo")).unwrap().file_type().is_fifo());
    }
}
