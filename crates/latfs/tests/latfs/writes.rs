//! Writing through the mount changes the source exactly as the same calls on the source would.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use rustix::fs::{CWD, RenameFlags, renameat_with};

use crate::passthrough::FIND_FORMAT;
use crate::support::{TestMount, assert_same_records, find_records, fuse_available};
use canopy_testkit::{hostile_tree, is_root};

/// What a faithful copy keeps: everything but inode numbers and change times.
const COPY_FORMAT: &str = "%P\\t%y %s %b %m %n %U %G %T@ %l\\0";

fn run(program: &str, args: &[&std::path::Path]) {
    let output = Command::new(program).args(args).output().expect(program);
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn cp_a_into_the_mount_makes_a_faithful_copy() {
    if !fuse_available() {
        return;
    }
    let source = tempfile::tempdir().unwrap();
    let original = hostile_tree(source.path());
    // GNU cp stops at PATH_MAX ("File name too long"), so the chain longer than that goes first.
    fs::remove_dir_all(original.join("deep")).unwrap();
    let mount = TestMount::new(source.path(), |_| {});

    run("cp", &[std::path::Path::new("-a"), &mount.path().join("tree"), &mount.path().join("copy")]);

    let copy = source.path().join("copy");
    assert_same_records(
        &find_records(&original, COPY_FORMAT),
        &find_records(&copy, COPY_FORMAT),
        "cp -a copy",
    );
    assert_same_records(
        &find_records(&copy, FIND_FORMAT),
        &find_records(&mount.path().join("copy"), FIND_FORMAT),
        "the copy seen through the mount",
    );
    let created = mount.mount.stats().snapshot();
    for op in [
        canopy_latfs::Op::Create,
        canopy_latfs::Op::Mkdir,
        canopy_latfs::Op::Symlink,
        canopy_latfs::Op::Link,
        canopy_latfs::Op::Mknod,
        canopy_latfs::Op::Setattr,
        canopy_latfs::Op::Write,
    ] {
        assert!(created.count(op) > 0, "cp -a used {}", op.name());
    }

    run("rm", &[std::path::Path::new("-rf"), &mount.path().join("copy")]);
    assert!(!copy.exists(), "rm -rf through the mount removed the copy");
}

#[test]
fn rm_rf_through_the_mount_removes_a_tree_deeper_than_path_max() {
    if !fuse_available() {
        return;
    }
    let source = tempfile::tempdir().unwrap();
    let tree = hostile_tree(source.path());
    let mount = TestMount::new(source.path(), |_| {});
    run(
        "rm",
        &[std::path::Path::new("-rf"), &mount.path().join("tree/deep"), &mount.path().join("tree/sub")],
    );
    assert!(!tree.join("deep").exists());
    assert!(!tree.join("sub").exists());
    assert!(tree.join("sizes/f70000").exists(), "nothing else went");
}

#[test]
fn each_kind_of_change_reaches_the_source() {
    if !fuse_available() {
        return;
    }
    let source = tempfile::tempdir().unwrap();
    let mount = TestMount::new(source.path(), |_| {});
    let (src, mnt) = (source.path(), mount.path());

    fs::create_dir(mnt.join("dir")).unwrap();
    assert!(src.join("dir").is_dir());
    fs::write(mnt.join("dir/file"), b"hello").unwrap();
    OpenOptions::new().append(true).open(mnt.join("dir/file")).unwrap().write_all(b" world").unwrap();
    assert_eq!(fs::read(src.join("dir/file")).unwrap(), b"hello world");
    OpenOptions::new().write(true).open(mnt.join("dir/file")).unwrap().set_len(5).unwrap();
    assert_eq!(fs::read(src.join("dir/file")).unwrap(), b"hello");
    Command::new("truncate").args(["-s", "3"]).arg(mnt.join("dir/file")).status().unwrap();
    assert_eq!(fs::read(src.join("dir/file")).unwrap(), b"hel", "truncate by path");

    fs::set_permissions(mnt.join("dir/file"), fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(fs::metadata(src.join("dir/file")).unwrap().mode() & 0o7777, 0o640);
    let old = UNIX_EPOCH + Duration::new(1_234_567_890, 987_654_321);
    fs::File::options().write(true).open(mnt.join("dir/file")).unwrap().set_modified(old).unwrap();
    assert_eq!(fs::metadata(src.join("dir/file")).unwrap().modified().unwrap(), old);
    run(
        "touch",
        &[std::path::Path::new("-h"), std::path::Path::new("-d@1000000000.5"), &mnt.join("dir/file")],
    );
    assert_eq!(fs::metadata(src.join("dir/file")).unwrap().mtime(), 1_000_000_000);
    if is_root() {
        std::os::unix::fs::lchown(mnt.join("dir/file"), Some(4321), Some(8765)).unwrap();
        let meta = fs::metadata(src.join("dir/file")).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (4321, 8765));
    }

    symlink("file", mnt.join("dir/link")).unwrap();
    assert_eq!(fs::read_link(src.join("dir/link")).unwrap(), std::path::Path::new("file"));
    fs::hard_link(mnt.join("dir/file"), mnt.join("hard")).unwrap();
    assert_eq!(fs::metadata(src.join("hard")).unwrap().nlink(), 2);
    run("mkfifo", &[&mnt.join("fifo")]);
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &fs::symlink_metadata(src.join("fifo")).unwrap().file_type()
    ));

    fs::rename(mnt.join("dir/file"), mnt.join("moved")).unwrap();
    assert!(!src.join("dir/file").exists());
    assert_eq!(fs::read(src.join("moved")).unwrap(), b"hel");
    assert_eq!(fs::read(mnt.join("moved")).unwrap(), b"hel", "the moved file is found under its new name");
    fs::write(mnt.join("other"), b"other").unwrap();
    fs::rename(mnt.join("other"), mnt.join("moved")).unwrap();
    assert_eq!(fs::read(src.join("moved")).unwrap(), b"other", "rename replaced the target");
    assert_eq!(
        fs::read(mnt.join("hard")).unwrap(),
        b"hel",
        "the replaced file lives on through its hard link"
    );

    fs::write(mnt.join("left"), b"L").unwrap();
    fs::write(mnt.join("right"), b"R").unwrap();
    let noreplace = renameat_with(CWD, mnt.join("left"), CWD, mnt.join("right"), RenameFlags::NOREPLACE);
    assert_eq!(noreplace, Err(rustix::io::Errno::EXIST));
    renameat_with(CWD, mnt.join("left"), CWD, mnt.join("right"), RenameFlags::EXCHANGE).unwrap();
    assert_eq!(fs::read(src.join("left")).unwrap(), b"R");
    assert_eq!(fs::read(mnt.join("right")).unwrap(), b"L");

    fs::remove_file(mnt.join("dir/link")).unwrap();
    fs::remove_dir(mnt.join("dir")).unwrap();
    fs::remove_file(mnt.join("hard")).unwrap();
    assert!(!src.join("dir").exists() && !src.join("hard").exists());
    let error = fs::remove_dir(mnt.join("moved")).unwrap_err();
    assert_eq!(error.raw_os_error(), Some(libc::ENOTDIR), "errors come back from the source");
}

#[test]
fn a_file_unlinked_while_open_answers_fstat_and_fchmod_through_its_descriptor() {
    if !fuse_available() {
        return;
    }
    let source = tempfile::tempdir().unwrap();
    let mount = TestMount::new(source.path(), |_| {});
    let path = mount.path().join("open");
    fs::write(&path, b"kept while open").unwrap();
    let mut file = OpenOptions::new().read(true).write(true).open(&path).unwrap();
    fs::remove_file(&path).unwrap();
    let meta = file.metadata().expect("fstat of an unlinked open file (was ESTALE)");
    assert_eq!((meta.nlink(), meta.len()), (0, 15));
    file.set_permissions(fs::Permissions::from_mode(0o600)).expect("fchmod of an unlinked open file");
    assert_eq!(file.metadata().unwrap().mode() & 0o7777, 0o600);
    std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0)).unwrap();
    file.write_all(b"!").unwrap();
    let mut again = fs::File::open(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file)))
        .expect("reopened through /proc/self/fd");
    let mut contents = String::new();
    std::io::Read::read_to_string(&mut again, &mut contents).unwrap();
    assert_eq!(contents, "kept while open!");
}
