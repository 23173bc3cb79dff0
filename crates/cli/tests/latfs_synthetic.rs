//! `canopy latfs --synthetic SPEC`: the mounted tree is exactly what the spec and crates/latfs/README.md
//! say. The oracle is GNU find (and du) over the mount, compared with a small recursive generator here
//! that builds the expected tree from the documented rules, independently of latfs's inode arithmetic.
//! Skipped only where /dev/fuse does not exist.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{CStr, CString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{canopy, fuse_available, gnu};

/// Runs a command to completion, stdin closed.
fn run(command: &mut Command) -> Output {
    command.stdin(Stdio::null()).output().unwrap()
}

/// A synthetic tree mounted by a foreground `canopy latfs` server, unmounted (SIGTERM) when dropped.
struct Mount {
    server: Child,
    scratch: tempfile::TempDir,
    mountpoint: tempfile::TempDir,
}

impl Mount {
    fn new(spec: &str) -> Mount {
        let (scratch, mountpoint) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ready = scratch.path().join("ready");
        let server = canopy()
            .args(["latfs", "--delay", "0", "--synthetic", spec, "--ready-file"])
            .arg(&ready)
            .arg("--stats-file")
            .arg(scratch.path().join("stats.json"))
            .arg(mountpoint.path())
            .stdout(Stdio::null())
            .stderr(fs::File::create(scratch.path().join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let mut mount = Mount { server, scratch, mountpoint };
        let start = Instant::now();
        while !ready.exists() {
            if let Some(status) = mount.server.try_wait().unwrap() {
                panic!("latfs exited with {status} before mounting: {}", mount.stderr());
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no ready file: {}", mount.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
        mount
    }

    fn path(&self) -> &Path {
        self.mountpoint.path()
    }

    fn stderr(&self) -> String {
        fs::read_to_string(self.scratch.path().join("stderr")).unwrap_or_default()
    }

    /// The request counters, written by the server on SIGUSR1.
    fn counters(&self) -> serde_json::Value {
        let stats = self.scratch.path().join("stats.json");
        let _ = fs::remove_file(&stats);
        // SAFETY: kill(2) on the server this test spawned.
        assert_eq!(unsafe { libc::kill(self.server.id() as i32, libc::SIGUSR1) }, 0);
        let start = Instant::now();
        loop {
            if let Ok(text) = fs::read_to_string(&stats)
                && let Ok(json) = serde_json::from_str(&text)
            {
                return json;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no stats file after SIGUSR1");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the server this test spawned.
        unsafe { libc::kill(self.server.id() as i32, libc::SIGTERM) };
        let status = self.server.wait().unwrap();
        if !std::thread::panicking() {
            assert!(status.success(), "latfs exit status {status}: {}", self.stderr());
        }
    }
}

// ---- The reference: the rules of crates/latfs/README.md ("What each entry is"), restated simply ----

const EPOCH: u64 = 1_700_000_000;
const SPREAD: u64 = 5 * 365 * 86_400;
const STEMS: [&str; 20] = [
    "data", "report", "main", "util", "index", "config", "test", "image", "log", "model", "core", "lib",
    "readme", "notes", "backup", "cache", "module", "chunk", "result", "sample",
];
const EXTENSIONS: [&str; 13] =
    [".c", ".h", ".py", ".rs", ".txt", ".json", ".log", ".dat", ".so", ".html", ".png", ".gz", ""];

/// The purposes a draw is made for, numbered as latfs numbers them.
const NAME: u64 = 1;
const KIND: u64 = 2;
const SIZE: u64 = 3;
const SIZE_LOW: u64 = 4;
const MODE: u64 = 5;
const MTIME: u64 = 6;
const ATIME: u64 = 7;
const CTIME: u64 = 8;

fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn draw(seed: u64, ino: u64, purpose: u64) -> u64 {
    splitmix(splitmix(seed ^ splitmix(ino)).wrapping_add(purpose.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

/// What GNU find prints for an entry with FIND_FORMAT.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Expected {
    path: String,
    kind: char,
    ino: u64,
    mode: String,
    nlink: u64,
    size: u64,
    blocks: u64,
    times: [String; 3],
    link: String,
}

const FIND_FORMAT: &str = "%P\\t%y\\t%i\\t%m\\t%n\\t%s\\t%b\\t%A@\\t%T@\\t%C@\\t%l\\n";

impl Expected {
    fn line(&self) -> String {
        let [atime, mtime, ctime] = &self.times;
        let (path, kind, ino, mode, nlink) = (&self.path, self.kind, self.ino, &self.mode, self.nlink);
        let (size, blocks, link) = (self.size, self.blocks, &self.link);
        format!("{path}\t{kind}\t{ino}\t{mode}\t{nlink}\t{size}\t{blocks}\t{atime}\t{mtime}\t{ctime}\t{link}")
    }
}

/// find's `%A@`-style time (10 fractional digits) of (access, modification, change) for `ino`.
fn times(seed: u64, ino: u64) -> [String; 3] {
    let nanos = |random: u64| (random >> 32) % 1_000_000_000;
    let modified = draw(seed, ino, MTIME);
    let mtime = EPOCH - modified % SPREAD;
    let later = |purpose, spread| {
        let random = draw(seed, ino, purpose);
        format!("{}.{:09}0", mtime + 1 + random % spread, nanos(random))
    };
    [later(ATIME, 30 * 86_400), format!("{mtime}.{:09}0", nanos(modified)), later(CTIME, 86_400)]
}

fn file_size(seed: u64, ino: u64) -> u64 {
    let bits = (draw(seed, ino, SIZE) % (1 << 20)).count_ones();
    if bits < 4 { 0 } else { ((1u64 << bits) + draw(seed, ino, SIZE_LOW) % (1 << bits)).min(256 * 1024) }
}

/// The shapes of one part, as the reference builds them: natural sizes only (no total=).
#[derive(Clone, Copy)]
enum Shape {
    Wide(u64, u64),
    Deep(u64, u32, u64),
    Flat(u64),
}

struct Reference {
    seed: u64,
    symlinks_ppm: u64,
    hardlinks_ppm: u64,
    next_ino: u64,
    entries: Vec<Expected>,
}

impl Reference {
    /// The tree of `parts` (named like latfs's composed parts when there are several).
    fn tree(parts: &[(&str, Shape)], seed: u64, symlinks_ppm: u64, hardlinks_ppm: u64) -> Vec<Expected> {
        let mut reference = Reference { seed, symlinks_ppm, hardlinks_ppm, next_ino: 1, entries: Vec::new() };
        match parts {
            [(_, shape)] => reference.dir(String::new(), *shape, 0),
            parts => {
                let names: Vec<String> = parts.iter().map(|(name, _)| name.to_string()).collect();
                reference.begin_dir(String::new(), 0, names.len() as u64);
                for (name, shape) in parts {
                    reference.dir(name.to_string(), *shape, 0);
                }
            }
        }
        reference.entries.sort();
        reference.entries
    }

    /// A directory of `shape` at `depth` in its part: itself, its files, its subdirectories in turn.
    fn dir(&mut self, path: String, shape: Shape, depth: u32) {
        let (files, subdirs): (u64, Vec<String>) = match shape {
            Shape::Wide(dirs, _) if depth == 0 => (0, (0..dirs).map(|i| format!("d{i:05}")).collect()),
            Shape::Wide(_, files) => (files, vec![]),
            Shape::Deep(fanout, levels, files) if depth < levels => {
                (files, (0..fanout).map(|i| format!("n{i}")).collect())
            }
            Shape::Deep(_, _, files) | Shape::Flat(files) => (files, vec![]),
        };
        self.begin_dir(path.clone(), files, subdirs.len() as u64);
        self.files(&path, files);
        for name in subdirs {
            self.dir(join(&path, &name), shape, depth + 1);
        }
    }

    fn begin_dir(&mut self, path: String, files: u64, subdirs: u64) {
        let ino = self.take_ino();
        let size = ((files + subdirs + 2) * 32).div_ceil(4096).max(1) * 4096;
        self.entries.push(Expected {
            path,
            kind: 'd',
            ino,
            mode: "755".into(),
            nlink: 2 + subdirs,
            size,
            blocks: size / 512,
            times: times(self.seed, ino),
            link: String::new(),
        });
    }

    /// File slots 0..count of the directory at `dir`: plain files, symbolic links to the slot before,
    /// and second names of the plain file before.
    fn files(&mut self, dir: &str, count: u64) {
        #[derive(PartialEq)]
        enum Drawn {
            File,
            Symlink,
            HardLink,
        }
        let mut previous: Option<(Drawn, usize, String)> = None;
        for index in 0..count {
            let ino = self.take_ino();
            let random = draw(self.seed, ino, NAME);
            let name = format!(
                "{}_{index:07}{}",
                STEMS[(random % 20) as usize],
                EXTENSIONS[((random >> 32) % 13) as usize]
            );
            let share = draw(self.seed, ino, KIND) % 1_000_000;
            let drawn = match index {
                0 => Drawn::File,
                _ if share < self.symlinks_ppm => Drawn::Symlink,
                _ if share < self.symlinks_ppm + self.hardlinks_ppm => Drawn::HardLink,
                _ => Drawn::File,
            };
            let path = join(dir, &name);
            let entry = match (&drawn, &previous) {
                (Drawn::Symlink, Some((_, _, target))) => Expected {
                    path,
                    kind: 'l',
                    ino,
                    mode: "777".into(),
                    nlink: 1,
                    size: target.len() as u64,
                    blocks: 0,
                    times: times(self.seed, ino),
                    link: target.clone(),
                },
                (Drawn::HardLink, Some((Drawn::File, at, _))) => {
                    self.entries[*at].nlink = 2;
                    Expected { path, ..self.entries[*at].clone() }
                }
                _ => {
                    let size = file_size(self.seed, ino);
                    let mode = match draw(self.seed, ino, MODE) % 16 {
                        0 => "755",
                        1 => "600",
                        _ => "644",
                    };
                    Expected {
                        path,
                        kind: 'f',
                        ino,
                        mode: mode.into(),
                        nlink: 1,
                        size,
                        blocks: size.div_ceil(4096) * 8,
                        times: times(self.seed, ino),
                        link: String::new(),
                    }
                }
            };
            self.entries.push(entry);
            previous = Some((drawn, self.entries.len() - 1, name));
        }
    }

    fn take_ino(&mut self) -> u64 {
        self.next_ino += 1;
        self.next_ino - 1
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") }
}

fn find_listing(root: &Path) -> Vec<String> {
    let output = run(gnu("find").arg(root).args(["-printf", FIND_FORMAT]));
    assert!(output.status.success(), "find: {}", String::from_utf8_lossy(&output.stderr));
    let mut lines: Vec<String> =
        String::from_utf8(output.stdout).unwrap().lines().map(String::from).collect();
    lines.sort();
    lines
}

fn assert_tree_is(mount: &Mount, expected: &[Expected]) {
    let mut want: Vec<String> = expected.iter().map(Expected::line).collect();
    want.sort();
    let got = find_listing(mount.path());
    if got != want {
        let (got_set, want_set): (BTreeSet<_>, BTreeSet<_>) = (got.iter().collect(), want.iter().collect());
        let extra: Vec<_> = got_set.difference(&want_set).take(5).collect();
        let missing: Vec<_> = want_set.difference(&got_set).take(5).collect();
        panic!(
            "{} entries, {} expected\nserved, not expected: {extra:#?}\nexpected, not served: {missing:#?}",
            got.len(),
            want.len()
        );
    }
}

/// `du -sb` (hard links once) or `du -sbl` (every name) of the mount, in bytes.
fn du_bytes(root: &Path, count_links: bool) -> u64 {
    let output = run(gnu("du").arg(if count_links { "-sbl" } else { "-sb" }).arg(root));
    assert!(output.status.success(), "du: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().split('\t').next().unwrap().parse().unwrap()
}

#[test]
fn gnu_find_lists_exactly_the_tree_the_spec_describes() {
    if !fuse_available() {
        return;
    }
    // The spec, and the same tree by the reference: parts, seed, symlink and hard-link shares (ppm).
    let cases = [
        ("deep:3x3x2,seed=9", Reference::tree(&[("", Shape::Deep(3, 3, 2))], 9, 10_000, 10_000)),
        (
            "flat:400,seed=2,symlinks=10%,hardlinks=15%",
            Reference::tree(&[("", Shape::Flat(400))], 2, 100_000, 150_000),
        ),
        (
            "wide:3x7+deep:2x2x3+flat:40+flat:5,seed=5,symlinks=15%,hardlinks=20%",
            Reference::tree(
                &[
                    ("wide-3x7", Shape::Wide(3, 7)),
                    ("deep-2x2x3", Shape::Deep(2, 2, 3)),
                    ("flat-40", Shape::Flat(40)),
                    ("flat-5", Shape::Flat(5)),
                ],
                5,
                150_000,
                200_000,
            ),
        ),
    ];
    for (spec, expected) in cases {
        let mount = Mount::new(spec);
        assert_tree_is(&mount, &expected);
        // Hard links: every second name is found by -links 2 and counted once by du.
        let linked = expected.iter().filter(|e| e.kind == 'f' && e.nlink == 2).count();
        let output = run(gnu("find").arg(mount.path()).args(["-type", "f", "-links", "2"]));
        assert_eq!(output.stdout.iter().filter(|&&b| b == b'\n').count(), linked, "{spec}");
        let mut inodes = BTreeMap::new();
        for entry in &expected {
            inodes.insert(entry.ino, entry.size);
        }
        let every_name: u64 = expected.iter().map(|e| e.size).sum();
        assert_eq!(
            du_bytes(mount.path(), false),
            inodes.values().sum::<u64>(),
            "{spec}: du counts inodes once"
        );
        assert_eq!(du_bytes(mount.path(), true), every_name, "{spec}: du -l counts every name");
        if spec.contains("hardlinks=20%") {
            assert!(linked > 5 && expected.iter().any(|e| e.kind == 'l'), "the case has links to check");
        }
    }
}

#[test]
fn the_same_spec_serves_the_same_tree_and_another_seed_another() {
    if !fuse_available() {
        return;
    }
    let first = find_listing(Mount::new("irregular:3000,seed=4").path());
    assert_eq!(first.len(), 3000);
    assert_eq!(find_listing(Mount::new("irregular:3000,seed=4").path()), first);
    assert_ne!(find_listing(Mount::new("irregular:3000,seed=5").path()), first);
}

/// The names of a directory in listing order, with the telldir position before each.
fn list_with_positions(dir: &Path) -> Vec<(libc::c_long, Vec<u8>)> {
    let path = CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: opendir/telldir/readdir/closedir on a stream this function owns; entry names are
    // copied out before the next readdir.
    unsafe {
        let stream = libc::opendir(path.as_ptr());
        assert!(!stream.is_null(), "opendir {}", dir.display());
        let mut listing = Vec::new();
        loop {
            let position = libc::telldir(stream);
            let entry = libc::readdir(stream);
            if entry.is_null() {
                break;
            }
            listing.push((position, CStr::from_ptr((*entry).d_name.as_ptr()).to_bytes().to_vec()));
        }
        libc::closedir(stream);
        listing
    }
}

#[test]
fn a_huge_directory_lists_in_many_requests_and_resumes_at_any_offset() {
    if !fuse_available() {
        return;
    }
    let files = 20_000;
    let mount = Mount::new("flat:20000,seed=3");
    let expected = Reference::tree(&[("", Shape::Flat(files))], 3, 10_000, 10_000);
    let mut by_slot: Vec<&Expected> = expected.iter().filter(|e| !e.path.is_empty()).collect();
    by_slot.sort_by_key(|e| e.path.split('_').nth(1).map(str::to_string));
    let mut want: Vec<Vec<u8>> = vec![b".".to_vec(), b"..".to_vec()];
    want.extend(by_slot.iter().map(|e| e.path.as_bytes().to_vec()));

    let readdirs_before = mount.counters()["requests"]["readdir"].as_u64().unwrap_or(0);
    let listing = list_with_positions(mount.path());
    let names: Vec<Vec<u8>> = listing.iter().map(|(_, name)| name.clone()).collect();
    assert_eq!(names, want, "the listing: ., .., the files by slot");
    let readdirs = mount.counters()["requests"]["readdir"].as_u64().unwrap() - readdirs_before;
    assert!(readdirs > 10, "{files} entries came in {readdirs} readdir requests");
    assert_eq!(list_with_positions(mount.path()), listing, "a second listing has the same names and offsets");

    let path = CString::new(mount.path().as_os_str().as_bytes()).unwrap();
    // SAFETY: as in list_with_positions; positions come from telldir on the same directory.
    unsafe {
        let stream = libc::opendir(path.as_ptr());
        assert!(!stream.is_null());
        for i in [19_000, 3, 0, 12_345, 1, 20_001, 7_777, 2] {
            let (position, name) = &listing[i];
            libc::seekdir(stream, *position);
            let entry = libc::readdir(stream);
            assert!(!entry.is_null(), "readdir after seekdir to entry {i}");
            assert_eq!(CStr::from_ptr((*entry).d_name.as_ptr()).to_bytes(), &name[..], "entry {i}");
        }
        libc::closedir(stream);
    }
}

fn described(spec: &str) -> serde_json::Value {
    let output = run(canopy().args(["latfs", "--synthetic", spec, "--describe"]));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn big_trees_are_counted_without_walking_them() {
    let described = described("wide:1000x100,total=1e8");
    assert_eq!(described["entries"], 100_000_000);
    assert_eq!(described["directories"], 1 + 990_099, "99,999,999 below the root, 101 a directory");
    assert_eq!(described["largest_directory"], 990_099);
    if !fuse_available() {
        return;
    }
    // statfs's inode count is the entry count: df -i on 10^9 entries answers at once.
    let mount = Mount::new("irregular:1e9,seed=7");
    let output = run(gnu("stat").args(["-f", "--format=%c"]).arg(mount.path()));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "1000000000");
    // Down its largest subtrees to a leaf: every level lists and every name looks up.
    let (mut dir, mut depth) = (mount.path().to_path_buf(), 0);
    loop {
        let entries: Vec<fs::DirEntry> = fs::read_dir(&dir).unwrap().map(Result::unwrap).collect();
        assert!(entries.iter().all(|e| fs::symlink_metadata(e.path()).is_ok()), "{}", dir.display());
        let Some(last) = entries.iter().filter(|e| e.file_type().unwrap().is_dir()).map(|e| e.path()).max()
        else {
            break;
        };
        (dir, depth) = (last, depth + 1);
        assert!(depth < 1000, "no leaf below {}", dir.display());
    }
    assert!(depth >= 5, "10^9 entries in power-law directories go deep: {depth}");
}

#[test]
fn an_irregular_tree_is_what_its_description_says() {
    if !fuse_available() {
        return;
    }
    let spec = "irregular:20000,seed=3";
    let description = described(spec);
    let mount = Mount::new(spec);
    let output = run(gnu("find").arg(mount.path()).args(["-printf", "%y %d %h\\n"]));
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len() as u64, description["entries"].as_u64().unwrap());
    let directories = lines.iter().filter(|l| l.starts_with("d ")).count() as u64;
    assert_eq!(directories, description["directories"].as_u64().unwrap());
    let depth = lines.iter().map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap()).max().unwrap();
    assert_eq!(depth, description["depth"].as_u64().unwrap());
    let mut children: BTreeMap<&str, u64> = BTreeMap::new();
    for line in lines.iter().skip(1) {
        *children.entry(line.splitn(3, ' ').nth(2).unwrap()).or_default() += 1;
    }
    assert_eq!(children.values().max().copied(), description["largest_directory"].as_u64());
    assert!(depth >= 4 && directories > 100, "an irregular tree: {description}");
}

#[test]
fn canopy_find_walk_and_du_over_a_synthetic_tree_match_gnu() {
    if !fuse_available() {
        return;
    }
    let mount = Mount::new("irregular:100000,seed=11");
    let root: PathBuf = mount.path().to_path_buf();
    let gnu_find = run(gnu("find").arg(&root));
    let canopy_find = run(canopy().arg("find").arg(&root));
    assert!(canopy_find.status.success(), "{}", String::from_utf8_lossy(&canopy_find.stderr));
    let (want, got) = (common::records(&gnu_find.stdout, b'\n'), common::records(&canopy_find.stdout, b'\n'));
    assert_eq!(want.len(), 100_000);
    common::assert_same_records(&got, &want, "canopy find vs find over irregular:100000");
    let types = run(gnu("find").arg(&root).args(["-printf", "%y\\n"]));
    let walk = run(canopy().args(["walk", "--json"]).arg(&root));
    assert!(walk.status.success(), "{}", String::from_utf8_lossy(&walk.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&walk.stdout).unwrap();
    for (kind, letter) in [("file", b'f'), ("dir", b'd'), ("symlink", b'l')] {
        let count = types.stdout.split(|&b| b == b'\n').filter(|line| *line == [letter]).count() as u64;
        assert_eq!(summary["by_type"][kind]["entries"].as_u64(), Some(count), "canopy walk's {kind} count");
    }
    let gnu_du = run(gnu("du").arg("-s").arg(&root));
    let canopy_du = run(canopy().args(["du", "-s"]).arg(&root));
    assert!(canopy_du.status.success(), "{}", String::from_utf8_lossy(&canopy_du.stderr));
    assert_eq!(String::from_utf8_lossy(&canopy_du.stdout), String::from_utf8_lossy(&gnu_du.stdout));
}

#[test]
fn bad_specs_and_misplaced_directories_are_usage_errors() {
    let mountpoint = tempfile::tempdir().unwrap();
    let cases: [(Vec<&std::ffi::OsStr>, &str); 3] = [
        (vec!["--synthetic".as_ref(), "wide:0x5".as_ref(), mountpoint.path().as_os_str()], "at least 1"),
        (vec!["--synthetic".as_ref(), "flat:5".as_ref()], "needs a MOUNTPOINT"),
        (
            vec!["--synthetic".as_ref(), "flat:5".as_ref(), "/tmp".as_ref(), mountpoint.path().as_os_str()],
            "only the MOUNTPOINT",
        ),
    ];
    for (args, message) in cases {
        let output = run(canopy().arg("latfs").args(&args));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
