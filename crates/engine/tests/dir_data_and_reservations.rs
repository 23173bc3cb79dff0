//! Per-directory data set by the visit of a directory, and reservations that hold a directory's
//! post-order hook until a job scheduled later has run.

use canopy_engine::{
    Action, Cx, DirNode, Entry, FileKind, Reservation, SplitMode, ThreadPolicy, Visitor, WalkOptions, walk,
};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

fn options(threads: usize) -> WalkOptions {
    WalkOptions {
        threads: ThreadPolicy::Fixed(threads),
        split: SplitMode::Random,
        chunk_size: 4,
        ..WalkOptions::default()
    }
}

fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for dir in ["a", "a/b", "a/b/c", "d", "e"] {
        std::fs::create_dir(tmp.path().join(dir)).unwrap();
    }
    for (i, dir) in ["", "a", "a/b", "a/b/c", "d", "d", "d"].iter().enumerate() {
        for j in 0..5 {
            std::fs::write(tmp.path().join(dir).join(format!("f{i}-{j}")), b"x").unwrap();
        }
    }
    tmp
}

/// Each directory's data is its own path, set when it was visited; every entry checks its parent's.
struct PathAsData;

impl Visitor for PathAsData {
    type State = Vec<(Vec<u8>, Vec<u8>)>;
    type DirData = Vec<u8>;
    type Job = ();

    fn new_state(&self) -> Self::State {
        Vec::new()
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, seen: &mut Self::State, entry: &Entry<'_, Vec<u8>>) -> Action {
        if let Some(dir) = entry.dir() {
            seen.push((dir.path().to_vec(), dir.data.clone()));
        }
        if entry.kind() == FileKind::Dir {
            cx.set_dir_data(entry.path());
        }
        Action::Continue
    }
}

#[test]
fn directory_data_set_by_the_visit_is_seen_inside() {
    let tmp = tree();
    for threads in [1, 4] {
        let outcome = walk(&[tmp.path().as_os_str().as_bytes().to_vec()], &options(threads), &PathAsData);
        let seen: Vec<_> = outcome.states.into_iter().flatten().collect();
        assert_eq!(seen.len(), 5 * 7 + 5, "every non-root entry checked");
        for (path, data) in seen {
            assert_eq!(path, data, "threads {threads}");
        }
    }
}

/// Every file reserves its directory and hands the reservation to a detached job, which only then
/// schedules the job that counts: each directory must still be left after all its counted jobs.
struct Reserved;

#[derive(Default)]
struct Counted(AtomicU64);

enum Job {
    Later(Reservation<Counted>),
    Count(Arc<DirNode<Counted>>),
}

impl Visitor for Reserved {
    type State = Vec<(Vec<u8>, u64)>;
    type DirData = Counted;
    type Job = Job;

    fn new_state(&self) -> Self::State {
        Vec::new()
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, _: &mut Self::State, entry: &Entry<'_, Counted>) -> Action {
        if let Some(dir) = entry.dir()
            && entry.kind() == FileKind::File
        {
            let reservation = cx.reserve(dir);
            cx.spawn(Job::Later(reservation));
        }
        Action::Continue
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, _: &mut Self::State, job: Job) {
        match job {
            Job::Later(reservation) => {
                let dir = Arc::clone(reservation.dir());
                cx.spawn_reserved(reservation, Job::Count(dir));
            }
            Job::Count(dir) => {
                dir.data.0.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, left: &mut Self::State, dir: &Arc<DirNode<Counted>>) {
        left.push((dir.path().to_vec(), dir.data.0.load(Ordering::SeqCst)));
    }
}

#[test]
fn a_reserved_job_runs_before_its_directory_is_left() {
    let tmp = tree();
    let root = tmp.path().as_os_str().as_bytes().to_vec();
    let mut want: Vec<(Vec<u8>, u64)> = ["", "a", "a/b", "a/b/c", "d", "e"]
        .iter()
        .map(|dir| {
            let files = std::fs::read_dir(tmp.path().join(dir))
                .unwrap()
                .filter(|e| e.as_ref().unwrap().file_type().unwrap().is_file())
                .count();
            let path = if dir.is_empty() { root.clone() } else { [&root[..], b"/", dir.as_bytes()].concat() };
            (path, files as u64)
        })
        .collect();
    want.sort();
    // With one thread the order is fixed: the detached job is queued behind the directory's
    // completion, so without the reservation every directory would be left with a count of 0.
    for threads in [1, 2, 8] {
        let outcome = walk(std::slice::from_ref(&root), &options(threads), &Reserved);
        let mut left: Vec<_> = outcome.states.into_iter().flatten().collect();
        left.sort();
        assert_eq!(left, want, "threads {threads}");
    }
}
