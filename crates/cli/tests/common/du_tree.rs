//! The tree the `canopy du` tests measure.

use super::deep_chain;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// The lines of `du -0` (GNU's or canopy's) as path → number.
pub fn du_lines(out: &[u8]) -> BTreeMap<Vec<u8>, u64> {
    out.split(|&b| b == 0)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let tab = l.iter().position(|&b| b == b'\t').unwrap();
            (l[tab + 1..].to_vec(), std::str::from_utf8(&l[..tab]).unwrap().parse().unwrap())
        })
        .collect()
}

pub fn write(path: &Path, len: usize) {
    fs::write(path, vec![b'z'; len]).unwrap();
}

/// A tree whose hard links each have all their names in one directory (or one name in the tree):
/// GNU du's lines are then fully determined, whatever order it reads directories in.
pub fn tree(base: &Path) -> PathBuf {
    let root = base.join("tree");
    for dir in ["a/b/c", "empty", "odd", "wide", "dat"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    for (rel, len) in [
        ("a/zero", 0),
        ("a/one", 1),
        ("a/b/small", 511),
        ("a/b/block", 512),
        ("a/b/c/kilo", 4097),
        ("a/big", 70_000),
        ("a/mega", (1 << 20) + 1),
        ("dat/x.dat", 3000),
        ("dat/y.dat", 9000),
        ("dat/keep.txt", 10),
    ] {
        write(&root.join(rel), len);
    }
    // Three names in one directory, two in another, one name inside and one outside the tree.
    write(&root.join("a/b/x1"), 20_000);
    fs::hard_link(root.join("a/b/x1"), root.join("a/b/x2")).unwrap();
    fs::hard_link(root.join("a/b/x1"), root.join("a/b/x3")).unwrap();
    write(&root.join("a/h1"), 9000);
    fs::hard_link(root.join("a/h1"), root.join("a/h2")).unwrap();
    write(&root.join("a/b/c/solo"), 12_345);
    fs::hard_link(root.join("a/b/c/solo"), base.join("outside-name")).unwrap();
    let sparse = fs::File::create(root.join("a/sparse")).unwrap();
    sparse.set_len(10 << 20).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, &[7u8; 4096], 1 << 20).unwrap();
    for name in [&b"new\nline"[..], b"bad\xff\xfe", b"-dash", b" sp ace", &[b'n'; 255]] {
        write(&root.join("odd").join(OsStr::from_bytes(name)), name.len() * 100);
    }
    fs::create_dir(root.join("odd").join(OsStr::from_bytes(b"dir\nwith\xffodd"))).unwrap();
    for i in 0..1000 {
        write(&root.join(format!("wide/f{i:04}")), i % 7 * 700);
    }
    symlink("one", root.join("a/to_file")).unwrap();
    symlink("nowhere", root.join("a/dangling")).unwrap();
    symlink("b", root.join("a/to_dir")).unwrap();
    super::mkfifo(&root.join("a/fifo"));
    deep_chain(&root.join("deep"), 45);
    root
}
