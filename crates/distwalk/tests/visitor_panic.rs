//! A visitor that panics on one entry ends the job with "internal error", the panic's message and
//! the path being visited: one process exits 70; under mpirun the rank that met it aborts the
//! whole job, so no rank waits for it forever. The processes are this test binary again, started
//! (by itself or by mpirun) to run `child_process_entry`.

mod common;

use canopy_engine::{Action, Cx, DistributedVisitor, Entry, Visitor, WalkOptions};
use canopy_testkit::mpirun::run_within;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::Duration;

/// The tree a child walks and the scheduler it uses (set by the test that starts it).
const TREE: &str = "CANOPY_TEST_PANIC_TREE";
const SCHED: &str = "CANOPY_TEST_PANIC_SCHED";

/// Panics on the entry named `victim`.
struct PanicAt;

impl Visitor for PanicAt {
    type State = ();
    type DirData = ();
    type Job = ();

    fn new_state(&self) {}

    fn visit(&self, _: &mut Cx<'_, Self>, _: &mut (), entry: &Entry<'_, ()>) -> Action {
        if entry.file_name() == b"victim" {
            panic!("visitor bug");
        }
        Action::Continue
    }
}

impl DistributedVisitor for PanicAt {}

#[test]
#[ignore = "entry point of the processes the other tests start; does nothing on its own"]
fn child_process_entry() {
    let Some((cluster, root, plan)) = common::child_setup(TREE, SCHED) else { return };
    let walked =
        catch_unwind(AssertUnwindSafe(|| cluster.walk(&[root], &WalkOptions::default(), &PanicAt, &plan)));
    let payload = walked.err().expect("the walk fails");
    std::process::exit(i32::from(cluster.fail(&*payload)));
}

/// Directories with files, and the victim deep in one of them.
fn tree(root: &Path) {
    for d in 0..40 {
        let dir = root.join(format!("d{d}/e/f"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..20 {
            std::fs::write(dir.join(format!("x{f}")), b"").unwrap();
        }
    }
    std::fs::write(root.join("d27/e/f/victim"), b"").unwrap();
}

#[test]
fn one_process_reports_the_panic_with_its_path_and_exits_70() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let mut cmd = common::child();
    cmd.env(TREE, tmp.path());
    let out = run_within(cmd, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(70), "{stderr}");
    let victim = tmp.path().join("d27/e/f/victim");
    let expected = format!("canopy: internal error: visitor bug (while visiting '{}')", victim.display());
    assert!(stderr.lines().any(|l| l == expected), "{stderr}");
}

#[cfg(feature = "mpi")]
#[test]
fn under_mpirun_the_rank_that_panics_aborts_the_job() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    for sched in ["h-drqs", "drqs", "cp"] {
        let mut cmd = common::children_under_mpirun(3, &[TREE, SCHED]);
        cmd.env(TREE, tmp.path()).env(SCHED, sched);
        let out = run_within(cmd, Duration::from_secs(120));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{sched}: {stderr}");
        assert!(
            stderr.contains("internal error: visitor bug (while visiting '")
                && stderr.contains("victim'); aborting the MPI job"),
            "{sched}: {stderr}"
        );
    }
}
