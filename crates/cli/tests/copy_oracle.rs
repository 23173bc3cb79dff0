//! `canopy cp -a` on the hostile tree (odd names, every file type, hard links, sparse files
//! including a multi-GiB one, a path past PATH_MAX, foreign owners, planned times): diff -r,
//! rsync -n -i and GNU find's view of every entry must find the copy identical; big files are split
//! into chunks.

mod common;

use common::tree_oracles::{assert_same_tree, entry_records};
use common::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The hostile tree plus what copying adds to worry about: a multi-GiB sparse file with data in
/// the middle, a file over several chunks, more hard links (one across directories).
fn copy_tree(base: &Path) -> std::path::PathBuf {
    let root = hostile_tree(base);
    let big = std::fs::File::create(root.join("sizes/huge-sparse")).unwrap();
    big.set_len(3 << 30).unwrap();
    rustix::io::pwrite(&big, b"in the middle", 1 << 30).unwrap();
    let data: Vec<u8> = (0..(5u32 << 20) + 7).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("sizes/chunky"), &data).unwrap();
    std::fs::hard_link(root.join("sizes/chunky"), root.join("sub/deeper/chunky-link")).unwrap();
    std::fs::hard_link(root.join("sub/target-file"), root.join("sub/deeper/deepest/target-link")).unwrap();
    set_times(&root.join("sub/deeper"), 3000, 5000);
    set_times(&root.join("sub/deeper/deepest"), 3000, 5000);
    root
}

fn cp(args: &[&str], paths: &[&Path]) -> std::process::Output {
    let mut cmd = canopy();
    cmd.arg("cp").args(args).args(paths);
    run(cmd, None)
}

#[test]
fn copy_of_the_hostile_tree_is_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let src = copy_tree(tmp.path());
    for (threads, name) in [("1", "copy1"), ("4", "copy4")] {
        let dst = tmp.path().join(name);
        let out = cp(&["-a", "-j", threads, "--chunk-size", "1M"], &[&src, &dst]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_same_tree(&src, &dst);
        for sparse in ["sizes/sparse", "sizes/huge-sparse"] {
            let blocks = std::fs::metadata(dst.join(sparse)).unwrap().blocks();
            assert!(blocks <= std::fs::metadata(src.join(sparse)).unwrap().blocks(), "{sparse} stays sparse");
        }
        let mut middle = [0u8; 13];
        let huge = std::fs::File::open(dst.join("sizes/huge-sparse")).unwrap();
        rustix::io::pread(&huge, &mut middle, 1 << 30).unwrap();
        assert_eq!(&middle, b"in the middle", "the data inside the holes");
        let leftovers = run(
            {
                let mut c = gnu("find");
                c.arg(&dst).args(["-name", ".canopy-tmp-*"]);
                c
            },
            None,
        );
        assert!(
            leftovers.stdout.is_empty(),
            "temporaries left: {}",
            String::from_utf8_lossy(&leftovers.stdout)
        );
    }
}

#[test]
fn into_an_existing_directory_and_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let src = copy_tree(tmp.path());
    let into = tmp.path().join("archive");
    std::fs::create_dir(&into).unwrap();
    let out = cp(&["-a", "--verify", "--chunk-size", "2M"], &[&src, &src.join("sub/mid.rs"), &into]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_tree(&src, &into.join("tree"));
    assert_eq!(std::fs::read(into.join("mid.rs")).unwrap(), std::fs::read(src.join("sub/mid.rs")).unwrap());
}

/// A copy into an existing directory that holds an older copy: cp's meaning, everything copied
/// again over it (what differs in the destination is repaired, what only it has stays).
#[test]
fn onto_an_older_copy_everything_is_copied_again() {
    let tmp = tempfile::tempdir().unwrap();
    let src = copy_tree(tmp.path());
    let archive = tmp.path().join("archive");
    std::fs::create_dir(&archive).unwrap();
    assert!(cp(&["-a"], &[&src, &archive]).status.success());
    let dst = archive.join("tree");
    // Damage: a truncated file with the old time kept, a wrong mode, a missing file.
    let damaged = dst.join("sizes/f4096");
    let times = std::fs::metadata(&damaged).unwrap();
    std::fs::write(&damaged, b"half").unwrap();
    set_times_like(&damaged, &times);
    std::fs::set_permissions(dst.join("modes/m755"), std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .unwrap();
    std::fs::remove_file(dst.join("sub/mid.rs")).unwrap();
    let before = std::fs::metadata(dst.join("sizes/f1048576")).unwrap().ino();
    let out = cp(&["-a"], &[&src, &archive]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_tree(&src, &dst);
    assert_ne!(
        std::fs::metadata(dst.join("sizes/f1048576")).unwrap().ino(),
        before,
        "copied again, as cp does"
    );
    // -T names the copy itself: the same tree again, never DEST/SRC.
    let out = cp(&["-aT"], &[&src, &dst]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dst.join("tree").exists());
    assert_same_tree(&src, &dst);
}

#[test]
fn refuses_what_cp_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("d");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    let out = cp(&["-a"], &[&src, &src.join("sub/copy")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("into itself"));
    std::fs::write(tmp.path().join("f"), b"x").unwrap();
    let out = cp(&["-a"], &[&src, &tmp.path().join("f"), &tmp.path().join("f")]);
    assert_eq!(out.status.code(), Some(1), "several sources need a directory");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
    let out = cp(&["-a"], &[&tmp.path().join("missing"), &tmp.path().join("x")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No such file or directory"));
    std::fs::write(tmp.path().join("nondir"), b"x").unwrap();
    let out = cp(&["-a"], &[&src, &tmp.path().join("nondir")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot overwrite non-directory"));
    assert_eq!(entry_records(&tmp.path().join("nondir")), Vec::<String>::new());
}

/// An unprivileged user copying a tree with a subtree it cannot read: the rest is copied, the
/// subtree is reported with its path and reason, the exit status is 1.
#[test]
fn unreadable_subtree_as_an_unprivileged_user() {
    if !root_or_skip("set up other owners") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("open/deeper")).unwrap();
    std::fs::create_dir_all(src.join("locked")).unwrap();
    std::fs::write(src.join("open/deeper/f"), b"readable").unwrap();
    std::fs::write(src.join("locked/secret"), b"s").unwrap();
    std::fs::write(src.join("unreadable-file"), b"u").unwrap();
    std::fs::set_permissions(src.join("locked"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(src.join("unreadable-file"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let out_dir = tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    rustix::fs::chown(
        &out_dir,
        Some(rustix::fs::Uid::from_raw(65534)),
        Some(rustix::fs::Gid::from_raw(65534)),
    )
    .unwrap();
    let mut cmd = as_nobody(env!("CARGO_BIN_EXE_canopy"));
    cmd.args(["cp", "-a"]).arg(&src).arg(&out_dir);
    let out = run(cmd, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("'{}': Permission denied", src.join("locked").display())), "{stderr}");
    assert!(
        stderr
            .contains(&format!("cannot read '{}': Permission denied", src.join("unreadable-file").display())),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert_eq!(std::fs::read(out_dir.join("src/open/deeper/f")).unwrap(), b"readable");
    assert!(!out_dir.join("src/unreadable-file").exists(), "nothing half-made");
}
