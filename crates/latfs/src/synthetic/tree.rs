//! The generated tree as arithmetic on inode numbers.
//!
//! Inodes number the entries in preorder from the root's 1: a directory, its file slots, then each
//! subdirectory's subtree. A directory is known by its first inode and its subtree's size; from those
//! its [`Layout`] says where every child is. Finding an inode walks down from the root, one
//! bisection per level (a few dozen steps even at 10^9 entries), so nothing is stored per entry.

use super::draw::{Purpose, draw};
use super::layout::{Layout, Split, layout};
use super::names::{DirNames, claimed_file_index, file_name};
use super::spec::{Shape, Spec};

/// FUSE's fixed inode number of the mount's root.
pub(crate) const ROOT_INO: u64 = 1;

/// A directory of the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dir {
    pub(crate) ino: u64,
    pub(crate) parent: u64,
    /// Entries in its subtree, itself included.
    pub(crate) entries: u64,
    /// The part it belongs to; `None` for the root of a composed tree, whose subdirectories are parts.
    pub(crate) part: Option<usize>,
    /// Levels below its part's top directory.
    pub(crate) depth: u32,
}

/// What a file slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotKind {
    /// A regular file; `nlink` 2 when the next slot is a hard link to it.
    File { nlink: u32 },
    /// A symbolic link to the previous slot's name.
    Symlink,
    /// Another name of the previous slot's file: the inode listed is the previous slot's.
    HardLink,
}

/// What an inode number is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    Dir(Dir),
    /// File slot `index` of `dir`.
    Slot {
        dir: Dir,
        index: u64,
    },
}

/// A child of a directory: a subdirectory or a file slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Child {
    Dir(Dir),
    Slot(u64),
}

/// The slot's draw before the neighbours are considered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Drawn {
    File,
    Symlink,
    HardLink,
}

pub(crate) struct Tree {
    spec: Spec,
    /// A composed root's layout: where each part's subtree starts below the root.
    part_starts: Vec<u64>,
}

impl Tree {
    pub(crate) fn new(spec: Spec) -> Tree {
        let mut part_starts = vec![0];
        if spec.is_composed() {
            for part in &spec.parts {
                part_starts.push(part_starts.last().copied().unwrap_or(0) + part.entries);
            }
        }
        Tree { spec, part_starts }
    }

    pub(crate) fn spec(&self) -> &Spec {
        &self.spec
    }

    pub(crate) fn seed(&self) -> u64 {
        self.spec.seed
    }

    pub(crate) fn root(&self) -> Dir {
        let part = if self.spec.is_composed() { None } else { Some(0) };
        Dir { ino: ROOT_INO, parent: ROOT_INO, entries: self.spec.entries(), part, depth: 0 }
    }

