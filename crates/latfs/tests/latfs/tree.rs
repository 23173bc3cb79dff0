//! A hostile test tree: odd names, every file type, hard links, odd modes, owners and times, and a
//! directory chain deeper than PATH_MAX.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps, makedev, mknodat, utimensat};

/// Components of the deep chain: 30 × 200 bytes, far beyond PATH_MAX.
pub const DEEP_LEVELS: usize = 30;

pub use canopy_testkit::is_root;

/// Builds the hostile tree in `root` (everything but the deep chain, see [`build_deep_chain`]).
pub fn build_hostile_tree(root: &Path) {
    let plain = root.join("plain");
    fs::create_dir(&plain).unwrap();
    for (name, size) in
        [("empty", 0), ("one", 1), ("page-1", 4095), ("page", 4096), ("page+1", 4097), ("big", 200_000)]
    {
        let bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        fs::write(plain.join(name), bytes).unwrap();
    }
    File::create(plain.join("sparse")).unwrap().set_len(8 << 20).unwrap();
    for (name, mode) in [("mode-000", 0o000), ("mode-444", 0o444), ("setuid", 0o4755), ("setgid", 0o2711)] {
        fs::write(plain.join(name), name).unwrap();
        fs::set_permissions(plain.join(name), fs::Permissions::from_mode(mode)).unwrap();
    }
    let sticky = plain.join("sticky-dir");
    fs::create_dir(&sticky).unwrap();
    fs::set_permissions(&sticky, fs::Permissions::from_mode(0o1777)).unwrap();
    set_mtime(&plain.join("one"), 1_000_000_000, 123_456_789);
    set_mtime(&plain.join("empty"), -1_000_000, 500_000_000);
    if is_root() {
        fs::write(plain.join("owned"), "x").unwrap();
        std::os::unix::fs::chown(plain.join("owned"), Some(1234), Some(5678)).unwrap();
        std::os::unix::fs::lchown(plain.join("one"), Some(65534), Some(65534)).unwrap();
    }

    let names = root.join("names");
    fs::create_dir(&names).unwrap();
    let odd: [&[u8]; 9] = [
        b"new\nline",
        b"tab\tname",
        b"-leading-dash",
        b"--",
        b"bad\xffutf8\xfe",
        b" spaces ",
        b"*glob?[x]",
        "\u{e9}t\u{e9}".as_bytes(),
        b"back\\slash",
    ];
    for name in odd {
        fs::write(names.join(OsStr::from_bytes(name)), name).unwrap();
    }
    fs::write(names.join("n".repeat(255)), "255").unwrap();
    fs::create_dir(names.join(OsStr::from_bytes(b"dir\nwith\xffodd name"))).unwrap();
    fs::write(names.join(OsStr::from_bytes(b"dir\nwith\xffodd name/inside")), "in").unwrap();

    let links = root.join("links");
    fs::create_dir(&links).unwrap();
    fs::write(links.join("target"), "target").unwrap();
    symlink("target", links.join("to-file")).unwrap();
    symlink("../plain", links.join("to-dir")).unwrap();
    symlink("/nonexistent/nowhere", links.join("dangling")).unwrap();
    symlink("loop-b", links.join("loop-a")).unwrap();
    symlink("loop-a", links.join("loop-b")).unwrap();
    symlink(OsStr::from_bytes(b"odd\ntarget\xff"), links.join("odd-target")).unwrap();
    fs::write(links.join("hard-1"), "hard").unwrap();
    fs::hard_link(links.join("hard-1"), links.join("hard-2")).unwrap();
    fs::hard_link(links.join("hard-1"), names.join("hard-3")).unwrap();

    let special = root.join("special");
    fs::create_dir(&special).unwrap();
    let special_fd = open_dir(&special);
    mknodat(&special_fd, "fifo", FileType::Fifo, Mode::from_raw_mode(0o640), 0).unwrap();
    drop(std::os::unix::net::UnixListener::bind(special.join("socket")).unwrap());
    if is_root() {
        mknodat(
            &special_fd,
            "char-1-3",
            FileType::CharacterDevice,
            Mode::from_raw_mode(0o600),
            makedev(1, 3),
        )
        .unwrap();
        mknodat(
            &special_fd,
            "block-7-200",
            FileType::BlockDevice,
            Mode::from_raw_mode(0o600),
            makedev(7, 200),
        )
        .unwrap();
    }

    fs::create_dir(root.join("empty-dir")).unwrap();
    for a in 0..3 {
        for b in 0..3 {
            let dir = root.join(format!("nest/{a}/{b}"));
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("leaf"), format!("{a}{b}")).unwrap();
        }
    }
}

/// A chain of [`DEEP_LEVELS`] directories with 200-byte names under `root/deep`, a file at the bottom.
pub fn build_deep_chain(root: &Path) {
    canopy_testkit::deep_chain(&root.join("deep"), DEEP_LEVELS);
}

fn open_dir(path: &Path) -> OwnedFd {
    rustix::fs::open(path, OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap()
}

fn set_mtime(path: &Path, seconds: i64, nanos: i64) {
    let time = Timespec { tv_sec: seconds, tv_nsec: nanos };
    let times = Timestamps { last_access: time, last_modification: time };
    utimensat(rustix::fs::CWD, path, &times, AtFlags::SYMLINK_NOFOLLOW).unwrap();
    let modified = fs::symlink_metadata(path).unwrap().modified().unwrap();
    let expected = if seconds >= 0 {
        UNIX_EPOCH + Duration::new(seconds as u64, nanos as u32)
    } else {
        UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs()) + Duration::from_nanos(nanos as u64)
    };
    assert_eq!(modified, expected, "the source file system keeps the time");
}
