//! Concurrent clients overlap their delays: the mount's own counter of requests in flight shows how
//! many were being served at once. (Structural, never wall-clock: timings belong in benchmarks.)

use std::fs;
use std::path::Path;
use std::sync::Barrier;
use std::time::Duration;

use crate::support::{TestMount, fuse_available};

const CLIENTS: usize = 32;

/// The most requests in flight while `CLIENTS` threads each stat a different file of one directory,
/// the mount's root: no parent needs revalidating, so every request is a lookup in that directory or
/// a getattr.
fn max_in_flight_for_concurrent_stats(workers: usize) -> usize {
    let source = tempfile::tempdir().unwrap();
    for i in 0..CLIENTS {
        fs::write(source.path().join(format!("file-{i}")), "x").unwrap();
    }
    // A long delay keeps every request in flight long enough for all clients to pile up.
    let mount = TestMount::new(source.path(), |options| {
        options.delay = Duration::from_millis(25);
        options.threads = workers;
    });
    mount.mount.stats().restart_window();

    let barrier = Barrier::new(CLIENTS);
    std::thread::scope(|scope| {
        for i in 0..CLIENTS {
            let (barrier, path) = (&barrier, mount.path().join(format!("file-{i}")));
            scope.spawn(move || {
                barrier.wait();
                stat(&path);
            });
        }
    });
    mount.mount.stats().snapshot().window_max_in_flight
}

fn stat(path: &Path) {
    let meta = fs::symlink_metadata(path).unwrap();
    assert_eq!(meta.len(), 1);
}

#[test]
fn concurrent_stats_in_one_directory_overlap() {
    if !fuse_available() {
        return;
    }
    let overlapping = max_in_flight_for_concurrent_stats(64);
    // Lookups in one directory overlap only with FUSE_PARALLEL_DIROPS; without it (or with one worker)
    // at most a lookup and a getattr would be in flight together.
    assert!(overlapping >= CLIENTS / 2, "only {overlapping} of {CLIENTS} stats were in flight at once");
}

#[test]
fn worker_threads_bound_the_concurrency() {
    if !fuse_available() {
        return;
    }
    assert_eq!(max_in_flight_for_concurrent_stats(1), 1, "one worker serves one request at a time");
    let four = max_in_flight_for_concurrent_stats(4);
    assert!((2..=4).contains(&four), "4 workers had {four} requests in flight");
}
