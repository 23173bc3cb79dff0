//! The same script of stat, chmod, rename, unlink, mkdir, rmdir, write and truncate calls, run on
//! a local (ext4) directory and on the mount: every call must end the same way (the same errno),
//! and the trees must end the same. Compared: type, permission bits, owner, size and link count
//! of non-directories, symlink targets. Not compared, because the service defines them
//! differently: a directory's size and link count (ext4 counts blocks and subdirectories; the
//! mount reports 0 and 1, as btrfs does) and times.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use super::support::{TestCluster, TestMount, fuse_available};

/// One step of the script, on the tree rooted at the given directory.
type Step = (&'static str, fn(&Path) -> std::io::Result<String>);

fn describe(meta: &fs::Metadata) -> String {
    let kind = match meta.mode() & libc::S_IFMT {
        libc::S_IFDIR => "dir",
        libc::S_IFREG => "file",
        libc::S_IFLNK => "link",
        libc::S_IFIFO => "fifo",
        _ => "other",
    };
    if meta.is_dir() {
        format!("{kind} {:o} {}:{}", meta.mode() & 0o7777, meta.uid(), meta.gid())
    } else {
        let (mode, uid, gid, size, links) =
            (meta.mode() & 0o7777, meta.uid(), meta.gid(), meta.len(), meta.nlink());
        format!("{kind} {mode:o} {uid}:{gid} size {size} links {links}")
    }
}

fn stat(path: &Path) -> std::io::Result<String> {
    fs::symlink_metadata(path).map(|m| describe(&m))
}

fn chmod(path: &Path, mode: u32) -> std::io::Result<String> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map(|()| String::new())
}

fn done<T>(result: std::io::Result<T>) -> std::io::Result<String> {
    result.map(|_| String::new())
}

