//! `canopy grep` under `mpirun` (feature `mpi`): every rank searches, rank 0 prints; the output
//! equals the single-process run's (which the GNU grep oracle tests check) for every rank count.
#![cfg(feature = "mpi")]

mod common;

use common::grep_trees::{config_tree, grep_tree};
use common::mpirun::{mpirun_command, run_within};
use common::*;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn local(args: &[&str], root: &Path) -> Output {
    let mut cmd = canopy();
    cmd.arg("grep").args(args).arg(root);
    run(cmd, None)
}

fn on_ranks(n: usize, args: &[&str], root: &Path) -> Output {
    let root = root.to_str().unwrap();
    let mut all = vec!["grep"];
    all.extend_from_slice(args);
    all.push(root);
    run_within(mpirun_command(n, &[], &all), Duration::from_secs(120))
}

#[test]
fn every_rank_count_prints_what_one_process_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let root = grep_tree(tmp.path());
    let configs = config_tree(tmp.path());
    for n in [1, 2, 4] {
        for (args, sep) in
            [(&["-n", "foo"][..], b'\n'), (&["-c", "-i", "foo"], b'\n'), (&["-l", "-0", "foo"], 0)]
        {
            let want = local(args, &root);
            let got = on_ranks(n, args, &root);
            let context = format!("mpirun -n {n} grep {args:?}");
            assert_eq!(got.status.code(), Some(0), "{context}: {}", String::from_utf8_lossy(&got.stderr));
            assert_same_records(&records(&got.stdout, sep), &records(&want.stdout, sep), &context);
        }
        // Folded output is sorted: byte for byte the same.
        let want = local(&["--group", "listen"], &configs);
        let got = on_ranks(n, &["--group", "listen"], &configs);
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            String::from_utf8_lossy(&want.stdout),
            "--group on {n}"
        );
        // Nothing selected anywhere: status 1 from the job.
        let none = on_ranks(n, &["no such text"], &root);
        assert_eq!(none.status.code(), Some(1), "mpirun -n {n}: nothing selected");
    }
}
