//! What one directory holds, decided from its place alone: how many file slots, how many
//! subdirectories, and how the entries below it are split among the subdirectories.
//!
//! A directory's subtree is a contiguous range of inode numbers (preorder): the directory itself,
//! then its file slots, then each subdirectory's subtree in turn. So a layout plus the directory's
//! first inode locates every entry below it by arithmetic, with no table.

use super::draw::{Purpose, draw, pareto};
use super::spec::{Shape, geometric_sum};

/// Median files per directory of an irregular tree (power-law: a few directories hold thousands).
const IRREGULAR_MEDIAN_FILES: u64 = 16;
/// Median subdirectories per directory of an irregular tree.
const IRREGULAR_MEDIAN_SUBDIRS: u64 = 3;
/// The most subdirectories one irregular directory gets (keeps the split arithmetic within u128).
const IRREGULAR_MAX_SUBDIRS: u64 = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout<'a> {
    pub(crate) files: u64,
    pub(crate) subdirs: u64,
    /// Entries in all the subdirectories' subtrees together.
    pub(crate) below: u64,
    pub(crate) split: Split<'a>,
}

/// How `below` entries are shared among the subdirectories: subdirectory i's subtree starts `start(i)`
/// entries after the last file slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split<'a> {
    /// Every subtree holds `full` entries but the last, which holds what is left.
    Fill { full: u64 },
    /// At least one entry each, the rest shared as i^exponent grows: subtrees of very different sizes.
    Power { exponent: u32 },
    /// Cumulative sizes given outright (the parts of a composed tree); `starts[k]` is `below`.
    Table(&'a [u64]),
}

impl Layout<'_> {
    /// A directory with only file slots.
    fn leaf(files: u64) -> Self {
        Layout { files, subdirs: 0, below: 0, split: Split::Fill { full: 1 } }
    }

    /// `below` entries in subtrees of `full` entries each, the last one short.
    fn filled(files: u64, below: u64, full: u64) -> Self {
        let full = full.max(1);
        Layout { files, subdirs: below.div_ceil(full), below, split: Split::Fill { full } }
    }

    /// Entries in the directory's subtree, itself included.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> u64 {
        1 + self.files + self.below
    }

    /// Where subdirectory `i`'s subtree starts, counted from the first entry after the file slots;
    /// `start(subdirs)` is `below`.
    pub(crate) fn start(&self, i: u64) -> u64 {
        match self.split {
            Split::Fill { full } => i.saturating_mul(full).min(self.below),
            Split::Power { exponent } => {
                let k = u128::from(self.subdirs);
                let spare = u128::from(self.below - self.subdirs);
                let share = spare * u128::from(i).pow(exponent) / k.pow(exponent);
                i + share as u64
            }
            Split::Table(starts) => starts[i as usize],
        }
    }

    /// Entries in subdirectory `i`'s subtree.
    pub(crate) fn subtree(&self, i: u64) -> u64 {
        self.start(i + 1) - self.start(i)
    }

    /// The subdirectory whose subtree holds the entry `offset` entries after the file slots.
    pub(crate) fn subdir_at(&self, offset: u64) -> u64 {
        debug_assert!(offset < self.below);
        if let Split::Fill { full } = self.split {
            return offset / full;
        }
        // The last i with start(i) <= offset: start is increasing, so bisect.
        let (mut low, mut high) = (0, self.subdirs - 1);
        while low < high {
            let middle = low + (high - low).div_ceil(2);
            if self.start(middle) <= offset { low = middle } else { high = middle - 1 }
        }
        low
    }
}

/// The layout of a directory of `shape` at `depth` below the part's top, whose subtree holds
/// `entries` (itself included) and whose first inode is `ino`.
pub(crate) fn layout(shape: &Shape, seed: u64, ino: u64, entries: u64, depth: u32) -> Layout<'static> {
    let rest = entries - 1;
    match *shape {
        Shape::Flat { .. } => Layout::leaf(rest),
        Shape::Wide { files, .. } if depth == 0 => Layout::filled(0, rest, files.saturating_add(1)),
        Shape::Wide { .. } => Layout::leaf(rest),
        Shape::Deep { fanout, depth: levels, files } if depth < levels => {
            let own = files.min(rest);
            // A full subtree one level down; a bigger total gives the top more of them.
            let full = (1 + u128::from(files)).saturating_mul(geometric_sum(fanout, levels - depth));
            Layout::filled(own, rest - own, u64::try_from(full).unwrap_or(u64::MAX))
        }
        Shape::Deep { .. } => Layout::leaf(rest),
        Shape::Irregular { .. } => irregular(seed, ino, rest),
    }
}

