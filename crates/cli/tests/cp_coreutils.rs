//! `canopy cp` against GNU cp with the same argv: for each command line, cp runs in one directory
//! and canopy in its twin, on a generated source (odd names, nested directories, hard links,
//! symlinks, a FIFO, modes, times), into a destination that is missing, an existing directory, or
//! one with unrelated content and an outdated partial copy. Compared: the exit status, `-v`'s
//! lines (sorted: canopy's workers print in no fixed order), and the trees left behind
//! (`rsync -n -i` and `diff -r` between the two results).

mod common;

use common::classic::{Side, assert_same_results, run_both, source, stamp, write};

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// An existing directory `dst` with unrelated content and an outdated, partial copy at `dst/src`
/// (regular files only where both have something: cp writes over files, but removes a symlink
/// first and says so).
fn destination(dir: &Path) {
    let dst = dir.join("dst");
    std::fs::create_dir_all(dst.join("otherproject")).unwrap();
    write(&dst.join("otherproject/keep-me"), b"unrelated\n", 1_500_000_000);
    let copy = dst.join("src");
    std::fs::create_dir_all(copy.join("a/b")).unwrap();
    let base = 1_600_000_000;
    write(&copy.join("a/one.txt"), b"stale, other size\n", base - 3);
    write(&copy.join("a/b/two.txt"), b"newer than the source\n", base + 10 * 86_400);
    write(&copy.join("mode600"), b"private\n", base);
    std::fs::set_permissions(copy.join("mode600"), std::fs::Permissions::from_mode(0o640)).unwrap();
    write(&copy.join("extra"), b"only in the destination\n", base);
    stamp(&copy.join("a/b"), base);
    stamp(&copy.join("a"), base);
}

/// The marker of a directory copy in progress (README: cp resumes in place).
const MARKER: &str = ".canopy-tmp-c0b7c09710b7c091";

/// Whether the copies keep times (then the trees are compared with them).
fn times_kept(argv: &[&str]) -> bool {
    argv.iter().any(|a| *a == "-a" || *a == "-rp" || a.contains("timestamps") || *a == "-ap")
}

#[track_caller]
fn compare(base: &Path, argv: &[&str], prepare: impl Fn(&Path)) -> (Side, Side) {
    let (cp, ours) = run_both(base, "cp", "cp", argv, prepare);
    let context = format!("cp {argv:?}");
    assert_eq!(
        ours.out.status.code(),
        cp.out.status.code(),
        "{context}: exit status\n  cp: {}\n  canopy: {}",
        String::from_utf8_lossy(&cp.out.stderr),
        String::from_utf8_lossy(&ours.out.stderr)
    );
    // cp's messages, each line under canopy's name.
    let messages = |side: &Side, name: &str| {
        let mut lines: Vec<String> = String::from_utf8_lossy(&side.out.stderr)
            .lines()
            .map(|l| l.strip_prefix(name).unwrap_or(l).to_string())
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(
        messages(&ours, "canopy cp: "),
        messages(&cp, "cp: "),
        "{context}: stderr (canopy's, then cp's)"
    );
    let sorted = |side: &Side| {
        let mut lines = side.stdout_lines();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&ours), sorted(&cp), "{context}: printed lines (canopy's, then cp's)");
    if !ours.out.status.success() {
        // A directory copy that failed somewhere keeps its marker, so that the rerun resumes.
        for marker in ["dst", "dst/src"].iter().map(|d| ours.dir.join(d).join(MARKER)) {
            if marker.exists() {
                std::fs::remove_file(&marker).unwrap();
            }
        }
    }
    assert_same_results(&cp, &ours, times_kept(argv), &context);
    (cp, ours)
}

#[test]
fn into_a_missing_destination() {
    let tmp = tempfile::tempdir().unwrap();
    for argv in [
        &["-a", "src", "dst"][..],
        &["-r", "src", "dst"],
        &["-R", "src", "dst"],
        &["-rp", "src", "dst"],
        &["-av", "src", "dst"],
        &["-rv", "src", "dst"],
        &["-a", "--no-preserve=ownership", "src", "dst"],
        &["-r", "--preserve=mode,timestamps", "src", "dst"],
        &["-r", "--preserve=links", "src", "dst"],
        &["-rd", "src", "dst"],
        &["-rP", "src", "dst"],
        &["-rL", "src", "dst"],
        &["-a", "--reflink=auto", "src/", "dst"],
        &["-rT", "src", "dst"],
        &["-a", "src/a/one.txt", "copy.txt"],
        &["src/to-file", "deref.txt"],
        &["-P", "src/to-file", "symlink-copy"],
    ] {
        compare(tmp.path(), argv, source);
    }
}

