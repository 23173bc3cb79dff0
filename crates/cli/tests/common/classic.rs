//! Running a classic tool (rsync, GNU cp) and canopy with the same argv on twin trees, and
//! comparing what they leave and print.

use super::{canopy, gnu, mkfifo, run};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

/// What one side of a comparison did.
pub struct Side {
    pub out: Output,
    /// The directory it ran in, holding its destination.
    pub dir: PathBuf,
    /// When that directory was made (before the trees in it).
    pub began: SystemTime,
}

impl Side {
    pub fn stdout_lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.out.stdout).lines().map(str::to_string).collect()
    }
}

/// Runs `classic ARGV` in `base/classic` and `canopy TOOL ARGV` in `base/canopy` — the same
/// argv, relative paths resolving to twin trees that `prepare` makes in each directory.
pub fn run_both(
    base: &Path,
    classic: &str,
    tool: &str,
    argv: &[&str],
    prepare: impl Fn(&Path),
) -> (Side, Side) {
    let sides: Vec<Side> = ["classic", "canopy"]
        .iter()
        .map(|name| {
            let dir = base.join(name);
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap();
            }
            let began = SystemTime::now();
            std::fs::create_dir(&dir).unwrap();
            prepare(&dir);
            let mut cmd: Command = if *name == "classic" {
                gnu(classic)
            } else {
                let mut c = canopy();
                c.arg(tool);
                c
            };
            cmd.args(argv).current_dir(&dir);
            Side { out: run(cmd, None), dir, began }
        })
        .collect();
    let mut sides = sides.into_iter();
    (sides.next().unwrap(), sides.next().unwrap())
}

/// What `rsync -n -i` between two trees lists: nothing when they are the same. `times`: compare
/// modification times too (the copies kept them).
pub fn rsync_differences(a: &Path, b: &Path, times: bool) -> String {
    let mut cmd = gnu("rsync");
    if times {
        cmd.arg("-aHni");
    } else {
        cmd.args(["-rlpgoDHni", "--size-only"]);
    }
    cmd.arg("--delete");
    let slash = |p: &Path| {
        let mut bytes = p.as_os_str().as_bytes().to_vec();
        bytes.push(b'/');
        std::ffi::OsString::from(std::ffi::OsStr::from_bytes(&bytes))
    };
    cmd.arg(slash(a)).arg(slash(b));
    let out = run(cmd, None);
    assert!(out.status.success(), "rsync failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `diff -r --no-dereference` between two trees (FIFOs and sockets it cannot compare left out).
pub fn diff_differences(a: &Path, b: &Path) -> String {
    super::tree_oracles::diff_r(a, b)
}

/// Asserts the two sides left the same trees in their directories.
#[track_caller]
pub fn assert_same_results(classic: &Side, canopy: &Side, times: bool, context: &str) {
    settle_bumped_dir_times(classic, canopy);
    let reads = [super::tree_oracles::Atimes::of(&classic.dir), super::tree_oracles::Atimes::of(&canopy.dir)];
    let rsync = rsync_differences(&classic.dir, &canopy.dir, times);
    let diff = diff_differences(&classic.dir, &canopy.dir);
    reads.iter().for_each(super::tree_oracles::Atimes::restore);
    assert_eq!(rsync, "", "{context}: the trees differ (rsync -n -i from the classic tool's to canopy's)");
    assert_eq!(diff, "", "{context}: the trees differ (diff -r)");
}

/// Gives the directories whose modification time neither side chose the same old time on both
/// sides: those the test made (the twin roots, an existing DEST) and both tools then changed by
/// adding or removing entries carry the clock's time of each run, which differs between the two
/// runs. A directory whose time a tool set (a copy keeping times) is older than its run and stays
/// compared, as does one where only one side has a recent time.
fn settle_bumped_dir_times(a: &Side, b: &Side) {
    let recent = |side: &Side, relative: &Path| {
        std::fs::symlink_metadata(side.dir.join(relative))
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= side.began - std::time::Duration::from_secs(1))
    };
    let mut stack = vec![PathBuf::new()];
    while let Some(relative) = stack.pop() {
        if recent(a, &relative) && recent(b, &relative) {
            for side in [a, b] {
                let path = side.dir.join(&relative);
                let times = rustix::fs::Timestamps {
                    last_access: rustix::fs::Timespec { tv_sec: 0, tv_nsec: rustix::fs::UTIME_OMIT },
                    last_modification: rustix::fs::Timespec { tv_sec: 1_000_000_000, tv_nsec: 0 },
                };
                rustix::fs::utimensat(rustix::fs::CWD, &path, &times, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .unwrap();
            }
        }
        let Ok(entries) = std::fs::read_dir(a.dir.join(&relative)) else { continue };
        for entry in entries.flatten() {
            let child = relative.join(entry.file_name());
            let both_dirs = [a, b]
                .iter()
                .all(|side| std::fs::symlink_metadata(side.dir.join(&child)).is_ok_and(|m| m.is_dir()));
            if both_dirs {
                stack.push(child);
            }
        }
    }
}

/// Names of the source's multiply linked files relative to `root`, as the tools list them below
/// their transfer root (`prefix/NAME`, or `NAME` without a prefix).
pub fn linked_names(root: &Path, prefix: &str) -> BTreeSet<String> {
    let mut find = gnu("find");
    find.arg(root).args(["-mindepth", "1", "-not", "-type", "d", "-links", "+1", "-printf", "%P\\0"]);
    run(find, None)
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let name = String::from_utf8_lossy(p).into_owned();
            if prefix.is_empty() { name } else { format!("{prefix}/{name}") }
        })
        .collect()
}

