//! A focused POSIX suite on the mount: the errno of the common failing calls (pjdfstest-style),
//! permission checks as another user, file data, special files, and readdir across splits.

use std::ffi::CString;
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use super::common::root_or_skip;
use super::support::{TestCluster, TestMount, canopy_ok, fuse_available};

/// The errno a call failed with (panics when it succeeded).
#[track_caller]
fn errno<T: std::fmt::Debug>(result: std::io::Result<T>) -> i32 {
    match result {
        Ok(value) => panic!("expected a failure, got {value:?}"),
        Err(error) => error.raw_os_error().expect("an OS error"),
    }
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> std::io::Result<()> {
    let (from, to) = (c_path(from), c_path(to));
    // SAFETY: both paths are valid NUL-terminated strings; AT_FDCWD resolves them relative to cwd.
    let status =
        unsafe { libc::renameat2(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), flags) };
    if status == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

#[test]
fn failing_calls_return_the_errno_posix_names() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(2, 16_000);
    let mount = TestMount::new(&cluster, &[]);
    let m = mount.path();

    fs::create_dir(m.join("d")).unwrap();
    assert_eq!(errno(fs::create_dir(m.join("d"))), libc::EEXIST);
    fs::File::create_new(m.join("d/f")).unwrap();
    assert_eq!(errno(fs::File::create_new(m.join("d/f"))), libc::EEXIST);

    assert_eq!(errno(fs::File::open(m.join("d/missing"))), libc::ENOENT);
    assert_eq!(errno(fs::symlink_metadata(m.join("missing"))), libc::ENOENT);
    assert_eq!(errno(fs::remove_file(m.join("d/missing"))), libc::ENOENT);
    assert_eq!(errno(fs::remove_dir(m.join("missing"))), libc::ENOENT);
    assert_eq!(errno(fs::File::create(m.join("missing/f"))), libc::ENOENT);

    assert_eq!(errno(fs::remove_dir(m.join("d"))), libc::ENOTEMPTY);
    assert_eq!(errno(fs::remove_dir(m.join("d/f"))), libc::ENOTDIR);
    assert_eq!(errno(fs::remove_file(m.join("d"))), libc::EISDIR);
    assert_eq!(errno(fs::symlink_metadata(m.join("d/f/x"))), libc::ENOTDIR);
    assert_eq!(errno(fs::create_dir(m.join("d/f/x"))), libc::ENOTDIR);

    // rename(2)'s type rules.
    fs::create_dir_all(m.join("d/sub/deeper")).unwrap();
    fs::create_dir(m.join("e")).unwrap();
    fs::create_dir(m.join("empty")).unwrap();
    assert_eq!(errno(fs::rename(m.join("d"), m.join("d/sub/inside"))), libc::EINVAL);
    assert_eq!(errno(fs::rename(m.join("d/f"), m.join("e"))), libc::EISDIR);
    assert_eq!(errno(fs::rename(m.join("e"), m.join("d/f"))), libc::ENOTDIR);
    assert_eq!(errno(fs::rename(m.join("e"), m.join("d"))), libc::ENOTEMPTY);
    fs::rename(m.join("e"), m.join("empty")).unwrap();
    assert!(m.join("empty").is_dir() && !m.join("e").exists(), "an empty directory is replaced");
    fs::rename(m.join("d/f"), m.join("d/f")).unwrap();
    fs::File::create_new(m.join("other")).unwrap();
    assert_eq!(errno(renameat2(&m.join("other"), &m.join("d/f"), libc::RENAME_NOREPLACE)), libc::EEXIST);
    assert_eq!(errno(renameat2(&m.join("other"), &m.join("d/f"), libc::RENAME_EXCHANGE)), libc::EINVAL);
    fs::rename(m.join("other"), m.join("d/f")).unwrap();
    assert!(!m.join("other").exists() && m.join("d/f").is_file(), "a file replaces a file");

    // Names: 255 bytes is the limit. Hard links: not to a directory, not onto an existing name.
    let longest = "n".repeat(255);
    fs::File::create_new(m.join(&longest)).unwrap();
    assert_eq!(errno(fs::File::create_new(m.join("n".repeat(256)))), libc::ENAMETOOLONG);
    assert_eq!(errno(fs::symlink_metadata(m.join("n".repeat(256)))), libc::ENAMETOOLONG);
    fs::hard_link(m.join(&longest), m.join("hard")).unwrap();
    assert_eq!(fs::metadata(m.join("hard")).unwrap().nlink(), 2);
    assert_eq!(errno(fs::hard_link(m.join("d"), m.join("hard-dir"))), libc::EPERM);
    assert_eq!(errno(fs::hard_link(m.join(&longest), m.join("hard"))), libc::EEXIST);
    assert_eq!(errno(fs::hard_link(m.join("missing"), m.join("hard2"))), libc::ENOENT);
    let odd = std::ffi::OsStr::from_bytes(b"new\nline \xff\xfe");
    fs::write(m.join(odd), b"odd name").unwrap();
    assert_eq!(fs::read(m.join(odd)).unwrap(), b"odd name");
}

