//! `canopy sync` against rsync with the same argv: for each command line, rsync runs in one
//! directory and canopy in its twin, on a generated source (odd names, nested directories, hard
//! links, symlinks, a FIFO, modes, times) and a destination that is missing or holds unrelated
//! content (another project beside the copy, extra files, files that differ by content, size,
//! time or mode, a file where the source has a directory and the reverse). Compared: the exit
//! status, what is printed (rsync's `-i` and `-v` lines, sorted), and the trees left behind
//! (`rsync -n -i` and `diff -r` between the two results).

mod common;

use common::classic::{
    DAY, Side, assert_same_results, comparable_rsync_lines, linked_names, run_both, source, stamp, write,
};
use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

/// Unrelated content at `dir/dst`, with a partial, outdated copy of the source at `copy` (`dst`
/// itself or `dst/src`): never a name of a multiply linked file (which of their names rsync and
/// canopy take as the one to copy may differ; the test of hard links starts empty).
fn destination(dir: &Path, copy: &str) {
    let dst = dir.join("dst");
    std::fs::create_dir_all(dst.join("otherproject/deeper")).unwrap();
    write(&dst.join("otherproject/deeper/keep-me"), b"not part of the transfer\n", 1_500_000_000);
    let copy = dir.join(copy);
    std::fs::create_dir_all(copy.join("a/b/c")).unwrap();
    std::fs::create_dir_all(copy.join("stale-dir/inner")).unwrap();
    let base = 1_600_000_000;
    write(&copy.join("a/one.txt"), b"a/one.txt 0\n", base); // up to date
    write(&copy.join("a/b/two.txt"), b"outdated, other size\n", base - DAY);
    write(&copy.join("same-size"), b"content B\n", base); // same size and time, other content
    write(&copy.join("older-here"), b"a file the destination has newer\n", base + DAY);
    write(&copy.join("mode600"), b"private\n", base);
    std::fs::set_permissions(copy.join("mode600"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::create_dir(copy.join("becomes-dir")).unwrap(); // empty: rsync replaces it without --delete
    write(&copy.join("was-file"), b"a file where the source has a directory\n", base);
    write(&copy.join("extra.log"), b"only in the destination\n", base);
    write(&copy.join("stale-dir/inner/gone"), b"only in the destination\n", base);
    std::fs::create_dir_all(copy.join("logs")).unwrap();
    write(&copy.join("logs/old.log"), b"only in the destination\n", base);
    symlink("elsewhere", copy.join("to-file")).unwrap(); // a symlink to another target
    stamp(&copy.join("to-file"), base);
    for sub in ["a/b/c", "a/b", "a", "stale-dir/inner", "stale-dir", "logs", "becomes-dir"] {
        stamp(&copy.join(sub), base);
    }
}

/// The two spellings of the source: the directory itself (`src`, into `dst/src`) and its
/// contents (`src/`, into `dst`).
const FORMS: [(&str, &str, &str); 2] = [("src", "dst/src", "src"), ("src/", "dst", "")];

fn times_kept(argv: &[&str]) -> bool {
    argv.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && (a.contains('a') || a.contains('t')))
}

/// Runs rsync and canopy sync with `argv` plus SOURCE `dst/`, and compares everything.
#[track_caller]
fn compare(base: &Path, argv: &[&str], prepared: bool) -> (Side, Side) {
    let mut last = None;
    for (source_arg, copy, prefix) in FORMS {
        let mut full: Vec<&str> = argv.to_vec();
        full.extend([source_arg, "dst/"]);
        let context =
            format!("{full:?} into a {} destination", if prepared { "prepared" } else { "missing" });
        let (rsync, ours) = run_both(base, "rsync", "sync", &full, |dir| {
            source(dir);
            if prepared {
                destination(dir, copy);
            }
        });
        assert_eq!(
            ours.out.status.code(),
            rsync.out.status.code(),
            "{context}: exit status\n  rsync: {}\n  canopy: {}",
            String::from_utf8_lossy(&rsync.out.stderr),
            String::from_utf8_lossy(&ours.out.stderr)
        );
        if rsync.out.status.success() {
            // -z is ignored, and -v says so (README's table).
            let short = |flag: char| {
                argv.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(flag))
            };
            let said = if short('z') && short('v') {
                "canopy sync: -z ignored: a local copy has nothing to compress\n"
            } else {
                ""
            };
            assert_eq!(String::from_utf8_lossy(&ours.out.stderr), said, "{context}: canopy's stderr");
        }
        let linked = linked_names(&rsync.dir.join("src"), prefix);
        // A directory an exclude rule keeps from being emptied stays silently (README's table).
        let mut rsync_lines = rsync.stdout_lines();
        rsync_lines.retain(|l| !l.starts_with("cannot delete non-empty directory: "));
        assert_eq!(
            comparable_rsync_lines(&ours.stdout_lines(), &linked),
            comparable_rsync_lines(&rsync_lines, &linked),
            "{context}: printed lines (canopy's, then rsync's)"
        );
        assert_same_results(&rsync, &ours, times_kept(argv), &context);
        last = Some((rsync, ours));
    }
    last.unwrap()
}