    pub(crate) fn layout(&self, dir: &Dir) -> Layout<'_> {
        match dir.part {
            None => Layout {
                files: 0,
                subdirs: self.spec.parts.len() as u64,
                below: dir.entries - 1,
                split: Split::Table(&self.part_starts),
            },
            Some(part) => {
                layout(&self.spec.parts[part].shape, self.spec.seed, dir.ino, dir.entries, dir.depth)
            }
        }
    }

    /// Subdirectory `i` of `dir`.
    pub(crate) fn subdir(&self, dir: &Dir, layout: &Layout, i: u64) -> Dir {
        let (part, depth) = match dir.part {
            None => (Some(i as usize), 0),
            Some(part) => (Some(part), dir.depth + 1),
        };
        Dir {
            ino: dir.ino + 1 + layout.files + layout.start(i),
            parent: dir.ino,
            entries: layout.subtree(i),
            part,
            depth,
        }
    }

    /// What inode `ino` is, found by walking down from the root; `None` past the last entry.
    pub(crate) fn locate(&self, ino: u64) -> Option<Node> {
        let mut dir = self.root();
        if ino < dir.ino || ino >= dir.ino + dir.entries {
            return None;
        }
        loop {
            if ino == dir.ino {
                return Some(Node::Dir(dir));
            }
            let layout = self.layout(&dir);
            let offset = ino - dir.ino - 1;
            if offset < layout.files {
                return Some(Node::Slot { dir, index: offset });
            }
            let i = layout.subdir_at(offset - layout.files);
            dir = self.subdir(&dir, &layout, i);
        }
    }

    /// The child at `position` in the directory's listing (file slots first, then subdirectories).
    pub(crate) fn child_at(&self, dir: &Dir, layout: &Layout, position: u64) -> Option<Child> {
        if position < layout.files {
            Some(Child::Slot(position))
        } else if position - layout.files < layout.subdirs {
            Some(Child::Dir(self.subdir(dir, layout, position - layout.files)))
        } else {
            None
        }
    }

    /// The child called `name`: the number a name claims is checked by naming that child again.
    pub(crate) fn child_named(&self, dir: &Dir, layout: &Layout, name: &[u8]) -> Option<Child> {
        if let Some(i) = self.dir_names(dir).and_then(|names| names.claimed_index(name))
            && i < layout.subdirs
            && names_equal(&self.subdir_name(dir, i), name)
        {
            return Some(Child::Dir(self.subdir(dir, layout, i)));
        }
        if dir.part.is_none() {
            let i = self.spec.parts.iter().position(|p| p.name.as_bytes() == name)?;
            return Some(Child::Dir(self.subdir(dir, layout, i as u64)));
        }
        let index = claimed_file_index(name).filter(|&index| index < layout.files)?;
        names_equal(&self.slot_name(dir, index), name).then_some(Child::Slot(index))
    }

    /// The name of the child at `position` in the listing.
    pub(crate) fn child_name_at(&self, dir: &Dir, layout: &Layout, position: u64) -> String {
        if position < layout.files {
            self.slot_name(dir, position)
        } else {
            self.subdir_name(dir, position - layout.files)
        }
    }

    fn subdir_name(&self, dir: &Dir, i: u64) -> String {
        match self.dir_names(dir) {
            Some(names) => names.name(i),
            None => self.spec.parts[i as usize].name.clone(),
        }
    }

    /// How the directory's subdirectories are named; `None`: by the parts' names.
    fn dir_names(&self, dir: &Dir) -> Option<DirNames> {
        let part = dir.part?;
        Some(match self.spec.parts[part].shape {
            Shape::Deep { .. } => DirNames::Short,
            _ => DirNames::Padded,
        })
    }

    pub(crate) fn slot_name(&self, dir: &Dir, index: u64) -> String {
        file_name(self.spec.seed, slot_ino(dir, index), index)
    }

    /// What slot `index` of `dir` holds. Each slot draws a kind; a hard link needs a plain file before
    /// it to be a name of (else it is a plain file itself), and slot 0 is always a plain file.
    pub(crate) fn slot_kind(&self, dir: &Dir, layout: &Layout, index: u64) -> SlotKind {
        let drawn = |index: u64| self.drawn(dir, index);
        match drawn(index) {
            Drawn::Symlink => SlotKind::Symlink,
            Drawn::HardLink if drawn(index - 1) == Drawn::File => SlotKind::HardLink,
            own => {
                let linked =
                    own == Drawn::File && index + 1 < layout.files && drawn(index + 1) == Drawn::HardLink;
                SlotKind::File { nlink: 1 + u32::from(linked) }
            }
        }
    }

    fn drawn(&self, dir: &Dir, index: u64) -> Drawn {
        if index == 0 {
            return Drawn::File;
        }
        let share = draw(self.spec.seed, slot_ino(dir, index), Purpose::Kind) % 1_000_000;
        let symlinks = u64::from(self.spec.symlinks.0);
        if share < symlinks {
            Drawn::Symlink
        } else if share < symlinks + u64::from(self.spec.hardlinks.0) {
            Drawn::HardLink
        } else {
            Drawn::File
        }
    }

    /// The inode a slot's name refers to: its own, or for a hard link the previous slot's.
    pub(crate) fn slot_target_ino(&self, dir: &Dir, layout: &Layout, index: u64) -> u64 {
        match self.slot_kind(dir, layout, index) {
            SlotKind::HardLink => slot_ino(dir, index - 1),
            _ => slot_ino(dir, index),
        }
    }

    /// A symbolic link's target: the previous slot's name, beside it.
    pub(crate) fn symlink_target(&self, dir: &Dir, index: u64) -> String {
        self.slot_name(dir, index - 1)
    }
}

/// The inode number of slot `index` itself.
pub(crate) fn slot_ino(dir: &Dir, index: u64) -> u64 {
    dir.ino + 1 + index
}

