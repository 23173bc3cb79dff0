//! A visitor that panics on one entry ends the job with "internal error", the panic's message and
//! the path being visited: one process exits 70; under mpirun the rank that met it aborts the
//! whole job, so no rank waits for it forever. The processes are this test binary again, started
//! (by itself or by mpirun) to run `child_process_entry`.

use canopy_distwalk::{Cluster, Plan};
use canopy_engine::{Action, Cx, DistributedVisitor, Entry, Visitor, WalkOptions};
use std::os::unix::ffi::OsStrExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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
    let Some(tree) = std::env::var_os(TREE) else { return };
    let cluster = Cluster::init().expect("a launch this build serves");
    let root = tree.as_bytes().to_vec();
    let sched = std::env::var(SCHED).ok().map(|s| s.parse().expect("a scheduler")).unwrap_or_default();
    let plan = Plan { sched, ..Plan::default() };
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

/// Runs `cmd`, killing it and failing the test if it is still running after `limit`.
fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{cmd:?} still running after {limit:?}: a failed walk hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn child(tree: &Path) -> Vec<String> {
    let exe = std::env::current_exe().unwrap().to_string_lossy().into_owned();
    let tree = tree.to_string_lossy().into_owned();
    [exe, "--ignored".into(), "--exact".into(), "child_process_entry".into(), "--nocapture".into(), tree]
        .into_iter()
        .collect()
}

#[test]
fn one_process_reports_the_panic_with_its_path_and_exits_70() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let argv = child(tmp.path());
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..5]).env(TREE, &argv[5]);
    let out = output_within(cmd, Duration::from_secs(60));
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
    let argv = child(tmp.path());
    for sched in ["h-drqs", "drqs", "cp"] {
        // Session files of its own: Open MPI's shared default races with other mpiruns' cleanup.
        let session = tempfile::tempdir().unwrap();
        let mut cmd = Command::new("mpirun");
        cmd.args(["--oversubscribe", "-n", "3", "-x", TREE, "-x", SCHED])
            .args(&argv[..5])
            .env(TREE, &argv[5])
            .env(SCHED, sched)
            .env("OMPI_MCA_orte_tmpdir_base", session.path())
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        let out = output_within(cmd, Duration::from_secs(120));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{sched}: {stderr}");
        assert!(
            stderr.contains("internal error: visitor bug (while visiting '")
                && stderr.contains("victim'); aborting the MPI job"),
            "{sched}: {stderr}"
        );
    }
}
