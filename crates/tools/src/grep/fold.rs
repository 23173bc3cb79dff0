//! `--group`: identical results folded across files — each distinct matching line once, with the
//! set of files that contain it (the TBON-FS pgrep equivalence aggregation), and lines shared by the
//! same set of files printed together under that set, `clush -b` style.

use canopy_nodeset::NodeSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What files are folded by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Key {
    /// A selected line (its number too with `-n`, so only equal lines at equal places fold).
    Line { number: Option<u64>, text: Vec<u8> },
    /// A count of selected lines (`-c`).
    Count(u64),
    /// Having a selected line at all (`-l`).
    Listed,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Holders {
    files: Vec<Vec<u8>>,
    /// The smallest line number the key was found at, to list a block's lines in file order.
    first_line: u64,
}

/// Keys and the files holding them; merged across workers and ranks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Folded {
    keys: BTreeMap<Key, Holders>,
}

/// Keys held by exactly the same files.
#[derive(Debug, PartialEq, Eq)]
pub struct Block {
    /// Sorted file paths.
    pub files: Vec<Vec<u8>>,
    /// In order of their first line.
    pub keys: Vec<Key>,
}

impl Folded {
    pub fn add(&mut self, key: Key, line: u64, path: &[u8]) {
        let holders = self.keys.entry(key).or_insert_with(|| Holders { files: Vec::new(), first_line: line });
        holders.first_line = holders.first_line.min(line);
        // A line repeated in one file is one holder.
        if holders.files.last().is_none_or(|last| last != path) {
            holders.files.push(path.to_vec());
        }
    }

    pub fn merge(mut self, other: Folded) -> Folded {
        for (key, theirs) in other.keys {
            let mine = self
                .keys
                .entry(key)
                .or_insert_with(|| Holders { files: Vec::new(), first_line: theirs.first_line });
            mine.first_line = mine.first_line.min(theirs.first_line);
            mine.files.extend(theirs.files);
        }
        self
    }

    /// The blocks, ordered by their first file.
    pub fn blocks(self) -> Vec<Block> {
        let mut by_files: BTreeMap<Vec<Vec<u8>>, Vec<(u64, Key)>> = BTreeMap::new();
        for (key, mut holders) in self.keys {
            holders.files.sort_unstable();
            holders.files.dedup();
            by_files.entry(holders.files).or_default().push((holders.first_line, key));
        }
        by_files
            .into_iter()
            .map(|(files, mut keys)| {
                keys.sort();
                Block { files, keys: keys.into_iter().map(|(_, key)| key).collect() }
            })
            .collect()
    }
}

/// The files as one ClusterShell-folded set (`conf/node[01-40].cfg`); names that are not UTF-8
/// are shown lossily (`--json` has the exact bytes).
pub fn folded_names(files: &[Vec<u8>]) -> String {
    NodeSet::from_names(files.iter().map(|f| String::from_utf8_lossy(f))).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Key {
        Key::Line { number: None, text: text.as_bytes().to_vec() }
    }

    #[test]
    fn identical_lines_fold_and_keys_with_the_same_files_share_a_block() {
        let mut a = Folded::default();
        let mut b = Folded::default();
        for node in 1..=3 {
            let path = format!("conf/node{node}.cfg");
            let target = if node == 2 { &mut b } else { &mut a };
            target.add(line("port 80"), 2, path.as_bytes());
            target.add(line("user web"), 1, path.as_bytes());
        }
        b.add(line("debug on"), 5, b"conf/node2.cfg");
        b.add(line("debug on"), 9, b"conf/node2.cfg");
        let blocks = a.merge(b).blocks();
        let paths = |v: &[&str]| v.iter().map(|p| p.as_bytes().to_vec()).collect::<Vec<_>>();
        assert_eq!(
            blocks,
            [
                Block {
                    files: paths(&["conf/node1.cfg", "conf/node2.cfg", "conf/node3.cfg"]),
                    keys: vec![line("user web"), line("port 80")]
                },
                Block { files: paths(&["conf/node2.cfg"]), keys: vec![line("debug on")] },
            ]
        );
        assert_eq!(folded_names(&blocks[0].files), "conf/node[1-3].cfg");
    }
}
