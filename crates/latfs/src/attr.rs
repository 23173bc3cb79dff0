//! Source `stat` results in the shapes FUSE replies carry.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{FileAttr, FileType, INodeNo};
use rustix::fs::{Dev, Stat, major, makedev, minor};

/// The attributes of the source file `stat`, reported under node id `id`.
pub(crate) fn file_attr(id: u64, stat: &Stat) -> FileAttr {
    FileAttr {
        ino: INodeNo(id),
        size: stat.st_size as u64,
        blocks: stat.st_blocks as u64,
        atime: system_time(stat.st_atime, stat.st_atime_nsec),
        mtime: system_time(stat.st_mtime, stat.st_mtime_nsec),
        ctime: system_time(stat.st_ctime, stat.st_ctime_nsec),
        crtime: UNIX_EPOCH,
        kind: file_type(stat.st_mode),
        perm: (stat.st_mode & 0o7777) as u16,
        nlink: stat.st_nlink as u32,
        uid: stat.st_uid,
        gid: stat.st_gid,
        rdev: encode_dev(stat.st_rdev),
        blksize: stat.st_blksize as u32,
        flags: 0,
    }
}

/// The file type in a `st_mode`.
pub(crate) fn file_type(mode: u32) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFBLK => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

/// The file type a directory entry's `d_type` names; `None` for DT_UNKNOWN (the caller must stat).
pub(crate) fn entry_type(kind: rustix::fs::FileType) -> Option<FileType> {
    use rustix::fs::FileType as T;
    match kind {
        T::RegularFile => Some(FileType::RegularFile),
        T::Directory => Some(FileType::Directory),
        T::Symlink => Some(FileType::Symlink),
        T::Fifo => Some(FileType::NamedPipe),
        T::Socket => Some(FileType::Socket),
        T::CharacterDevice => Some(FileType::CharDevice),
        T::BlockDevice => Some(FileType::BlockDevice),
        T::Unknown => None,
    }
}

/// `nanos` is whatever integer type this architecture's `struct stat` uses.
fn system_time(seconds: i64, nanos: impl Into<u64>) -> SystemTime {
    let nanos = Duration::from_nanos(nanos.into());
    if seconds >= 0 {
        UNIX_EPOCH + Duration::from_secs(seconds as u64) + nanos
    } else {
        UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs()) + nanos
    }
}

/// The `timespec` the kernel sent in a setattr request, recovered from the `SystemTime` fuser made of it.
///
/// fuser 0.18 decodes a time before the epoch, (-s seconds, +n nanoseconds), as the epoch minus (s + n)
/// instead of minus s plus n. It keeps s and n apart, so both come back exactly from the distance to
/// the epoch.
pub(crate) fn requested_timespec(time: SystemTime) -> rustix::fs::Timespec {
    let (seconds, nanos) = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => (after.as_secs() as i64, after.subsec_nanos()),
        Err(before) => (-(before.duration().as_secs() as i64), before.duration().subsec_nanos()),
    };
    rustix::fs::Timespec { tv_sec: seconds, tv_nsec: nanos.into() }
}

/// A device number in the kernel's 32-bit FUSE encoding (`new_encode_dev`).
pub(crate) fn encode_dev(dev: Dev) -> u32 {
    let (major, minor) = (major(dev), minor(dev));
    (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)
}

/// The inverse of [`encode_dev`], for mknod requests.
pub(crate) fn decode_dev(encoded: u32) -> Dev {
    let major = (encoded & 0xfff00) >> 8;
    let minor = (encoded & 0xff) | ((encoded >> 12) & 0xfff00);
    makedev(major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_round_trip_through_the_fuse_encoding() {
        for (major, minor) in [(0, 0), (1, 3), (8, 17), (259, 1_000), (4095, 0xfffff)] {
            let dev = makedev(major, minor);
            assert_eq!(decode_dev(encode_dev(dev)), dev, "{major}:{minor}");
        }
        assert_eq!(encode_dev(makedev(1, 3)), 0x103);
    }

    #[test]
    fn stat_times_before_the_epoch_add_their_nanoseconds() {
        assert_eq!(system_time(1, 5_u32), UNIX_EPOCH + Duration::new(1, 5));
        assert_eq!(system_time(-2, 500_000_000_u32), UNIX_EPOCH - Duration::from_millis(1_500));
    }

    #[test]
    fn setattr_times_come_back_as_the_kernel_sent_them() {
        // What fuser 0.18 makes of the kernel's (seconds, nanoseconds).
        let fuser_decoding = |seconds: i64, nanos: u32| {
            if seconds >= 0 {
                UNIX_EPOCH + Duration::new(seconds as u64, nanos)
            } else {
                UNIX_EPOCH - Duration::new(seconds.unsigned_abs(), nanos)
            }
        };
        for (seconds, nanos) in
            [(0, 0), (1_700_000_000, 123_456_789), (-1_000_001, 500_000_000), (-86_400, 0)]
        {
            let spec = requested_timespec(fuser_decoding(seconds, nanos));
            assert_eq!((spec.tv_sec, spec.tv_nsec), (seconds, i64::from(nanos)));
        }
    }

    #[test]
    fn mode_bits_name_the_file_type() {
        assert_eq!(file_type(libc::S_IFDIR | 0o755), FileType::Directory);
        assert_eq!(file_type(libc::S_IFLNK | 0o777), FileType::Symlink);
        assert_eq!(file_type(libc::S_IFIFO | 0o644), FileType::NamedPipe);
        assert_eq!(file_type(libc::S_IFREG | 0o644), FileType::RegularFile);
    }
}
