//! `canopy sync` against rsync: after a sync of the hostile tree, and after changing the source in
//! every way a tree changes, `rsync -a -H --delete -n -i` has nothing left to do and diff -r is
//! silent; --dry-run lists and changes nothing; --checksum and --no-delete do what they say.

mod common;

use common::tree_oracles::{assert_same_tree, entry_records};
use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

fn sync(args: &[&str], src: &Path, dst: &Path) -> std::process::Output {
    let mut cmd = canopy();
    cmd.arg("sync").args(args).arg(src).arg(dst);
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

#[test]
fn sync_makes_the_destination_identical_and_keeps_it_so() {
    let tmp = tempfile::tempdir().unwrap();
    let src = hostile_tree(tmp.path());
    let dst = tmp.path().join("mirror");
    ok(sync(&["-j", "4", "--chunk-size", "256K"], &src, &dst));
    assert_same_tree(&src, &dst);

    change(&src);
    std::fs::write(dst.join("extra"), b"only in the mirror").unwrap();
    std::fs::create_dir_all(dst.join("extra-dir/x")).unwrap();
    std::fs::write(dst.join("sizes/.canopy-tmp-0123456789abcdef"), b"left by a killed run").unwrap();

    let before = entry_records(&dst);
    let listing = ok(sync(&["-n"], &src, &dst));
    assert_eq!(entry_records(&dst), before, "--dry-run changes nothing");
    let dst_text = dst.display().to_string();
    for line in [
        format!("delete {dst_text}/extra"),
        format!("delete {dst_text}/extra-dir"),
        format!("delete {dst_text}/-dash"),
        format!("delete {dst_text}/sizes/.canopy-tmp-0123456789abcdef"),
        format!("create {dst_text}/new file"),
        format!("mkdir {dst_text}/new-dir"),
        format!("attrs {dst_text}/modes/m644"),
    ] {
        assert!(listing.lines().any(|l| l == line), "dry run lists {line:?}:\n{listing}");
    }
    // The two names of the rewritten hard-linked file: whichever is met first is copied.
    let first = [format!("replace {dst_text}/sub/mid.rs"), format!("replace {dst_text}/hardlink-to-mid")];
    assert!(listing.lines().any(|l| first.iter().any(|f| f == l)), "{listing}");

    ok(sync(&["-j", "3"], &src, &dst));
    assert_same_tree(&src, &dst);
    assert_eq!(ok(sync(&["-n"], &src, &dst)), "", "nothing left to do");
}

#[test]
fn checksum_finds_what_size_and_time_miss() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("f"), b"same size").unwrap();
    let dst = tmp.path().join("dst");
    ok(sync(&[], &src, &dst));
    rewrite_keeping_size_and_time(&src.join("f"));
    ok(sync(&[], &src, &dst));
    assert_ne!(
        std::fs::read(src.join("f")).unwrap(),
        std::fs::read(dst.join("f")).unwrap(),
        "quick check skips it"
    );
    assert_eq!(ok(sync(&["-c", "-n"], &src, &dst)), format!("replace {}/f\n", dst.display()));
    ok(sync(&["--checksum"], &src, &dst));
    assert_eq!(std::fs::read(src.join("f")).unwrap(), std::fs::read(dst.join("f")).unwrap());
}

#[test]
fn no_delete_keeps_extra_entries_and_refusals() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("f"), b"f").unwrap();
    let dst = tmp.path().join("dst");
    std::fs::create_dir(&dst).unwrap();
    std::fs::write(dst.join("keep"), b"k").unwrap();
    ok(sync(&["--no-delete"], &src, &dst));
    assert!(dst.join("keep").exists() && dst.join("f").exists());
    ok(sync(&[], &src, &dst));
    assert!(!dst.join("keep").exists(), "deletion is the default");

    let inside = src.join("sub");
    let out = sync(&[], &src, &inside);
    assert_eq!(out.status.code(), Some(2), "a destination inside the source");
    let out = sync(&[], &src, Path::new("/"));
    assert_eq!(out.status.code(), Some(2), "never into /");
    let out = sync(&[], &src.join("f"), &dst);
    assert_eq!(out.status.code(), Some(2), "the source must be a directory");
}