#[test]
fn symlinks_special_files_and_file_data() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(2, 16_000);
    let mount = TestMount::new(&cluster, &[]);
    let m = mount.path();

    // Symlinks keep their target; the kernel follows them.
    fs::write(m.join("target"), b"pointed at").unwrap();
    symlink("target", m.join("link")).unwrap();
    symlink("../nowhere/\u{e9}", m.join("dangling")).unwrap();
    assert_eq!(fs::read_link(m.join("link")).unwrap(), Path::new("target"));
    assert_eq!(fs::read_link(m.join("dangling")).unwrap(), Path::new("../nowhere/\u{e9}"));
    assert!(fs::symlink_metadata(m.join("link")).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(m.join("link")).unwrap(), b"pointed at");
    assert_eq!(errno(fs::metadata(m.join("dangling"))), libc::ENOENT);

    // FIFOs are nodes here; their data never reaches the servers.
    let fifo = c_path(&m.join("fifo"));
    // SAFETY: a valid path string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o640) }, 0);
    let meta = fs::symlink_metadata(m.join("fifo")).unwrap();
    assert_eq!(meta.mode() & libc::S_IFMT, libc::S_IFIFO);
    assert_eq!(meta.mode() & 0o777, 0o640 & !umask());

    // Data: spans several 64 KiB chunks; append, overwrite, shrink and grow again.
    let body: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    fs::write(m.join("data"), &body).unwrap();
    assert_eq!(fs::read(m.join("data")).unwrap(), body);
    let mut expected = body.clone();
    fs::OpenOptions::new().append(true).open(m.join("data")).unwrap().write_all(b"tail").unwrap();
    expected.extend_from_slice(b"tail");
    let mut file = fs::OpenOptions::new().read(true).write(true).open(m.join("data")).unwrap();
    file.seek(SeekFrom::Start(65_530)).unwrap();
    file.write_all(b"across the chunk boundary").unwrap();
    expected[65_530..65_555].copy_from_slice(b"across the chunk boundary");
    file.sync_all().unwrap();
    drop(file);
    assert_eq!(fs::read(m.join("data")).unwrap(), expected);
    assert_eq!(fs::metadata(m.join("data")).unwrap().len(), expected.len() as u64);
    let file = fs::OpenOptions::new().write(true).open(m.join("data")).unwrap();
    file.set_len(1_000).unwrap();
    file.set_len(5_000).unwrap();
    drop(file);
    let regrown = fs::read(m.join("data")).unwrap();
    assert_eq!(regrown[..1_000], expected[..1_000]);
    assert!(regrown[1_000..].iter().all(|&b| b == 0) && regrown.len() == 5_000, "grown back with zeros");
    fs::File::create(m.join("data")).unwrap();
    assert_eq!(fs::metadata(m.join("data")).unwrap().len(), 0, "O_TRUNC empties the file");

    // A file unlinked while open stays readable until closed; the name is free at once.
    fs::write(m.join("open"), b"still here").unwrap();
    let mut open = fs::File::open(m.join("open")).unwrap();
    fs::remove_file(m.join("open")).unwrap();
    assert!(!m.join("open").exists());
    fs::write(m.join("open"), b"new").unwrap();
    let mut kept = String::new();
    open.read_to_string(&mut kept).unwrap();
    assert_eq!(kept, "still here");
    drop(open);
    assert_eq!(fs::read(m.join("open")).unwrap(), b"new");

    // Another mount (another client) sees what was written once the writer closed the file.
    let other = TestMount::new(&cluster, &[]);
    assert_eq!(fs::read(other.path().join("target")).unwrap(), b"pointed at");
    assert_eq!(fs::read_link(other.path().join("link")).unwrap(), Path::new("target"));

    // A tree copied in reads back identical (GNU diff as the oracle).
    let local = tempfile::tempdir().unwrap();
    fs::create_dir_all(local.path().join("tree/a/b")).unwrap();
    for (i, name) in ["tree/one", "tree/a/two", "tree/a/b/three", "tree/empty"].iter().enumerate() {
        fs::write(local.path().join(name), vec![b'x' + i as u8; i * 40_000]).unwrap();
    }
    let copied = Command::new("cp").arg("-r").arg(local.path().join("tree")).arg(m).status().unwrap();
    assert!(copied.success());
    let diff =
        Command::new("diff").arg("-r").arg(local.path().join("tree")).arg(m.join("tree")).output().unwrap();
    assert!(diff.status.success(), "{}", String::from_utf8_lossy(&diff.stdout));
}

