//! The transfer run in-process, for what the command line cannot show: how many chunk jobs wait
//! at once, and that a failing big file is reported once.

use super::*;
use canopy_engine::ThreadPolicy;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn bytes(path: &Path) -> Vec<u8> {
    path.as_os_str().as_bytes().to_vec()
}

fn copy_flags(chunk_size: u64) -> CopyFlags {
    CopyFlags { verify: false, fsync: false, chunk_size }
}

/// Copies `src` to `dst` (as `cp -a` would) with 4 workers; returns the transfer and its outcome.
fn copy(src: &Path, dst: &Path, chunk_size: u64) -> (Transfer, Outcome) {
    let cluster = Cluster::local();
    let existing = Existing::Cp { no_clobber: false, update: false };
    let options = TransferOptions::new(&copy_flags(chunk_size), existing, (bytes(dst), false));
    let pair = RootPair::new(bytes(src), false, bytes(dst), false);
    let transfer = Transfer::new(options, "cp", vec![pair], &cluster);
    let walk = WalkOptions { threads: ThreadPolicy::Fixed(4), ..WalkOptions::default() };
    let outcome = transfer.run(walk, &cluster, &canopy_distwalk::Plan::default());
    (transfer, outcome)
}

#[test]
fn chunk_jobs_are_made_as_they_are_needed() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let data: Vec<u8> = (0..(32u32 << 20) + 3).map(|i| (i % 251) as u8).collect();
    std::fs::write(src.join("big"), &data).unwrap();
    std::fs::write(src.join("other"), &data[..(3 << 20)]).unwrap();
    let dst = tmp.path().join("dst");
    let (transfer, outcome) = copy(&src, &dst, MIN_CHUNK_SIZE);
    assert_eq!(outcome, Outcome::default());
    assert!(std::fs::read(dst.join("big")).unwrap() == data, "the copy is whole");
    assert!(std::fs::read(dst.join("other")).unwrap() == data[..(3 << 20)]);
    // 512 + 48 chunks; queued all at once they would all wait together.
    let peak = transfer.chunks_queued_peak();
    assert!((1..=2).contains(&peak), "{peak} chunk jobs waited at once");
}

#[test]
fn a_full_disk_is_reported_once_per_file() {
    // A file system of 1 MiB (tmpfs, when this process may mount; otherwise skipped, saying so).
    let tmp = tempfile::tempdir().unwrap();
    let small = tmp.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "canopy-enospc"])
        .arg(&small)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        canopy_testkit::skip("cannot mount a small tmpfs here (not root?)");
        return;
    }
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("big"), vec![7u8; 8 << 20]).unwrap();
    let dst = small.join("dst");
    let (_, outcome) = copy(&src, &dst, MIN_CHUNK_SIZE);
    let _ = std::process::Command::new("umount").arg(&small).status();
    // 128 chunks, most of which cannot be written: one failure for the file.
    assert_eq!(outcome.errors, 1, "{outcome:?}");
}
