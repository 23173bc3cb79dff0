//! With almost no fds to spare the walk still completes: directories it could not keep open are
//! reopened through their ancestors. Its own test binary, because RLIMIT_NOFILE is process-wide.

mod common;

use canopy_engine::{SplitMode, ThreadPolicy, WalkOptions, walk};
use common::*;
use std::os::unix::ffi::OsStrExt;

#[test]
fn deep_and_wide_tree_with_a_tiny_fd_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    // A chain 300 deep with side branches: far more directories pending than the budget allows.
    let mut dir = root.clone();
    for i in 0..300 {
        std::fs::create_dir_all(dir.join("side")).unwrap();
        std::fs::write(dir.join("side").join("f"), b"").unwrap();
        dir = dir.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir(root.join("random")).unwrap();
    random_tree(&root.join("random"), 5, 4);
    let expected = reference_paths(&root);

    let limit = rustix::process::Rlimit { current: Some(80), maximum: Some(80) };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    assert!(canopy_engine::sys::fd_budget() <= 16);

    for threads in [1, 8, 32] {
        let opts = WalkOptions {
            threads: ThreadPolicy::Fixed(threads),
            split: SplitMode::Random,
            chunk_size: 16,
            ..WalkOptions::default()
        };
        let outcome = walk(&[root.as_os_str().as_bytes().to_vec()], &opts, &Collect);
        assert_eq!(outcome.errors, 0);
        assert_eq!(merge(outcome.states).paths, expected, "threads {threads}");
        assert!(canopy_engine::sys::open_cached_fds() == 0, "every cached fd is closed after the walk");
    }
}
