//! `canopy sync` on the hostile tree (odd names, every file type, hard links, sparse files, foreign
//! owners, planned times): after `--mirror` (-aHAX --delete) and after changing the source in every
//! way a tree changes, what the dry run itemizes is what rsync itemizes with the same argv, and the
//! mirror is identical by every oracle (`rsync -a -H --delete -n -i`, `diff -r`, GNU find's view of
//! each entry); a second dry run has nothing to do.

mod common;

use common::classic::{comparable_rsync_lines, linked_names};
use common::tree_oracles::{Atimes, assert_same_tree, entry_records};
use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

/// `canopy sync ARGS SRC/ DST/` (the contents of SRC into DST), `--exclude=/deep`: rsync cannot
/// name paths past PATH_MAX, so the dry runs compared with it leave that chain out.
fn sync(args: &[&str], src: &Path, dst: &Path) -> std::process::Output {
    let mut cmd = canopy();
    cmd.arg("sync").args(args).arg(format!("{}/", src.display())).arg(format!("{}/", dst.display()));
    run(cmd, None)
}

#[track_caller]
fn ok(out: std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Same size and modification time, different bytes: only --checksum sees it.
fn rewrite_keeping_size_and_time(path: &Path) {
    let before = std::fs::metadata(path).unwrap();
    let mut data = std::fs::read(path).unwrap();
    data[0] ^= 0xff;
    std::fs::write(path, &data).unwrap();
    set_times_like(path, &before);
}

/// Changes the source in every way a tree changes between two syncs.
fn change(src: &Path) {
    std::fs::write(src.join("sub/mid.rs"), vec![b'y'; 900]).unwrap(); // new content (and size) of a hard-linked file
    std::fs::remove_file(src.join("-dash")).unwrap();
    std::fs::remove_dir_all(src.join("sub/deeper/deepest")).unwrap();
    std::fs::write(src.join("new file"), b"new").unwrap();
    std::fs::create_dir_all(src.join("new-dir/inner")).unwrap();
    std::fs::write(src.join("new-dir/inner/f"), b"f").unwrap();
    std::fs::remove_file(src.join("UPPER.TXT")).unwrap();
    std::fs::create_dir(src.join("UPPER.TXT")).unwrap(); // file → directory
    std::fs::write(src.join("UPPER.TXT/inside"), b"i").unwrap();
    std::fs::remove_dir(src.join("empty-dir")).unwrap();
    symlink("sizes", src.join("empty-dir")).unwrap(); // directory → symlink
    std::fs::remove_file(src.join("dangling")).unwrap();
    std::fs::write(src.join("dangling"), b"now a file").unwrap(); // symlink → file
    std::fs::set_permissions(src.join("modes/m644"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::hard_link(src.join("sizes/f1"), src.join("new-dir/link-to-f1")).unwrap();
    for dir in ["", "sub", "sub/deeper", "sizes", "modes", "new-dir", "new-dir/inner", "UPPER.TXT"] {
        set_times(&src.join(dir), 3000, 5000);
    }
}

/// What `rsync ARGS SRC/ DST/` prints, for the same argv as canopy's.
fn rsync(args: &[&str], src: &Path, dst: &Path) -> String {
    let mut cmd = gnu("rsync");
    cmd.args(args).arg(format!("{}/", src.display())).arg(format!("{}/", dst.display()));
    let out = run(cmd, None);
    assert!(out.status.success(), "rsync: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn sync_makes_the_destination_identical_and_keeps_it_so() {
    let tmp = tempfile::tempdir().unwrap();
    let src = hostile_tree(tmp.path());
    let dst = tmp.path().join("mirror");
    ok(sync(&["--mirror", "-j", "4", "--chunk-size", "256K"], &src, &dst));
    assert_same_tree(&src, &dst);

    change(&src);
    std::fs::write(dst.join("extra"), b"only in the mirror").unwrap();
    std::fs::create_dir_all(dst.join("extra-dir/x")).unwrap();
    std::fs::write(dst.join("sizes/.canopy-tmp-0123456789abcdef"), b"left by a killed run").unwrap();

    let before = entry_records(&dst);
    let argv = ["-aHni", "--delete", "--exclude=/deep"];
    let reads = Atimes::of(&dst);
    let ours = ok(sync(&argv, &src, &dst));
    assert_eq!(entry_records(&dst), before, "--dry-run changes nothing");
    let theirs = rsync(&argv, &src, &dst);
    reads.restore();
    let linked = linked_names(&src, "");
    assert_eq!(
        comparable_rsync_lines(&lines(&ours), &linked),
        comparable_rsync_lines(&lines(&theirs), &linked),
        "the dry run itemizes what rsync's does"
    );
    assert!(ours.lines().any(|l| l == "*deleting   extra-dir/x/"), "{ours}");

    ok(sync(&["-aH", "--delete", "-j", "3"], &src, &dst));
    assert_same_tree(&src, &dst);
    assert_eq!(ok(sync(&argv, &src, &dst)), "", "nothing left to do");
}

#[test]
fn checksum_finds_what_size_and_time_miss() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("f"), b"same size").unwrap();
    let dst = tmp.path().join("dst");
    ok(sync(&["-a"], &src, &dst));
    rewrite_keeping_size_and_time(&src.join("f"));
    ok(sync(&["-a"], &src, &dst));
    assert_ne!(
        std::fs::read(src.join("f")).unwrap(),
        std::fs::read(dst.join("f")).unwrap(),
        "quick check skips it"
    );
    assert_eq!(ok(sync(&["-acni"], &src, &dst)), ">fc........ f\n");
    assert_eq!(rsync(&["-acni"], &src, &dst), ">fc........ f\n");
    ok(sync(&["-a", "--checksum"], &src, &dst));
    assert_eq!(std::fs::read(src.join("f")).unwrap(), std::fs::read(dst.join("f")).unwrap());
}

/// The mirror test's flake: the oracles read files (diff -r), which moves their access times; a
/// sync after that must not find times the test itself moved. The oracles put them back.
#[test]
fn the_oracles_leave_access_times_as_they_found_them() {
    let tmp = tempfile::tempdir().unwrap();
    let src = hostile_tree(tmp.path());
    let dst = tmp.path().join("mirror");
    ok(sync(&["-aH"], &src, &dst));
    let (src_before, dst_before) = (entry_records(&src), entry_records(&dst));
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_same_tree(&src, &dst);
    assert_eq!(entry_records(&src), src_before, "the oracles moved the source's times");
    assert_eq!(entry_records(&dst), dst_before, "the oracles moved the copy's times");
}

#[test]
fn without_delete_extra_entries_stay() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("f"), b"f").unwrap();
    let dst = tmp.path().join("dst");
    std::fs::create_dir(&dst).unwrap();
    std::fs::write(dst.join("keep"), b"k").unwrap();
    ok(sync(&["-a"], &src, &dst));
    assert!(dst.join("keep").exists() && dst.join("f").exists());
    assert_eq!(ok(sync(&["-av", "--delete"], &src, &dst)).lines().nth(1), Some("deleting keep"));
    assert!(!dst.join("keep").exists());
}
