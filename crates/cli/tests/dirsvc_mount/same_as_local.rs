//! The same scripts, run on a local ext4 directory and on the mount: every call must end the same
//! way (the same result, or the same errno), and the trees must end the same. The first script
//! covers stat, chmod, rename, unlink, mkdir, rmdir, write, truncate and symlinks; the second hard
//! links, link counts (of files and of directories), which times each call moves (a snapshot of a
//! path's mtime and ctime, then whether each moved), and files unlinked or replaced while open.
//! Compared: type, permission bits, owner, link count, size of non-directories, symlink targets,
//! data. Not compared: a directory's size (ext4 counts its blocks, the mount 0 — file systems
//! differ there, as btrfs and tmpfs do) and the times' values (only whether a call moved them).

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;
use std::time::Duration;

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
        format!("{kind} {:o} {}:{} links {}", meta.mode() & 0o7777, meta.uid(), meta.gid(), meta.nlink())
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

/// `find -printf` of the tree, without directory sizes and times.
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
    let local = ext4_dir();
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

/// A directory on ext4 for the oracle: the test binaries' scratch space, in the target directory.
fn ext4_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let kind = rustix::fs::statfs(dir.path()).unwrap().f_type;
    assert_eq!(
        kind as u64,
        0xEF53,
        "the oracle must be ext4: {} is on file system type {kind:#x}",
        dir.path().display()
    );
    dir
}

/// The second script's state on one tree: time snapshots and open files, by name.
#[derive(Default)]
struct State {
    times: HashMap<&'static str, (i64, i64, i64, i64)>,
    open: HashMap<&'static str, fs::File>,
}

type StatefulStep = (&'static str, fn(&Path, &mut State) -> std::io::Result<String>);

fn times_of(meta: &fs::Metadata) -> (i64, i64, i64, i64) {
    (meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec())
}

/// Records `path`'s mtime and ctime under its own name, then waits past the clock's granularity
/// (ext4 stamps times from a clock that moves once per tick).
fn snap(root: &Path, state: &mut State, path: &'static str) -> std::io::Result<String> {
    let meta = fs::symlink_metadata(root.join(path))?;
    state.times.insert(path, times_of(&meta));
    std::thread::sleep(Duration::from_millis(30));
    Ok(String::new())
}

/// Whether `path`'s mtime and ctime moved since the snapshot called `since`.
fn moved(root: &Path, state: &State, path: &str, since: &'static str) -> std::io::Result<String> {
    let (m, mn, c, cn) = times_of(&fs::symlink_metadata(root.join(path))?);
    let (old_m, old_mn, old_c, old_cn) = state.times[since];
    let word = |changed: bool| if changed { "moved" } else { "same" };
    Ok(format!("mtime {} ctime {}", word((m, mn) != (old_m, old_mn)), word((c, cn) != (old_c, old_cn))))
}

fn link(root: &Path, from: &str, to: &str) -> std::io::Result<String> {
    done(fs::hard_link(root.join(from), root.join(to)))
}

fn mkfifo(path: &Path) -> std::io::Result<String> {
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, 0o644.into(), 0)?;
    Ok(String::new())
}

fn open(root: &Path, state: &mut State, path: &'static str) -> std::io::Result<String> {
    state.open.insert(path, fs::OpenOptions::new().read(true).write(true).open(root.join(path))?);
    Ok(String::new())
}

/// fstat and the whole contents through a file opened earlier.
fn through(state: &mut State, path: &'static str) -> std::io::Result<String> {
    let file = state.open.get_mut(path).expect("opened earlier");
    let meta = file.metadata()?;
    let mut data = String::new();
    file.rewind()?;
    file.read_to_string(&mut data)?;
    Ok(format!("{} {data:?}", describe(&meta)))
}