#[test]
fn without_recursion_a_directory_is_omitted() {
    let tmp = tempfile::tempdir().unwrap();
    for argv in [&["src", "dst"][..], &["-d", "src", "dst"], &["-p", "src", "src/exec", "."]] {
        let (_, ours) = compare(tmp.path(), argv, |dir| {
            source(dir);
            std::fs::create_dir(dir.join("into")).unwrap();
        });
        assert!(!ours.dir.join("dst").exists());
        let stderr = String::from_utf8_lossy(&ours.out.stderr);
        assert!(stderr.contains("-r not specified; omitting directory 'src'"), "{stderr}");
    }
}

#[test]
fn into_an_existing_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = |dir: &Path| {
        source(dir);
        std::fs::create_dir(dir.join("dst")).unwrap();
    };
    for argv in [&["-a", "src", "dst"][..], &["-rv", "src", "dst/"], &["-r", "src/.", "dst"]] {
        let (_, ours) = compare(tmp.path(), argv, empty);
        assert!(ours.dir.join("dst").is_dir());
    }
    let (_, ours) = compare(tmp.path(), &["-a", "src", "dst"], empty);
    assert!(ours.dir.join("dst/src/a/one.txt").exists(), "SRC into DIR/SRC");
    compare(tmp.path(), &["-a", "-t", "dst", "src/a", "src/exec"], empty);
    compare(tmp.path(), &["-av", "src/a", "src/exec", "src/to-dir", "dst"], empty);
    compare(tmp.path(), &["-rT", "src", "dst"], empty);
}

#[test]
fn onto_other_content() {
    let tmp = tempfile::tempdir().unwrap();
    let prepared = |dir: &Path| {
        source(dir);
        destination(dir);
    };
    for argv in [
        &["-a", "src", "dst"][..],
        &["-av", "src", "dst"],
        &["-r", "src", "dst"],
        &["-rv", "src", "dst"],
        &["-an", "src", "dst"],
        &["-anv", "src", "dst"],
        &["-au", "src", "dst"],
        &["-ruv", "src/a", "dst/src"],
    ] {
        let (_, ours) = compare(tmp.path(), argv, prepared);
        assert!(ours.dir.join("dst/otherproject/keep-me").exists());
        assert!(ours.dir.join("dst/src/extra").exists(), "cp deletes nothing");
    }
}

#[test]
fn usage_as_cp_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    // Several sources need a directory; -T takes one; a missing source fails the run, not the rest.
    let cases: [&[&str]; 3] = [
        &["-a", "src/exec", "src/mode600", "nodir"],
        &["-aT", "src/exec", "src/mode600", "dst"],
        &["-a", "missing", "src/exec", "into"],
    ];
    let prepare = |dir: &Path| {
        source(dir);
        std::fs::create_dir(dir.join("into")).unwrap();
    };
    for argv in cases {
        let (cp, ours) = run_both(tmp.path(), "cp", "cp", argv, prepare);
        let context = format!("cp {argv:?}: {}", String::from_utf8_lossy(&ours.out.stderr));
        assert_eq!(ours.out.status.code(), Some(1), "{context}");
        assert_eq!(cp.out.status.code(), Some(1), "{context}");
        assert_same_results(&cp, &ours, true, &context);
    }
    // Into itself: both fail with cp's message, but GNU cp first copies what it meets (a partial
    // copy inside the source); canopy refuses before it copies anything (README's table).
    let argv = ["-a", "src", "src/a/inside"];
    let (cp, ours) = run_both(tmp.path(), "cp", "cp", &argv, prepare);
    let message = "cannot copy a directory, 'src', into itself, 'src/a/inside'";
    for side in [&cp, &ours] {
        let stderr = String::from_utf8_lossy(&side.out.stderr);
        assert_eq!(side.out.status.code(), Some(1), "{argv:?}: {stderr}");
        assert!(stderr.contains(message), "{argv:?}: {stderr}");
    }
    assert!(cp.dir.join("src/a/inside/a").exists(), "GNU cp's partial copy");
    assert!(!ours.dir.join("src/a/inside").exists(), "canopy copied nothing");
}
