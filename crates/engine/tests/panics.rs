//! A visitor that panics ends the walk instead of hanging it: the panic comes out of `walk` as a
//! `WalkFailure` naming the message and the path being visited, for every hook a visitor has and
//! every thread count. Each walk runs on a watchdog: a hang fails the test.

mod common;

use canopy_engine::{
    Action, Cx, DirNode, Entry, FailureKind, ThreadPolicy, Visitor, WalkFailure, WalkOptions, walk,
};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

/// Where the test visitor panics.
#[derive(Clone, Copy, Debug)]
enum Hook {
    Visit,
    LeaveDir,
    Job,
}

/// Panics at the entry (or directory, or job) named `victim`; visits everything else.
struct Panicky {
    victim: &'static [u8],
    hook: Hook,
}

impl Visitor for Panicky {
    type State = u64;
    type DirData = ();
    type Job = Vec<u8>;

    fn new_state(&self) -> u64 {
        0
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, seen: &mut u64, entry: &Entry<'_, ()>) -> Action {
        *seen += 1;
        if entry.file_name() == self.victim {
            match self.hook {
                Hook::Visit => panic!("visitor bug on {}", String::from_utf8_lossy(self.victim)),
                Hook::Job => cx.spawn(entry.path()),
                Hook::LeaveDir => {}
            }
        }
        Action::Continue
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, _: &mut u64, dir: &Arc<DirNode<()>>) {
        if matches!(self.hook, Hook::LeaveDir) && dir.path().ends_with(self.victim) {
            panic!("leave_dir bug");
        }
    }

    fn run_job(&self, _: &mut Cx<'_, Self>, _: &mut u64, path: Vec<u8>) {
        panic!("job bug on {}", String::from_utf8_lossy(&path));
    }
}

fn tree(root: &Path) {
    for d in 0..20 {
        let dir = root.join(format!("d{d}"));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in 0..50 {
            std::fs::write(dir.join(format!("f{f}")), b"").unwrap();
        }
    }
    // A big directory, handed out in chunks: the victim is visited by whichever worker gets it.
    for f in 0..2000 {
        std::fs::write(root.join("d7").join(format!("big{f}")), b"").unwrap();
    }
}

/// Walks `root` on another thread; the failure it unwinds with, or the test fails on a hang.
fn failure_of(root: &Path, visitor: Panicky, threads: ThreadPolicy) -> WalkFailure {
    let (done, result) = mpsc::channel();
    let root = root.as_os_str().as_bytes().to_vec();
    std::thread::spawn(move || {
        let options = WalkOptions { threads, chunk_size: 64, ..WalkOptions::default() };
        let walked = std::panic::AssertUnwindSafe(|| walk(&[root], &options, &visitor).states.len());
        let outcome = std::panic::catch_unwind(walked);
        let _ = done.send(outcome.map_err(|payload| payload.downcast::<WalkFailure>().map(|f| *f)));
    });
    match result.recv_timeout(Duration::from_secs(60)) {
        Ok(Err(Ok(failure))) => failure,
        Ok(Err(Err(_))) => panic!("the walk unwound with something else than a WalkFailure"),
        Ok(Ok(_)) => panic!("the walk ended normally despite the panic"),
        Err(_) => panic!("the walk hung after a visitor panicked"),
    }
}

#[test]
fn a_panicking_visit_stops_the_walk_and_names_the_entry() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    for threads in [ThreadPolicy::Fixed(1), ThreadPolicy::Fixed(4), ThreadPolicy::adaptive_default()] {
        for victim in [&b"f13"[..], b"big1500", b"sub"] {
            let failure = failure_of(tmp.path(), Panicky { victim, hook: Hook::Visit }, threads);
            assert_eq!(failure.kind, FailureKind::Panic);
            assert_eq!(failure.exit_code(), 70);
            let victim = String::from_utf8_lossy(victim);
            assert_eq!(failure.message, format!("visitor bug on {victim}"));
            let path = String::from_utf8(failure.path.clone().expect("the path is known")).unwrap();
            assert!(path.starts_with(tmp.path().to_str().unwrap()) && path.ends_with(&*victim), "{path}");
            assert!(failure.to_string().starts_with("internal error: visitor bug"), "{failure}");
        }
    }
}

#[test]
fn panics_in_leave_dir_and_in_jobs_stop_the_walk_too() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    for threads in [ThreadPolicy::Fixed(1), ThreadPolicy::Fixed(4)] {
        let left = failure_of(tmp.path(), Panicky { victim: b"d3/sub", hook: Hook::LeaveDir }, threads);
        assert_eq!(left.message, "leave_dir bug");
        assert!(left.path.as_deref().is_some_and(|p| p.ends_with(b"d3/sub")), "{left}");
        let job = failure_of(tmp.path(), Panicky { victim: b"f42", hook: Hook::Job }, threads);
        assert!(job.message.starts_with("job bug on") && job.message.ends_with("f42"), "{job}");
    }
}
