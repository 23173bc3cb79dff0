//! The part of the tree du keeps in memory: only what an output still needs. A directory's node is
//! built when the walk leaves it and handed to its parent, which drops what can never be shown
//! (entries below `--min-ratio` of it — the root is at least as big — and beyond `--top`), so
//! memory follows the output, not the tree. Nodes whose sizes are still *open* (a hard link below
//! them is charged at the end of the walk) are never dropped early.

use super::links::Place;
use super::usage::{Metric, Usage};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    Dir,
    /// Anything that is not a directory (shown with `--files`, `-a`, or as an argument).
    File,
}

/// One kept entry and the kept part of what lies below it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The name in its directory; for an argument, the path as given.
    pub name: Vec<u8>,
    pub kind: NodeKind,
    pub usage: Usage,
    /// What `-S` shows: the directory itself and the files directly in it (for a file, `usage`).
    pub own: Usage,
    /// Hard links below are charged at the end of the walk: the sizes may still grow.
    pub open: bool,
    /// Its GNU-style line has been printed while walking.
    pub printed: bool,
    pub children: Vec<Node>,
}

impl Node {
    pub fn new(name: Vec<u8>, kind: NodeKind, usage: Usage) -> Node {
        Node { name, kind, usage, own: usage, open: false, printed: false, children: Vec::new() }
    }

    /// Sorts every directory's children by name, for [`Node::charge`].
    pub fn sort_by_name(&mut self) {
        self.children.sort_by(|a, b| a.name.cmp(&b.name));
        self.children.iter_mut().for_each(Node::sort_by_name);
    }

    /// Adds the usage of a hard-linked inode charged to `place` (below this argument) to every
    /// kept directory containing it — and to the inode's own node when it is a directory — and to
    /// what `-S` shows of the directory holding it (or of itself). Returns that node, when kept.
    /// Children must be sorted by name.
    pub fn charge(&mut self, place: &Place, usage: Usage, is_dir: bool) -> Option<&mut Node> {
        let components: Vec<&[u8]> = place.components().collect();
        let inside = if is_dir { components.len() } else { components.len().saturating_sub(1) };
        self.usage.add(usage);
        let mut node = self;
        for name in &components[..inside] {
            let at = node.children.binary_search_by(|c| c.name.as_slice().cmp(name)).ok()?;
            node = &mut node.children[at];
            node.usage.add(usage);
        }
        node.own.add(usage);
        Some(node)
    }

    /// Inserts a child keeping the children sorted by name.
    pub fn insert_sorted(&mut self, child: Node) {
        let at = self.children.partition_point(|c| c.name < child.name);
        self.children.insert(at, child);
    }
}

/// How much of the tree the chart, `--json` and `--html` show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Deepest level shown (the argument is level 0).
    pub depth: u32,
    /// Entries smaller than this share of their argument's total are left out.
    pub min_ratio: f64,
    /// At most this many entries per directory, largest first.
    pub top: Option<usize>,
    /// With `--files`: files are shown, not only directories.
    pub files: bool,
    pub metric: Metric,
}

impl Shape {
    /// Drops from `children` (and below) what cannot be shown under an ancestor of `size`: what is
    /// smaller than `min_ratio × size` and what falls outside a directory's top N. Open nodes stay.
    pub fn prune(&self, children: &mut Vec<Node>, size: u64) {
        let floor = self.min_ratio * size as f64;
        children.retain(|c| c.open || c.usage.get(self.metric) as f64 >= floor);
        if let Some(top) = self.top {
            self.rank(children);
            let mut position = 0;
            children.retain(|c| {
                position += 1;
                position <= top || c.open
            });
        }
        for child in children {
            self.prune(&mut child.children, size);
        }
    }

    /// Largest first; equal sizes by name, so the order never depends on timing.
    pub fn rank(&self, nodes: &mut [Node]) {
        nodes.sort_by(|a, b| self.order(a, b));
    }

    pub fn order(&self, a: &Node, b: &Node) -> Ordering {
        b.usage.get(self.metric).cmp(&a.usage.get(self.metric)).then_with(|| a.name.cmp(&b.name))
    }

    /// Ranks every level of a finished tree.
    pub fn rank_all(&self, node: &mut Node) {
        self.rank(&mut node.children);
        for child in &mut node.children {
            self.rank_all(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(n: u64) -> Usage {
        Usage { allocated: n, apparent: n, inodes: 1, latest: None }
    }

    fn dir(name: &str, n: u64, children: Vec<Node>) -> Node {
        Node { children, ..Node::new(name.as_bytes().to_vec(), NodeKind::Dir, size(n)) }
    }

    fn names(nodes: &[Node]) -> Vec<String> {
        nodes.iter().map(|n| String::from_utf8_lossy(&n.name).into_owned()).collect()
    }

    fn shape(min_ratio: f64, top: Option<usize>) -> Shape {
        Shape { depth: 10, min_ratio, top, files: false, metric: Metric::Allocated }
    }

    #[test]
    fn pruning_keeps_the_large_and_the_open() {
        let mut open = dir("open", 1, vec![]);
        open.open = true;
        let mut children = vec![
            dir("big", 60, vec![dir("tiny", 1, vec![]), dir("half", 30, vec![])]),
            dir("small", 5, vec![]),
            open,
            dir("mid", 20, vec![]),
        ];
        shape(0.1, None).prune(&mut children, 100);
        assert_eq!(names(&children), ["big", "open", "mid"]);
        assert_eq!(names(&children[0].children), ["half"], "below 10 % of the ancestor");
        shape(0.0, Some(1)).prune(&mut children, 100);
        let mut kept = names(&children);
        kept.sort();
        assert_eq!(kept, ["big", "open"], "top 1 plus the open node");
    }

    #[test]
    fn charges_reach_every_kept_ancestor() {
        let mut root = dir("/data", 10, vec![dir("b", 4, vec![dir("c", 2, vec![])]), dir("a", 1, vec![])]);
        root.sort_by_name();
        let place = Place { root: 0, rel: b"b/c/file".to_vec() };
        let holder = root.charge(&place, size(100), false).unwrap();
        assert_eq!(holder.name, b"c");
        assert_eq!(holder.own.allocated, 102, "-S shows the file in the directory holding it");
        assert_eq!(root.usage.allocated, 110);
        assert_eq!(root.children[1].usage.allocated, 104);
        assert_eq!(root.children[1].own.allocated, 4, "and not in the directories above");
        assert_eq!(root.children[1].children[0].usage.allocated, 102);
        assert_eq!(root.children[0].usage.allocated, 1);
        let top_level = Place { root: 0, rel: b"y".to_vec() };
        assert_eq!(root.charge(&top_level, size(1), false).unwrap().name, b"/data");
        let deeper = Place { root: 0, rel: b"gone/y/z".to_vec() };
        assert!(root.charge(&deeper, size(1), false).is_none());
        assert_eq!(root.usage.allocated, 112);
        let dir_place = Place { root: 0, rel: b"a".to_vec() };
        root.charge(&dir_place, size(5), true);
        assert_eq!(root.children[0].usage.allocated, 6, "a directory's own inode counts in itself");
    }
}
