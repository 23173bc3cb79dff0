//! `-exec` and friends under a parallel walk: children one at a time (GNU's semantics), stdout
//! flushed before each, no line spliced, the caller's original fd limit, a missing command named
//! once; and each entry's output in one piece.

mod common;

use common::find_gnu::FindRun;
use common::*;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// `many/dNN/NAME`: `n` files with names of `name_len` bytes spread over `dirs` directories, so that
/// several workers visit entries at once.
fn many_files(base: &Path, dirs: usize, n: usize, name_len: usize) -> std::path::PathBuf {
    let top = base.join("many");
    for i in 0..n {
        let dir = top.join(format!("d{:02}", i % dirs));
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("{i:0>width$}", width = name_len);
        std::fs::write(dir.join(name), format!("line one of {i}\nline two of {i}\n")).unwrap();
    }
    top
}

#[test]
fn children_run_one_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    many_files(tmp.path(), 16, 48, 8);
    // Each child holds a lock directory for a moment; a child started while another holds it
    // reports the overlap. Serialised children never overlap, whatever the timing.
    let lock = tmp.path().join("lock");
    let child = format!("mkdir {} 2>/dev/null || echo OVERLAP; sleep 0.05; rmdir {0}", lock.display());
    for form in ["-exec", "-execdir"] {
        let mut ours = canopy();
        ours.current_dir(tmp.path().join("many")).args(["find", "-j", "8", ".", "-type", "f"]);
        ours.args([form, "sh", "-c", &child, "sh", "{}", ";"]);
        let out = run(ours, None);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!String::from_utf8_lossy(&out.stdout).contains("OVERLAP"), "children overlapped ({form})");
    }
}

#[test]
fn a_batch_that_fits_runs_once_whatever_the_workers() {
    let tmp = tempfile::tempdir().unwrap();
    many_files(tmp.path(), 16, 64, 8);
    // GNU find runs a `{} +` command as few times as its arguments fit: once here, printing how
    // many it got. Each worker's leftover batch used to run on its own (bfs's posix/exec_plus).
    let args = [".", "-exec", "sh", "-c", "echo $#", "sh", "{}", "+"];
    for threads in ["1", "8"] {
        let options = ["-j", threads];
        let got = FindRun { canopy_options: &options, ..FindRun::default() }.same(tmp.path(), &args);
        assert_eq!(records(&got.stdout, b'\n').len(), 1, "one command with -j {threads}");
    }
}

#[test]
fn batched_grep_output_is_never_spliced() {
    let tmp = tempfile::tempdir().unwrap();
    // Long names: many batches of `{} +`, each grep writing several pipe buffers' worth of lines.
    many_files(tmp.path(), 8, 3000, 120);
    let args = [".", "-type", "f", "-exec", "grep", "-H", "line", "{}", "+"];
    for threads in ["2", "8"] {
        let options = ["-j", threads];
        let got = FindRun { canopy_options: &options, ..FindRun::default() }.same(tmp.path(), &args);
        assert_eq!(records(&got.stdout, b'\n').len(), 6000);
    }
}

#[test]
fn stdout_is_flushed_before_each_child() {
    let tmp = tempfile::tempdir().unwrap();
    many_files(tmp.path(), 8, 40, 8);
    for threads in ["1", "4"] {
        let mut ours = canopy();
        ours.current_dir(tmp.path())
            .args(["find", "-j", threads, "many", "-print0", "-exec", "echo", "found", ";"]);
        let out = run(ours, None);
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 49, "many, 8 directories, 40 files");
        for line in lines {
            let (path, found) = line.split_once('\0').unwrap_or(("", line));
            assert!(
                path.starts_with("many") && found == "found",
                "a path and its child's line together: {line:?}"
            );
        }
    }
    // The `{} +` form: everything printed before the batch's output.
    let (want, got) = FindRun::default()
        .both(tmp.path(), &["many/d00/00000000", "-print0", "-exec", "echo", "found", "{}", "+"]);
    assert_eq!(got.stdout, want.stdout);
    // -ok: the pending output before the prompt, the prompt before the child's output.
    let yes = b"y\ny\ny\ny\ny\ny\ny\ny\n";
    let mut ours = canopy();
    ours.current_dir(tmp.path()).args([
        "find",
        "-j",
        "4",
        "many",
        "-name",
        "0000000[0-7]",
        "-printf",
        "%p ? ",
        "-ok",
        "echo",
        "found",
        ";",
    ]);
    let out = run_merged(ours, yes);
    assert_eq!(out.lines().count(), 8);
    for line in out.lines() {
        let path = line.split(' ').next().unwrap();
        assert_eq!(line, format!("{path} ? < echo ... {path} > ? found"));
    }
}

