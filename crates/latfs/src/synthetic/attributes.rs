//! Attributes and contents of the generated entries, each drawn from its inode number: sizes spread
//! like the benchmarks' generated trees (mostly around a kilobyte, up to 256 KiB), modification times
//! over the five years before 2023-11, access and change times after them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{FileAttr, FileType, INodeNo};

use super::draw::{Purpose, draw, mix};

/// Modification times lie in the five years before this (2023-11-14), as in the bench trees.
pub(crate) const EPOCH: u64 = 1_700_000_000;
pub(crate) const SPREAD: u64 = 5 * 365 * 86_400;
/// Access times come 1 s to 30 days after the modification, change times 1 s to a day after.
pub(crate) const ACCESS_SPREAD: u64 = 30 * 86_400;
pub(crate) const CHANGE_SPREAD: u64 = 86_400;
pub(crate) const MAX_SIZE: u64 = 256 * 1024;
/// The block size sizes are allocated in, as on ext4.
pub(crate) const BLOCK: u64 = 4096;
/// Bytes of one directory entry, to size directories like a real file system.
const DIRENT_BYTES: u64 = 32;
/// Every file's contents are lines of this many bytes: 16 hex digits, a space, 14 hex digits, newline.
pub(crate) const LINE: u64 = 32;

/// The owner every entry gets: the user serving the mount.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Owner {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

impl Owner {
    pub(crate) fn of_this_process() -> Owner {
        Owner { uid: rustix::process::getuid().as_raw(), gid: rustix::process::getgid().as_raw() }
    }
}

/// A file's size: 2^b plus b random low bits, b ~ Binomial(20, ½) (a median near 1.5 KiB, a
/// log-normal-like spread), capped at 256 KiB; b < 4 (about 1 file in 800) gives an empty file.
pub(crate) fn file_size(seed: u64, ino: u64) -> u64 {
    let bits = (draw(seed, ino, Purpose::Size) & 0xf_ffff).count_ones();
    if bits < 4 {
        return 0;
    }
    let low = draw(seed, ino, Purpose::SizeLow) & ((1 << bits) - 1);
    ((1 << bits) | low).min(MAX_SIZE)
}

/// Permission bits: mostly 0644, one file in 16 executable (0755), one in 16 private (0600).
pub(crate) fn file_mode(seed: u64, ino: u64) -> u16 {
    match draw(seed, ino, Purpose::Mode) % 16 {
        0 => 0o755,
        1 => 0o600,
        _ => 0o644,
    }
}

/// Seconds and nanoseconds since the epoch: (access, modification, change).
pub(crate) fn times(seed: u64, ino: u64) -> [(u64, u32); 3] {
    let nanos = |random: u64| ((random >> 32) % 1_000_000_000) as u32;
    let modified = draw(seed, ino, Purpose::Mtime);
    let mtime = (EPOCH - modified % SPREAD, nanos(modified));
    let after = |purpose, spread| {
        let random = draw(seed, ino, purpose);
        (mtime.0 + 1 + random % spread, nanos(random))
    };
    [after(Purpose::Atime, ACCESS_SPREAD), mtime, after(Purpose::Ctime, CHANGE_SPREAD)]
}

fn system_time((seconds, nanos): (u64, u32)) -> SystemTime {
    UNIX_EPOCH + Duration::new(seconds, nanos)
}

/// Builds the attributes replies carry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attributes {
    pub(crate) seed: u64,
    pub(crate) owner: Owner,
}

impl Attributes {
    fn attr(&self, ino: u64, kind: FileType, perm: u16, size: u64, blocks: u64, nlink: u32) -> FileAttr {
        let [atime, mtime, ctime] = times(self.seed, ino).map(system_time);
        FileAttr {
            ino: INodeNo(ino),
            size,
            blocks,
            atime,
            mtime,
            ctime,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink,
            uid: self.owner.uid,
            gid: self.owner.gid,
            rdev: 0,
            blksize: BLOCK as u32,
            flags: 0,
        }
    }

    /// A directory of `children` entries, `subdirs` of them directories.
    pub(crate) fn dir(&self, ino: u64, children: u64, subdirs: u64) -> FileAttr {
        let size = dir_size(children);
        let nlink = u32::try_from(2 + subdirs).unwrap_or(u32::MAX);
        self.attr(ino, FileType::Directory, 0o755, size, size / 512, nlink)
    }

