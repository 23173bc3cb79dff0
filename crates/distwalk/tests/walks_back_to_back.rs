//! Walks run back to back under mpirun each end, and each sees every entry once. A rank that has
//! left one walk must not send the next walk's messages to a rank still leaving the first: that
//! rank would take the termination token for a late message of its own walk and drop it, and the
//! next walk would never end (seen as `canopy sync` hanging in its second walk). A small tree makes
//! rank 0 idle, and so pass the token on, moments after each walk starts: every walk is a chance.
//! The processes are this test binary again, started by mpirun to run `child_process_entry`.

mod common;

use canopy_engine::{Action, Cx, DistributedVisitor, Entry, Visitor, WalkOptions};

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
    let Some((cluster, root, plan)) = common::child_setup(TREE, SCHED) else { return };
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
    let tmp = tempfile::tempdir().unwrap();
    for d in 0..4 {
        std::fs::create_dir_all(tmp.path().join(format!("d{d}/e"))).unwrap();
        std::fs::write(tmp.path().join(format!("d{d}/e/x")), b"").unwrap();
    }
    for sched in ["pa-drqs", "drqs", "cp"] {
        let mut cmd = common::children_under_mpirun(8, &[TREE, SCHED]);
        cmd.env(TREE, tmp.path()).env(SCHED, sched);
        // A hang fails the test here, after 240 s.
        let out = canopy_testkit::mpirun::run_within(cmd, std::time::Duration::from_secs(240));
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{sched}: {stderr}");
        assert!(stdout.contains(&format!("{WALKS} walks of ")), "{sched}: {stdout}");
    }
}