/// Runs `command` with stdout and stderr into one pipe (as `2>&1`), `stdin` fed in.
fn run_merged(mut command: std::process::Command, stdin: &[u8]) -> String {
    let (reader, writer) = std::io::pipe().unwrap();
    command.stdout(writer.try_clone().unwrap()).stderr(writer);
    command.stdin(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    drop(command);
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut { reader }, &mut text).unwrap();
    child.wait().unwrap();
    text
}

#[test]
fn children_get_the_original_fd_limit() {
    let tmp = tempfile::tempdir().unwrap();
    many_files(tmp.path(), 1, 3, 8);
    for exec in ["-exec", "-execdir"] {
        for who in ["gnu", "ours"] {
            let mut command = if who == "gnu" { gnu("find") } else { canopy() };
            if who == "ours" {
                command.arg("find");
            }
            command.current_dir(tmp.path()).args(["many", "-type", "f", exec, "sh", "-c", "ulimit -Sn", ";"]);
            // SAFETY: setrlimit is async-signal-safe.
            unsafe {
                command.pre_exec(|| {
                    let limit = rustix::process::Rlimit { current: Some(64), maximum: Some(4096) };
                    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit)?;
                    Ok(())
                });
            }
            let out = run(command, None);
            assert_eq!(String::from_utf8(out.stdout).unwrap(), "64\n".repeat(3), "{who} {exec}");
        }
    }
}

#[test]
fn a_missing_command_is_reported_once() {
    let tmp = tempfile::tempdir().unwrap();
    // Enough long names for several batches: GNU names the command once per batch, canopy once.
    many_files(tmp.path(), 4, 3000, 120);
    for exec in ["-exec", "-execdir"] {
        for threads in ["1", "4"] {
            let options = ["-j", threads];
            let run = FindRun { canopy_options: &options, ..FindRun::default() };
            let (want, got) =
                run.both(tmp.path(), &[".", "-type", "f", exec, "/nonexistent/command", "{}", "+"]);
            assert_eq!((got.status.code(), want.status.code()), (Some(1), Some(1)));
            let first_gnu_line = String::from_utf8_lossy(&want.stderr).lines().next().unwrap().to_string();
            assert_eq!(
                String::from_utf8_lossy(&got.stderr),
                format!("canopy {first_gnu_line}\n"),
                "{exec} -j {threads}"
            );
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    many_files(tmp.path(), 1, 5, 8);
    // One child per entry: one message per entry, as GNU find.
    FindRun::default().same(tmp.path(), &[".", "-type", "f", "-exec", "/nonexistent/command", "{}", ";"]);
}

#[test]
fn each_entry_prints_in_one_piece() {
    let tmp = tempfile::tempdir().unwrap();
    // Paths past PATH_MAX at -j 8: each entry's -print and -print0 must come out next to each
    // other even when they straddle the output buffer's size.
    for chain in 0..8 {
        deep_chain(&tmp.path().join(format!("c{chain}")), 40);
    }
    let mut ours = canopy();
    ours.current_dir(tmp.path()).args(["find", "-j", "8", ".", "-print", "-print0"]);
    let out = run(ours, None);
    assert!(out.status.success());
    let mut rest = out.stdout.as_slice();
    let mut entries = 0;
    while !rest.is_empty() {
        let newline = rest.iter().position(|&b| b == b'\n').expect("a -print line");
        let (line, after) = (&rest[..newline], &rest[newline + 1..]);
        assert!(after.starts_with(line) && after.get(line.len()) == Some(&0), "entry {entries} split");
        rest = &after[line.len() + 1..];
        entries += 1;
    }
    assert_eq!(entries, 1 + 8 * 42);
}
