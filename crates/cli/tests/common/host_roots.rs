//! Simulated hosts for the group tools' tests: host roots `DIR/h/RANK`, files in them, random contents.

use std::path::{Path, PathBuf};

/// `len` bytes from a seeded generator: the same every run.
pub fn random(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..len).map(|_| rng.u8(..)).collect()
}

/// Host roots DIR/h/0 .. DIR/h/N-1, each with /data unless left out; the `--host-root` template.
pub fn hosts(dir: &Path, count: usize, without_data: &[usize]) -> String {
    for rank in 0..count {
        let root = dir.join(format!("h/{rank}"));
        std::fs::create_dir_all(&root).unwrap();
        if !without_data.contains(&rank) {
            std::fs::create_dir_all(root.join("data")).unwrap();
        }
    }
    format!("{}/h/{{rank}}", dir.display())
}

/// `path` on host `rank`.
pub fn host_file(dir: &Path, rank: usize, path: &str) -> PathBuf {
    dir.join(format!("h/{rank}")).join(path.trim_start_matches('/'))
}
