//! The PATH arguments: how they are spelled in the output, which argument an entry belongs to, and
//! overlapping arguments counted once, as GNU du does — an argument inside (or equal to) an earlier
//! one is skipped, and an earlier argument met inside a later one is left out of the later one.

use crate::common::guard::ancestors_of;
use canopy_engine::sys::{open_path, stat_path};
use canopy_util::path::{collapse_trailing_slashes, split_parent};
use std::collections::HashMap;

/// (device, inode).
type FileId = (u64, u64);

pub struct Roots {
    /// The arguments walked, in order (trailing slashes trimmed as du's fts does).
    paths: Vec<Vec<u8>>,
    index: HashMap<Vec<u8>, u32>,
    /// (device, inode) of each argument walked → its position: met under a later argument, it is
    /// not counted there.
    claimed: HashMap<FileId, u32>,
}

impl Roots {
    /// The arguments to walk. With `overlaps`, arguments inside earlier ones are dropped and
    /// earlier ones are left out of later ones (without it — `-L`, where every inode is counted
    /// once anyway — only exact repeats are dropped, and with `-l`, `count_all`, not even those).
    pub fn new(args: &[Vec<u8>], follow_args: bool, overlaps: bool, count_all: bool) -> Roots {
        let mut roots = Roots { paths: Vec::new(), index: HashMap::new(), claimed: HashMap::new() };
        for arg in args {
            let path = collapse_trailing_slashes(arg).to_vec();
            if roots.index.contains_key(&path) && !count_all {
                continue;
            }
            let ids = if overlaps { identity_and_ancestors(&path, follow_args) } else { None };
            if let Some((id, ancestors)) = &ids
                && ancestors.iter().chain([id]).any(|a| roots.claimed.contains_key(a))
            {
                continue;
            }
            let position = roots.paths.len() as u32;
            if let Some((id, _)) = ids {
                roots.claimed.insert(id, position);
            }
            // A repeated argument (-l) is walked again; its lines count as the first one's.
            roots.index.entry(path.clone()).or_insert(position);
            roots.paths.push(path);
        }
        roots
    }

    pub fn paths(&self) -> &[Vec<u8>] {
        &self.paths
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn path(&self, root: u32) -> &[u8] {
        &self.paths[root as usize]
    }

    /// The position of the argument spelled `path` (a walk root's path).
    pub fn position(&self, path: &[u8]) -> u32 {
        if self.paths.len() == 1 {
            return 0;
        }
        self.index.get(path).copied().unwrap_or(0)
    }

    /// The position of the argument spelled exactly `path`, if there is one.
    pub fn find(&self, path: &[u8]) -> Option<u32> {
        self.index.get(path).copied()
    }

    /// Whether the inode `id`, met below argument `root`, is an earlier argument (counted there).
    pub fn is_earlier_argument(&self, root: u32, id: FileId) -> bool {
        !self.claimed.is_empty() && self.claimed.get(&id).is_some_and(|&claimer| claimer < root)
    }

    /// The path of an entry below argument `root`, relative to it.
    pub fn relative<'p>(&self, root: u32, path: &'p [u8]) -> &'p [u8] {
        let base = self.path(root);
        if path.len() <= base.len() {
            return b"";
        }
        let skip = if base.ends_with(b"/") { base.len() } else { base.len() + 1 };
        &path[skip.min(path.len())..]
    }
}

/// The argument's (device, inode) and those of every directory above it; `None` when it cannot be
/// examined (the walk then reports why).
fn identity_and_ancestors(path: &[u8], follow: bool) -> Option<(FileId, Vec<FileId>)> {
    let meta = stat_path(path, follow).ok()?;
    let dir = if meta.is_dir() { path.to_vec() } else { split_parent(path).0.to_vec() };
    let ancestors = open_path(&dir, true).ok().and_then(|fd| ancestors_of(&fd).ok()).unwrap_or_default();
    let id = meta.file_id();
    Some((id, ancestors.into_iter().filter(|a| *a != id).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn overlapping_arguments_count_once() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        std::fs::write(tmp.path().join("a/f"), b"x").unwrap();
        let p = |rel: &str| tmp.path().join(rel).as_os_str().as_bytes().to_vec();
        let roots = Roots::new(&[p("a"), p("a/b"), p("a/"), p("a/f")], false, true, false);
        assert_eq!(roots.paths(), [p("a")], "everything inside a is a's");
        let roots = Roots::new(&[p("a/b"), p("a"), p("a/b")], false, true, false);
        assert_eq!(roots.paths(), [p("a/b"), p("a")]);
        let b = stat_path(&p("a/b"), false).unwrap().file_id();
        assert!(roots.is_earlier_argument(1, b), "a/b is left out of a");
        assert!(!roots.is_earlier_argument(0, b));
        assert_eq!(roots.relative(1, &p("a/b/c")), b"b/c");
        assert_eq!(roots.relative(1, &p("a")), b"");
        let all = Roots::new(&[p("a"), p("a/b"), p("a")], false, false, false);
        assert_eq!(all.paths(), [p("a"), p("a/b")], "without overlap checks only repeats go");
        let every = Roots::new(&[p("a"), p("a/b"), p("a")], false, false, true);
        assert_eq!(every.paths(), [p("a"), p("a/b"), p("a")], "-l walks every argument");
        assert_eq!(every.find(&p("a")), Some(0));
    }
}