#[test]
fn into_a_missing_destination() {
    let tmp = tempfile::tempdir().unwrap();
    for argv in [
        &["-a"][..],
        &["-av"],
        &["-ai"],
        &["-ani"],
        &["-anv"],
        &["-aHi"],
        &["-aHv"],
        &["-ri"],
        &["-rti"],
        &["-rlptgoDi"],
        &["-avz"],
        &["-ai", "--delete"],
        &["-i"],
    ] {
        compare(tmp.path(), argv, false);
    }
}

#[test]
fn into_a_destination_with_other_content() {
    let tmp = tempfile::tempdir().unwrap();
    for argv in [
        &["-ai"][..],
        &["-ani"],
        &["-av"],
        &["-aci"],
        &["-aui"],
        &["-ri"],
        &["-rli"],
        &["-ai", "--delete"],
        &["-ani", "--delete"],
        &["-av", "--delete"],
        &["-ai", "--delete-after"],
        &["-ai", "--delete", "--exclude=*.log", "--exclude=cache/"],
        &["-ai", "--delete", "--include=*/", "--include=*.txt", "--exclude=*"],
        &["-ai", "--exclude=a/b/"],
        &["--archive", "--itemize-changes", "--checksum", "--dry-run"],
    ] {
        compare(tmp.path(), argv, true);
    }
}

/// The first report: `canopy sync proj backup/` deleted backup/otherproject.
#[test]
fn nothing_is_deleted_without_delete_and_only_inside_what_is_copied() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, ours) = compare(tmp.path(), &["-a"], true);
    assert!(ours.dir.join("dst/otherproject/deeper/keep-me").exists());
    assert!(ours.dir.join("dst/extra.log").exists(), "nothing deleted without --delete");
    let (_, ours) = compare(tmp.path(), &["-a", "--delete"], true);
    // The last form compared is `src/ dst/`: rsync and canopy both removed what dst had in excess.
    assert!(!ours.dir.join("dst/otherproject").exists(), "the SRC/ form deletes in dst");
    assert!(!ours.dir.join("dst/extra.log").exists());
    let (_, ours) = run_both(tmp.path(), "rsync", "sync", &["-a", "--delete", "src", "dst/"], |dir| {
        source(dir);
        destination(dir, "dst/src");
    });
    assert!(ours.out.status.success());
    assert!(ours.dir.join("dst/otherproject/deeper/keep-me").exists(), "SRC: only dst/src is pruned");
    assert!(!ours.dir.join("dst/src/extra.log").exists());
}

#[test]
fn stats_as_rsync_counts_them() {
    let tmp = tempfile::tempdir().unwrap();
    for argv in [&["-a", "--stats"][..], &["-a", "--stats", "--delete", "-n"]] {
        let mut full = argv.to_vec();
        full.extend(["src/", "dst/"]);
        let (rsync, ours) = run_both(tmp.path(), "rsync", "sync", &full, |dir| {
            source(dir);
            destination(dir, "dst");
        });
        assert_eq!(ours.out.status.code(), Some(0), "{}", String::from_utf8_lossy(&ours.out.stderr));
        let counted = |side: &Side| -> Vec<String> {
            side.stdout_lines()
                .into_iter()
                .filter(|l| {
                    ["Number of", "Total file size", "Total transferred file size", "Matched data"]
                        .iter()
                        .any(|label| l.starts_with(label))
                })
                .collect()
        };
        let want = counted(&rsync);
        assert_eq!(want.len(), 7, "rsync's lines: {want:?}");
        assert_eq!(counted(&ours), want, "{full:?}");
        assert!(ours.stdout_lines().iter().any(|l| l.starts_with("total size is ")));
    }
}

