//! Oracles of the launcher tests: what canopy prints when started by srun, sbatch or mpirun across
//! hosts, against GNU find and du run once here, and the ranks a run's `--stats` reports.

use super::{assert_same_records, gnu, records, run};
use std::path::Path;
use std::process::Output;

/// Fails the test, showing `context` and the stderr, unless `out` exited 0.
#[track_caller]
pub fn assert_success(out: &Output, context: &str) {
    assert_eq!(out.status.code(), Some(0), "{context}: {}", String::from_utf8_lossy(&out.stderr));
}

/// GNU `find ROOT -print0`'s records, sorted.
pub fn gnu_find_records(root: &Path) -> Vec<Vec<u8>> {
    let mut find = gnu("find");
    find.arg(root).arg("-print0");
    let out = run(find, None);
    assert_success(&out, "GNU find");
    records(&out.stdout, 0)
}

/// For each of `arg_sets`: `canopy du ARGS TREE` started by `launch` prints GNU du's lines.
#[track_caller]
pub fn assert_du_like_gnu(tree: &Path, arg_sets: &[&[&str]], launch: impl Fn(&[&str]) -> Output, how: &str) {
    for args in arg_sets {
        let mut du = gnu("du");
        du.args(*args).arg(tree);
        let want = run(du, None);
        assert_success(&want, "GNU du");
        let mut ours = vec!["du"];
        ours.extend_from_slice(args);
        ours.push(tree.to_str().unwrap());
        let got = launch(&ours);
        let context = format!("{how} canopy {ours:?}");
        assert_success(&got, &context);
        assert_same_records(&records(&got.stdout, b'\n'), &records(&want.stdout, b'\n'), &context);
    }
}

/// The per-rank objects of a `--stats` file (rank 0 writes it once the whole job has finished).
pub fn stats_ranks(path: &Path) -> Vec<serde_json::Value> {
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    stats["ranks"].as_array().unwrap().clone()
}
