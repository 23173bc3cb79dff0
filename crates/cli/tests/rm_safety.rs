//! `canopy rm`: removes whole hostile trees (past PATH_MAX too) and filtered selections; lists
//! without removing under --dry-run; refuses `/`, `.` and the current directory's ancestors; never
//! removes anything outside the tree while directories are swapped for symlinks to the outside
//! during the run; reports what an unprivileged user cannot remove and exits 1.

mod common;

use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

fn rm(cwd: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = canopy();
    cmd.current_dir(cwd).arg("rm").args(args);
    run(cmd, None)
}

fn find(cwd: &Path, args: &[&str]) -> Vec<u8> {
    let mut cmd = gnu("find");
    cmd.current_dir(cwd).args(args);
    run(cmd, None).stdout
}

#[test]
fn removes_the_hostile_tree_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    let dry = rm(tmp.path(), &["-n", "-j", "4", "tree"]);
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    let everything = find(tmp.path(), &["tree"]);
    assert_same_records(
        &records(&dry.stdout, b'\n'),
        &records(&everything, b'\n'),
        "dry run lists everything",
    );
    assert!(root.join("sub/mid.rs").exists(), "a dry run removes nothing");
    let out = rm(tmp.path(), &["-j", "4", "tree"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!root.exists());
}

#[test]
fn a_filter_removes_matches_and_matching_directories_whole() {
    let tmp = tempfile::tempdir().unwrap();
    hostile_tree(tmp.path());
    // What GNU find says the filter matches, and what lies below matching directories.
    let doomed = find(
        tmp.path(),
        &["tree", "(", "-name", "*.rs", "-o", "-name", "deeper", "-o", "-path", "*/deeper/*", ")"],
    );
    let kept = find(
        tmp.path(),
        &["tree", "-not", "(", "-name", "*.rs", "-o", "-name", "deeper", "-o", "-path", "*/deeper/*", ")"],
    );
    let dry = rm(tmp.path(), &["-n", "tree", "-name", "*.rs", "-o", "-name", "deeper"]);
    assert_same_records(&records(&dry.stdout, b'\n'), &records(&doomed, b'\n'), "filtered dry run");
    let out = rm(tmp.path(), &["-j", "3", "tree", "-name", "*.rs", "-o", "-name", "deeper"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_records(
        &records(&find(tmp.path(), &["tree"]), b'\n'),
        &records(&kept, b'\n'),
        "what is left",
    );
    let out = rm(tmp.path(), &["tree", "-name", "x", "-delete"]);
    assert_eq!(out.status.code(), Some(2), "actions are refused");
}

#[test]
fn refuses_root_dot_and_ancestors_of_the_current_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = tmp.path().join("a/b/c");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(tmp.path().join("a/file"), b"x").unwrap();
    for args in [&["/"][..], &["."], &["../.."], &[".."], &["-n", "/"]] {
        let out = rm(&inner, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("refusing"), "{args:?}");
    }
    let ancestor = tmp.path().join("a");
    let out = rm(&inner, &[ancestor.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(inner.exists() && tmp.path().join("a/file").exists(), "nothing removed from a refused tree");
    let out = rm(&inner, &[".", "-name", "nothing-matches"]);
    assert_eq!(out.status.code(), Some(0), "a filter may start at '.'");
    assert_eq!(rm(&inner, &[]).status.code(), Some(2));
}

/// Directories of the tree are renamed aside and replaced by symlinks to a directory outside it
/// while rm runs: whatever happens to the tree, the outside is untouched.
#[test]
fn a_directory_swapped_for_a_symlink_mid_run_never_leads_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    for i in 0..50 {
        std::fs::write(outside.join(format!("precious{i}")), b"keep").unwrap();
    }
    for round in 0..2 {
        let tree = tmp.path().join(format!("tree{round}"));
        let dirs: Vec<_> = (0..120).map(|d| tree.join(format!("d{d}"))).collect();
        for dir in &dirs {
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            for f in 0..15 {
                std::fs::write(dir.join(format!("f{f}")), b"x").unwrap();
                std::fs::write(dir.join("sub").join(format!("g{f}")), b"x").unwrap();
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let swapper = {
            let (stop, swaps, outside) = (Arc::clone(&stop), Arc::clone(&swaps), outside.clone());
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(round);
                while !stop.load(Ordering::Relaxed) {
                    let dir = &dirs[rng.usize(..dirs.len())];
                    let aside = dir.with_extension("aside");
                    if std::fs::rename(dir, &aside).is_ok() && symlink(&outside, dir).is_ok() {
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        };
        while swaps.load(Ordering::Relaxed) < 10 {
            std::thread::yield_now();
        }
        let out = rm(tmp.path(), &["-j", "4", tree.file_name().unwrap().to_str().unwrap()]);
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert_ne!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        let left: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
        assert_eq!(left.len(), 50, "round {round}: files outside the tree were removed");
    }
}

/// An unprivileged user removing a tree with a subtree it cannot read: the rest goes, the subtree
/// is reported with its path and reason, the exit status is 1.
#[test]
fn unreadable_subtree_as_an_unprivileged_user() {
    if !is_root() {
        return; // needs root to set up other owners; CI runs as root
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let tree = tmp.path().join("tree");
    for dir in ["a/b", "locked/inner"] {
        std::fs::create_dir_all(tree.join(dir)).unwrap();
    }
    for file in ["a/f", "a/b/g", "locked/inner/secret", "top"] {
        std::fs::write(tree.join(file), b"x").unwrap();
    }
    let nobody = |p: &Path| {
        rustix::fs::chown(p, Some(rustix::fs::Uid::from_raw(65534)), Some(rustix::fs::Gid::from_raw(65534)))
            .unwrap()
    };
    for p in [
        &tree,
        &tree.join("a"),
        &tree.join("a/b"),
        &tree.join("a/f"),
        &tree.join("a/b/g"),
        &tree.join("top"),
        &tree.join("locked"),
    ] {
        nobody(p);
    }
    std::fs::set_permissions(tree.join("locked/inner"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut cmd = as_nobody(env!("CARGO_BIN_EXE_canopy"));
    cmd.arg("rm").arg(&tree);
    let out = run(cmd, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("'{}': Permission denied", tree.join("locked/inner").display())),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one failure, one message: {stderr}");
    assert!(!tree.join("a").exists() && !tree.join("top").exists(), "the rest is gone");
    assert!(tree.join("locked/inner/secret").exists());
}
