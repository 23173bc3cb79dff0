//! The hostile test tree: one tree with everything a tree tool has to get right, which the find,
//! du, walk, cp, sync, rm, MPI, Slurm and latfs suites all build, so that a case added here is
//! tried by every tool.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, chown, lchown, symlink};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rustix::fs::{AtFlags, CWD, FileType, Mode, Timespec, Timestamps, makedev, mknodat, utimensat};

use crate::{deep_chain, is_root};

/// Levels of the chain under `deep`: 45 × 200-byte names, about 9 KiB of path, twice PATH_MAX.
pub const DEEP_LEVELS: usize = 45;

/// The names nothing should trip over: newlines, tabs, leading dashes, invalid UTF-8, glob
/// characters, backslashes, spaces at both ends, case, a hidden file.
pub const ODD_NAMES: [&[u8]; 14] = [
    b"new\nline",
    b"tab\there",
    b"-dash",
    b"--",
    b"\xff\xfe not utf8",
    b" space ",
    "caf\u{e9}.txt".as_bytes(),
    b"[a].txt",
    b"star*",
    b"q?",
    b"back\\slash",
    b"UPPER.TXT",
    b".hidden",
    b"*glob?[x]",
];

/// Sizes of the files in `sizes/` (named `f<size>`): around the 512-byte, 1 KiB, page and MiB
/// boundaries where block counts and human-readable sizes round.
pub const SIZES: [usize; 14] =
    [0, 1, 511, 512, 513, 1023, 1024, 1025, 4095, 4096, 4097, 70_000, 1 << 20, (1 << 20) + 1];

