//! With almost no fds to spare (`ulimit -n 20`) the walk still completes: the least recently used
//! directory fds are closed to make room and reopened through their ancestors when needed again,
//! and the pool shrinks to what the limit can feed. Its own test binary, because RLIMIT_NOFILE is
//! process-wide.

mod common;

use canopy_engine::{SplitMode, ThreadPolicy, WalkOptions, walk};
use common::*;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `chains` chains of `depth` nested directories, a file at the bottom of each: every chain holds
/// its directories' fds while it is walked depth-first (bfs's and GNU find's hard case).
fn chains(root: &Path, chains: usize, depth: usize) {
    for c in 0..chains {
        let mut dir = root.join(format!("chain{c}"));
        for level in 0..depth {
            dir = dir.join(format!("level{level}"));
        }
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bottom"), b"").unwrap();
    }
}

#[test]
fn every_tree_is_walked_completely_under_a_limit_of_20_fds() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("deep");
    // A chain 300 deep with side branches: far more directories pending than fds.
    let mut dir = deep.clone();
    for i in 0..300 {
        std::fs::create_dir_all(dir.join("side")).unwrap();
        std::fs::write(dir.join("side").join("f"), b"").unwrap();
        dir = dir.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir(deep.join("random")).unwrap();
    random_tree(&deep.join("random"), 5, 4);
    let ladder = tmp.path().join("chains");
    chains(&ladder, 16, 17);

    let limit = rustix::process::Rlimit { current: Some(20), maximum: Some(20) };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    assert!(canopy_engine::sys::fd_budget() < 10, "the cache leaves most of 20 fds free");
    assert!(canopy_engine::sched::thread_limit().max <= 3, "a few workers share 20 fds");

    for root in [&deep, &ladder] {
        let expected = reference_paths(root);
        for threads in [ThreadPolicy::Fixed(1), ThreadPolicy::Fixed(32), ThreadPolicy::adaptive_default()] {
            let opts =
                WalkOptions { threads, split: SplitMode::Random, chunk_size: 16, ..WalkOptions::default() };
            let outcome = walk(&[root.as_os_str().as_bytes().to_vec()], &opts, &Collect);
            assert_eq!(outcome.errors, 0);
            assert_eq!(merge(outcome.states).paths, expected, "{root:?} {threads:?}");
            assert_eq!(canopy_engine::sys::open_cached_fds(), 0, "every cached fd is closed after the walk");
        }
    }
}
