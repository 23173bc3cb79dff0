//! What the tests share that start this test binary again as child processes, alone or under
//! mpirun, to run its `child_process_entry` test.
#![allow(dead_code)] // each test binary uses a different subset

use canopy_distwalk::{Cluster, Plan};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

/// The arguments that make this test binary run only `child_process_entry`.
const CHILD_ARGS: [&str; 4] = ["--ignored", "--exact", "child_process_entry", "--nocapture"];

/// In a child: joins the job, and returns the cluster, the tree to walk (from `tree_var`) and a
/// plan with the scheduler named in `sched_var` (the default without it). `None` when this
/// process was not started as a child: `tree_var` is not set.
pub fn child_setup(tree_var: &str, sched_var: &str) -> Option<(Cluster, Vec<u8>, Plan)> {
    let tree = std::env::var_os(tree_var)?;
    let cluster = Cluster::init().expect("a launch this build serves");
    let sched = std::env::var(sched_var).ok().map(|s| s.parse().expect("a scheduler")).unwrap_or_default();
    Some((cluster, tree.as_bytes().to_vec(), Plan { sched, ..Plan::default() }))
}

/// This test binary as one child process, output captured.
pub fn child() -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(CHILD_ARGS).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

/// This test binary as `n` ranks under mpirun, the variables `pass` passed to every rank.
pub fn children_under_mpirun(n: usize, pass: &[&str]) -> Command {
    let options: Vec<&str> = pass.iter().flat_map(|var| ["-x", var]).collect();
    let mut cmd = canopy_testkit::mpirun::mpirun(n, &options, std::env::current_exe().unwrap());
    cmd.args(CHILD_ARGS);
    cmd
}
