//! A launch that would run N copies of the whole job is refused with exit status 2 and the fix:
//! a build without MPI under mpirun, mpiexec, PMIx or srun names the cargo feature `mpi` and
//! scripts/setup; an MPI build under srun without an MPI process manager names `srun --mpi=pmix`.
//! One task (srun -n 1, a batch script, no launcher) runs as usual.

mod common;

use common::canopy;
use std::process::Output;

/// `canopy walk DIR` with the launcher variables `env`.
fn walk_with(env: &[(&str, &str)]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f"), b"x").unwrap();
    canopy().args(["walk", "--json"]).arg(tmp.path()).envs(env.iter().copied()).output().unwrap()
}

#[track_caller]
fn assert_refused(out: &Output, names: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing runs: {}", String::from_utf8_lossy(&out.stdout));
    for name in names {
        assert!(stderr.contains(name), "'{name}' in: {stderr}");
    }
}

#[track_caller]
fn assert_runs(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.is_empty());
}

/// Slurm's environment of one task of `srun -n 4` (no MPI plugin).
const SRUN_4: &[(&str, &str)] =
    &[("SLURM_JOB_ID", "7"), ("SLURM_STEP_ID", "0"), ("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_PROCID", "1")];

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_every_launcher_of_several_tasks() {
    let fix = ["`mpi`", "scripts/setup", "--features canopy-cli/mpi"];
    let open_mpi = [("OMPI_COMM_WORLD_SIZE", "2"), ("OMPI_COMM_WORLD_RANK", "0")];
    assert_refused(&walk_with(&open_mpi), &[&fix[..], &["mpirun (Open MPI)", "2 tasks"]].concat());
    let hydra = [("PMI_SIZE", "3"), ("PMI_RANK", "2")];
    assert_refused(&walk_with(&hydra), &[&fix[..], &["MPICH/Hydra", "3 tasks"]].concat());
    let pmix = [("PMIX_RANK", "1"), ("PMIX_NAMESPACE", "job.1")];
    assert_refused(&walk_with(&pmix), &[&fix[..], &["PMIx"]].concat());
    assert_refused(&walk_with(SRUN_4), &[&fix[..], &["srun", "4 tasks", "srun --mpi=pmix"]].concat());
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_a_real_mpirun() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let out = common::mpirun::mpirun(2, &["walk", dir], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "no rank walked: {}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains("built without MPI (the cargo feature `mpi`)"), "{stderr}");
}

#[cfg(feature = "mpi")]
#[test]
fn an_mpi_build_under_srun_without_pmix_names_srun_mpi_pmix() {
    assert_refused(&walk_with(SRUN_4), &["srun started 4 tasks", "world size 1", "srun --mpi=pmix"]);
}

#[test]
fn one_task_runs_as_usual() {
    assert_runs(&walk_with(&[]));
    assert_runs(&walk_with(&[("SLURM_STEP_NUM_TASKS", "1"), ("SLURM_PROCID", "0"), ("SLURM_STEP_ID", "0")]));
    // A batch script sees its job's task count, and is one process.
    assert_runs(&walk_with(&[("SLURM_JOB_ID", "7"), ("SLURM_NTASKS", "4"), ("SLURM_PROCID", "0")]));
    // Servers and reports are one process wherever they start: never refused.
    let out = canopy().args(["completions", "bash"]).envs(SRUN_4.iter().copied()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}