const SCRIPT: &[Step] = &[
    ("mkdir a", |r| done(fs::create_dir(r.join("a")))),
    ("mkdir b", |r| done(fs::create_dir(r.join("b")))),
    ("mkdir a again", |r| done(fs::create_dir(r.join("a")))),
    ("write a/f", |r| done(fs::write(r.join("a/f"), b"0123456789"))),
    ("stat a/f", |r| stat(&r.join("a/f"))),
    ("chmod a/f 640", |r| chmod(&r.join("a/f"), 0o640)),
    ("chmod a 2750", |r| chmod(&r.join("a"), 0o2750)),
    ("stat a", |r| stat(&r.join("a"))),
    ("rename a/f a/g", |r| done(fs::rename(r.join("a/f"), r.join("a/g")))),
    ("stat a/f", |r| stat(&r.join("a/f"))),
    ("stat a/g", |r| stat(&r.join("a/g"))),
    ("rename a/g c/g", |r| done(fs::rename(r.join("a/g"), r.join("c/g")))),
    ("rename a/g b/g", |r| done(fs::rename(r.join("a/g"), r.join("b/g")))),
    ("rename b a", |r| done(fs::rename(r.join("b"), r.join("a")))),
    ("stat b", |r| stat(&r.join("b"))),
    ("stat a/g", |r| stat(&r.join("a/g"))),
    ("truncate a/g 3", |r| done(fs::OpenOptions::new().write(true).open(r.join("a/g"))?.set_len(3))),
    ("read a/g", |r| fs::read(r.join("a/g")).map(|d| String::from_utf8_lossy(&d).into_owned())),
    ("truncate a/g 6", |r| done(fs::OpenOptions::new().write(true).open(r.join("a/g"))?.set_len(6))),
    ("read a/g", |r| fs::read(r.join("a/g")).map(|d| format!("{d:?}"))),
    ("mkdir a/sub", |r| done(fs::create_dir(r.join("a/sub")))),
    ("rename a a/sub/x", |r| done(fs::rename(r.join("a"), r.join("a/sub/x")))),
    ("rename a/g a/sub", |r| done(fs::rename(r.join("a/g"), r.join("a/sub")))),
    ("rename a/sub a/g", |r| done(fs::rename(r.join("a/sub"), r.join("a/g")))),
    ("write a/sub/h", |r| done(fs::write(r.join("a/sub/h"), b"h"))),
    ("mkdir z", |r| done(fs::create_dir(r.join("z")))),
    ("rename z a", |r| done(fs::rename(r.join("z"), r.join("a")))),
    ("rename a/sub z", |r| done(fs::rename(r.join("a/sub"), r.join("z")))),
    ("stat z/h", |r| stat(&r.join("z/h"))),
    ("rmdir z", |r| done(fs::remove_dir(r.join("z")))),
    ("unlink z", |r| done(fs::remove_file(r.join("z")))),
    ("unlink z/h", |r| done(fs::remove_file(r.join("z/h")))),
    ("unlink z/h again", |r| done(fs::remove_file(r.join("z/h")))),
    ("rmdir z", |r| done(fs::remove_dir(r.join("z")))),
    ("rmdir z again", |r| done(fs::remove_dir(r.join("z")))),
    ("symlink a/l", |r| done(symlink("g", r.join("a/l")))),
    ("stat a/l", |r| stat(&r.join("a/l"))),
    ("readlink a/l", |r| fs::read_link(r.join("a/l")).map(|t| t.display().to_string())),
    ("read a/l", |r| fs::read(r.join("a/l")).map(|d| format!("{d:?}"))),
    ("rename a/l a/m", |r| done(fs::rename(r.join("a/l"), r.join("a/m")))),
    ("readlink a/m", |r| fs::read_link(r.join("a/m")).map(|t| t.display().to_string())),
    ("readlink a/g", |r| fs::read_link(r.join("a/g")).map(|t| t.display().to_string())),
    ("rename a/m a/g", |r| done(fs::rename(r.join("a/m"), r.join("a/g")))),
    ("stat a/g", |r| stat(&r.join("a/g"))),
    ("unlink a/g", |r| done(fs::remove_file(r.join("a/g")))),
    ("mkdir a/keep", |r| done(fs::create_dir(r.join("a/keep")))),
    ("write a/keep/data", |r| done(fs::write(r.join("a/keep/data"), vec![7u8; 70_000]))),
    ("chmod a/keep/data 4755", |r| chmod(&r.join("a/keep/data"), 0o4755)),
    ("symlink a/keep/up", |r| done(symlink("../..", r.join("a/keep/up")))),
    ("rmdir a", |r| done(fs::remove_dir(r.join("a")))),
];

fn outcome(result: std::io::Result<String>) -> String {
    match result {
        Ok(details) => format!("ok {details}"),
        Err(error) => format!("errno {}", error.raw_os_error().unwrap_or(-1)),
    }
}

/// `find -printf` of the tree, without directory sizes, link counts and times.
fn tree(root: &Path) -> Vec<String> {
    let mut all = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            all.push(format!("{} {}", path.strip_prefix(root).unwrap().display(), describe(&meta)));
            if meta.is_dir() {
                pending.push(path);
            }
        }
    }
    all.sort();
    all
}

#[test]
fn the_same_script_ends_the_same_on_the_mount_and_on_a_local_directory() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(3, 16_000);
    let mount = TestMount::new(&cluster, &[]);
    let local = tempfile::tempdir().unwrap();
    let mut differences = Vec::new();
    for (what, step) in SCRIPT {
        let (expected, actual) = (outcome(step(local.path())), outcome(step(mount.path())));
        if expected != actual {
            differences.push(format!("{what}: local {expected}, mount {actual}"));
        }
    }
    assert!(differences.is_empty(), "the mount differs:\n{}", differences.join("\n"));
    assert_eq!(tree(mount.path()), tree(local.path()));
    assert_eq!(tree(local.path()).len(), 4, "the script leaves a, a/keep, its file and symlink");
}