fn names_equal(expected: &str, name: &[u8]) -> bool {
    expected.as_bytes() == name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(spec: &str) -> Tree {
        Tree::new(spec.parse().unwrap())
    }

    /// Every inode, found by walking down from the root, is the child its listing says, and every
    /// child is found again by its name.
    fn check_every_inode(tree: &Tree) {
        let mut seen = 1;
        let mut pending = vec![tree.root()];
        while let Some(dir) = pending.pop() {
            assert_eq!(tree.locate(dir.ino), Some(Node::Dir(dir)));
            let layout = tree.layout(&dir);
            assert_eq!(layout.entries(), dir.entries);
            let mut position = 0;
            while let Some(child) = tree.child_at(&dir, &layout, position) {
                position += 1;
                seen += 1;
                let name = tree.child_name_at(&dir, &layout, position - 1);
                assert_eq!(tree.child_named(&dir, &layout, name.as_bytes()), Some(child), "{name}");
                match child {
                    Child::Dir(sub) => {
                        assert_eq!(sub.parent, dir.ino);
                        pending.push(sub);
                    }
                    Child::Slot(index) => {
                        assert_eq!(tree.locate(slot_ino(&dir, index)), Some(Node::Slot { dir, index }));
                    }
                }
            }
        }
        assert_eq!(seen, tree.spec().entries());
        assert_eq!(tree.locate(1 + tree.spec().entries()), None);
        assert_eq!(tree.locate(0), None);
    }

    #[test]
    fn every_inode_is_found_by_arithmetic_in_every_shape() {
        for spec in [
            "wide:7x5",
            "deep:3x3x2",
            "deep:1x40x1",
            "flat:50",
            "irregular:3000,seed=5",
            "wide:4x3+deep:2x2x1+flat:9+irregular:500+flat:9",
            "deep:2x3x1,total=100",
            "irregular:10,total=2000",
        ] {
            check_every_inode(&tree(spec));
        }
    }

    #[test]
    fn names_that_are_not_exactly_a_childs_are_not_found() {
        let tree = tree("wide:3x4");
        let root = tree.root();
        let layout = tree.layout(&root);
        assert!(tree.child_named(&root, &layout, b"d00002").is_some());
        for missing in [&b"d2"[..], b"d00003", b"d000002", b"n2", b"", b"data_0000000.c"] {
            assert_eq!(
                tree.child_named(&root, &layout, missing),
                None,
                "{}",
                String::from_utf8_lossy(missing)
            );
        }
        let dir = tree.subdir(&root, &layout, 0);
        let inner = tree.layout(&dir);
        let real = tree.slot_name(&dir, 3);
        assert!(tree.child_named(&dir, &inner, real.as_bytes()).is_some());
        let other_stem = if real.starts_with("data") {
            real.replacen("data", "main", 1)
        } else {
            format!("data_{}", &real[real.find('_').unwrap() + 1..])
        };
        assert_eq!(tree.child_named(&dir, &inner, other_stem.as_bytes()), None, "{other_stem}");
    }

    #[test]
    fn hard_links_follow_a_plain_file_and_raise_its_link_count() {
        let tree = tree("flat:20000,symlinks=5%,hardlinks=20%");
        let root = tree.root();
        let layout = tree.layout(&root);
        let kinds: Vec<SlotKind> = (0..layout.files).map(|i| tree.slot_kind(&root, &layout, i)).collect();
        assert_eq!(kinds[0], SlotKind::File { nlink: 1 + u32::from(kinds[1] == SlotKind::HardLink) });
        let links = kinds.iter().filter(|k| **k == SlotKind::HardLink).count();
        let symlinks = kinds.iter().filter(|k| **k == SlotKind::Symlink).count();
        assert!((2_400..4_000).contains(&links), "{links}: 20% drawn, those after a plain file kept");
        assert!((800..1_200).contains(&symlinks), "{symlinks}");
        for (index, kind) in kinds.iter().enumerate() {
            let index = index as u64;
            if *kind == SlotKind::HardLink {
                assert_eq!(kinds[index as usize - 1], SlotKind::File { nlink: 2 });
                assert_eq!(tree.slot_target_ino(&root, &layout, index), slot_ino(&root, index - 1));
            }
            if let SlotKind::File { nlink: 2 } = kind {
                assert_eq!(kinds[index as usize + 1], SlotKind::HardLink);
            }
        }
    }
}
