//! Shared helpers of the end-to-end tests: the binary, hostile test trees, GNU oracles.
#![allow(dead_code)] // each test binary uses a different subset

pub mod classic;
pub mod du_tree;
pub mod find_gnu;
pub mod grep_trees;
pub mod host_roots;
pub mod interrupt;
pub mod latency_mount;
pub mod launch_oracles;
pub mod mpirun;
pub mod netns;
pub mod random_tree;
pub mod slurm;
pub mod tree_oracles;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

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
// Each test binary uses some of them (the module is compiled into each).
#[allow(unused_imports)]
pub use canopy_testkit::{
    deep_chain, fuse_available, hostile_tree, is_root, mkfifo, root_or_skip, set_times, skip,
};

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

/// Builds an argv of OsStrings from str and byte pieces.
pub fn argv(parts: &[&[u8]]) -> Vec<OsString> {
    parts.iter().map(|p| OsString::from_vec(p.to_vec())).collect()
}

pub fn wait_briefly() {
    std::thread::sleep(Duration::from_millis(10));
}

/// Output lines, sorted: for comparing outputs whose order parallelism does not fix.
pub fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes).lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// A small tree for flag tests: 12 directories of 30 one-line files (`line N`), 3 levels.
pub fn small_tree(root: &Path) {
    for d in 0..12 {
        let dir = root.join(format!("d{d}/sub{}", d % 3));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..30 {
            std::fs::write(dir.join(format!("f{f}")), format!("line {f}\n")).unwrap();
        }
    }
}