    pub(crate) fn file(&self, ino: u64, nlink: u32) -> FileAttr {
        let size = file_size(self.seed, ino);
        self.attr(ino, FileType::RegularFile, file_mode(self.seed, ino), size, blocks(size), nlink)
    }

    /// A symbolic link holding a target of `target_length` bytes (a fast symlink: no blocks).
    pub(crate) fn symlink(&self, ino: u64, target_length: usize) -> FileAttr {
        self.attr(ino, FileType::Symlink, 0o777, target_length as u64, 0, 1)
    }
}

/// 512-byte blocks a file of `size` bytes occupies, allocated in 4 KiB blocks.
pub(crate) fn blocks(size: u64) -> u64 {
    size.div_ceil(BLOCK) * (BLOCK / 512)
}

/// Bytes of a directory of `children` entries: 32 bytes each with `.` and `..`, in 4 KiB blocks.
pub(crate) fn dir_size(children: u64) -> u64 {
    ((children + 2) * DIRENT_BYTES).div_ceil(BLOCK).max(1) * BLOCK
}

/// Bytes `offset..offset + length` of the file `ino` (of `size` bytes): line n is the 16 hex digits of
/// a draw for (ino, n), a space, n in 14 hex digits and a newline.
pub(crate) fn contents(seed: u64, ino: u64, size: u64, offset: u64, length: u64) -> Vec<u8> {
    let end = size.min(offset.saturating_add(length));
    if offset >= end {
        return Vec::new();
    }
    let key = draw(seed, ino, Purpose::Content);
    let mut bytes = Vec::with_capacity((end - offset + 2 * LINE) as usize);
    for line in offset / LINE..end.div_ceil(LINE) {
        let text = format!("{:016x} {:014x}\n", mix(key ^ line), line & 0xff_ffff_ffff_ffff);
        bytes.extend_from_slice(text.as_bytes());
    }
    let skip = (offset % LINE) as usize;
    bytes.drain(..skip);
    bytes.truncate((end - offset) as usize);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_spread_around_a_kilobyte_and_are_capped() {
        let mut sizes: Vec<u64> = (0..100_000).map(|ino| file_size(3, ino)).collect();
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        assert!((1024..2048).contains(&median), "{median}");
        assert!(*sizes.last().unwrap() <= MAX_SIZE);
        let empty = sizes.iter().filter(|&&s| s == 0).count();
        assert!((50..250).contains(&empty), "about 0.13% empty: {empty}");
        assert_eq!(blocks(0), 0);
        assert_eq!(blocks(1), 8);
        assert_eq!(blocks(4097), 16);
    }

    #[test]
    fn times_come_in_order_within_their_spreads() {
        for ino in 0..10_000 {
            let [atime, mtime, ctime] = times(1, ino);
            assert!(mtime.0 <= EPOCH && mtime.0 > EPOCH - SPREAD);
            assert!(atime > mtime && ctime > mtime, "atime {atime:?} mtime {mtime:?} ctime {ctime:?}");
            assert!(atime.0 - mtime.0 <= ACCESS_SPREAD && ctime.0 - mtime.0 <= CHANGE_SPREAD);
            assert!(mtime.1 < 1_000_000_000 && atime.1 < 1_000_000_000);
        }
    }

    #[test]
    fn contents_are_lines_and_any_range_is_a_slice_of_the_whole() {
        let size = 1000;
        let whole = contents(1, 77, size, 0, 1 << 20);
        assert_eq!(whole.len() as u64, size);
        assert_eq!(&whole[LINE as usize - 1..LINE as usize], b"\n");
        assert_eq!(&whole[17..LINE as usize], b"00000000000000\n");
        for (offset, length) in [(0, 1), (5, 100), (31, 2), (999, 10), (1000, 10), (64, 0)] {
            let end = (offset + length).min(size) as usize;
            let expected = whole.get(offset as usize..end).unwrap_or(&[]);
            assert_eq!(contents(1, 77, size, offset, length), expected, "{offset}+{length}");
        }
        assert_ne!(contents(1, 78, size, 0, 16), whole[..16], "another file, other contents");
    }

    #[test]
    fn directories_grow_by_blocks_with_their_entries() {
        assert_eq!(dir_size(0), 4096);
        assert_eq!(dir_size(126), 4096);
        assert_eq!(dir_size(127), 8192);
        assert_eq!(dir_size(1_000_000), 7_813 * 4096);
    }
}