#[test]
fn max_delete_stops_deletions_with_rsyncs_status() {
    let tmp = tempfile::tempdir().unwrap();
    let argv = ["-a", "--delete", "--max-delete=2", "src/", "dst/"];
    let (rsync, ours) = run_both(tmp.path(), "rsync", "sync", &argv, |dir| {
        source(dir);
        destination(dir, "dst");
    });
    assert_eq!(rsync.out.status.code(), Some(25));
    assert_eq!(ours.out.status.code(), Some(25), "{}", String::from_utf8_lossy(&ours.out.stderr));
    let stderr = String::from_utf8_lossy(&ours.out.stderr);
    assert!(stderr.contains("--max-delete limit"), "{stderr}");
    // Which two go depends on the order of the walk; that two went does not.
    let extraneous = [
        "extra.log",
        "stale-dir/inner/gone",
        "stale-dir/inner",
        "stale-dir",
        "logs/old.log",
        "otherproject/deeper/keep-me",
        "otherproject/deeper",
        "otherproject",
    ];
    let gone = extraneous.iter().filter(|p| !ours.dir.join("dst").join(p).exists()).count();
    assert_eq!(gone, 2, "exactly --max-delete entries deleted");
    let (_, zero) =
        run_both(tmp.path(), "rsync", "sync", &["-a", "--delete", "--max-delete=0", "src/", "dst/"], |dir| {
            source(dir);
            destination(dir, "dst");
        });
    assert_eq!(zero.out.status.code(), Some(25));
    assert!(zero.dir.join("dst/extra.log").exists(), "--max-delete=0 deletes nothing");
}

#[test]
fn refusals_and_errors_with_rsyncs_statuses() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&[&str], Option<i32>); 3] = [
        (&["-a", "missing", "src", "dst/"], Some(23)),
        (&["-a", "src/", "src/a/inside/"], None),
        (&["-a", "src/", "no/such/parent/dst/"], Some(11)),
    ];
    for (argv, rsync_status) in cases {
        let (rsync, ours) = run_both(tmp.path(), "rsync", "sync", argv, source);
        if let Some(status) = rsync_status {
            assert_eq!(rsync.out.status.code(), Some(status), "{argv:?}: rsync");
            assert_eq!(
                ours.out.status.code(),
                Some(status),
                "{argv:?}: {}",
                String::from_utf8_lossy(&ours.out.stderr)
            );
        }
    }
    // Copying a directory into itself is refused (rsync would copy what it met so far).
    let (_, ours) = run_both(tmp.path(), "rsync", "sync", &["-a", "src/", "src/a/inside/"], source);
    assert_eq!(ours.out.status.code(), Some(3));
    assert!(!ours.dir.join("src/a/inside").exists());
    let mut remote = canopy();
    remote.args(["sync", "-a", "src/", "backup-host:/srv/"]).current_dir(tmp.path());
    let out = run(remote, None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("remote path"));
}

#[test]
fn deletion_never_runs_in_the_current_directory_or_above() {
    let tmp = tempfile::tempdir().unwrap();
    source(tmp.path());
    let here = tmp.path().join("here");
    std::fs::create_dir(&here).unwrap();
    std::fs::write(here.join("precious"), b"x").unwrap();
    let mut cmd = canopy();
    cmd.args(["sync", "-a", "--delete", "../src/", "."]).current_dir(&here);
    let out = run(cmd, None);
    assert_eq!(out.status.code(), Some(23), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to delete"));
    assert!(here.join("precious").exists());
    assert!(here.join("a/one.txt").exists(), "the copy itself is made");
}
