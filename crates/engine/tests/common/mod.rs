//! Test trees and a collecting visitor shared by the engine's integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use canopy_engine::{Action, Cx, DirNode, Entry, Visitor};
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Builds a random tree under `root`: directories with random fan-out, files, and the occasional big
/// directory. Returns the number of entries created (root excluded).
pub fn random_tree(root: &Path, seed: u64, max_depth: u32) -> usize {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut created = 0;
    let mut stack = vec![(root.to_path_buf(), 0u32)];
    while let Some((dir, depth)) = stack.pop() {
        let big = rng.u32(0..40) == 0;
        let files = if big { rng.usize(300..900) } else { rng.usize(0..12) };
        for i in 0..files {
            std::fs::write(dir.join(format!("f{i}")), b"").unwrap();
            created += 1;
        }
        if depth < max_depth {
            for i in 0..rng.usize(0..5) {
                let sub = dir.join(format!("d{i}"));
                std::fs::create_dir(&sub).unwrap();
                created += 1;
                stack.push((sub, depth + 1));
            }
        }
    }
    created
}

/// Every path under `root` (root included), by a plain serial std::fs walk: the oracle.
pub fn reference_paths(root: &Path) -> Vec<Vec<u8>> {
    let mut out = vec![root.as_os_str().as_bytes().to_vec()];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            out.push(e.path().as_os_str().as_bytes().to_vec());
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Collects every visited path; checks post-order: each directory's `leave_dir` runs once, after all
/// its entries were visited.
#[derive(Default)]
pub struct Collect;

#[derive(Default)]
pub struct DirCount {
    pub visited_children: AtomicU64,
}

#[derive(Default)]
pub struct Seen {
    pub paths: Vec<Vec<u8>>,
    /// For each directory left: (path, children visited when it was left).
    pub left: Vec<(Vec<u8>, u64)>,
}

impl Visitor for Collect {
    type State = Seen;
    type DirData = DirCount;
    type Job = ();

    fn new_state(&self) -> Seen {
        Seen::default()
    }

    fn visit(&self, _cx: &mut Cx<'_, Self>, seen: &mut Seen, entry: &Entry<'_, DirCount>) -> Action {
        seen.paths.push(entry.path());
        if let Some(dir) = entry.dir() {
            dir.data.visited_children.fetch_add(1, Ordering::SeqCst);
        }
        Action::Continue
    }

    fn leave_dir(&self, _cx: &mut Cx<'_, Self>, seen: &mut Seen, dir: &Arc<DirNode<DirCount>>) {
        seen.left.push((dir.path().to_vec(), dir.data.visited_children.load(Ordering::SeqCst)));
    }

    fn error(&self, error: &canopy_engine::WalkError) -> bool {
        panic!("unexpected error: {error}");
    }
}

pub fn merge(states: Vec<Seen>) -> Seen {
    let mut all = Seen::default();
    for s in states {
        all.paths.extend(s.paths);
        all.left.extend(s.left);
    }
    all.paths.sort();
    all.left.sort();
    all
}

/// Number of entries directly inside each directory, from the oracle paths.
pub fn children_per_dir(root: &Path) -> BTreeMap<Vec<u8>, u64> {
    let mut map = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            n += 1;
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
        }
        map.insert(dir.as_os_str().as_bytes().to_vec(), n);
    }
    map
}
