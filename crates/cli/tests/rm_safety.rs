//! `canopy rm`: removes whole hostile trees (past PATH_MAX too) and filtered selections; lists
//! without removing under --dry-run; refuses `/`, `.` and the current directory's ancestors; never
//! removes anything outside the tree while directories are swapped for symlinks to the outside
//! during the run (the swaps are counted while rm is running); reports what an unprivileged user
//! cannot remove and exits 1. GNU rm's own behaviour is checked against GNU rm in rm_oracle.

mod common;

use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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
    let dry = rm(tmp.path(), &["-rn", "-j", "4", "tree"]);
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    let everything = find(tmp.path(), &["tree"]);
    assert_same_records(
        &records(&dry.stdout, b'\n'),
        &records(&everything, b'\n'),
        "dry run lists everything",
    );
    assert!(root.join("sub/mid.rs").exists(), "a dry run removes nothing");
    let out = rm(tmp.path(), &["-r", "-j", "4", "tree"]);
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
    let dry = rm(tmp.path(), &["-rn", "tree", "-name", "*.rs", "-o", "-name", "deeper"]);
    assert_same_records(&records(&dry.stdout, b'\n'), &records(&doomed, b'\n'), "filtered dry run");
    // Without -r a matching directory stays, as rm leaves one ("Is a directory").
    let without_r = rm(tmp.path(), &["-n", "tree", "-name", "deeper"]);
    assert_eq!(without_r.status.code(), Some(1));
    assert!(without_r.stdout.is_empty());
    assert!(String::from_utf8_lossy(&without_r.stderr).contains("/deeper': Is a directory"));
    let out = rm(tmp.path(), &["-r", "-j", "3", "tree", "-name", "*.rs", "-o", "-name", "deeper"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_records(
        &records(&find(tmp.path(), &["tree"]), b'\n'),
        &records(&kept, b'\n'),
        "what is left",
    );
    let out = rm(tmp.path(), &["-r", "tree", "-name", "x", "-delete"]);
    assert_eq!(out.status.code(), Some(2), "actions are refused");
}

#[test]
fn refuses_root_dot_and_ancestors_of_the_current_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = tmp.path().join("a/b/c");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(tmp.path().join("a/file"), b"x").unwrap();
    for args in
        [&["-r", "."][..], &["-r", "../.."], &["-rf", ".."], &["-rn", "--no-preserve-root", "../c/.."]]
    {
        let out = rm(&inner, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to remove '.' or '..'"), "{args:?}");
    }
    for args in [&["-r", "/"][..], &["-rf", "--no-preserve-root", "/"], &["-rn", "//"]] {
        let out = rm(&inner, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("dangerous to operate recursively on '/"),
            "{args:?}"
        );
    }
    let ancestor = tmp.path().join("a");
    let out = rm(&inner, &["-rf", ancestor.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("it holds the current directory"));
    assert!(inner.exists() && tmp.path().join("a/file").exists(), "nothing removed from a refused tree");
    let out = rm(&inner, &[".", "-name", "nothing-matches"]);
    assert_eq!(out.status.code(), Some(0), "a filter may start at '.'");
    let missing = rm(&inner, &[]);
    assert_eq!(missing.status.code(), Some(1), "rm's missing operand");
    assert!(String::from_utf8_lossy(&missing.stderr).contains("missing operand"));
}

/// Directories of the tree are renamed aside and replaced by symlinks to a directory outside it
/// (and back) while rm runs: whatever happens to the tree, the outside is untouched.
///
/// That the swaps meet the removal is made certain, not left to timing: `rm -v` writes to a pipe
/// this test does not read until it has made its own swaps, so rm, which cannot finish before its
/// output is read, is still running while they happen — and it has begun (some of the tree is
/// gone). A swapper thread keeps swapping on top of that until rm exits.
#[test]
fn a_directory_swapped_for_a_symlink_mid_run_never_leads_outside() {
    use std::io::Read;
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    for i in 0..50 {
        std::fs::write(outside.join(format!("precious{i}")), b"keep").unwrap();
    }
    for round in 0..2u64 {
        let tree = tmp.path().join(format!("tree{round}"));
        let dirs: Vec<_> = (0..150).map(|d| tree.join(format!("d{d}"))).collect();
        // Long names: rm -v's lines fill the pipe early in the removal.
        let long = "n".repeat(150);
        for dir in &dirs {
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            for f in 0..15 {
                std::fs::write(dir.join(format!("{long}{f}")), b"x").unwrap();
                std::fs::write(dir.join("sub").join(format!("{long}{f}")), b"x").unwrap();
            }
        }
        let swapped = Arc::new(Mutex::new(vec![false; dirs.len()]));
        let swap = {
            let (dirs, swapped, outside) = (dirs.clone(), Arc::clone(&swapped), outside.clone());
            move |i: usize| -> bool {
                let dir = &dirs[i];
                let aside = dir.with_extension("aside");
                let mut state = swapped.lock().unwrap();
                let done = if state[i] {
                    std::fs::remove_file(dir).is_ok() && std::fs::rename(&aside, dir).is_ok()
                } else {
                    std::fs::rename(dir, &aside).is_ok() && symlink(&outside, dir).is_ok()
                };
                if done {
                    state[i] = !state[i];
                }
                done
            }
        };
        let mut child = canopy()
            .current_dir(tmp.path())
            .args(["rm", "-rv", "-j", "4", tree.file_name().unwrap().to_str().unwrap()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // rm has begun: a file is gone.
        let any_gone =
            || dirs.iter().any(|d| !d.join(format!("{long}0")).exists() || !d.join("sub").exists());
        while !any_gone() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // rm is blocked on its unread output, or about to be: swap what is left of the tree.
        let mut during = 0;
        for i in 0..dirs.len() {
            if swap(i) {
                during += 1;
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "round {round}: rm cannot finish with its output unread"
        );
        let stop = Arc::new(AtomicBool::new(false));
        let background = Arc::new(AtomicUsize::new(0));
        let swapper = {
            let (stop, background, swap) = (Arc::clone(&stop), Arc::clone(&background), swap.clone());
            let count = dirs.len();
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(round);
                while !stop.load(Ordering::Relaxed) {
                    if swap(rng.usize(..count)) {
                        background.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        };
        let mut stdout = Vec::new();
        child.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
        let out = child.wait_with_output().unwrap();
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(during >= 10, "round {round}: only {during} swaps while rm ran");
        eprintln!(
            "round {round}: {during} swaps while rm was running, {} more by the swapper",
            background.load(Ordering::Relaxed)
        );
        assert_ne!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!stdout.is_empty());
        let left: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
        assert_eq!(left.len(), 50, "round {round}: files outside the tree were removed");
    }
}

/// An unprivileged user removing a tree with a subtree it cannot read: the rest goes, the subtree
/// is reported with its path and reason, the exit status is 1.
#[test]
fn unreadable_subtree_as_an_unprivileged_user() {
    if !root_or_skip("set up other owners") {
        return;
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
    cmd.arg("rm").arg("-r").arg(&tree);
    let out = run(cmd, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .contains(&format!("cannot remove '{}': Permission denied", tree.join("locked/inner").display())),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one failure, one message: {stderr}");
    assert!(!tree.join("a").exists() && !tree.join("top").exists(), "the rest is gone");
    assert!(tree.join("locked/inner/secret").exists());
}
