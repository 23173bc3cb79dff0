//! Under `mpirun`, Open MPI gives each rank a pseudo-terminal whatever mpirun's own output is: the
//! tools must not take it for the user's terminal. With mpirun's output a pipe (`mpirun … | cat`),
//! du draws the chart one process draws into a pipe (no colours, the same width) and no tool
//! shows progress or any other escape sequence.
#![cfg(feature = "mpi")]

mod common;

use common::mpirun::mpirun;
use common::*;
use std::path::Path;
use std::process::Output;

/// A tree worth a chart: directories of different sizes, two levels deep.
fn tree(root: &Path) {
    for d in 0..6 {
        let dir = root.join(format!("d{d}")).join("inner");
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..20 {
            std::fs::write(dir.join(format!("f{f}")), vec![b'x'; 1000 * (d + 1) * (f + 1)]).unwrap();
        }
    }
}

#[track_caller]
fn assert_plain(out: &Output, context: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{context}: {stderr}");
    assert!(
        !out.stdout.contains(&0x1b),
        "{context}: escape codes on stdout: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!out.stderr.contains(&0x1b), "{context}: escape codes on stderr: {stderr:?}");
}

/// One process's output into a pipe, with the environment the mpirun runs get.
fn local(args: &[&str]) -> Output {
    let mut cmd = canopy();
    cmd.args(args).env_remove("COLUMNS").env_remove("NO_COLOR").env("TERM", "xterm");
    run(cmd, None)
}

#[test]
fn du_under_mpirun_into_a_pipe_draws_the_plain_chart_of_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    tree(&root);
    let root = root.to_str().unwrap();
    let want = local(&["du", root]);
    assert_plain(&want, "du in one process");
    assert!(want.stdout.len() > 200, "a chart: {}", String::from_utf8_lossy(&want.stdout));
    let env = [("TERM", "xterm")];
    for n in [1, 2] {
        let got = mpirun(n, &["du", root], &env);
        assert_plain(&got, &format!("du under mpirun -n {n}"));
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            String::from_utf8_lossy(&want.stdout),
            "du under mpirun -n {n}: the chart one process draws into a pipe"
        );
    }
}

#[test]
fn no_tool_shows_progress_or_colours_under_mpirun_into_a_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    tree(&root);
    let (root, copy) = (root.to_str().unwrap(), tmp.path().join("copy"));
    let env = [("TERM", "xterm")];
    let runs: [&[&str]; 4] = [
        &["walk", root],
        &["find", root, "-name", "f1*"],
        &["grep", "-r", "x", root, "-l"],
        &["cp", "-r", root, copy.to_str().unwrap()],
    ];
    for args in runs {
        assert_plain(&mpirun(2, args, &env), &format!("mpirun -n 2 {args:?}"));
    }
    assert_eq!(std::fs::read_dir(copy.join("d5/inner")).unwrap().count(), 20, "cp copied");
}