fn umask() -> u32 {
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    rustix::process::umask(old);
    old.bits()
}

/// Runs `script` with sh as user and group 65534 (nobody); returns (exit ok, stderr).
fn as_nobody(script: &str) -> (bool, String) {
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", script])
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn permission_bits_owners_and_groups_are_enforced() {
    if !fuse_available() || !root_or_skip("act as another user") {
        return;
    }
    let cluster = TestCluster::start(2, 16_000);
    let mount = TestMount::new(&cluster, &["--allow-other"]);
    let m = mount.path();
    let mode =
        |path: &str, bits: u32| fs::set_permissions(m.join(path), fs::Permissions::from_mode(bits)).unwrap();
    fs::create_dir(m.join("private")).unwrap();
    mode("private", 0o700);
    fs::create_dir(m.join("public")).unwrap();
    mode("public", 0o755);
    fs::write(m.join("public/secret"), b"root only").unwrap();
    mode("public/secret", 0o600);
    fs::create_dir(m.join("sticky")).unwrap();
    mode("sticky", 0o1777);
    fs::write(m.join("sticky/roots"), b"").unwrap();
    fs::create_dir(m.join("open")).unwrap();
    mode("open", 0o777);

    let at = |path: &str| m.join(path).display().to_string();
    for (script, message) in [
        (format!("ls {}", at("private")), "Permission denied"),
        (format!("cat {}", at("public/secret")), "Permission denied"),
        (format!("touch {}", at("public/mine")), "Permission denied"),
        (format!("mkdir {}", at("public/mine")), "Permission denied"),
        (format!("rm -f {}", at("public/secret")), "Permission denied"),
        (format!("chmod 666 {}", at("public/secret")), "Operation not permitted"),
        (format!("rm -f {}", at("sticky/roots")), "Operation not permitted"),
    ] {
        let (ok, stderr) = as_nobody(&script);
        assert!(!ok && stderr.contains(message), "{script}: {stderr}");
    }
    assert!(
        m.join("public/secret").exists() && m.join("sticky/roots").exists(),
        "refused calls changed nothing"
    );

    let (ok, stderr) = as_nobody(&format!("echo mine > {} && mkdir {}", at("open/mine"), at("open/dir")));
    assert!(ok, "{stderr}");
    for created in ["open/mine", "open/dir"] {
        let meta = fs::metadata(m.join(created)).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534), "{created} belongs to its creator");
    }
    assert_eq!(fs::read(m.join("open/mine")).unwrap(), b"mine\n");
    let (ok, stderr) = as_nobody(&format!("chmod 600 {} && rm {}", at("open/mine"), at("open/mine")));
    assert!(ok, "the owner may chmod and remove: {stderr}");

    // A set-group-ID directory gives new entries its group; new directories inherit the bit.
    fs::create_dir(m.join("group")).unwrap();
    std::os::unix::fs::chown(m.join("group"), None, Some(1234)).unwrap();
    mode("group", 0o2775);
    fs::write(m.join("group/file"), b"").unwrap();
    fs::create_dir(m.join("group/sub")).unwrap();
    assert_eq!(fs::metadata(m.join("group/file")).unwrap().gid(), 1234);
    let sub = fs::metadata(m.join("group/sub")).unwrap();
    assert_eq!((sub.gid(), sub.mode() & 0o2000), (1234, 0o2000));

    // The service stored what the mount showed (read through the client library).
    let stat = cluster.stat("/open/dir");
    assert_eq!((stat["uid"].as_u64(), stat["mode"].as_u64()), (Some(65534), Some(0o755)));
}

