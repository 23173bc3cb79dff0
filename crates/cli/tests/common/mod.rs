//! Shared helpers of the end-to-end tests: the binary, hostile test trees, GNU oracles.
#![allow(dead_code)] // each test binary uses a different subset

pub mod classic;
pub mod du_tree;
pub mod find_gnu;
pub mod grep_trees;
pub mod host_roots;
pub mod interrupt;
pub mod launch_oracles;
pub mod mpirun;
pub mod netns;
pub mod random_tree;
pub mod slurm;
pub mod tree_oracles;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

pub fn canopy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_canopy"));
    c.env("LC_ALL", "C");
    c
}

pub fn gnu(program: &str) -> Command {
    let mut c = Command::new(program);
    c.env("LC_ALL", "C");
    c
}

/// `program` run as the unprivileged user nobody: the tests run as root, whom no permission bit stops.
pub fn as_nobody(program: impl AsRef<OsStr>) -> Command {
    let mut c = gnu("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(program);
    c
}

/// A FIFO at `path` (mode 0644).
pub fn mkfifo(path: &Path) {
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, 0o644.into(), 0).unwrap();
}

// Each test binary uses some of them (the module is compiled into each).
#[allow(unused_imports)]
pub use canopy_testkit::{deep_chain, fuse_available, is_root, root_or_skip, skip};

pub fn os(s: &str) -> OsString {
    OsString::from(s)
}

/// Runs a command and returns its output (stdin closed unless given).
pub fn run(mut cmd: Command, stdin: Option<&[u8]>) -> Output {
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    if let Some(input) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().unwrap();
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    child.wait_with_output().expect("wait")
}

/// Output records (split on `sep`), sorted: the order-independent view of a find-like output.
pub fn records(bytes: &[u8], sep: u8) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = bytes.split(|&b| b == sep).map(<[u8]>::to_vec).collect();
    if v.last().is_some_and(Vec::is_empty) {
        v.pop();
    }
    v.sort();
    v
}

/// stderr lines with the program prefix removed, sorted (`find: x` and `canopy find: x` compare equal).
pub fn messages(stderr: &[u8], prefix: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(stderr);
    let mut v: Vec<String> = text.lines().map(|l| l.strip_prefix(prefix).unwrap_or(l).to_string()).collect();
    v.sort();
    v
}

/// Asserts two sorted record lists are equal, showing what is missing and extra as text.
#[track_caller]
pub fn assert_same_records(got: &[Vec<u8>], want: &[Vec<u8>], context: &str) {
    if got == want {
        return;
    }
    let show = |v: Vec<&Vec<u8>>| {
        v.iter().take(12).map(|r| String::from_utf8_lossy(r).into_owned()).collect::<Vec<_>>()
    };
    let missing: Vec<&Vec<u8>> = want.iter().filter(|r| !got.contains(r)).collect();
    let extra: Vec<&Vec<u8>> = got.iter().filter(|r| !want.contains(r)).collect();
    panic!(
        "{context}: {} records vs {} expected\n  missing: {:?}\n  extra: {:?}",
        got.len(),
        want.len(),
        show(missing),
        show(extra)
    );
}

pub fn set_times(path: &Path, atime_ago: i64, mtime_ago: i64) {
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() as i64;
    let ts = |ago: i64| rustix::fs::Timespec { tv_sec: now - ago, tv_nsec: 123_456_789 };
    let times = rustix::fs::Timestamps { last_access: ts(atime_ago), last_modification: ts(mtime_ago) };
    rustix::fs::utimensat(rustix::fs::CWD, path, &times, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).unwrap();
}

/// Sets atime and mtime of `path` to those of `like`, nanoseconds included: a file damaged or
/// rewritten behind a tool's back that still looks unchanged by size and time.
pub fn set_times_like(path: &Path, like: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    let ts = |sec: i64, nsec: i64| rustix::fs::Timespec { tv_sec: sec, tv_nsec: nsec };
    let times = rustix::fs::Timestamps {
        last_access: ts(like.atime(), like.atime_nsec()),
        last_modification: ts(like.mtime(), like.mtime_nsec()),
    };
    rustix::fs::utimensat(rustix::fs::CWD, path, &times, rustix::fs::AtFlags::empty()).unwrap();
}

