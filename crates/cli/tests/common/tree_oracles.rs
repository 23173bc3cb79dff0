//! Oracles for tools that copy trees: `diff -r`, `rsync -n -i` and GNU find's view of every entry.
//!
//! diff and rsync stop at paths longer than PATH_MAX ("File name too long", "filename overflows
//! max-path len"), so the hostile tree's `deep` chain is left out of them; `find -printf` walks it
//! and covers it in [`entry_records`].

use super::{gnu, run};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Top-level names diff and rsync cannot handle (paths past PATH_MAX below them).
pub const BEYOND_PATH_MAX: &[&str] = &["deep"];

/// Names diff is not asked to read: a multi-GiB sparse file costs it seconds of reading zeros.
/// [`entry_records`] still checks its size and times, the caller its data and holes.
pub const NOT_FOR_DIFF: &[&str] = &["huge-sparse"];

/// `diff -r --no-dereference` output, less its notes on FIFOs and sockets, which it cannot compare
/// but reports even when both sides have the same kind ("File a is a fifo while file b is a fifo").
pub fn diff_r(a: &Path, b: &Path) -> String {
    let mut cmd = gnu("diff");
    cmd.args(["-r", "--no-dereference"]);
    for name in BEYOND_PATH_MAX.iter().chain(NOT_FOR_DIFF) {
        cmd.args(["-x", name]);
    }
    cmd.arg(a).arg(b);
    let out = run(cmd, None);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines()
        .filter(|l| {
            // diff compares no special files; rsync's itemized changes cover their device numbers.
            !["fifo", "socket", "character special file", "block special file"]
                .iter()
                .any(|k| l.ends_with(&format!(" is a {k}")) && l.contains(&format!(" is a {k} while file ")))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// What `rsync -a -H --delete -n -i SRC/ DST/` would still do (nothing, after a correct copy).
pub fn rsync_changes(src: &Path, dst: &Path) -> String {
    let mut cmd = gnu("rsync");
    cmd.args(["-a", "-H", "--delete", "-n", "-i"]);
    for name in BEYOND_PATH_MAX {
        cmd.arg(format!("--exclude=/{name}"));
    }
    cmd.arg(format!("{}/", src.display())).arg(format!("{}/", dst.display()));
    let out = run(cmd, None);
    assert!(out.status.success(), "rsync failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every entry below `root` as GNU find sees it: path, type, mode, owner, group, link count, size
/// (regular files and symlinks), modification time, symlink targets, and the access time of
/// files, FIFOs and sockets (reading a directory or a symlink's target moves its own, in the
/// source too, as with cp -a); one line each, sorted.
pub fn entry_records(root: &Path) -> Vec<String> {
    let mut cmd = gnu("find");
    cmd.arg(root).args(["-mindepth", "1", "-printf", "%P\\0%y\\0%m\\0%U\\0%G\\0%n\\0%s\\0%T@\\0%A@\\0%l\\0"]);
    let out = run(cmd, None);
    assert!(out.status.success(), "find failed: {}", String::from_utf8_lossy(&out.stderr));
    let fields: Vec<String> =
        out.stdout.split(|&b| b == 0).map(|s| String::from_utf8_lossy(s).into_owned()).collect();
    let mut records: Vec<String> = fields
        .chunks_exact(10)
        .map(|f| {
            let size = if f[1] == "d" { "-" } else { &f[6] };
            let atime = if ["f", "p", "s"].contains(&f[1].as_str()) { &f[8] } else { "-" };
            format!(
                "{:?} type={} mode={} owner={}:{} links={} size={size} mtime={} atime={atime} target={:?}",
                f[0], f[1], f[2], f[3], f[4], f[5], f[7], f[9]
            )
        })
        .collect();
    records.sort();
    records
}

/// The hard-link structure: for each inode with several names below `root`, its names (sorted).
pub fn link_groups(root: &Path) -> Vec<Vec<String>> {
    let mut cmd = gnu("find");
    cmd.arg(root).args(["-mindepth", "1", "-not", "-type", "d", "-links", "+1", "-printf", "%i\\0%P\\0"]);
    let out = run(cmd, None);
    let fields: Vec<String> =
        out.stdout.split(|&b| b == 0).map(|s| String::from_utf8_lossy(s).into_owned()).collect();
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in fields.chunks(2).filter(|p| p.len() == 2) {
        groups.entry(pair[0].clone()).or_default().push(pair[1].clone());
    }
    let mut groups: Vec<Vec<String>> = groups
        .into_values()
        .map(|mut g| {
            g.sort();
            g
        })
        .collect();
    groups.sort();
    groups
}

/// The access times of the regular files `diff -r` reads below `root`, to put back once it read
/// them: reading a file moves its access time (relatime), and the oracles must leave the trees as
/// they found them — a later comparison would otherwise see the times of the test's own reads.
pub struct Atimes(Vec<(PathBuf, rustix::fs::Timespec)>);

impl Atimes {
    pub fn of(root: &Path) -> Atimes {
        let mut found = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if BEYOND_PATH_MAX.iter().chain(NOT_FOR_DIFF).any(|n| name == *n) {
                    continue;
                }
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_dir() {
                    stack.push(entry.path());
                } else if meta.is_file() {
                    let atime =
                        rustix::fs::Timespec { tv_sec: meta.atime(), tv_nsec: meta.atime_nsec() as _ };
                    found.push((entry.path(), atime));
                }
            }
        }
        Atimes(found)
    }

    pub fn restore(&self) {
        for (path, atime) in &self.0 {
            let times = rustix::fs::Timestamps {
                last_access: *atime,
                last_modification: rustix::fs::Timespec { tv_sec: 0, tv_nsec: rustix::fs::UTIME_OMIT },
            };
            let _ =
                rustix::fs::utimensat(rustix::fs::CWD, path, &times, rustix::fs::AtFlags::SYMLINK_NOFOLLOW);
        }
    }
}

/// Asserts that `copy` is a faithful copy of `source` by every oracle, leaving both as they were.
#[track_caller]
pub fn assert_same_tree(source: &Path, copy: &Path) {
    let (want, got) = (entry_records(source), entry_records(copy));
    let read_by_diff = [Atimes::of(source), Atimes::of(copy)];
    let changes = rsync_changes(source, copy);
    let diff = diff_r(source, copy);
    read_by_diff.iter().for_each(Atimes::restore);
    assert_eq!(changes, "", "rsync -n -i would still change things");
    assert_eq!(diff, "", "diff -r {} {}", source.display(), copy.display());
    if want != got {
        let missing: Vec<_> = want.iter().filter(|r| !got.contains(r)).take(8).collect();
        let extra: Vec<_> = got.iter().filter(|r| !want.contains(r)).take(8).collect();
        panic!("entries differ\n  source only: {missing:#?}\n  copy only: {extra:#?}");
    }
    assert_eq!(link_groups(source), link_groups(copy), "hard-link structure");
}
