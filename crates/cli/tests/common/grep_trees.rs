//! Trees for the grep tests: odd names, binary files, links and a FIFO among random text; and the
//! near-identical configuration files of a fleet of nodes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

const LINES: &[&[u8]] = &[
    b"foo",
    b"Foo bar",
    b"foobar",
    b"foo.bar",
    b"x_foo_y",
    b"alpha beta",
    b"FOO",
    b"",
    b"barfoo baz",
    b"tab\tfoo",
    "caf\u{e9} foo".as_bytes(),
    b"\xff foo \xfe",
    b"bar",
];

/// Names beside the hostile tree's odd names that --include, --exclude and -t have to tell apart.
const TYPED_NAMES: [&[u8]; 3] = [b"colon:name", b"notes.md", b"main.rs"];

fn content(rng: &mut fastrand::Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.usize(0..12) {
        out.extend_from_slice(LINES[rng.usize(..LINES.len())]);
        out.push(b'\n');
    }
    if rng.bool() {
        // A last line without its newline.
        out.extend_from_slice(LINES[rng.usize(..LINES.len())]);
    }
    out
}

/// The tree: odd names at several depths, a big flat directory, binary files, links a grep -r
/// does not follow, a FIFO it must not read, an empty file.
pub fn grep_tree(base: &Path) -> PathBuf {
    let mut rng = fastrand::Rng::with_seed(7);
    let root = base.join("tree");
    for dir in ["", "sub", "sub/deeper/deepest", "many", "bin"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        for name in canopy_testkit::ODD_NAMES.into_iter().chain(TYPED_NAMES) {
            std::fs::write(root.join(dir).join(OsStr::from_bytes(name)), content(&mut rng)).unwrap();
        }
    }
    for i in 0..300 {
        std::fs::write(root.join(format!("many/f{i:03}.txt")), content(&mut rng)).unwrap();
    }
    std::fs::write(root.join("bin/data.bin"), b"foo\0bar\nfoo\n").unwrap();
    let mut image = vec![0u8; 5000];
    image[100..110].copy_from_slice(b"\nfoo bar\n\n");
    std::fs::write(root.join("bin/image.png"), image).unwrap();
    std::fs::write(root.join("empty"), b"").unwrap();
    std::fs::write(root.join("sub/target"), b"foo from the link target\n").unwrap();
    symlink("target", root.join("sub/link-to-file")).unwrap();
    symlink("deeper", root.join("sub/link-to-dir")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    super::mkfifo(&root.join("fifo"));
    root
}

/// Config files of 40 nodes that differ in planned ways.
pub fn config_tree(base: &Path) -> PathBuf {
    let root = base.join("nodes");
    for node in 1..=40 {
        let dir = root.join(format!("node{node:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        let port = if node % 10 == 0 { 9090 } else { 8080 };
        let extra = if node == 7 { "listen debug\n" } else { "" };
        std::fs::write(
            dir.join("app.conf"),
            format!("# node {node}\nlisten {port}\nuser web\n{extra}listen all\n"),
        )
        .unwrap();
    }
    root
}