const LINKS_AND_TIMES: &[StatefulStep] = &[
    ("mkdir t", |r, _| done(fs::create_dir(r.join("t")))),
    ("mkdir t/a", |r, _| done(fs::create_dir(r.join("t/a")))),
    ("mkdir t/b", |r, _| done(fs::create_dir(r.join("t/b")))),
    ("stat t", |r, _| stat(&r.join("t"))),
    ("write t/a/f", |r, _| done(fs::write(r.join("t/a/f"), b"hello"))),
    // link: a new name, counted on every name; the parent's and the file's times.
    ("snap t/a", |r, s| snap(r, s, "t/a")),
    ("snap t/a/f", |r, s| snap(r, s, "t/a/f")),
    ("link t/a/f t/a/g", |r, _| link(r, "t/a/f", "t/a/g")),
    ("t/a after link", |r, s| moved(r, s, "t/a", "t/a")),
    ("t/a/f after link", |r, s| moved(r, s, "t/a/f", "t/a/f")),
    ("stat t/a/f", |r, _| stat(&r.join("t/a/f"))),
    ("stat t/a/g", |r, _| stat(&r.join("t/a/g"))),
    ("link t/a/f t/b/h", |r, _| link(r, "t/a/f", "t/b/h")),
    ("stat t/b/h", |r, _| stat(&r.join("t/b/h"))),
    ("read t/b/h", |r, _| fs::read_to_string(r.join("t/b/h"))),
    ("link onto an existing name", |r, _| link(r, "t/a/f", "t/a/g")),
    ("link a directory", |r, _| link(r, "t/a", "t/b/dir")),
    ("link a missing file", |r, _| link(r, "t/a/missing", "t/b/x")),
    ("link into a missing directory", |r, _| link(r, "t/a/f", "t/missing/x")),
    ("link a name onto itself", |r, _| link(r, "t/a/f", "t/a/f")),
    // A change through one name shows through every name.
    ("snap t/a/f", |r, s| snap(r, s, "t/a/f")),
    ("chmod t/a/g 600", |r, _| chmod(&r.join("t/a/g"), 0o600)),
    ("t/a/f after chmod of another name", |r, s| moved(r, s, "t/a/f", "t/a/f")),
    ("stat t/b/h", |r, _| stat(&r.join("t/b/h"))),
    ("append to t/b/h", |r, _| {
        done(fs::OpenOptions::new().append(true).open(r.join("t/b/h"))?.write_all(b", world"))
    }),
    ("read t/a/f", |r, _| fs::read_to_string(r.join("t/a/f"))),
    // unlink of one name: one name less, the parent's and the file's times.
    ("snap t/b", |r, s| snap(r, s, "t/b")),
    ("snap t/a/f", |r, s| snap(r, s, "t/a/f")),
    ("unlink t/b/h", |r, _| done(fs::remove_file(r.join("t/b/h")))),
    ("t/b after unlink", |r, s| moved(r, s, "t/b", "t/b")),
    ("t/a/f after unlink of another name", |r, s| moved(r, s, "t/a/f", "t/a/f")),
    ("stat t/a/f", |r, _| stat(&r.join("t/a/f"))),
    // rename over a linked name: that name goes, the file keeps its other one.
    ("write t/b/other", |r, _| done(fs::write(r.join("t/b/other"), b"other"))),
    ("rename t/b/other t/a/g", |r, _| done(fs::rename(r.join("t/b/other"), r.join("t/a/g")))),
    ("stat t/a/f", |r, _| stat(&r.join("t/a/f"))),
    ("read t/a/g", |r, _| fs::read_to_string(r.join("t/a/g"))),
    ("read t/a/f", |r, _| fs::read_to_string(r.join("t/a/f"))),
    // rename between two names of one file does nothing.
    ("link t/a/f t/a/f2", |r, _| link(r, "t/a/f", "t/a/f2")),
    ("rename t/a/f t/a/f2", |r, _| done(fs::rename(r.join("t/a/f"), r.join("t/a/f2")))),
    ("stat t/a/f", |r, _| stat(&r.join("t/a/f"))),
    ("stat t/a/f2", |r, _| stat(&r.join("t/a/f2"))),
    ("unlink t/a/f2", |r, _| done(fs::remove_file(r.join("t/a/f2")))),
    // A renamed file's ctime moves, its mtime not; both directories' times move.
    ("snap t/a/f", |r, s| snap(r, s, "t/a/f")),
    ("snap t/b", |r, s| snap(r, s, "t/b")),
    ("rename t/a/f t/b/f", |r, _| done(fs::rename(r.join("t/a/f"), r.join("t/b/f")))),
    ("t/b/f after rename", |r, s| moved(r, s, "t/b/f", "t/a/f")),
    ("t/b after rename into it", |r, s| moved(r, s, "t/b", "t/b")),
    // A directory's link count: 2 + its subdirectories, through mkdir, rename and rmdir.
    ("mkdir t/a/s1", |r, _| done(fs::create_dir(r.join("t/a/s1")))),
    ("mkdir t/a/s2", |r, _| done(fs::create_dir(r.join("t/a/s2")))),
    ("stat t/a", |r, _| stat(&r.join("t/a"))),
    ("snap t/a/s1", |r, s| snap(r, s, "t/a/s1")),
    ("rename t/a/s1 t/b/s1", |r, _| done(fs::rename(r.join("t/a/s1"), r.join("t/b/s1")))),
    ("t/b/s1 after its rename", |r, s| moved(r, s, "t/b/s1", "t/a/s1")),
    ("stat t/a", |r, _| stat(&r.join("t/a"))),
    ("stat t/b", |r, _| stat(&r.join("t/b"))),
    ("rename t/a/s2 t/b/s1", |r, _| done(fs::rename(r.join("t/a/s2"), r.join("t/b/s1")))),
    ("stat t/a", |r, _| stat(&r.join("t/a"))),
    ("stat t/b", |r, _| stat(&r.join("t/b"))),
    ("stat t", |r, _| stat(&r.join("t"))),
    ("rmdir t/b/s1", |r, _| done(fs::remove_dir(r.join("t/b/s1")))),
    ("stat t/b", |r, _| stat(&r.join("t/b"))),
    // Every kind of entry change moves the parent's mtime and ctime.
    ("mkdir t/c", |r, _| done(fs::create_dir(r.join("t/c")))),
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("mkdir t/c/d", |r, _| done(fs::create_dir(r.join("t/c/d")))),
    ("t/c after mkdir", |r, s| moved(r, s, "t/c", "t/c")),
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("mkfifo t/c/fifo", |r, _| mkfifo(&r.join("t/c/fifo"))),
    ("t/c after mkfifo", |r, s| moved(r, s, "t/c", "t/c")),
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("open O_CREAT t/c/file", |r, _| done(fs::File::create_new(r.join("t/c/file")))),
    ("t/c after open O_CREAT", |r, s| moved(r, s, "t/c", "t/c")),
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("symlink t/c/link", |r, _| done(symlink("file", r.join("t/c/link")))),
    ("t/c after symlink", |r, s| moved(r, s, "t/c", "t/c")),
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("unlink t/c/link", |r, _| done(fs::remove_file(r.join("t/c/link")))),
    ("t/c after unlink", |r, s| moved(r, s, "t/c", "t/c")),
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("rmdir t/c/d", |r, _| done(fs::remove_dir(r.join("t/c/d")))),
    ("t/c after rmdir", |r, s| moved(r, s, "t/c", "t/c")),
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("rename t/c/fifo t/c/pipe", |r, _| done(fs::rename(r.join("t/c/fifo"), r.join("t/c/pipe")))),
    ("t/c after rename within it", |r, s| moved(r, s, "t/c", "t/c")),
    // ...and what changes no entry moves nothing.
    ("snap t/c", |r, s| snap(r, s, "t/c")),
    ("open t/c/file without O_CREAT", |r, _| done(fs::File::open(r.join("t/c/file")))),
    ("mkdir t/c/pipe (exists)", |r, _| done(fs::create_dir(r.join("t/c/pipe")))),
    ("unlink t/c/missing", |r, _| done(fs::remove_file(r.join("t/c/missing")))),
    ("write into t/c/file", |r, _| done(fs::write(r.join("t/c/file"), b"abc"))),
    ("t/c after no entry changed", |r, s| moved(r, s, "t/c", "t/c")),
    // A file unlinked while open: link count 0, its data readable and writable until closed.
    ("open t/c/file", |r, s| open(r, s, "t/c/file")),
    ("unlink t/c/file", |r, _| done(fs::remove_file(r.join("t/c/file")))),
    ("fstat and read the unlinked t/c/file", |_, s| through(s, "t/c/file")),
    ("write to the unlinked t/c/file", |_, s| {
        done(s.open.get_mut("t/c/file").expect("opened").write_all(b"def"))
    }),
    ("fstat and read the unlinked t/c/file", |_, s| through(s, "t/c/file")),
    ("close t/c/file", |_, s| {
        done(s.open.remove("t/c/file").ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound)))
    }),
    // A file replaced by rename while open: the same.
    ("write t/c/old", |r, _| done(fs::write(r.join("t/c/old"), b"old data"))),
    ("open t/c/old", |r, s| open(r, s, "t/c/old")),
    ("write t/c/new", |r, _| done(fs::write(r.join("t/c/new"), b"new"))),
    ("rename t/c/new t/c/old", |r, _| done(fs::rename(r.join("t/c/new"), r.join("t/c/old")))),
    ("fstat and read the replaced t/c/old", |_, s| through(s, "t/c/old")),
    ("read t/c/old", |r, _| fs::read_to_string(r.join("t/c/old"))),
    ("close t/c/old", |_, s| {
        done(s.open.remove("t/c/old").ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound)))
    }),
];

#[test]
fn links_link_counts_and_times_end_the_same_on_the_mount_and_on_a_local_directory() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(3, 16_000);
    // All partitions of new directories active: names land on every server, links cross them.
    let mount = TestMount::new(&cluster, &["--partitions", "0"]);
    let local = ext4_dir();
    let (mut local_state, mut mount_state) = (State::default(), State::default());
    let mut differences = Vec::new();
    for (what, step) in LINKS_AND_TIMES {
        let expected = outcome(step(local.path(), &mut local_state));
        let actual = outcome(step(mount.path(), &mut mount_state));
        if expected != actual {
            differences.push(format!("{what}: local {expected}, mount {actual}"));
        }
    }
    assert!(differences.is_empty(), "the mount differs:\n{}", differences.join("\n"));
    assert_eq!(tree(mount.path()), tree(local.path()));
    // What the service stored: no link count left dangling, nothing unlinked left behind.
    let fsck =
        super::common::canopy().args(["dirsvc", "fsck", "--cluster"]).arg(&cluster.dir).output().unwrap();
    assert!(
        fsck.status.success(),
        "fsck: {}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
}
