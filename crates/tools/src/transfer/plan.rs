//! What to do with one non-directory, given its source and what the destination already holds.
//! This is the check a rerun relies on: a regular file whose size and modification time (to the
//! nanosecond) match is complete, because copies only appear under their final name after their data
//! and times are set (see the module documentation of `transfer`).

use super::attrs::OwnerPolicy;
use canopy_engine::{FileKind, Metadata};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Nothing there yet.
    Create,
    /// Something else is there: build the copy aside and rename it over.
    Replace,
    /// The data is right; owner, permissions or times are not.
    Refresh,
    /// Already a complete copy.
    Skip,
    /// A directory is in the way.
    Blocked,
}

/// How a regular file's data is judged equal to its copy's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// Same size and modification time (rsync's quick check).
    SizeAndTime,
    /// Same size and same content hash (`--checksum`); times may differ and are then corrected.
    Checksum,
}

/// Decides for `src` given the destination's `dest`. `same_data` is asked only when metadata alone
/// cannot tell: the targets of two symlinks, the contents of two files under `--checksum`.
pub fn plan(
    src: &Metadata,
    dest: Option<&Metadata>,
    compare: Compare,
    policy: &OwnerPolicy,
    same_data: impl FnOnce() -> bool,
) -> Plan {
    let Some(dest) = dest else { return Plan::Create };
    if dest.is_dir() {
        return Plan::Blocked;
    }
    if dest.kind() != src.kind() {
        return Plan::Replace;
    }
    let data_same = match src.kind() {
        FileKind::File => {
            src.size == dest.size
                && match compare {
                    Compare::SizeAndTime => src.mtime == dest.mtime,
                    Compare::Checksum => same_data(),
                }
        }
        FileKind::Symlink => same_data(),
        FileKind::BlockDevice | FileKind::CharDevice => src.rdev == dest.rdev,
        _ => true,
    };
    if !data_same {
        return Plan::Replace;
    }
    let mode_same = src.kind() == FileKind::Symlink || src.permissions() == dest.permissions();
    if mode_same && src.mtime == dest.mtime && policy.matches(src, dest) { Plan::Skip } else { Plan::Refresh }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_engine::Timestamp;

    fn file(size: u64, mtime: i64, mode: u32) -> Metadata {
        Metadata {
            mode: libc::S_IFREG | mode,
            nlink: 1,
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            size,
            blocks: 0,
            blksize: 4096,
            ino: 1,
            dev: 1,
            rdev: 0,
            atime: Timestamp::default(),
            mtime: Timestamp { sec: mtime, nsec: 5 },
            ctime: Timestamp::default(),
        }
    }

    #[test]
    fn quick_check_and_checksum() {
        let p = OwnerPolicy::current();
        let src = file(10, 100, 0o644);
        let never = || panic!("data compared needlessly");
        assert_eq!(plan(&src, None, Compare::SizeAndTime, &p, never), Plan::Create);
        assert_eq!(plan(&src, Some(&src), Compare::SizeAndTime, &p, never), Plan::Skip);
        assert_eq!(plan(&src, Some(&file(11, 100, 0o644)), Compare::SizeAndTime, &p, never), Plan::Replace);
        let mut newer = src;
        newer.mtime.nsec = 6;
        assert_eq!(
            plan(&src, Some(&newer), Compare::SizeAndTime, &p, never),
            Plan::Replace,
            "a nanosecond counts"
        );
        assert_eq!(
            plan(&src, Some(&newer), Compare::Checksum, &p, || true),
            Plan::Refresh,
            "same content, times fixed"
        );
        assert_eq!(plan(&src, Some(&newer), Compare::Checksum, &p, || false), Plan::Replace);
        let mut other_mode = src;
        other_mode.mode = libc::S_IFREG | 0o600;
        assert_eq!(plan(&src, Some(&other_mode), Compare::SizeAndTime, &p, never), Plan::Refresh);
        let mut dir = src;
        dir.mode = libc::S_IFDIR | 0o755;
        assert_eq!(plan(&src, Some(&dir), Compare::SizeAndTime, &p, never), Plan::Blocked);
        let mut link = src;
        link.mode = libc::S_IFLNK | 0o777;
        assert_eq!(plan(&src, Some(&link), Compare::SizeAndTime, &p, never), Plan::Replace);
        assert_eq!(
            plan(&link, Some(&link), Compare::SizeAndTime, &p, || false),
            Plan::Replace,
            "other target"
        );
    }
}
