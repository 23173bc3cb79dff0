//! Generated trees. Only their shape matters to a walk: how many directories, how many entries each,
//! where in a listing the subdirectories are, and how long the paths are (the bytes of exported work).
//!
//! Specs (the names of `bench/gen-tree`'s where they overlap):
//!
//! | spec | shape |
//! |---|---|
//! | `wide:DxF` | D directories under the root, F files each |
//! | `deep:FxDxK` | balanced: every directory above depth D has F subdirectories; K files in each |
//! | `flat:N` | one directory of N files |
//! | `powerlaw:N[xA]` | about N entries; directory sizes Pareto-distributed (x_min 4, shape A, default 1.3), 12 % of entries directories: a few huge directories, many small ones, uneven depth |

use std::str::FromStr;

/// Directory `0` is the root. The subdirectories of a directory are numbered contiguously.
#[derive(Clone, Debug)]
pub struct Tree {
    dirs: Vec<Dir>,
    spec: String,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Dir {
    pub first_sub: u32,
    pub subdirs: u32,
    pub files: u32,
    /// Bytes of the directory's path, from the walk's root path on.
    pub path_len: u32,
    pub name_len: u32,
    pub depth: u32,
}

impl Dir {
    pub fn entries(&self) -> u32 {
        self.subdirs + self.files
    }

    /// Position of subdirectory `i` in the directory's listing: spread evenly among the files, as a
    /// hashed directory order would.
    pub fn sub_position(&self, i: u32) -> u32 {
        let (n, s) = (u64::from(self.entries()), u64::from(self.subdirs));
        ((2 * u64::from(i) + 1) * n / (2 * s)) as u32
    }
}

/// Length of a file name (`report_0001234.json`), for the bytes of exported chunks.
pub const FILE_NAME_LEN: u32 = 19;
/// Length of a directory name (`dir_0001234`).
const DIR_NAME_LEN: u32 = 11;
/// The walk's root path (`/lustre/scratch/tree`).
const ROOT_PATH_LEN: u32 = 20;

impl Tree {
    pub fn dirs(&self) -> u32 {
        self.dirs.len() as u32
    }

    pub fn dir(&self, d: u32) -> &Dir {
        &self.dirs[d as usize]
    }

    /// Entries a walk visits: the root and everything below it.
    pub fn entries(&self) -> u64 {
        1 + self.dirs.iter().map(|d| u64::from(d.entries())).sum::<u64>()
    }

    pub fn max_depth(&self) -> u32 {
        self.dirs.iter().map(|d| d.depth).max().unwrap_or(0)
    }

    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// Builds a tree level by level from each directory's (subdirectories, files).
    fn build(spec: &str, mut shape: impl FnMut(&Dir) -> (u32, u32)) -> Tree {
        let mut dirs = vec![Dir { path_len: ROOT_PATH_LEN, ..Dir::default() }];
        let mut d = 0;
        while d < dirs.len() {
            let (subdirs, files) = shape(&dirs[d]);
            let parent = dirs[d];
            let first_sub = dirs.len() as u32;
            dirs[d] = Dir { first_sub, subdirs, files, ..parent };
            for _ in 0..subdirs {
                dirs.push(Dir {
                    path_len: parent.path_len + 1 + DIR_NAME_LEN,
                    name_len: DIR_NAME_LEN,
                    depth: parent.depth + 1,
                    ..Dir::default()
                });
            }
            d += 1;
        }
        Tree { dirs, spec: spec.to_string() }
    }

    pub fn wide(dirs: u32, files: u32) -> Tree {
        Tree::build(&format!("wide:{dirs}x{files}"), |d| if d.depth == 0 { (dirs, 0) } else { (0, files) })
    }

    pub fn deep(fanout: u32, depth: u32, files: u32) -> Tree {
        Tree::build(&format!("deep:{fanout}x{depth}x{files}"), |d| {
            (if d.depth < depth { fanout } else { 0 }, files)
        })
    }

    pub fn flat(files: u32) -> Tree {
        Tree::build(&format!("flat:{files}"), |_| (0, files))
    }

