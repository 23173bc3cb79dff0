//! The politeness budget reaches every worker: calls a visitor makes through `polite` share the
//! limits with the engine's own, on any number of threads.

mod common;

use canopy_engine::{Action, Cx, Entry, Politeness, ThreadPolicy, Visitor, WalkOptions, polite, walk};
use common::*;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Makes one polite call per entry, holding it a little, and records how many were in progress.
#[derive(Default)]
struct PoliteCalls {
    holding: AtomicUsize,
    most: AtomicUsize,
    calls: AtomicUsize,
}

impl Visitor for PoliteCalls {
    type State = Vec<Vec<u8>>;
    type DirData = ();
    type Job = ();

    fn new_state(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }

    fn visit(&self, _cx: &mut Cx<'_, Self>, seen: &mut Vec<Vec<u8>>, entry: &Entry<'_, ()>) -> Action {
        polite(|| {
            let now = self.holding.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            // A stat made inside the call is part of it: it must not wait for the slot held here.
            entry.metadata().expect("stat");
            std::thread::sleep(Duration::from_millis(1));
            self.holding.fetch_sub(1, Ordering::SeqCst);
        });
        self.calls.fetch_add(1, Ordering::SeqCst);
        seen.push(entry.path());
        Action::Continue
    }
}

fn tree() -> (tempfile::TempDir, Vec<u8>, Vec<Vec<u8>>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir(&root).unwrap();
    random_tree(&root, 7, 3);
    let expected = reference_paths(&root);
    (tmp, root.as_os_str().as_bytes().to_vec(), expected)
}

fn options(threads: usize, politeness: Politeness) -> WalkOptions {
    WalkOptions { threads: ThreadPolicy::Fixed(threads), politeness, ..WalkOptions::default() }
}

#[test]
fn calls_in_flight_never_exceed_the_limit_and_the_walk_is_complete() {
    let (_tmp, root, expected) = tree();
    for limit in [1, 2, 3] {
        let visitor = PoliteCalls::default();
        let politeness = Politeness { max_rate: None, max_in_flight: Some(limit) };
        let outcome = walk(std::slice::from_ref(&root), &options(8, politeness), &visitor);
        let mut seen: Vec<Vec<u8>> = outcome.states.into_iter().flatten().collect();
        seen.sort();
        assert_eq!(seen, expected, "limit {limit}");
        let most = visitor.most.load(Ordering::SeqCst);
        assert!(most <= limit, "{most} calls in progress at once under --max-in-flight {limit}");
    }
}

#[test]
fn calls_start_no_faster_than_the_rate() {
    let (_tmp, root, expected) = tree();
    let visitor = PoliteCalls::default();
    let rate = 500.0;
    let politeness = Politeness { max_rate: Some(rate), max_in_flight: None };
    let started = Instant::now();
    let outcome = walk(std::slice::from_ref(&root), &options(8, politeness), &visitor);
    let elapsed = started.elapsed();
    assert_eq!(outcome.states.into_iter().map(|s| s.len()).sum::<usize>(), expected.len());
    // The visitor's calls alone take distinct slots 2 ms apart from the walk's start (the engine's
    // own calls take more): a lower bound that holds however the threads are scheduled.
    let calls = visitor.calls.load(Ordering::SeqCst);
    let floor = Duration::from_secs_f64((calls - 1) as f64 / rate);
    assert!(elapsed >= floor, "{calls} calls at {rate}/s took {elapsed:?}, less than {floor:?}");
}
