//! Reading through the mount shows exactly the source: GNU find, du, ls and stat agree on both.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::support::{TestMount, assert_same_records, find_records, fuse_available, tool_records};
use canopy_testkit::{DEEP_LEVELS, hostile_tree, is_root};

/// Everything `find` can say about an entry except the access time (reading changes it) and the
/// device number (the mount is another device).
pub const FIND_FORMAT: &str = "%P\\t%y %s %b %m %n %U %G %i %T@ %C@ %l\\0";

fn hostile_source() -> tempfile::TempDir {
    let source = tempfile::tempdir().unwrap();
    hostile_tree(source.path());
    source
}

fn assert_find_agrees(source: &Path, mount: &Path) {
    let expected = find_records(source, FIND_FORMAT);
    assert!(expected.len() > 150 + DEEP_LEVELS, "the tree has {} entries", expected.len());
    assert_same_records(&expected, &find_records(mount, FIND_FORMAT), "find -printf");
}

#[test]
fn find_sees_the_source_tree() {
    if !fuse_available() {
        return;
    }
    let source = hostile_source();
    let mount = TestMount::new(source.path(), |_| {});
    assert_find_agrees(source.path(), mount.path());
}

#[test]
fn find_sees_the_source_tree_through_readdirplus() {
    if !fuse_available() {
        return;
    }
    let source = hostile_source();
    let mount = TestMount::new(source.path(), |options| options.readdirplus = true);
    assert_find_agrees(source.path(), mount.path());
    let readdirplus = mount.mount.stats().snapshot().count(canopy_latfs::Op::Readdirplus);
    assert!(readdirplus > 0, "directories were listed with READDIRPLUS");
}

#[test]
fn du_ls_and_stat_agree_with_the_source() {
    if !fuse_available() {
        return;
    }
    let source = hostile_source();
    let mount = TestMount::new(source.path(), |_| {});
    let (src, mnt) = (source.path(), mount.path());

    for du in [&["-a0", "."][..], &["-a0", "-b", "."], &["-s0", "-l", "."]] {
        let expected = tool_records(src, "du", du, 0);
        assert_same_records(&expected, &tool_records(mnt, "du", du, 0), &format!("du {du:?}"));
    }

    // ls -R stops at PATH_MAX, so every directory but the deep chain, and the top without -R.
    let dirs =
        ["tree/sizes", "tree/sub", "tree/modes", "tree/times", "tree/wide", "tree/nest", "tree/empty-dir"];
    let ls: Vec<&str> = ["-lRan", "-b", "--time-style=+%s.%N"].into_iter().chain(dirs).collect();
    let expected = tool_records(src, "ls", &ls, b'\n');
    assert_same_records(&expected, &tool_records(mnt, "ls", &ls, b'\n'), "ls -lRan");
    let ls = ["-lan", "-b", "--time-style=+%s.%N", "tree"];
    assert_same_records(
        &tool_records(src, "ls", &ls, b'\n'),
        &tool_records(mnt, "ls", &ls, b'\n'),
        "ls -lan",
    );

    let mut stat = vec!["--printf=%n|%i|%h|%s|%b|%f|%u|%g|%t:%T|%y|%z|%N\\0"];
    let files: Vec<String> = ["tree", "tree/sizes", "tree/sub", "tree/modes"]
        .iter()
        .flat_map(|dir| fs::read_dir(src.join(dir)).unwrap())
        .map(|entry| entry.unwrap().path().strip_prefix(src).unwrap().to_string_lossy().into_owned())
        .filter(|name| !name.contains('\u{fffd}')) // names that are not UTF-8 cannot be passed as &str
        .collect();
    stat.extend(files.iter().map(String::as_str));
    let expected = tool_records(src, "stat", &stat, 0);
    assert!(expected.len() > 30, "stat covered {} files", expected.len());
    assert_same_records(&expected, &tool_records(mnt, "stat", &stat, 0), "stat");
}

#[test]
fn hard_links_stay_one_inode_and_devices_keep_their_numbers() {
    if !fuse_available() {
        return;
    }
    let source = tempfile::tempdir().unwrap();
    hostile_tree(source.path());
    let mount = TestMount::new(source.path(), |_| {});
    let links = ["tree/sub/mid.rs", "tree/hardlink-to-mid", "tree/sub/deeper/mid-again"]
        .map(|p| fs::symlink_metadata(mount.path().join(p)).unwrap());
    let source_ino = fs::symlink_metadata(source.path().join("tree/sub/mid.rs")).unwrap().ino();
    for link in &links {
        assert_eq!((link.ino(), link.nlink()), (source_ino, 3));
    }
    if is_root() {
        for device in ["tree/char-1-3", "tree/block-7-200"] {
            let on_mount = fs::symlink_metadata(mount.path().join(device)).unwrap().rdev();
            let on_source = fs::symlink_metadata(source.path().join(device)).unwrap().rdev();
            assert_eq!(on_mount, on_source, "{device}");
        }
    }
}

#[test]
fn file_contents_and_link_targets_read_through_the_mount() {
    if !fuse_available() {
        return;
    }
    let source = tempfile::tempdir().unwrap();
    hostile_tree(source.path());
    let mount =
        TestMount::new(source.path(), |options| options.data_delay = std::time::Duration::from_micros(50));
    let mut compared = 0;
    for dir in ["tree", "tree/sizes", "tree/sub"] {
        for entry in fs::read_dir(source.path().join(dir)).unwrap() {
            let entry = entry.unwrap();
            let on_mount = mount.path().join(dir).join(entry.file_name());
            let kind = entry.file_type().unwrap();
            if kind.is_file() {
                assert_eq!(fs::read(entry.path()).unwrap(), fs::read(&on_mount).unwrap(), "{on_mount:?}");
                compared += 1;
            } else if kind.is_symlink() {
                assert_eq!(
                    fs::read_link(entry.path()).unwrap(),
                    fs::read_link(&on_mount).unwrap(),
                    "{on_mount:?}"
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 25, "compared {compared} files");
    assert!(mount.mount.stats().snapshot().count(canopy_latfs::Op::Read) > 0);
}

#[test]
fn a_read_only_mount_refuses_changes() {
    if !fuse_available() {
        return;
    }
    let source = tempfile::tempdir().unwrap();
    fs::write(source.path().join("file"), "x").unwrap();
    let mount = TestMount::new(source.path(), |options| options.read_only = true);
    let error = fs::write(mount.path().join("new"), "x").unwrap_err();
    assert_eq!(error.raw_os_error(), Some(libc::EROFS));
    assert_eq!(fs::remove_file(mount.path().join("file")).unwrap_err().raw_os_error(), Some(libc::EROFS));
    assert_eq!(fs::read(mount.path().join("file")).unwrap(), b"x");
}
