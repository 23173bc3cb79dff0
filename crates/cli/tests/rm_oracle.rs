//! `canopy rm` against GNU rm with the same argv, on twin trees (odd names, hard links, symlinks to
//! files and directories, dangling links, a FIFO, empty and nested directories, a path past
//! PATH_MAX): the same exit status, the same `-v` lines (as sets: removal runs in parallel), the
//! same messages, the same questions for `-i` and `-I` with the same answers on stdin, and the
//! same tree left behind.

mod common;

use common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Output;

/// The tree both rm's work on, in `base/w` (and a few names directly in `base`).
fn twin(base: &Path) {
    let w = base.join("w");
    for dir in ["d/sub/deep", "emptydir", "x"] {
        std::fs::create_dir_all(w.join(dir)).unwrap();
    }
    for (name, content) in
        [("f1", &b"one\n"[..]), ("f2", b""), ("d/sub/deep/file", b"deep"), ("d/a", b"a"), ("x/only", b"x")]
    {
        std::fs::write(w.join(name), content).unwrap();
    }
    std::fs::hard_link(w.join("f1"), w.join("d/hard")).unwrap();
    for name in
        [&b"new\nline"[..], b"tab\there", b" space ", b"it's", b"q\"d", b"\xff\xfe", b"caf\xc3\xa9", b"a$b"]
    {
        std::fs::write(w.join(OsStr::from_bytes(name)), b"odd").unwrap();
    }
    symlink("f1", w.join("link-file")).unwrap();
    symlink("d", w.join("link-dir")).unwrap();
    symlink("nowhere", w.join("dangling")).unwrap();
    mkfifo(&w.join("fifo"));
    deep_chain(&w.join("deep"), 22);
    for name in ["-dash", "a", "b", "c", "e"] {
        std::fs::write(base.join(name), b"top").unwrap();
    }
}

/// Every path below `dir` with its type, NUL-separated, sorted (GNU find lists it).
fn listing(dir: &Path) -> Vec<Vec<u8>> {
    let mut find = gnu("find");
    find.current_dir(dir).args([".", "-printf", "%y %p\\0"]);
    records(&run(find, None).stdout, 0)
}

fn rm_in(program: std::process::Command, dir: &Path, args: &[&[u8]], stdin: Option<&[u8]>) -> Output {
    let mut cmd = program;
    cmd.current_dir(dir).args(args.iter().map(|a| OsStr::from_bytes(a)));
    run(cmd, stdin)
}