    /// About `entries` entries with Pareto-distributed directory sizes; seeded.
    pub fn power_law(entries: u64, shape: f64, seed: u64) -> Tree {
        const MIN_SIZE: f64 = 4.0;
        const MAX_SIZE: f64 = 200_000.0;
        const DIR_SHARE: f64 = 0.12;
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut budget = entries.saturating_sub(1);
        Tree::build(&format!("powerlaw:{entries}x{shape}"), |_| {
            let size = (MIN_SIZE / (1.0 - rng.f64()).powf(1.0 / shape)).min(MAX_SIZE) as u64;
            let size = size.min(budget) as u32;
            budget -= u64::from(size);
            let subdirs = (0..size).filter(|_| rng.f64() < DIR_SHARE).count() as u32;
            // Keep the tree alive until the budget is spent: the last directory gets a subdirectory.
            let subdirs = if budget > 0 && subdirs == 0 && size > 0 { 1 } else { subdirs };
            (subdirs, size - subdirs)
        })
    }
}

impl FromStr for Tree {
    type Err = String;

    fn from_str(spec: &str) -> Result<Tree, String> {
        let (kind, args) =
            spec.split_once(':').ok_or_else(|| format!("tree spec {spec:?}: expected KIND:ARGS"))?;
        let numbers = |n: usize| -> Result<Vec<f64>, String> {
            let parts: Vec<f64> = args
                .split('x')
                .map(|a| a.parse::<f64>().map_err(|_| format!("tree spec {spec:?}: {a:?} is not a number")))
                .collect::<Result<_, _>>()?;
            if parts.len() == n {
                Ok(parts)
            } else {
                Err(format!("tree spec {spec:?}: expected {n} numbers"))
            }
        };
        Ok(match kind {
            "wide" => {
                let v = numbers(2)?;
                Tree::wide(v[0] as u32, v[1] as u32)
            }
            "deep" => {
                let v = numbers(3)?;
                Tree::deep(v[0] as u32, v[1] as u32, v[2] as u32)
            }
            "flat" => Tree::flat(numbers(1)?[0] as u32),
            "powerlaw" => {
                let v = if args.contains('x') { numbers(2)? } else { vec![numbers(1)?[0], 1.3] };
                Tree::power_law(v[0] as u64, v[1], 1)
            }
            _ => {
                return Err(format!(
                    "tree spec {spec:?}: unknown kind {kind:?} (wide, deep, flat, powerlaw)"
                ));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_have_the_sizes_gen_tree_gives_them() {
        // bench/README: deep:5x7x2 is 97,655 directories and 195,312 files.
        let deep: Tree = "deep:5x7x2".parse().unwrap();
        assert_eq!(deep.dirs() - 1, 97_655);
        assert_eq!(deep.entries() - 1 - u64::from(deep.dirs() - 1), 195_312);
        assert_eq!(deep.max_depth(), 7);
        let wide: Tree = "wide:1000x100".parse().unwrap();
        assert_eq!((wide.dirs(), wide.entries()), (1001, 1 + 1000 + 100_000));
        let flat: Tree = "flat:5".parse().unwrap();
        assert_eq!((flat.dirs(), flat.entries()), (1, 6));
        assert!("deep:5x7".parse::<Tree>().is_err());
        assert!("cube:3".parse::<Tree>().is_err());
    }

    #[test]
    fn power_law_is_irregular_and_reproducible() {
        let t = Tree::power_law(200_000, 1.3, 7);
        assert!((199_000..=200_000).contains(&t.entries()), "{}", t.entries());
        let sizes: Vec<u32> = (0..t.dirs()).map(|d| t.dir(d).entries()).collect();
        let biggest = sizes.iter().copied().max().unwrap();
        let median = {
            let mut s = sizes.clone();
            s.sort_unstable();
            s[s.len() / 2]
        };
        assert!(biggest > 100 * median.max(1), "a heavy tail: biggest {biggest}, median {median}");
        assert!(t.max_depth() >= 5);
        assert_eq!(Tree::power_law(200_000, 1.3, 7).dirs(), t.dirs());
    }

    #[test]
    fn subdirectories_spread_through_the_listing() {
        let d = Dir { subdirs: 3, files: 7, ..Dir::default() };
        let positions: Vec<u32> = (0..3).map(|i| d.sub_position(i)).collect();
        assert_eq!(positions, vec![1, 5, 8]);
        let all = Dir { subdirs: 4, files: 0, ..Dir::default() };
        assert_eq!((0..4).map(|i| all.sub_position(i)).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }
}
