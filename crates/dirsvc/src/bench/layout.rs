//! Where the benchmark's files go, as mdtest lays them out: one directory shared by every client
//! (the default), a directory per client (`-u`), and below it a tree `depth` levels deep with
//! `branch` subdirectories each (`-z`, `-b`), the files spread over every directory of the tree or
//! only over its leaves (`-L`).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// mdtest -u: each client works in a directory of its own.
    pub unique: bool,
    /// mdtest -z: levels of subdirectories below each working directory.
    pub depth: u32,
    /// mdtest -b: subdirectories of each directory of the tree.
    pub branch: u32,
    /// mdtest -L: files only in the tree's leaves.
    pub leaf_only: bool,
}

impl Layout {
    /// Client `rank`'s working directory, relative to the iteration's directory ("" = itself).
    fn base(&self, rank: usize) -> String {
        if self.unique { format!("rank.{rank}") } else { String::new() }
    }

    /// The tree below a working directory, parents before children, by level (level 0 = the
    /// working directory itself).
    fn tree(&self, base: &str) -> Vec<(u32, String)> {
        let mut all = vec![(0, base.to_string())];
        let mut level = vec![base.to_string()];
        for depth in 1..=self.depth {
            let mut next = Vec::new();
            for parent in &level {
                for child in 0..self.branch {
                    next.push(join(parent, &format!("tree.{depth}.{child}")));
                }
            }
            all.extend(next.iter().map(|path| (depth, path.clone())));
            level = next;
        }
        all
    }

    /// Every directory of an iteration for `clients` clients, parents first (what to make; remove
    /// them in reverse), without the iteration's directory itself.
    pub fn directories(&self, clients: usize) -> Vec<String> {
        let bases: Vec<String> =
            if self.unique { (0..clients).map(|r| self.base(r)).collect() } else { vec![String::new()] };
        bases
            .iter()
            .flat_map(|base| self.tree(base))
            .map(|(_, path)| path)
            .filter(|p| !p.is_empty())
            .collect()
    }

    /// The directories client `rank`'s files go to, relative to the iteration's directory: file i
    /// goes to the (i mod n)-th.
    pub fn file_directories(&self, rank: usize) -> Vec<String> {
        let tree = self.tree(&self.base(rank));
        let leaves = self.leaf_only && self.depth > 0;
        tree.into_iter().filter(|(level, _)| !leaves || *level == self.depth).map(|(_, path)| path).collect()
    }

    /// Whether every file lands in the one shared directory (its partition balance means something).
    pub fn is_flat(&self) -> bool {
        !self.unique && (self.depth == 0 || self.branch == 0)
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() { name.to_string() } else { format!("{parent}/{name}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_one_shared_directory() {
        let flat = Layout::default();
        assert!(flat.directories(4).is_empty());
        assert_eq!(flat.file_directories(3), vec![String::new()]);
        assert!(flat.is_flat());
    }

    #[test]
    fn unique_directories_and_trees_as_mdtest_makes_them() {
        let layout = Layout { unique: true, depth: 2, branch: 2, leaf_only: false };
        let dirs = layout.directories(2);
        assert_eq!(dirs.len(), 2 * (1 + 2 + 4));
        assert_eq!(dirs[..3], ["rank.0", "rank.0/tree.1.0", "rank.0/tree.1.1"]);
        assert!(
            dirs.iter().position(|d| d == "rank.0/tree.1.0").unwrap()
                < dirs.iter().position(|d| d == "rank.0/tree.1.0/tree.2.1").unwrap()
        );
        assert_eq!(layout.file_directories(1).len(), 7);
        let leaves = Layout { leaf_only: true, ..layout }.file_directories(1);
        assert_eq!(
            leaves,
            [
                "rank.1/tree.1.0/tree.2.0",
                "rank.1/tree.1.0/tree.2.1",
                "rank.1/tree.1.1/tree.2.0",
                "rank.1/tree.1.1/tree.2.1"
            ]
        );
        let shared_leaves = Layout { depth: 1, branch: 3, leaf_only: true, unique: false };
        assert_eq!(shared_leaves.file_directories(5), ["tree.1.0", "tree.1.1", "tree.1.2"]);
        assert!(!shared_leaves.is_flat());
    }
}
