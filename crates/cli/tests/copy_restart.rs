//! Interrupted copies. `canopy cp` is killed with SIGKILL at random moments, run after run on the
//! same destination: after every kill, each file under its final name is a complete copy (nothing
//! half-written is ever visible); a last, uninterrupted run completes the tree — identical by every
//! oracle — without copying again the files that were already complete, and leaves no temporaries.

mod common;

use common::tree_oracles::assert_same_tree;
use common::*;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Small files in many directories, a few files of several chunks, hard links, a sparse file.
fn source(base: &Path) -> PathBuf {
    let root = base.join("src");
    let mut rng = fastrand::Rng::with_seed(7);
    for d in 0..40 {
        let dir = root.join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..30 {
            let mut data = vec![0u8; rng.usize(0..48 << 10)];
            rng.fill(&mut data);
            std::fs::write(dir.join(format!("f{f:02}")), data).unwrap();
        }
    }
    for b in 0..4 {
        let mut data = vec![0u8; (3 << 20) + b];
        rng.fill(&mut data);
        std::fs::write(root.join(format!("big{b}")), data).unwrap();
    }
    std::fs::hard_link(root.join("big0"), root.join("d00/big0-link")).unwrap();
    std::fs::hard_link(root.join("d01/f01"), root.join("d02/f01-link")).unwrap();
    let sparse = std::fs::File::create(root.join("sparse")).unwrap();
    sparse.set_len(64 << 20).unwrap();
    rustix::io::pwrite(&sparse, b"data", 32 << 20).unwrap();
    std::os::unix::fs::symlink("d00/f00", root.join("link")).unwrap();
    root
}

fn cp(src: &Path, archive: &Path) -> std::process::Command {
    let mut cmd = canopy();
    cmd.args(["cp", "-j", "4", "--chunk-size", "512K"]).arg(src).arg(archive);
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    cmd
}

/// Regular files of `dir` by path relative to it, canopy's temporaries left out.
fn files(dir: &Path) -> BTreeMap<PathBuf, std::fs::Metadata> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() && !e.file_name().to_string_lossy().starts_with(".canopy-tmp-") {
                found.insert(e.path().strip_prefix(dir).unwrap().to_path_buf(), meta);
            }
        }
    }
    found
}

/// The content of a file, read without moving its access time (compared by the oracles later).
fn read(path: &Path) -> Vec<u8> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut data = Vec::new();
    let mut file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOATIME).open(path).unwrap();
    file.read_to_end(&mut data).unwrap();
    data
}

/// Every file visible under its final name has the source's full content.
#[track_caller]
fn assert_no_partial_file(src: &Path, dst: &Path, kill: usize) {
    for (rel, _) in files(dst) {
        let (want, got) = (read(&src.join(&rel)), read(&dst.join(&rel)));
        assert!(
            want == got,
            "after kill {kill}: {} is visible but not complete ({} of {} bytes)",
            rel.display(),
            got.len(),
            want.len()
        );
    }
}

#[test]
fn killed_copies_resume_without_partial_files_or_recopies() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let archive = tmp.path().join("archive");
    std::fs::create_dir(&archive).unwrap();
    let dst = archive.join("src");
    let mut rng = fastrand::Rng::with_seed(42);
    let mut interrupted = 0;
    for kill in 0..8 {
        let mut child = cp(&src, &archive).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(rng.u64(2..60)));
        if child.try_wait().unwrap().is_none() {
            interrupted += 1;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert_no_partial_file(&src, &dst, kill);
    }
    assert!(interrupted > 0, "no run was interrupted: the tree is too small to test anything");

    // Files complete before the last run (one name only: a hard link may legitimately be redone).
    let complete: Vec<(PathBuf, u64)> = files(&dst)
        .into_iter()
        .filter(|(rel, meta)| {
            let source = std::fs::metadata(src.join(rel)).unwrap();
            source.nlink() == 1 && source.mtime_nsec() == meta.mtime_nsec()
        })
        .map(|(rel, meta)| (rel, meta.ino()))
        .collect();
    let out = cp(&src, &archive).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_tree(&src, &dst);
    for (rel, ino) in &complete {
        assert_eq!(
            std::fs::metadata(dst.join(rel)).unwrap().ino(),
            *ino,
            "{} was copied again",
            rel.display()
        );
    }
    let mut find = gnu("find");
    find.arg(&dst).args(["-name", ".canopy-tmp-*"]);
    assert!(run(find, None).stdout.is_empty(), "temporaries left behind");
}