/// Builds the tree as `base/tree` and returns that root:
/// - odd names at the top, a 255-byte name, a directory with an odd name and a file in it;
/// - `sizes/`: files of [`SIZES`], a 50 MiB hole (`sparse`), a 10 MiB file with one block written
///   in its middle (`sparse-written`);
/// - `sub/`: a small tree with symlinks to a file, to a directory and up (`sub/deeper/up` → `..`),
///   and `sub/mid.rs` with three names (`hardlink-to-mid`, `sub/deeper/mid-again`);
/// - symlinks at the top: dangling (relative and absolute), to itself, a two-link loop, one whose
///   target is an odd name; a fifo and a socket; as root, a character and a block device;
/// - `modes/`: setuid, setgid, sticky, unreadable and read-only files and a sticky directory;
/// - `owners/` (as root): files and a symlink owned by unnamed and foreign ids;
/// - `times/`: mtimes from the future to 1969, with nanoseconds, atimes after mtimes;
/// - `wide/`: 60 files; `nest/`: 3 × 3 directories; `empty-dir/`; `deep/`: [`DEEP_LEVELS`].
///
/// File contents are a byte pattern, not one repeated byte, so that a copy that reads the wrong
/// offset shows. Directory times are set last, atime after mtime and recent, so that reading the
/// tree does not move them (relatime) between an oracle's run and the tool's.
pub fn hostile_tree(base: &Path) -> PathBuf {
    let root = base.join("tree");
    fs::create_dir(&root).unwrap();
    let at = |rel: &str| root.join(rel);

    for name in ODD_NAMES {
        write(&root.join(OsStr::from_bytes(name)), 3);
    }
    write(&root.join(OsStr::from_bytes(&[b'L'; 255])), 1);
    let odd_dir = root.join(OsStr::from_bytes(b"dir\nwith\xffodd name"));
    fs::create_dir(&odd_dir).unwrap();
    write(&odd_dir.join("inside"), 2);

    fs::create_dir(at("sizes")).unwrap();
    for len in SIZES {
        write(&at(&format!("sizes/f{len}")), len);
    }
    fs::File::create(at("sizes/sparse")).unwrap().set_len(50 << 20).unwrap();
    let written = fs::File::create(at("sizes/sparse-written")).unwrap();
    written.set_len(10 << 20).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&written, &[7u8; 4096], 5 << 20).unwrap();

    fs::create_dir_all(at("sub/deeper/deepest")).unwrap();
    write(&at("sub/deeper/deepest/leaf.rs"), 10);
    write(&at("sub/mid.rs"), 700);
    write(&at("sub/target-file"), 5);
    symlink("target-file", at("sub/link-to-file")).unwrap();
    symlink("deeper", at("sub/link-to-dir")).unwrap();
    symlink("..", at("sub/deeper/up")).unwrap();
    fs::hard_link(at("sub/mid.rs"), at("hardlink-to-mid")).unwrap();
    fs::hard_link(at("sub/mid.rs"), at("sub/deeper/mid-again")).unwrap();

    symlink("nowhere", at("dangling")).unwrap();
    symlink("/nonexistent/nowhere", at("dangling-absolute")).unwrap();
    symlink("self-loop", at("self-loop")).unwrap();
    symlink("loop-b", at("loop-a")).unwrap();
    symlink("loop-a", at("loop-b")).unwrap();
    symlink(OsStr::from_bytes(b"odd\ntarget\xff"), at("odd-target")).unwrap();
    mkfifo(&at("fifo"));
    drop(std::os::unix::net::UnixListener::bind(at("socket")).unwrap());
    if is_root() {
        device(&at("char-1-3"), FileType::CharacterDevice, 1, 3);
        device(&at("block-7-200"), FileType::BlockDevice, 7, 200);
    }

    fs::create_dir(at("modes")).unwrap();
    for (name, mode) in [
        ("m644", 0o644),
        ("m755", 0o755),
        ("m4755", 0o4755),
        ("m2750", 0o2750),
        ("m1777", 0o1777),
        ("m000", 0o000),
        ("m444", 0o444),
        ("m666", 0o666),
    ] {
        write(&at(&format!("modes/{name}")), 1);
        fs::set_permissions(at(&format!("modes/{name}")), fs::Permissions::from_mode(mode)).unwrap();
    }
    fs::create_dir(at("modes/sticky-dir")).unwrap();
    fs::set_permissions(at("modes/sticky-dir"), fs::Permissions::from_mode(0o1777)).unwrap();

    if is_root() {
        fs::create_dir(at("owners")).unwrap();
        for (name, uid, gid) in [("nobody", 65534, 65534), ("ghost", 12345, 54321), ("mixed", 0, 65534)] {
            write(&at(&format!("owners/{name}")), 1);
            chown(at(&format!("owners/{name}")), Some(uid), Some(gid)).unwrap();
        }
        symlink("nobody", at("owners/ghost-link")).unwrap();
        lchown(at("owners/ghost-link"), Some(23456), None).unwrap();
    }

    fs::create_dir(at("times")).unwrap();
    // (atime ago, mtime ago): away from minute and day boundaries so runs seconds apart agree.
    for (name, a, m) in [
        ("now", 5, 20),
        ("minutes", 3600, 200),
        ("hours", 3600, 7200),
        ("days", 7200, 36 * 3600),
        ("week", 7200, 8 * 86400),
        ("month", 7200, 40 * 86400),
        ("season", 7200, 200 * 86400),
        ("year", 7200, 400 * 86400),
        ("decade", 7200, 3650 * 86400),
        ("future", 5, -86400 - 600),
    ] {
        write(&at(&format!("times/{name}")), 1);
        set_times(&at(&format!("times/{name}")), a, m);
    }
    for (name, seconds) in [("2001-nanos", 1_000_000_000), ("1969", -1_000_000)] {
        write(&at(&format!("times/{name}")), 1);
        let recent = Timespec { tv_sec: now() - 5, tv_nsec: 0 };
        let old = Timespec { tv_sec: seconds, tv_nsec: 987_654_321 };
        let times = Timestamps { last_access: recent, last_modification: old };
        utimensat(CWD, at(&format!("times/{name}")), &times, AtFlags::empty()).unwrap();
    }

    fs::create_dir(at("wide")).unwrap();
    for i in 0..60 {
        write(&at(&format!("wide/f{i:02}")), i * 10);
    }
    for a in 0..3 {
        for b in 0..3 {
            fs::create_dir_all(at(&format!("nest/{a}/{b}"))).unwrap();
            write(&at(&format!("nest/{a}/{b}/leaf")), a * 3 + b);
        }
    }
    fs::create_dir(at("empty-dir")).unwrap();
    deep_chain(&at("deep"), DEEP_LEVELS);

    // Directory times last: creating entries changed them.
    let mut dirs = vec![odd_dir];
    for dir in ["sizes", "sub/deeper/deepest", "sub/deeper", "sub", "modes/sticky-dir", "modes", "owners"] {
        dirs.push(at(dir));
    }
    for dir in ["times", "wide", "nest/0", "nest/1", "nest/2", "nest", "empty-dir"] {
        dirs.push(at(dir));
    }
    for dir in dirs.iter().filter(|d| d.exists()) {
        set_times(dir, 3000, 5000);
    }
    root
}

/// Sets a path's atime and mtime to so many seconds ago (and 123456789 ns), not following a symlink.
pub fn set_times(path: &Path, atime_ago: i64, mtime_ago: i64) {
    let ago = |seconds: i64| Timespec { tv_sec: now() - seconds, tv_nsec: 123_456_789 };
    let times = Timestamps { last_access: ago(atime_ago), last_modification: ago(mtime_ago) };
    utimensat(CWD, path, &times, AtFlags::SYMLINK_NOFOLLOW).unwrap();
}

pub fn mkfifo(path: &Path) {
    mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
}

fn device(path: &Path, kind: FileType, major: u32, minor: u32) {
    mknodat(CWD, path, kind, Mode::from_raw_mode(0o600), makedev(major, minor)).unwrap();
}

/// A file of `len` bytes of a pattern that repeats every 251 bytes (a prime, so not at any
/// block or page boundary).
fn write(path: &Path, len: usize) {
    let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    fs::write(path, bytes).unwrap();
}

fn now() -> i64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() as i64
}