/// Every entry of `dir` through opendir/readdir, with telldir before each.
struct Listing {
    dir: *mut libc::DIR,
}

impl Listing {
    fn open(path: &Path) -> Listing {
        let path = c_path(path);
        // SAFETY: a valid path string; the result is checked.
        let dir = unsafe { libc::opendir(path.as_ptr()) };
        assert!(!dir.is_null(), "opendir: {}", std::io::Error::last_os_error());
        Listing { dir }
    }

    /// Up to `count` names (without . and ..).
    fn read(&mut self, count: usize) -> Vec<Vec<u8>> {
        let mut names = Vec::new();
        while names.len() < count {
            // SAFETY: `dir` is an open directory stream; the entry is valid until the next call.
            let entry = unsafe { libc::readdir(self.dir) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated.
            let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) }.to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(name);
            }
        }
        names
    }

    fn tell(&self) -> libc::c_long {
        // SAFETY: an open directory stream.
        unsafe { libc::telldir(self.dir) }
    }

    fn seek(&mut self, position: libc::c_long) {
        // SAFETY: an open directory stream and a position telldir gave for it.
        unsafe { libc::seekdir(self.dir, position) }
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        // SAFETY: closed once.
        unsafe { libc::closedir(self.dir) };
    }
}

#[test]
fn readdir_is_complete_and_duplicate_free_while_the_directory_splits() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(2, 16_000);
    // One partition that splits above 2500 entries: more than two pages of 1024 before the split.
    let threshold = 2_500;
    canopy_ok(&[
        "dirsvc".as_ref(),
        "mkdir".as_ref(),
        "--cluster".as_ref(),
        cluster.dir.as_os_str(),
        "--partitions".as_ref(),
        "1".as_ref(),
        "--split-threshold".as_ref(),
        threshold.to_string().as_ref(),
        "/grow".as_ref(),
    ]);
    let create = |names: &[String]| {
        // Four concurrent creators (client library processes) so group commit shares the syncs.
        let chunks: Vec<Vec<String>> =
            names.chunks(names.len().div_ceil(4)).map(<[String]>::to_vec).collect();
        let creators: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let mut command = super::common::canopy();
                command.args(["dirsvc", "create", "--cluster"]).arg(&cluster.dir);
                command.args(chunk.iter().map(|n| format!("/grow/{n}")));
                command.spawn().unwrap()
            })
            .collect();
        for mut creator in creators {
            assert!(creator.wait().unwrap().success());
        }
    };
    let first: Vec<String> = (0..threshold).map(|i| format!("first-{i:05}")).collect();
    create(&first);
    let mount = TestMount::new(&cluster, &[]);
    let grow = mount.path().join("grow");

    let mut listing = Listing::open(&grow);
    let head = listing.read(10);
    let position = listing.tell();
    let next = listing.read(5);
    listing.seek(position);
    assert_eq!(listing.read(5), next, "seekdir to a telldir position resumes there");
    let mut seen = head;
    seen.extend(next);
    seen.extend(listing.read(1_100 - seen.len()));

    // The partition splits (and the half past our cursor moves to another server) mid-listing.
    let second: Vec<String> = (0..600).map(|i| format!("second-{i:05}")).collect();
    create(&second);
    super::support::wait_until("the split", std::time::Duration::from_secs(60), || {
        let stat = cluster.stat("/grow");
        let partitions = stat["partitions"].as_array().unwrap();
        partitions.iter().filter(|p| p["active"] == true).count() == 2
            && partitions.iter().all(|p| p["splitting"] == false)
    });
    seen.extend(listing.read(usize::MAX));

    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "no entry listed twice");
    for name in &first {
        assert!(
            unique.binary_search(&name.as_bytes().to_vec()).is_ok(),
            "{name} was present throughout but not listed"
        );
    }
    let created: std::collections::BTreeSet<&[u8]> =
        first.iter().chain(&second).map(|n| n.as_bytes()).collect();
    assert!(unique.iter().all(|n| created.contains(n.as_slice())), "only created names are listed");
    // Read afresh after the split: exactly everything.
    let all = fs::read_dir(&grow).unwrap().count();
    assert_eq!(all, first.len() + second.len());
}
