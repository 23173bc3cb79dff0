//! Absurd thread counts: `-j 100000` is reduced to what the system allows, with a warning, and
//! every tree tool finishes with complete results; `-j 0` is the default. A thread the system
//! refuses in the middle of a walk leaves the walk to the workers it has; none at all is an error
//! (exit 71), never a hang. GNU find is the oracle for completeness.

mod common;

use common::{canopy, gnu, root_or_skip, small_tree, sorted_lines};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

fn find_oracle(root: &Path) -> Vec<String> {
    sorted_lines(&gnu("find").arg(root).output().unwrap().stdout)
}

const WARNING: &str = "canopy: warning: -j 100000 is more threads than";

#[track_caller]
fn assert_ok_with_warning(out: &Output, context: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{context}: {stderr}");
    assert!(stderr.contains(WARNING), "{context}: {stderr}");
}

#[test]
fn minus_j_100000_is_reduced_and_every_tool_finishes_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    small_tree(&src);
    let expected = find_oracle(&src);

    let out = canopy().args(["find", "-j", "100000"]).arg(&src).output().unwrap();
    assert_ok_with_warning(&out, "find");
    assert_eq!(sorted_lines(&out.stdout), expected);

    let out = canopy().args(["du", "-s", "-j", "100000"]).arg(&src).output().unwrap();
    assert_ok_with_warning(&out, "du");
    assert_eq!(out.stdout, gnu("du").arg("-s").arg(&src).output().unwrap().stdout);

    let out = canopy().args(["walk", "--json", "-j", "100000"]).arg(&src).output().unwrap();
    assert_ok_with_warning(&out, "walk");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["totals"]["entries"], expected.len() as u64, "{report}");

    let out = canopy().args(["grep", "-j", "100000", "line 7"]).arg(&src).output().unwrap();
    assert_ok_with_warning(&out, "grep");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 12);

    let dest = tmp.path().join("dest");
    let out = canopy().args(["cp", "-a", "-j", "100000"]).arg(&src).arg(&dest).output().unwrap();
    assert_ok_with_warning(&out, "cp");
    let diff = gnu("diff").arg("-r").arg(&src).arg(&dest).output().unwrap();
    assert!(diff.status.success(), "{}", String::from_utf8_lossy(&diff.stdout));

    let out = canopy().args(["rm", "-r", "-j", "100000"]).arg(&dest).output().unwrap();
    assert_ok_with_warning(&out, "rm");
    assert!(!dest.exists(), "rm removed everything");
}

#[test]
fn minus_j_0_is_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    small_tree(tmp.path());
    let out = canopy().args(["find", "-j", "0"]).arg(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(sorted_lines(&out.stdout), find_oracle(tmp.path()));
}

/// A user id no process has: RLIMIT_NPROC counts exactly the processes this test starts as it.
fn unused_uid() -> u32 {
    40_000 + std::process::id() % 20_000
}

/// `count` processes of user `uid` that sleep until killed: they hold that many of its slots.
fn occupy(uid: u32, count: usize) -> Vec<Child> {
    (0..count).map(|_| Command::new("sleep").arg("600").uid(uid).gid(uid).spawn().unwrap()).collect()
}

/// `canopy find -j 8 ROOT` as `uid`, allowed `nproc` processes and threads in all.
fn find_as(uid: u32, nproc: u64, root: &Path) -> Output {
    let mut cmd = canopy();
    cmd.args(["find", "-j", "8"]).arg(root).uid(uid).gid(uid).stdin(Stdio::null());
    // SAFETY: setrlimit(2) in the child between fork and exec (after the change of user).
    unsafe {
        cmd.pre_exec(move || {
            let limit = rustix::process::Rlimit { current: Some(nproc), maximum: Some(nproc) };
            rustix::process::setrlimit(rustix::process::Resource::Nproc, limit)?;
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn refused_threads_degrade_the_walk_and_no_thread_at_all_fails_cleanly() {
    if !root_or_skip("run as another user with RLIMIT_NPROC") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    small_tree(tmp.path());
    let uid = unused_uid();
    let mut sleepers = occupy(uid, 2);

    // 5 slots: 2 sleepers, canopy's main thread, 2 workers; the limit (5 - 1) lets it try a third.
    let out = find_as(uid, 5, tmp.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("-j 8 is more threads than RLIMIT_NPROC allows; using 4"), "{stderr}");
    assert!(
        stderr.contains(
            "cannot start more worker threads (Resource temporarily unavailable); continuing with 2"
        ),
        "{stderr}"
    );
    assert_eq!(sorted_lines(&out.stdout), find_oracle(tmp.path()), "complete with the workers it had");

    // 3 slots: 2 sleepers and canopy's main thread; not one worker.
    let out = find_as(uid, 3, tmp.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(71), "{stderr}");
    assert!(
        stderr.contains("canopy: cannot start a worker thread: Resource temporarily unavailable"),
        "{stderr}"
    );

    for sleeper in &mut sleepers {
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
    }
}
