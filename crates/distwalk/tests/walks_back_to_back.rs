//! Walks run back to back under mpirun each end, and each sees every entry once. A rank that has
//! left one walk must not send the next walk's messages to a rank still leaving the first: that
//! rank would take the termination token for a late message of its own walk and drop it, and the
//! next walk would never end (seen as `canopy sync` hanging in its second walk). A small tree makes
//! rank 0 idle, and so pass the token on, moments after each walk starts: every walk is a chance.
//! The processes are this test binary again, started by mpirun to run `child_process_entry`.

use canopy_distwalk::{Cluster, Plan};
use canopy_engine::{Action, Cx, DistributedVisitor, Entry, Visitor, WalkOptions};
use std::os::unix::ffi::OsStrExt;

/// The tree the children walk, and the scheduler they use (set by the test that starts them).
const TREE: &str = "CANOPY_TEST_BACK_TO_BACK_TREE";
const SCHED: &str = "CANOPY_TEST_BACK_TO_BACK_SCHED";
/// Walks per job.
const WALKS: usize = 150;

/// Counts the entries it visits.
struct Count;

impl Visitor for Count {
    type State = u64;
    type DirData = ();
    type Job = ();

    fn new_state(&self) -> u64 {
        0
    }

    fn visit(&self, _: &mut Cx<'_, Self>, seen: &mut u64, _: &Entry<'_, ()>) -> Action {
        *seen += 1;
        Action::Continue
    }
}

impl DistributedVisitor for Count {}

#[test]
#[ignore = "entry point of the processes the other tests start; does nothing on its own"]
fn child_process_entry() {
    let Some(tree) = std::env::var_os(TREE) else { return };
    let cluster = Cluster::init().expect("a launch this build serves");
    let root = tree.as_bytes().to_vec();
    let sched = std::env::var(SCHED).ok().map(|s| s.parse().expect("a scheduler")).unwrap_or_default();
    let plan = Plan { sched, ..Plan::default() };
    let options = WalkOptions::default();
    let expected: u64 =
        canopy_engine::walk(std::slice::from_ref(&root), &options, &Count).states.iter().sum();
    for walk in 0..WALKS {
        let outcome = cluster.walk(std::slice::from_ref(&root), &options, &Count, &plan);
        let seen = cluster.reduce(outcome.states.iter().sum::<u64>(), |a, b| a + b);
        if let Some(seen) = seen {
            assert_eq!(seen, expected, "walk {walk}: every entry once");
        }
    }
    if cluster.is_root() {
        println!("{WALKS} walks of {expected} entries");
    }
}

#[cfg(feature = "mpi")]
#[test]
fn walks_back_to_back_under_mpirun_all_end() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    for d in 0..4 {
        std::fs::create_dir_all(tmp.path().join(format!("d{d}/e"))).unwrap();
        std::fs::write(tmp.path().join(format!("d{d}/e/x")), b"").unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    for sched in ["pa-drqs", "drqs", "cp"] {
        // Session files of its own: Open MPI's shared default races with other mpiruns' cleanup.
        let session = tempfile::tempdir().unwrap();
        let mut cmd = Command::new("mpirun");
        cmd.args(["--oversubscribe", "-n", "8", "-x", TREE, "-x", SCHED])
            .arg(&exe)
            .args(["--ignored", "--exact", "child_process_entry", "--nocapture"])
            .env(TREE, tmp.path())
            .env(SCHED, sched)
            .env("OMPI_MCA_orte_tmpdir_base", session.path())
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("mpirun (Open MPI) is installed by scripts/setup");
        let (started, limit) = (Instant::now(), Duration::from_secs(240));
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > limit {
                let _ = child.kill();
                panic!("{sched}: {WALKS} walks back to back still running after {limit:?}: a walk hung");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{sched}: {stderr}");
        assert!(stdout.contains(&format!("{WALKS} walks of ")), "{sched}: {stdout}");
    }
}
