//! Interrupted copies. `canopy cp -a SRC DEST` is killed with SIGKILL at moments chosen by its
//! progress (once DEST holds N entries, N drawn at random), then the same command is run again:
//! DEST then equals SRC by every oracle, no DEST/SRC appeared (the rerun resumed in place), no
//! temporaries or marker are left, and the files the interrupted runs completed were not copied
//! again. After every kill, each file under its final name is complete. Whether a run was really
//! interrupted is known for sure (it was killed before it exited), whatever the machine's speed.

mod common;

use common::interrupt::{entries, kill_at};
use common::tree_oracles::assert_same_tree;
use common::*;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Small files in many directories, files of many chunks, hard links, a sparse file, a symlink.
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
        std::fs::write(root.join(format!("d{:02}/big{b}", b * 10)), data).unwrap();
    }
    std::fs::hard_link(root.join("d00/big0"), root.join("d05/big0-link")).unwrap();
    std::fs::hard_link(root.join("d01/f01"), root.join("d02/f01-link")).unwrap();
    let sparse = std::fs::File::create(root.join("sparse")).unwrap();
    sparse.set_len(64 << 20).unwrap();
    rustix::io::pwrite(&sparse, b"data", 32 << 20).unwrap();
    std::os::unix::fs::symlink("d00/f00", root.join("link")).unwrap();
    root
}

/// `canopy cp -a` with one worker and small chunks (many steps to be interrupted at).
fn cp(src: &Path, dest: &Path) -> Command {
    let mut cmd = canopy();
    cmd.args(["cp", "-a", "-j", "1", "--chunk-size", "64K"]).arg(src).arg(dest);
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    cmd
}

/// Regular files of `dir` by path relative to it, canopy's temporaries left out.
fn files(dir: &Path) -> BTreeMap<PathBuf, std::fs::Metadata> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(list) = std::fs::read_dir(&d) else { continue };
        for e in list.flatten() {
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
fn assert_no_partial_file(src: &Path, dst: &Path, context: &str) {
    for (rel, _) in files(dst) {
        let (want, got) = (read(&src.join(&rel)), read(&dst.join(&rel)));
        assert!(
            want == got,
            "{context}: {} is visible but not complete ({} of {} bytes)",
            rel.display(),
            got.len(),
            want.len()
        );
    }
}

/// Files complete before the rerun, with their inodes (one name only: a hard link may be redone).
fn complete(src: &Path, dst: &Path) -> Vec<(PathBuf, u64)> {
    files(dst)
        .into_iter()
        .filter(|(rel, meta)| {
            let source = std::fs::metadata(src.join(rel)).unwrap();
            source.nlink() == 1 && source.mtime_nsec() == meta.mtime_nsec() && source.len() == meta.len()
        })
        .map(|(rel, meta)| (rel, meta.ino()))
        .collect()
}

fn leftovers(base: &Path) -> String {
    let mut find = gnu("find");
    find.arg(base).args(["-name", ".canopy-tmp-*"]);
    String::from_utf8_lossy(&run(find, None).stdout).into_owned()
}

/// Kills the copy at each of `thresholds` in turn (each run the same command), then lets it
/// finish; returns how many runs were really interrupted.
#[track_caller]
fn interrupt_then_finish(base: &Path, src: &Path, dest: &Path, thresholds: &[usize]) -> usize {
    let mut interrupted = 0;
    for (i, &threshold) in thresholds.iter().enumerate() {
        if !kill_at(cp(src, dest), dest, threshold) {
            break; // finished on its own: a rerun now would copy into DEST/SRC, as cp does
        }
        interrupted += 1;
        assert_no_partial_file(src, dest, &format!("after kill {i} at {threshold} entries"));
    }
    if interrupted == 0 {
        return 0;
    }
    let kept = complete(src, dest);
    let out = cp(src, dest).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dest.join("src").exists(), "the rerun resumed in place, not in DEST/SRC");
    assert_same_tree(src, dest);
    assert_eq!(leftovers(base), "", "temporaries or the marker left behind");
    for (rel, ino) in &kept {
        let now = std::fs::metadata(dest.join(rel)).unwrap().ino();
        assert_eq!(now, *ino, "{} was complete and was copied again", rel.display());
    }
    interrupted
}

#[test]
fn the_same_command_after_kill_9_resumes_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let total = entries(&src);
    let mut rng = fastrand::Rng::with_seed(42);
    let mut interrupted = 0;
    for round in 0..4 {
        // A DEST that does not exist yet: the first run makes it, a rerun must not nest in it.
        let dest = tmp.path().join(format!("copy{round}"));
        let kills: Vec<usize> = (0..1 + round % 2).map(|_| rng.usize(1..total / 2)).collect();
        let mut kills = kills;
        kills.sort_unstable();
        interrupted += interrupt_then_finish(tmp.path(), &src, &dest, &kills);
    }
    assert!(interrupted >= 4, "only {interrupted} runs were interrupted");
}

#[test]
fn an_interrupted_copy_into_a_directory_resumes_there() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let archive = tmp.path().join("archive");
    std::fs::create_dir(&archive).unwrap();
    std::fs::write(archive.join("unrelated"), b"x").unwrap();
    let dest = archive.join("src");
    let mut killed = 0;
    for threshold in [3, entries(&src) / 3] {
        if kill_at(cp(&src, &archive), &archive, threshold) {
            killed += 1;
            assert_no_partial_file(&src, &dest, &format!("after a kill at {threshold} entries"));
        }
    }
    assert!(killed > 0);
    let out = cp(&src, &archive).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_tree(&src, &dest);
    assert_eq!(leftovers(tmp.path()), "");
    assert!(archive.join("unrelated").exists());
}

#[test]
fn a_completed_copy_is_copied_again_as_cp_does() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("f"), b"x").unwrap();
    let dest = tmp.path().join("new");
    for _ in 0..2 {
        let out = cp(&src, &dest).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // No marker once complete: the second run copied into new/src, like GNU cp.
    assert!(dest.join("f").exists() && dest.join("src/f").exists());
    assert_eq!(leftovers(tmp.path()), "");
}

#[test]
fn verbose_says_what_was_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let dest = tmp.path().join("copy");
    assert!(kill_at(cp(&src, &dest), &dest, entries(&src) / 2), "the copy was interrupted");
    let kept = complete(&src, &dest).len();
    let mut cmd = cp(&src, &dest);
    cmd.arg("-v").stdout(std::process::Stdio::piped());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("resuming the interrupted copy in ")), "{stdout}");
    let summary = stdout.lines().find(|l| l.starts_with("kept ")).expect("a summary line");
    let count: usize = summary.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(count >= kept, "{summary}: at least the {kept} complete single-name files");
}
