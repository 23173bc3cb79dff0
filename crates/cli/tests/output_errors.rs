//! Never lie about output: with stdout closed (`>&-`) or full (`>/dev/full`), every tool says so
//! with the errno, in GNU find's words (`canopy: standard output: Bad file descriptor`), and exits
//! 1 (grep and cmp: 2, as grep and cmp do) — GNU find, du and grep are the oracle for the status.
//! A printing tool whose reader goes away dies of SIGPIPE, quietly, as they do. (cp prints nothing
//! yet; its listing will go through the sink sync's --dry-run uses, tested here.)

mod common;

use common::{canopy, gnu};
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// How the test spoils stdout.
#[derive(Clone, Copy, Debug)]
enum Stdout {
    Closed,
    Full,
}

impl Stdout {
    fn message(self) -> &'static str {
        match self {
            Stdout::Closed => "canopy: standard output: Bad file descriptor",
            Stdout::Full => "canopy: standard output: No space left on device",
        }
    }
}

fn run_with(mut cmd: Command, stdout: Stdout) -> Output {
    cmd.stdin(Stdio::null()).stderr(Stdio::piped());
    match stdout {
        Stdout::Full => {
            cmd.stdout(File::options().write(true).open("/dev/full").unwrap());
        }
        Stdout::Closed => {
            cmd.stdout(Stdio::null());
            // SAFETY: close(2) in the child between fork and exec: `>&-`.
            unsafe {
                cmd.pre_exec(|| {
                    libc::close(1);
                    Ok(())
                });
            }
        }
    }
    cmd.output().unwrap()
}

/// A tree with enough names to fill more than one output batch (64 KiB), and a file that matches.
fn tree(root: &Path) {
    for d in 0..30 {
        let dir = root.join(format!("directory-with-a-long-name-{d:03}"));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            fs::write(dir.join(format!("file-with-a-long-name-{f:04}")), b"needle\n").unwrap();
        }
    }
}

#[test]
fn every_tool_reports_a_write_error_with_its_errno_and_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    tree(&src);
    let s = src.to_str().unwrap();
    let dest = tmp.path().join("dest");
    let d = dest.to_str().unwrap();
    let stats = tmp.path().join("stats.json");
    let out = canopy().args(["walk", "--stats", stats.to_str().unwrap(), s]).output().unwrap();
    assert!(out.status.success());
    let stats = stats.to_str().unwrap();

    let cases: &[(&[&str], i32)] = &[
        (&["find", s], 1),
        (&["du", "-s", s], 1),
        (&["du", s], 1),
        (&["walk", s], 1),
        (&["walk", "--json", s], 1),
        (&["grep", "needle", s], 2),
        (&["cmp", s, s], 2),
        (&["rm", "-r", "--dry-run", s], 1),
        // rsync: 12 with stdout closed (its protocol breaks), 0 on /dev/full (the lines are lost
        // silently); canopy reports it and exits 23, as for any file not transferred.
        (&["sync", "-ai", "--dry-run", s, d], 23),
        (&["report", stats], 1),
        (&["completions", "bash"], 1),
    ];
    for stdout in [Stdout::Closed, Stdout::Full] {
        for (args, status) in cases {
            let mut cmd = canopy();
            cmd.args(*args);
            let out = run_with(cmd, stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(*status), "{args:?} {stdout:?}: {stderr}");
            let message = stdout.message();
            assert!(
                stderr.lines().any(|l| l == message),
                "{args:?} {stdout:?}: wanted '{message}' in: {stderr}"
            );
        }
    }
    // A file find writes to (-fprint) is named by its path.
    let out = canopy().args(["find", s, "-fprint", "/dev/full"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.lines().any(|l| l == "canopy: /dev/full: No space left on device"), "{stderr}");
    assert!(src.join("directory-with-a-long-name-007").exists(), "rm --dry-run removed nothing");
    assert!(!dest.exists(), "sync --dry-run created nothing");
}

#[test]
fn the_exit_statuses_are_gnus() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let p = tmp.path().to_str().unwrap();
    for stdout in [Stdout::Closed, Stdout::Full] {
        for (tool, args) in [("find", vec![p]), ("du", vec!["-s", p]), ("grep", vec!["-r", "needle", p])] {
            let mut cmd = gnu(tool);
            cmd.args(&args);
            let theirs = run_with(cmd, stdout).status.code();
            let mut cmd = canopy();
            cmd.arg(tool).args(args.iter().filter(|a| **a != "-r"));
            let ours = run_with(cmd, stdout).status.code();
            assert_eq!(ours, theirs, "{tool} {stdout:?}");
        }
    }
}

#[test]
fn a_printing_tool_whose_reader_goes_away_dies_quietly_of_sigpipe() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    for args in [&["find"][..], &["grep", "needle"], &["du", "-a"]] {
        let mut child = canopy()
            .args(args)
            .arg(tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 1];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // and the pipe closes
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{args:?}: {:?}", out.status);
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