/// Power-law file counts, a few subdirectories of very different sizes: a tree like real ones, where
/// most directories are small and a few subtrees hold most of the entries.
fn irregular(seed: u64, ino: u64, rest: u64) -> Layout<'static> {
    let files = pareto(draw(seed, ino, Purpose::Files), IRREGULAR_MEDIAN_FILES).min(rest);
    let below = rest - files;
    if below == 0 {
        return Layout::leaf(files);
    }
    let subdirs = (1 + pareto(draw(seed, ino, Purpose::Subdirs), IRREGULAR_MEDIAN_SUBDIRS))
        .min(IRREGULAR_MAX_SUBDIRS)
        .min(below);
    let exponent = 1 + (draw(seed, ino, Purpose::Split) % 3) as u32;
    Layout { files, subdirs, below, split: Split::Power { exponent } }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subtree is non-empty, they tile `below` exactly, and `subdir_at` inverts `start`.
    fn check_split(layout: &Layout) {
        assert_eq!(layout.start(0), 0);
        assert_eq!(layout.start(layout.subdirs), layout.below);
        for i in 0..layout.subdirs {
            assert!(layout.subtree(i) >= 1, "{layout:?}: subdirectory {i} is empty");
            assert_eq!(layout.subdir_at(layout.start(i)), i, "{layout:?}");
            assert_eq!(layout.subdir_at(layout.start(i + 1) - 1), i, "{layout:?}");
        }
    }

    #[test]
    fn wide_fills_directories_of_files_and_shortens_the_last() {
        let shape = Shape::Wide { dirs: 3, files: 4 };
        let root = layout(&shape, 1, 1, 14, 0);
        assert_eq!((root.files, root.subdirs, root.below), (0, 3, 13));
        assert_eq!(
            (root.subtree(0), root.subtree(2)),
            (5, 3),
            "a total below the natural size shortens the last"
        );
        check_split(&root);
        assert_eq!(layout(&shape, 1, 2, 5, 1), Layout::leaf(4));
    }

    #[test]
    fn deep_has_files_at_every_level_and_full_subtrees_below() {
        let shape = Shape::Deep { fanout: 2, depth: 2, files: 1 };
        let root = layout(&shape, 1, 1, 14, 0);
        assert_eq!((root.files, root.subdirs), (1, 2));
        assert_eq!((root.subtree(0), root.subtree(1)), (6, 6));
        let middle = layout(&shape, 1, 3, 6, 1);
        assert_eq!((middle.files, middle.subdirs, middle.subtree(0)), (1, 2, 2));
        assert_eq!(layout(&shape, 1, 5, 2, 2), Layout::leaf(1));
        let grown = layout(&shape, 1, 1, 26, 0);
        assert_eq!(grown.subdirs, 4, "a bigger total gives the top more full subtrees");
        check_split(&grown);
    }

    #[test]
    fn irregular_splits_tile_their_range_whatever_the_draws() {
        let shape = Shape::Irregular { entries: 1 };
        let mut saw_subdirs = false;
        for ino in 1..3_000 {
            for entries in [2, 3, 17, 100, 5_000, 1 << 40] {
                let layout = layout(&shape, 9, ino, entries, 0);
                assert_eq!(layout.entries(), entries);
                saw_subdirs |= layout.subdirs > 1;
                if entries < 200 {
                    check_split(&layout);
                } else if layout.subdirs > 0 {
                    assert_eq!(layout.start(layout.subdirs), layout.below);
                    let last = layout.subdirs - 1;
                    assert_eq!(layout.subdir_at(layout.below - 1), last);
                    assert_eq!(layout.subdir_at(layout.start(last)), last);
                }
            }
        }
        assert!(saw_subdirs);
    }

    #[test]
    fn tables_give_the_parts_their_sizes() {
        let starts = [0, 10, 11, 50];
        let composed = Layout { files: 0, subdirs: 3, below: 50, split: Split::Table(&starts) };
        check_split(&composed);
        assert_eq!((composed.subtree(0), composed.subtree(1), composed.subtree(2)), (10, 1, 39));
    }
}
