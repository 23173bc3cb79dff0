//! Following symlinks (`-L`) with `each_dir_once`: every directory is entered once however many
//! links lead to it, as GNU du does — a ladder of n rungs with two links each is n directories,
//! not 2^n paths. Without it, every path is walked, as GNU find does (checked against find -L).

use canopy_engine::{
    Action, Cx, Entry, ErrorKind, Follow, ThreadPolicy, Visitor, WalkError, WalkOptions, walk,
};
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// Counts visits by (device, inode) and keeps every path and error.
#[derive(Default)]
struct Count {
    errors: Mutex<Vec<WalkError>>,
}

#[derive(Default)]
struct Seen {
    visits: HashMap<(u64, u64), u64>,
    paths: Vec<Vec<u8>>,
}

impl Visitor for Count {
    type State = Seen;
    type DirData = ();
    type Job = ();

    fn new_state(&self) -> Seen {
        Seen::default()
    }

    fn visit(&self, _: &mut Cx<'_, Self>, seen: &mut Seen, entry: &Entry<'_, ()>) -> Action {
        let id = entry.metadata().expect("every entry resolves").file_id();
        *seen.visits.entry(id).or_default() += 1;
        seen.paths.push(entry.path());
        Action::Continue
    }

    fn error(&self, error: &WalkError) -> bool {
        self.errors.lock().unwrap().push(error.clone());
        true
    }
}

/// `rungs` directories `l0` … side by side, each with links `a` and `b` to the next one; the last
/// holds a file.
fn ladder(root: &Path, rungs: usize) -> std::path::PathBuf {
    for i in 0..=rungs {
        std::fs::create_dir(root.join(format!("l{i}"))).unwrap();
    }
    for i in 0..rungs {
        for link in ["a", "b"] {
            std::os::unix::fs::symlink(format!("../l{}", i + 1), root.join(format!("l{i}/{link}"))).unwrap();
        }
    }
    std::fs::write(root.join(format!("l{rungs}/file")), b"x").unwrap();
    root.join("l0")
}

fn run(root: &Path, each_dir_once: bool, threads: usize) -> (Seen, Vec<WalkError>) {
    let count = Count::default();
    let options = WalkOptions {
        threads: ThreadPolicy::Fixed(threads),
        follow: Follow::Always,
        each_dir_once,
        ..WalkOptions::default()
    };
    let outcome = walk(&[root.as_os_str().as_bytes().to_vec()], &options, &count);
    let mut all = Seen::default();
    for seen in outcome.states {
        for (id, n) in seen.visits {
            *all.visits.entry(id).or_default() += n;
        }
        all.paths.extend(seen.paths);
    }
    all.paths.sort();
    (all, count.errors.into_inner().unwrap())
}

#[test]
fn a_ladder_of_links_is_walked_once_per_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let top = ladder(tmp.path(), 25);
    for threads in [1, 4] {
        let (seen, errors) = run(&top, true, threads);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(seen.visits.values().all(|&n| n == 1), "a directory visited twice: {:?}", seen.visits);
        assert_eq!(seen.visits.len(), 26 + 1, "26 rungs and the file");
        assert_eq!(seen.paths.len(), 27, "each through one path");
    }
}

#[test]
fn a_loop_is_entered_once_and_not_reported() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("top/x")).unwrap();
    std::os::unix::fs::symlink("..", tmp.path().join("top/x/up")).unwrap();
    let (seen, errors) = run(&tmp.path().join("top"), true, 2);
    assert!(errors.is_empty(), "GNU du -L says nothing about a loop: {errors:?}");
    assert_eq!(seen.visits.len(), 2);
    // Without: the loop is reported, as find -L does.
    let (_, errors) = run(&tmp.path().join("top"), false, 2);
    assert!(matches!(errors.as_slice(), [WalkError { kind: ErrorKind::Loop { .. }, .. }]), "{errors:?}");
}

#[test]
fn without_it_every_path_is_walked_as_find_does() {
    let tmp = tempfile::tempdir().unwrap();
    let top = ladder(tmp.path(), 4);
    let (seen, errors) = run(&top, false, 3);
    assert!(errors.is_empty(), "{errors:?}");
    let find = Command::new("find").arg("-L").arg(&top).env("LC_ALL", "C").output().unwrap();
    let mut expected: Vec<Vec<u8>> =
        find.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect();
    expected.sort();
    assert_eq!(seen.paths, expected);
    assert_eq!(seen.paths.len(), 1 + 2 + 4 + 8 + 16 + 16);
}
