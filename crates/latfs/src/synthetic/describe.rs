//! What a synthetic tree holds, counted from its spec alone: one step per directory and none per file,
//! so a 10^9-entry tree is described in seconds, without mounting or walking it.

use super::layout::Layout;
use super::spec::Spec;
use super::tree::{Dir, Tree};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// Every entry, the root included (what `find MOUNTPOINT | wc -l` prints).
    pub entries: u64,
    /// Directories, the root included.
    pub directories: u64,
    /// Entries that are not directories: files, their extra hard-link names, symbolic links.
    pub files: u64,
    /// The deepest entry's depth below the root (what `find -printf %d` prints at most).
    pub depth: u32,
    /// The most entries one directory holds.
    pub largest_directory: u64,
}

impl Description {
    pub fn to_json(&self, spec: &Spec) -> serde_json::Value {
        serde_json::json!({
            "spec": spec.to_string(),
            "entries": self.entries,
            "directories": self.directories,
            "files": self.files,
            "depth": self.depth,
            "largest_directory": self.largest_directory,
        })
    }
}

/// Counts the tree `spec` generates, depth first through its directories.
pub fn describe(spec: &Spec) -> Description {
    let tree = Tree::new(spec.clone());
    let mut description =
        Description { entries: 0, directories: 0, files: 0, depth: 0, largest_directory: 0 };
    let mut count = |layout: &Layout, level: u32| {
        let children = layout.files + layout.subdirs;
        description.directories += 1;
        description.files += layout.files;
        description.largest_directory = description.largest_directory.max(children);
        description.depth = description.depth.max(level + u32::from(children > 0));
    };
    struct Visit<'a> {
        dir: Dir,
        layout: Layout<'a>,
        next: u64,
    }
    let root = tree.root();
    let layout = tree.layout(&root);
    count(&layout, 0);
    let mut path = vec![Visit { dir: root, layout, next: 0 }];
    while let Some(visit) = path.last_mut() {
        if visit.next == visit.layout.subdirs {
            path.pop();
            continue;
        }
        let dir = tree.subdir(&visit.dir, &visit.layout, visit.next);
        visit.next += 1;
        let layout = tree.layout(&dir);
        count(&layout, path.len() as u32);
        path.push(Visit { dir, layout, next: 0 });
    }
    description.entries = description.directories + description.files;
    description
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(text: &str) -> Description {
        let spec: Spec = text.parse().unwrap();
        let description = describe(&spec);
        assert_eq!(description.entries, spec.entries(), "{text}: the layouts tile the spec's entries");
        description
    }

    #[test]
    fn regular_shapes_count_as_their_formulas_say() {
        let wide = described("wide:1000x100");
        assert_eq!(
            (wide.directories, wide.files, wide.depth, wide.largest_directory),
            (1001, 100_000, 2, 1000)
        );
        let deep = described("deep:5x7x2");
        assert_eq!(
            (deep.directories, deep.files, deep.depth, deep.largest_directory),
            (97_656, 195_312, 8, 7)
        );
        let flat = described("flat:1000000");
        assert_eq!((flat.directories, flat.depth, flat.largest_directory), (1, 1, 1_000_000));
        let chain = described("deep:1x1000x0");
        assert_eq!((chain.directories, chain.depth), (1001, 1000));
    }

    #[test]
    fn totals_and_compositions_count_exactly() {
        let big = described("wide:1000x100,total=1e8");
        assert_eq!(big.directories, 1 + (100_000_000u64 - 1).div_ceil(101));
        let composed = described("wide:10x10+deep:2x3x1+flat:50+irregular:5000,total=123457");
        assert_eq!(composed.entries, 123_457);
        assert_eq!(composed.largest_directory.max(4), composed.largest_directory);
    }

    #[test]
    fn irregular_trees_are_irregular() {
        let tree = described("irregular:1000000,seed=3");
        // Power-law directories: mostly small, a few large, several levels deep.
        assert!(tree.directories > 10_000 && tree.directories < 200_000, "{tree:?}");
        assert!(tree.largest_directory > 2_000, "{tree:?}");
        assert!((5..=60).contains(&tree.depth), "{tree:?}");
        assert_ne!(described("irregular:1000000,seed=4"), tree, "another seed, another tree");
    }
}
