//! `canopy cmp`: silent agreement on a faithful copy (exit 0); every kind of difference found,
//! in human and JSON form (exit 1); unreadable input is trouble (exit 2).

mod common;

use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

fn cmp(args: &[&str], a: &Path, b: &Path) -> std::process::Output {
    let mut cmd = canopy();
    cmd.arg("cmp").args(args).arg(a).arg(b);
    run(cmd, None)
}

fn cp_a(from: &Path, to: &Path) {
    let mut cmd = gnu("cp");
    cmd.arg("-a").arg(from).arg(to);
    assert!(run(cmd, None).status.success());
}

#[test]
fn a_copy_made_by_cp_a_is_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join("f"), b"data").unwrap();
    std::fs::create_dir_all(a.join("d/e")).unwrap();
    symlink("f", a.join("l")).unwrap();
    let b = tmp.path().join("b");
    cp_a(&a, &b);
    let out = cmp(&["--content"], &a, &b);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no differences (5 entries compared)\n");
}

#[test]
fn every_kind_of_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    std::fs::create_dir_all(a.join("dir/deep")).unwrap();
    for (name, data) in [("same-size", &b"aaaa"[..]), ("grows", b"x"), ("kind", b"k"), ("only-a", b"o")] {
        std::fs::write(a.join(name), data).unwrap();
    }
    std::fs::write(a.join("dir/deep/f"), b"f").unwrap();
    let big: Vec<u8> = (0..(70u32 << 20)).map(|i| (i % 253) as u8).collect();
    std::fs::write(a.join("big"), &big).unwrap();
    symlink("here", a.join("link")).unwrap();
    let b = tmp.path().join("b");
    cp_a(&a, &b);
    let keep_time = |p: &Path, f: &dyn Fn()| {
        let before = std::fs::metadata(p).unwrap().modified().unwrap();
        f();
        std::fs::File::options().write(true).open(p).unwrap().set_modified(before).unwrap();
    };
    keep_time(&b.join("same-size"), &|| std::fs::write(b.join("same-size"), b"abaa").unwrap());
    keep_time(&b.join("big"), &|| {
        let f = std::fs::File::options().write(true).open(b.join("big")).unwrap();
        rustix::io::pwrite(&f, b"!", 69 << 20).unwrap();
    });
    std::fs::write(b.join("grows"), b"xy").unwrap();
    std::fs::remove_file(b.join("kind")).unwrap();
    std::fs::create_dir(b.join("kind")).unwrap();
    std::fs::remove_file(b.join("only-a")).unwrap();
    std::fs::remove_dir_all(b.join("dir/deep")).unwrap();
    std::fs::write(b.join("only-b"), b"b").unwrap();
    std::fs::remove_file(b.join("link")).unwrap();
    symlink("there", b.join("link")).unwrap();

    let out = cmp(&["--content", "--json", "-j", "3"], &a, &b);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let found = |kind: &str, path: &str| lines.iter().any(|v| v["difference"] == kind && v["path"] == path);
    for (kind, path) in [
        ("content", "same-size"),
        ("content", "big"),
        ("size", "grows"),
        ("type", "kind"),
        ("only_in_a", "only-a"),
        ("only_in_a", "dir/deep"),
        ("only_in_b", "only-b"),
        ("target", "link"),
    ] {
        assert!(found(kind, path), "{kind} {path}: {lines:#?}");
    }
    assert!(!found("only_in_a", "dir/deep/f"), "nothing listed below a missing directory");
    assert!(!found("content", "grows"), "sizes differ: content not compared");
    let summary = lines.last().unwrap();
    assert_eq!(summary["summary"]["differences"], lines.len() - 1);

    let human = cmp(&[], &a, &b);
    assert_eq!(human.status.code(), Some(1));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains(&format!("only in {}: only-a\n", a.display())), "{text}");
    assert!(text.contains("size differs: grows (1 vs 2)\n"), "{text}");
    assert!(text.contains("type differs: kind (regular file vs directory)\n"), "{text}");
    assert!(!text.contains("content differs"), "content only with --content");
}

#[test]
fn trouble_is_exit_two() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    std::fs::create_dir(&a).unwrap();
    let out = cmp(&[], &a, &tmp.path().join("missing"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No such file or directory"));
    // Nothing could be compared: never "no differences".
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "comparison incomplete: 0 differences, 1 errors (0 entries compared)\n"
    );
    let out = cmp(&["--json"], &tmp.path().join("missing"), &a);
    assert_eq!(out.status.code(), Some(2));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["summary"]["complete"], false, "{summary}");
    if is_root() {
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(a.join("locked")).unwrap();
        let b = tmp.path().join("b");
        cp_a(&a, &b);
        std::fs::set_permissions(a.join("locked"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(b.join("locked"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(a.join("locked/x"), b"x").unwrap();
        let mut cmd = as_nobody(env!("CARGO_BIN_EXE_canopy"));
        cmd.arg("cmp").arg(&a).arg(&b);
        let out = run(cmd, None);
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.lines().last().is_some_and(|l| l.starts_with("comparison incomplete: ")), "{stdout}");
    }
}