/// Chromium without a window, a first-run or network chatter, with its profile in `profile`:
/// the tests load a page and read back the DOM it rendered.
pub fn headless_chromium(profile: &Path) -> Command {
    let mut c = Command::new("chromium");
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn write(path: &Path, len: usize) {
    std::fs::write(path, vec![b'x'; len]).unwrap();
}

/// A tree with everything find has to get right: odd names, every file type, links of all kinds,
/// sizes around unit boundaries, special permission bits, foreign owners, planned timestamps, and a
/// path longer than PATH_MAX. Returns the root.
pub fn hostile_tree(base: &Path) -> PathBuf {
    let root = base.join("tree");
    std::fs::create_dir(&root).unwrap();
    let names: Vec<&[u8]> = vec![
        b"new\nline",
        b"tab\there",
        b"-dash",
        b"\xff\xfe not utf8",
        b" space ",
        "caf\u{e9}.txt".as_bytes(),
        b"[a].txt",
        b"star*",
        b"q?",
        b"back\\slash",
        b"UPPER.TXT",
        b".hidden",
    ];
    for n in &names {
        write(&root.join(OsStr::from_bytes(n)), 3);
    }
    write(&root.join(OsStr::from_bytes(&[b'L'; 255])), 1);
    let sizes = root.join("sizes");
    std::fs::create_dir(&sizes).unwrap();
    for len in [0usize, 1, 511, 512, 513, 1023, 1024, 1025, 4096, 1 << 20, (1 << 20) + 1] {
        write(&sizes.join(format!("f{len}")), len);
    }
    let sparse = std::fs::File::create(sizes.join("sparse")).unwrap();
    sparse.set_len(50 << 20).unwrap();
    let sub = root.join("sub").join("deeper").join("deepest");
    std::fs::create_dir_all(&sub).unwrap();
    write(&sub.join("leaf.rs"), 10);
    write(&root.join("sub").join("mid.rs"), 700);
    std::fs::create_dir(root.join("empty-dir")).unwrap();
    write(&root.join("sub").join("target-file"), 5);
    symlink("target-file", root.join("sub").join("link-to-file")).unwrap();
    symlink("deeper", root.join("sub").join("link-to-dir")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    symlink("self-loop", root.join("self-loop")).unwrap();
    symlink("..", root.join("sub").join("deeper").join("up")).unwrap();
    std::fs::hard_link(root.join("sub").join("mid.rs"), root.join("hardlink-to-mid")).unwrap();
    mkfifo(&root.join("fifo"));
    let socket = std::os::unix::net::UnixListener::bind(root.join("socket")).unwrap();
    std::mem::forget(socket); // keep the socket file; the listener's fd closes with the process
    let modes = root.join("modes");
    std::fs::create_dir(&modes).unwrap();
    for (name, mode) in [
        ("m644", 0o644),
        ("m755", 0o755),
        ("m4755", 0o4755),
        ("m2750", 0o2750),
        ("m1777", 0o1777),
        ("m000", 0o000),
        ("m666", 0o666),
    ] {
        write(&modes.join(name), 1);
        std::fs::set_permissions(modes.join(name), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    if is_root() {
        let owners = root.join("owners");
        std::fs::create_dir(&owners).unwrap();
        for (name, uid, gid) in [("nobody", 65534, 65534), ("ghost", 12345, 54321), ("mixed", 0, 65534)] {
            write(&owners.join(name), 1);
            rustix::fs::chown(
                owners.join(name),
                Some(rustix::fs::Uid::from_raw(uid)),
                Some(rustix::fs::Gid::from_raw(gid)),
            )
            .unwrap();
        }
    }
    let times = root.join("times");
    std::fs::create_dir(&times).unwrap();
    // (atime ago, mtime ago): away from minute and day boundaries so runs seconds apart agree.
    for (name, a, m) in [
        ("now", 5, 20),
        ("minutes", 3600, 200),
        ("hours", 3600, 7200),
        ("days", 7200, 36 * 3600),
        ("week", 7200, 8 * 86400),
        ("year", 7200, 400 * 86400),
        ("future", 5, -86400 - 600),
    ] {
        write(&times.join(name), 1);
        set_times(&times.join(name), a, m);
    }
    deep_chain(&root.join("deep"), 45);
    // Directory times last: creating entries changed them. Atime after mtime and recent, so that
    // reading the directories does not move their atimes (relatime) between the oracle's run and ours.
    for dir in ["sub", "empty-dir", "sizes", "modes", "times"] {
        set_times(&root.join(dir), 3000, 5000);
    }
    root
}

/// Builds an argv of OsStrings from str and byte pieces.
pub fn argv(parts: &[&[u8]]) -> Vec<OsString> {
    parts.iter().map(|p| OsString::from_vec(p.to_vec())).collect()
}

pub fn wait_briefly() {
    std::thread::sleep(Duration::from_millis(10));
}
