//! Paths past PATH_MAX, odd names, symlink loops under -L, unreadable directories.

mod common;

use canopy_engine::{
    Action, Cx, Entry, ErrorKind, Follow, ThreadPolicy, Visitor, WalkError, WalkOptions, walk,
};
use std::os::unix::ffi::OsStrExt;
use std::sync::Mutex;

struct Record {
    errors: Mutex<Vec<WalkError>>,
}

impl Visitor for Record {
    type State = Vec<Vec<u8>>;
    type DirData = ();
    type Job = ();
    fn new_state(&self) -> Self::State {
        Vec::new()
    }
    fn visit(&self, _: &mut Cx<'_, Self>, paths: &mut Self::State, entry: &Entry<'_, ()>) -> Action {
        paths.push(entry.path());
        Action::Continue
    }
    fn error(&self, error: &WalkError) -> bool {
        self.errors.lock().unwrap().push(error.clone());
        true
    }
}

fn run(root: &[u8], follow: Follow) -> (Vec<Vec<u8>>, Vec<WalkError>) {
    let v = Record { errors: Mutex::new(Vec::new()) };
    let opts = WalkOptions { threads: ThreadPolicy::Fixed(4), follow, ..WalkOptions::default() };
    let outcome = walk(&[root.to_vec()], &opts, &v);
    let mut paths: Vec<_> = outcome.states.into_iter().flatten().collect();
    paths.sort();
    let errors = v.errors.into_inner().unwrap();
    assert_eq!(outcome.errors as usize, errors.len());
    (paths, errors)
}

#[test]
fn walks_and_prints_paths_longer_than_path_max() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("deep");
    // 45 levels of 200-byte names: about 9 KiB of path, over twice PATH_MAX.
    canopy_testkit::deep_chain(&top, 45);
    let root = top.as_os_str().as_bytes().to_vec();
    let mut expected = vec![root.clone()];
    let mut path = root.clone();
    for _ in 0..45 {
        path.push(b'/');
        path.extend_from_slice(&[b'd'; 200]);
        expected.push(path.clone());
    }
    expected.push([path.as_slice(), b"/bottom.txt"].concat());
    expected.sort();
    assert!(expected.iter().map(Vec::len).max().unwrap() > 2 * 4096);
    let (paths, errors) = run(&root, Follow::Never);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(paths, expected);
    // A root longer than PATH_MAX is opened piece by piece.
    let (paths, errors) = run(&path, Follow::Never);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(paths, vec![path.clone(), [path.as_slice(), b"/bottom.txt"].concat()]);
}

#[test]
fn odd_names_come_back_byte_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let long = [b'x'; 255];
    let names: Vec<&[u8]> = canopy_testkit::ODD_NAMES.into_iter().chain([&long[..]]).collect();
    for n in &names {
        std::fs::write(tmp.path().join(std::ffi::OsStr::from_bytes(n)), b"").unwrap();
    }
    let (paths, _) = run(tmp.path().as_os_str().as_bytes(), Follow::Never);
    let root = tmp.path().as_os_str().as_bytes();
    let mut expected: Vec<Vec<u8>> = names.iter().map(|n| [root, b"/", n].concat()).collect();
    expected.push(root.to_vec());
    expected.sort();
    assert_eq!(paths, expected);
}

#[test]
fn symlink_loops_are_reported_under_follow_and_ignored_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    std::fs::create_dir_all(a.join("b")).unwrap();
    std::os::unix::fs::symlink("..", a.join("b/up")).unwrap();
    std::os::unix::fs::symlink("nowhere", a.join("dangling")).unwrap();
    let root = a.as_os_str().as_bytes();

    let (paths, errors) = run(root, Follow::Never);
    assert_eq!(paths.len(), 4, "a, a/b, a/b/up, a/dangling");
    assert!(errors.is_empty());

    let (paths, errors) = run(root, Follow::Always);
    assert_eq!(paths.len(), 3, "a, a/b, a/dangling: the loop entry is reported, not visited");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, ErrorKind::Loop { ancestor: root.to_vec() });
}

#[test]
fn unreadable_directory_is_reported_and_the_walk_goes_on() {
    if !canopy_testkit::root_or_skip("drop privileges for the check") {
        return;
    }
    // Root ignores permission bits; the walk of an unreadable dir is checked as nobody in a child.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let locked = tmp.path().join("locked");
    std::fs::create_dir_all(locked.join("inner")).unwrap();
    std::fs::create_dir(tmp.path().join("open")).unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "as_nobody_child", "--nocapture"])
        .env("CANOPY_ENGINE_NOBODY_ROOT", tmp.path())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Runs in a child process as nobody (uid 65534): expects exactly one EACCES, for `locked`.
#[test]
fn as_nobody_child() {
    let Some(root) = std::env::var_os("CANOPY_ENGINE_NOBODY_ROOT") else {
        return;
    };
    if unsafe { libc::setgroups(0, std::ptr::null()) } != 0
        || unsafe { libc::setgid(65534) } != 0
        || unsafe { libc::setuid(65534) } != 0
    {
        panic!("cannot drop privileges");
    }
    let (paths, errors) = run(root.as_bytes(), Follow::Never);
    assert_eq!(paths.len(), 3, "root, locked (visited, not readable), open: {paths:?}");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].path.ends_with(b"/locked"));
    assert_eq!(errors[0].errno(), Some(rustix::io::Errno::ACCESS));
}