/// Runs GNU rm and canopy rm with `args` (and `stdin`) in twin trees and compares everything.
/// `ordered` compares stderr byte for byte (questions come one at a time, in one order).
#[track_caller]
fn same_as_rm(args: &[&[u8]], stdin: Option<&[u8]>, ordered: bool) {
    let (g, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    twin(g.path());
    twin(c.path());
    same_in(g.path(), c.path(), args, stdin, ordered);
}

/// [`same_as_rm`] in twin trees made by the caller: GNU rm in `g`, canopy rm in `c`.
#[track_caller]
fn same_in(g: &Path, c: &Path, args: &[&[u8]], stdin: Option<&[u8]>, ordered: bool) {
    let context = format!("rm {:?}", args.iter().map(|a| String::from_utf8_lossy(a)).collect::<Vec<_>>());
    let want = rm_in(gnu("rm"), g, args, stdin);
    let mut ours = canopy();
    ours.arg("rm");
    let got = rm_in(ours, c, args, stdin);
    let normal = |stderr: &[u8]| String::from_utf8_lossy(stderr).replace("canopy rm", "rm");
    assert_eq!(
        got.status.code(),
        want.status.code(),
        "{context}: exit status; ours said {}",
        normal(&got.stderr)
    );
    assert_eq!(records(&got.stdout, b'\n'), records(&want.stdout, b'\n'), "{context}: -v lines");
    if ordered {
        assert_eq!(normal(&got.stderr), normal(&want.stderr), "{context}: questions and messages");
    } else {
        let lines = |text: String| {
            let mut v: Vec<String> = text.lines().map(str::to_string).collect();
            v.sort();
            v
        };
        assert_eq!(lines(normal(&got.stderr)), lines(normal(&want.stderr)), "{context}: messages");
    }
    assert_same_records(&listing(c), &listing(g), &format!("{context}: what is left"));
}

/// A tmpfs mounted at `at` for the life of the value.
struct Mounted(std::path::PathBuf);

impl Mounted {
    fn tmpfs(at: &Path) -> Option<Mounted> {
        std::fs::create_dir_all(at).unwrap();
        let mut mount = gnu("mount");
        mount.args(["-t", "tmpfs", "-o", "size=4m", "canopy-rm-test"]).arg(at);
        (run(mount, None).status.code() == Some(0)).then(|| Mounted(at.to_path_buf()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let mut umount = gnu("umount");
        umount.arg(&self.0);
        run(umount, None);
    }
}

/// `--one-file-system`, `--preserve-root=all` and a mount point in the way, on a real mount.
#[test]
fn other_file_systems_as_rm() {
    if !root_or_skip("mount a tmpfs") {
        return;
    }
    let cases: &[&[&[u8]]] = &[
        &[b"-r", b"--one-file-system", b"w"],
        &[b"-rv", b"--one-file-system", b"w/d", b"w/mnt"],
        &[b"-r", b"--preserve-root=all", b"w/mnt"],
        &[b"-r", b"--preserve-root=all", b"w/x"],
        &[b"-rf", b"w/mnt"],
    ];
    for args in cases {
        let (g, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut mounts = Vec::new();
        for base in [g.path(), c.path()] {
            twin(base);
            let Some(mounted) = Mounted::tmpfs(&base.join("w/mnt")) else {
                skip("cannot mount a tmpfs here");
                return;
            };
            std::fs::create_dir(base.join("w/mnt/inside")).unwrap();
            std::fs::write(base.join("w/mnt/inside/file"), b"on another file system").unwrap();
            mounts.push(mounted);
        }
        same_in(g.path(), c.path(), args, None, false);
    }
}

#[test]
fn the_flags_people_type_first_behave_as_rm() {
    let cases: &[&[&[u8]]] = &[
        &[b"w/f1", b"w/f2"],
        &[b"w/d"],
        &[b"-d", b"w/emptydir"],
        &[b"-d", b"w/d"],
        &[b"-dv", b"w/emptydir", b"w/f1"],
        &[b"-r", b"w/d"],
        &[b"-R", b"w/d"],
        &[b"--recursive", b"w/x"],
        &[b"-rv", b"w"],
        &[b"-rfv", b"w/d", b"w/x"],
        &[b"-rf", b"w"],
        &[b"-rf", b"w/deep"],
        &[b"missing"],
        &[b"-f", b"missing"],
        &[b"-rf", b"missing"],
        &[b"-rf", b"w/d", b"missing", b"w/x/missing"],
        &[b"-f"],
        &[b"-rf", b""],
        &[b"w/f1/"],
        &[b"-f", b"w/f1/x"],
        &[b"-r", b"."],
        &[b"-r", b"w/d/.."],
        &[b"-rf", b"w/."],
        &[b"--", b"-dash"],
        &[b"-v", b"--", b"-dash", b"a"],
        &[b"-v", b"w/link-file", b"w/link-dir", b"w/dangling", b"w/fifo"],
        &[b"-rv", b"w/link-dir"],
        &[
            b"-v",
            b"w/new\nline",
            b"w/tab\there",
            b"w/ space ",
            b"w/it's",
            b"w/q\"d",
            b"w/\xff\xfe",
            b"w/caf\xc3\xa9",
            b"w/a$b",
        ],
        &[b"-r", b"--one-file-system", b"-v", b"w/d"],
        &[b"-r", b"--preserve-root=all", b"w/d"],
        &[b"-r", b"--no-preserve-root", b"w/x"],
        &[b"--interactive=never", b"w/f1"],
        &[b"--interactive=once", b"w/f1"],
        &[b"-I", b"w/f1", b"w/f2"],
    ];
    for args in cases {
        same_as_rm(args, None, false);
    }
}

#[test]
fn questions_and_answers_as_rm() {
    let cases: &[(&[&[u8]], &[u8])] = &[
        (&[b"-i", b"w/f1"], b"y\n"),
        (&[b"-i", b"w/f1"], b"n\n"),
        (&[b"-i", b"w/f2"], b"yes please\n"),
        (&[b"-i", b"w/link-file"], b"Y\n"),
        (&[b"-i", b"w/fifo"], b""),
        (&[b"-ri", b"w/x"], b"y\ny\ny\n"),
        (&[b"-ri", b"w/x"], b"y\nn\ny\n"),
        (&[b"-ri", b"w/x"], b"n\n"),
        (&[b"-ri", b"w/emptydir"], b"y\n"),
        (&[b"-ri", b"w/emptydir"], b"n\n"),
        (&[b"-I", b"a", b"b", b"c", b"e"], b"n\n"),
        (&[b"-I", b"a", b"b", b"c", b"e"], b"y\n"),
        (&[b"-rI", b"w"], b"n\n"),
        (&[b"-rI", b"w/x"], b"y\n"),
        (&[b"--interactive", b"w/f1"], b"y\n"),
        (&[b"-if", b"w/f1"], b""),
        (&[b"-fi", b"w/f1"], b"n\n"),
    ];
    for (args, answers) in cases {
        same_as_rm(args, Some(answers), true);
    }
}
