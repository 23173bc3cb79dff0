//! The random tree the distributed-walk tests spread over ranks.

use std::path::Path;

/// A random tree: directories of random fan-out, files, the odd big directory.
pub fn random_tree(root: &Path, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        std::fs::create_dir_all(&dir).unwrap();
        let files = if rng.u8(..) < 8 { rng.usize(200..600) } else { rng.usize(0..10) };
        for f in 0..files {
            std::fs::write(dir.join(format!("f{f}")), b"").unwrap();
        }
        if depth < 5 {
            for d in 0..rng.usize(1..5) {
                stack.push((dir.join(format!("d{d}")), depth + 1));
            }
        }
    }
}