/// rsync's output lines made comparable across runs that may pick different names of one inode
/// to copy (rsync -H copies one and links the others to it, canopy whichever its workers meet
/// first): for names of multiply linked files, the update letter and ` => FIRST` are dropped, and
/// so is a line for such a name that only relinks an unchanged file (`hf` and spaces: it was not
/// the one copied). The `-v` header and totals, which say how rsync's protocol went, are left out.
/// Sorted: both tools may print in any order (canopy's workers, rsync's recursion).
pub fn comparable_rsync_lines(lines: &[String], linked: &BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = lines
        .iter()
        .filter(|l| {
            !(l.is_empty()
                || *l == "sending incremental file list"
                || l.starts_with("sent ")
                || l.starts_with("total size is "))
        })
        .filter_map(|line| {
            let itemized = line.len() > 12 && line.as_bytes()[11] == b' ' && !line.starts_with("*deleting");
            let (code, name) =
                if itemized { (Some(&line[..11]), &line[12..]) } else { (None, line.as_str()) };
            let bare = name.split(" => ").next().unwrap_or(name);
            if !linked.contains(bare) {
                return Some(line.clone());
            }
            match code {
                Some(code) if code[2..].bytes().all(|b| b == b' ') => None,
                Some(code) => Some(format!("?{} {bare}", &code[1..])),
                None => Some(bare.to_string()),
            }
        })
        .collect();
    out.sort();
    out
}

pub const DAY: i64 = 86_400;

/// Sets both times of `path` (not following a symlink) to `sec` seconds since the epoch.
pub fn stamp(path: &Path, sec: i64) {
    let ts = rustix::fs::Timespec { tv_sec: sec, tv_nsec: 0 };
    let times = rustix::fs::Timestamps { last_access: ts, last_modification: ts };
    rustix::fs::utimensat(rustix::fs::CWD, path, &times, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).unwrap();
}

pub fn write(path: &Path, data: &[u8], sec: i64) {
    std::fs::write(path, data).unwrap();
    stamp(path, sec);
}

/// The source, `src`, in `dir`: odd names, nested directories, three names of one inode, modes,
/// symlinks (to a file, to a directory, dangling), a FIFO, times in the past.
pub fn source(dir: &Path) {
    let src = dir.join("src");
    for sub in ["a/b/c", "empty", "cache", "logs"] {
        std::fs::create_dir_all(src.join(sub)).unwrap();
    }
    let base = 1_600_000_000;
    let odd: [&[u8]; 9] = [
        b"new\nline",
        b"tab\there",
        b"\xff\xfe x",
        b"sp ace",
        "caf\u{e9}".as_bytes(),
        b"-dash",
        b"it's",
        b"star*",
        b"[a]",
    ];
    for (i, name) in odd.iter().enumerate() {
        write(&src.join(OsStr::from_bytes(name)), &vec![b'o'; i + 1], base + i as i64 * DAY);
    }
    for (i, name) in
        ["a/one.txt", "a/b/two.txt", "a/b/c/three.txt", "cache/blob", "logs/run.log"].iter().enumerate()
    {
        write(&src.join(name), format!("{name} {i}\n").repeat(i * 40 + 1).as_bytes(), base - i as i64 * DAY);
    }
    write(&src.join("shared"), b"one inode, three names\n", base);
    std::fs::hard_link(src.join("shared"), src.join("a/shared-again")).unwrap();
    std::fs::hard_link(src.join("shared"), src.join("a/b/c/shared-deep")).unwrap();
    write(&src.join("mode600"), b"private\n", base);
    std::fs::set_permissions(src.join("mode600"), std::fs::Permissions::from_mode(0o600)).unwrap();
    write(&src.join("exec"), b"#!/bin/sh\n", base);
    std::fs::set_permissions(src.join("exec"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&src.join("same-size"), b"content A\n", base);
    write(&src.join("older-here"), b"a file the destination has newer\n", base);
    write(&src.join("becomes-dir"), b"the destination has a directory here\n", base);
    std::fs::create_dir(src.join("was-file")).unwrap();
    write(&src.join("was-file/inside"), b"x", base);
    symlink("a/one.txt", src.join("to-file")).unwrap();
    symlink("a/b", src.join("to-dir")).unwrap();
    symlink("nowhere", src.join("dangling")).unwrap();
    mkfifo(&src.join("fifo"));
    for link in ["to-file", "to-dir", "dangling"] {
        stamp(&src.join(link), base);
    }
    stamp(&src.join("fifo"), base);
    for sub in ["a/b/c", "a/b", "a", "empty", "cache", "logs", "was-file", ""] {
        stamp(&src.join(sub), base + 7 * DAY);
    }
}
