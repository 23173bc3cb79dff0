//! `-L` on a ladder of symlinks: 25 rungs, two links from each to the next. GNU du visits each
//! directory once (instant); so do `canopy du -L` and `walk -L` (each directory counted once —
//! before, the walk doubled per rung). `find -L` keeps GNU find's semantics: every path, and its
//! symlink-loop message. GNU du and find are the oracles.

mod common;

use common::{canopy, gnu};
use std::path::{Path, PathBuf};
use std::process::Output;

fn ladder(root: &Path, rungs: usize) -> PathBuf {
    for i in 0..=rungs {
        std::fs::create_dir(root.join(format!("l{i}"))).unwrap();
        std::fs::write(root.join(format!("l{i}/file")), vec![b'x'; 5000]).unwrap();
    }
    for i in 0..rungs {
        for link in ["a", "b"] {
            std::os::unix::fs::symlink(format!("../l{}", i + 1), root.join(format!("l{i}/{link}"))).unwrap();
        }
    }
    root.join("l0")
}

#[track_caller]
fn ok(out: Output) -> Vec<u8> {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn du_and_walk_enter_each_directory_of_a_ladder_once() {
    let tmp = tempfile::tempdir().unwrap();
    let top = ladder(tmp.path(), 25);
    let gnu_du = ok(gnu("du").arg("-sL").arg(&top).output().unwrap());
    assert_eq!(ok(canopy().args(["du", "-sL"]).arg(&top).output().unwrap()), gnu_du);
    let gnu_apparent = ok(gnu("du").args(["-sL", "--apparent-size", "-b"]).arg(&top).output().unwrap());
    let ours = canopy().args(["du", "-sL", "--apparent-size", "-b"]).arg(&top).output().unwrap();
    assert_eq!(ok(ours), gnu_apparent);
    // Every line GNU du -L prints names one directory once; so do ours (which of two links to
    // the same directory names it is the first reached, in parallel not always GNU's).
    let lines = ok(canopy().args(["du", "-L"]).arg(&top).output().unwrap());
    assert_eq!(String::from_utf8_lossy(&lines).lines().count(), 26);

    let report = ok(canopy().args(["walk", "-L", "--json"]).arg(&top).output().unwrap());
    let report: serde_json::Value = serde_json::from_slice(&report).unwrap();
    assert_eq!(report["totals"]["entries"], 26 * 2, "26 directories and their files, each once");
    assert_eq!(report["errors"], 0);
}

#[test]
fn find_follows_every_path_and_reports_loops_like_gnu_find() {
    let tmp = tempfile::tempdir().unwrap();
    let top = ladder(tmp.path(), 5);
    let sorted = |bytes: Vec<u8>| {
        let mut lines: Vec<String> = String::from_utf8_lossy(&bytes).lines().map(str::to_owned).collect();
        lines.sort();
        lines
    };
    let theirs = sorted(ok(gnu("find").arg("-L").arg(&top).output().unwrap()));
    assert_eq!(sorted(ok(canopy().args(["find", "-L"]).arg(&top).output().unwrap())), theirs);
    assert_eq!(theirs.len(), 2 * (1 + 2 + 4 + 8 + 16 + 32), "every path to every directory and file");

    std::os::unix::fs::symlink(".", tmp.path().join("l5/self")).unwrap();
    let theirs = gnu("find").arg("-L").arg(&top).output().unwrap();
    let ours = canopy().args(["find", "-L"]).arg(&top).output().unwrap();
    assert_eq!(ours.status.code(), theirs.status.code());
    assert_eq!(sorted(ours.stdout), sorted(theirs.stdout));
    // The same messages, each tool's name aside.
    let messages = |stderr: &[u8]| {
        let text = String::from_utf8_lossy(stderr).into_owned();
        let mut lines: Vec<String> = text
            .lines()
            .map(|l| {
                l.strip_prefix("canopy find: ").or_else(|| l.strip_prefix("find: ")).unwrap_or(l).to_owned()
            })
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(messages(&ours.stderr), messages(&theirs.stderr));
    assert!(!ours.stderr.is_empty(), "the loop is reported");
}
