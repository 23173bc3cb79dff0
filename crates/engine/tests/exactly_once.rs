//! Exactly-once visitation and post-order completion for random tree shapes, thread counts 1…64 and
//! both split modes; big directories chunked; jobs counted toward their directory.

mod common;

use canopy_engine::{Action, Cx, DirNode, Entry, SplitMode, ThreadPolicy, Visitor, WalkOptions, walk};
use common::*;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

fn options(threads: usize, split: SplitMode, chunk_size: usize) -> WalkOptions {
    WalkOptions { threads: ThreadPolicy::Fixed(threads), split, chunk_size, ..WalkOptions::default() }
}

#[test]
fn random_trees_every_thread_count_and_split() {
    for seed in 0..4u64 {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("t");
        std::fs::create_dir(&root).unwrap();
        let created = random_tree(&root, seed, 5);
        let expected = reference_paths(&root);
        assert_eq!(expected.len(), created + 1);
        let children = children_per_dir(&root);
        for threads in [1, 2, 3, 4, 7, 16, 64] {
            for split in [SplitMode::Equal, SplitMode::Random] {
                // A small chunk size forces big directories to be shared out.
                let opts = options(threads, split, 1 + (seed as usize * 37) % 64);
                let outcome = walk(&[root.as_os_str().as_bytes().to_vec()], &opts, &Collect);
                assert_eq!(outcome.errors, 0);
                let seen = merge(outcome.states);
                assert_eq!(seen.paths, expected, "seed {seed} threads {threads} {split:?}");
                let left: Vec<_> = seen.left.iter().map(|(p, n)| (p.clone(), *n)).collect();
                let want: Vec<_> = children.iter().map(|(p, n)| (p.clone(), *n)).collect();
                assert_eq!(left, want, "post-order: each dir left once, after all its entries");
            }
        }
    }
}

#[test]
fn empty_root_and_file_root_and_missing_root() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let opts = options(4, SplitMode::Random, 256);
    let outcome = walk(&[file.as_os_str().as_bytes().to_vec()], &opts, &Collect);
    assert_eq!(merge(outcome.states).paths, vec![file.as_os_str().as_bytes().to_vec()]);

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let outcome = walk(&[empty.as_os_str().as_bytes().to_vec()], &opts, &Collect);
    let seen = merge(outcome.states);
    assert_eq!(seen.paths.len(), 1);
    assert_eq!(seen.left.len(), 1);

    let outcome = walk(&[], &opts, &Collect);
    assert!(merge(outcome.states).paths.is_empty());
}

/// A visitor that schedules one job per file and checks that every job ran before its directory was
/// left.
struct JobPerFile;

#[derive(Default)]
struct JobsDone(AtomicU64);

impl Visitor for JobPerFile {
    type State = (u64, Vec<(Vec<u8>, u64)>);
    type DirData = JobsDone;
    type Job = Arc<DirNode<JobsDone>>;

    fn new_state(&self) -> Self::State {
        (0, Vec::new())
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, _: &mut Self::State, entry: &Entry<'_, JobsDone>) -> Action {
        if let Some(dir) = entry.dir()
            && entry.kind() == canopy_engine::FileKind::File
        {
            cx.spawn_in(dir, Arc::clone(dir));
        }
        Action::Continue
    }

    fn run_job(&self, _: &mut Cx<'_, Self>, state: &mut Self::State, dir: Self::Job) {
        dir.data.0.fetch_add(1, Ordering::SeqCst);
        state.0 += 1;
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, state: &mut Self::State, dir: &Arc<DirNode<JobsDone>>) {
        state.1.push((dir.path().to_vec(), dir.data.0.load(Ordering::SeqCst)));
    }
}

#[test]
fn jobs_finish_before_their_directory_is_left() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir(&root).unwrap();
    random_tree(&root, 99, 4);
    let files_per_dir = {
        let mut m = std::collections::BTreeMap::new();
        for p in reference_paths(&root) {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&p));
            if path.is_dir() {
                m.entry(p.clone()).or_insert(0u64);
            } else {
                *m.entry(path.parent().unwrap().as_os_str().as_bytes().to_vec()).or_insert(0) += 1;
            }
        }
        m
    };
    for threads in [1, 3, 16] {
        let outcome = walk(
            &[root.as_os_str().as_bytes().to_vec()],
            &options(threads, SplitMode::Equal, 8),
            &JobPerFile,
        );
        let mut left: Vec<_> = outcome.states.into_iter().flat_map(|s| s.1).collect();
        left.sort();
        let want: Vec<_> = files_per_dir.clone().into_iter().collect();
        assert_eq!(left, want, "threads {threads}");
    }
}

/// Records which worker visited each entry of one big directory, slowing each visit a little so the
/// reader cannot finish alone.
struct WhoVisits;

impl Visitor for WhoVisits {
    type State = std::collections::BTreeSet<usize>;
    type DirData = ();
    type Job = ();

    fn new_state(&self) -> Self::State {
        Default::default()
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, workers: &mut Self::State, entry: &Entry<'_, ()>) -> Action {
        if !entry.is_root() {
            std::thread::sleep(std::time::Duration::from_micros(200));
            workers.insert(cx.worker());
        }
        Action::Continue
    }
}

#[test]
fn a_big_directory_is_shared_by_several_workers() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..3000 {
        std::fs::write(tmp.path().join(format!("f{i}")), b"").unwrap();
    }
    let opts = options(4, SplitMode::Random, 64);
    let outcome = walk(&[tmp.path().as_os_str().as_bytes().to_vec()], &opts, &WhoVisits);
    let workers: std::collections::BTreeSet<usize> = outcome.states.into_iter().flatten().collect();
    assert!(workers.len() >= 2, "entries of one directory visited by workers {workers:?}");
}
