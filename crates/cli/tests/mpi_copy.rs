//! `canopy cp`, `sync`, `rm` and `cmp` under `mpirun` (the `mpi` build): on the hostile tree plus
//! hard links spread over many directories and a big file split into many chunks, for 1, 2, 4 and
//! 8 ranks and several schedulers, the results are those of one process by the GNU oracles:
//! `diff -r`, `rsync -a -H -n -i --delete` and GNU find see the copies identical (hard links
//! included, so names of one inode met by different ranks ended on one inode), `rm` removes exactly
//! what GNU find selects, `cmp` reports the same differences; `--stats` shows the work spread.
//! Every run has a time limit.
#![cfg(feature = "mpi")]

mod common;

use common::mpirun::mpirun;
use common::tree_oracles::assert_same_tree;
use common::*;
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Small enough that the big file below is 24 chunks.
const CHUNK: &str = "256K";

/// The hostile tree, plus 24 directories whose files are hard-linked from the next two directories
/// (groups of names that ranks meet separately) and a 6 MiB file linked from two directories.
fn source_tree(base: &Path) -> PathBuf {
    let root = hostile_tree(base);
    let spread = root.join("spread");
    for d in 0..24 {
        std::fs::create_dir_all(spread.join(format!("d{d:02}/inner"))).unwrap();
        for f in 0..10 {
            std::fs::write(spread.join(format!("d{d:02}/f{f}")), format!("{d} {f}\n").repeat(d * 10 + f))
                .unwrap();
            std::fs::write(spread.join(format!("d{d:02}/inner/g{f}")), b"g").unwrap();
        }
    }
    for d in 0..24 {
        for step in 1..=2 {
            let to = (d + step * 7) % 24;
            let from = spread.join(format!("d{d:02}/f0"));
            std::fs::hard_link(from, spread.join(format!("d{to:02}/inner/link-from-{d:02}"))).unwrap();
        }
    }
    let data: Vec<u8> = (0..(6u32 << 20) + 11).map(|i| (i % 253) as u8).collect();
    std::fs::write(root.join("sizes/chunky"), &data).unwrap();
    std::fs::hard_link(root.join("sizes/chunky"), spread.join("d05/chunky-link")).unwrap();
    std::fs::hard_link(root.join("sizes/chunky"), spread.join("d17/inner/chunky-link")).unwrap();
    // Creating entries moved the directories' times; the hostile tree set planned ones.
    set_times(&root.join("sizes"), 3000, 5000);
    root
}

/// Asserts a run succeeded and reported nothing of its own on stderr (mpirun may add notes).
#[track_caller]
fn assert_clean(out: &Output, context: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{context}: {stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with("canopy")), "{context}: {stderr}");
}

/// The ranks that ran tasks (directory reads, chunks, jobs), from a `--stats` file.
fn working_ranks(stats: &Path) -> usize {
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(stats).unwrap()).unwrap();
    stats["ranks"].as_array().unwrap().iter().filter(|r| r["tasks"].as_u64().unwrap() > 0).count()
}

/// Canopy's temporaries under `dir`: none may be left after a complete run.
fn leftovers(dir: &Path) -> String {
    let mut find = gnu("find");
    find.arg(dir).args(["-name", ".canopy-tmp-*"]);
    String::from_utf8_lossy(&run(find, None).stdout).into_owned()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn copies_under_mpirun_are_identical_with_hard_links_across_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path());
    let stats = tmp.path().join("stats.json");
    for (n, sched) in [(1, "h-drqs"), (2, "drqs"), (4, "h-drqs"), (4, "cp"), (8, "deqs")] {
        let context = format!("cp under mpirun -n {n} --sched {sched}");
        let into = tmp.path().join(format!("into-{n}-{sched}"));
        std::fs::create_dir(&into).unwrap();
        let args = [
            "cp",
            "-a",
            "--sched",
            sched,
            "--chunk-size",
            CHUNK,
            "--walk-stats",
            s(&stats),
            s(&src),
            s(&into),
        ];
        assert_clean(&mpirun(n, &args, &[]), &context);
        let dst = into.join("tree");
        assert_same_tree(&src, &dst);
        assert_eq!(leftovers(&into), "", "{context}: temporaries and meeting names removed");
        let sparse = |root: &Path| std::fs::metadata(root.join("sizes/sparse")).unwrap().blocks();
        assert!(sparse(&dst) <= sparse(&src), "{context}: the sparse file stays sparse");
        if n > 1 {
            assert!(working_ranks(&stats) > 1, "{context}: the work is spread over the ranks");
        }
    }
}

/// A copy killed (SIGKILL) halfway, rerun as the same command under mpirun: it resumes in place —
/// no DEST/SRC — keeps what the killed run completed, and leaves an identical copy.
#[test]
fn an_interrupted_copy_is_resumed_under_mpirun() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path());
    let dst = tmp.path().join("copy");
    let mut first = canopy();
    first.args(["cp", "-a", "-j", "1", "--chunk-size", CHUNK]).arg(&src).arg(&dst);
    assert!(common::interrupt::kill_at(first, &dst, 200), "the first run was interrupted");
    let kept: Vec<(String, u64)> = ["spread/d00/f1", "sizes/f1", "sub/target-file"]
        .iter()
        .filter_map(|p| std::fs::metadata(dst.join(p)).ok().map(|m| (p.to_string(), m.ino())))
        .filter(|(p, _)| std::fs::read(dst.join(p)).ok() == std::fs::read(src.join(p)).ok())
        .collect();
    let args = ["cp", "-a", "--chunk-size", CHUNK, s(&src), s(&dst)];
    assert_clean(&mpirun(4, &args, &[]), "rerun");
    assert!(!dst.join("tree").exists(), "resumed in place");
    assert_same_tree(&src, &dst);
    assert_eq!(leftovers(tmp.path()), "", "temporaries and the marker removed");
    for (path, ino) in kept {
        assert_eq!(std::fs::metadata(dst.join(&path)).unwrap().ino(), ino, "{path} was complete and kept");
    }
}

/// Damage a copy the ways sync must repair: changed, missing and extra entries, a directory where a
/// file goes and the reverse, a hard link broken into two files, a leftover temporary.
fn damage(dst: &Path) {
    std::fs::write(dst.join("spread/d02/f3"), b"changed").unwrap();
    std::fs::remove_file(dst.join("sizes/f513")).unwrap();
    std::fs::remove_dir_all(dst.join("spread/d11")).unwrap();
    std::fs::create_dir_all(dst.join("extra/deeper")).unwrap();
    std::fs::write(dst.join("extra/deeper/x"), b"x").unwrap();
    std::fs::write(dst.join("spread/d04/extra-file"), b"x").unwrap();
    std::fs::remove_file(dst.join("sub/mid.rs")).unwrap();
    std::fs::create_dir(dst.join("sub/mid.rs")).unwrap();
    std::fs::remove_dir_all(dst.join("empty-dir")).unwrap();
    std::fs::write(dst.join("empty-dir"), b"not a dir").unwrap();
    std::fs::remove_file(dst.join("spread/d14/inner/link-from-07")).unwrap();
    // Reading the original moves its access time (relatime): put it back, the damage is the link.
    let original = std::fs::metadata(dst.join("spread/d07/f0")).unwrap();
    std::fs::copy(dst.join("spread/d07/f0"), dst.join("spread/d14/inner/link-from-07")).unwrap();
    set_times_like(&dst.join("spread/d07/f0"), &original);
    // The broken-off copy gets a time seconds away from the source's, not the time of the copy:
    // the source was written a moment ago, and a copy made in the same second passes rsync's quick
    // check (size, whole seconds). sync may then keep it as the inode's copy — whichever name of
    // the inode a rank meets first — and every name would keep the copy's nanoseconds.
    set_times(&dst.join("spread/d14/inner/link-from-07"), 4000, 4000);
    std::fs::write(dst.join("spread/d06/.canopy-tmp-0123456789abcdef"), b"half").unwrap();
}

/// The lines of a dry run, comparable across runs that pick different names of one inode to copy.
fn listed_changes(out: &Output, src: &Path) -> Vec<String> {
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    common::classic::comparable_rsync_lines(&lines, &common::classic::linked_names(src, ""))
}

/// Two walks in one process (the dry run's comparison, then the deletions): the test that once hung
/// beside a CPU hog (2 of 15 runs), before a rank leaving one walk could no longer drop the next
/// walk's token (see `crates/distwalk/tests/walks_back_to_back.rs`).
#[test]
fn sync_under_mpirun_leaves_nothing_for_rsync() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path());
    for (n, sched) in [(2, "h-drqs"), (4, "cp"), (8, "pa-drqs")] {
        let context = format!("sync under mpirun -n {n} --sched {sched}");
        let dst = tmp.path().join(format!("sync-{n}-{sched}"));
        let mut cp = canopy();
        cp.args(["cp", "-a"]).arg(&src).arg(&dst);
        assert_eq!(run(cp, None).status.code(), Some(0));
        damage(&dst);
        let (from, to) = (format!("{}/", s(&src)), format!("{}/", s(&dst)));
        let preview = |n| mpirun(n, &["sync", "-aHni", "--delete", "--sched", sched, &from, &to], &[]);
        let (one, many) = (preview(1), preview(n));
        assert_clean(&many, &context);
        assert!(!listed_changes(&one, &src).is_empty(), "{context}: the damage is listed");
        assert_eq!(
            listed_changes(&many, &src),
            listed_changes(&one, &src),
            "{context}: the dry run lists the same"
        );
        let args = ["sync", "-aH", "--delete", "--sched", sched, "--chunk-size", CHUNK, &from, &to];
        assert_clean(&mpirun(n, &args, &[]), &context);
        assert_same_tree(&src, &dst);
        assert_eq!(leftovers(&dst), "", "{context}");
    }
}

/// Every path below `root` (root included), as GNU find lists them.
fn all_paths(root: &Path) -> BTreeSet<Vec<u8>> {
    let mut find = gnu("find");
    find.arg(root).arg("-print0");
    run(find, None).stdout.split(|&b| b == 0).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect()
}

#[test]
fn rm_under_mpirun_removes_what_find_selects() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path());
    for (n, sched) in [(2, "drqs"), (4, "h-drqs"), (8, "cp")] {
        let context = format!("rm under mpirun -n {n} --sched {sched}");
        let victim = tmp.path().join(format!("victim-{n}-{sched}"));
        let mut cp = canopy();
        cp.args(["cp", "-a"]).arg(&src).arg(&victim);
        assert_eq!(run(cp, None).status.code(), Some(0));
        // A filter: what GNU find matches goes, a matching directory with everything in it.
        let filter = ["-name", "*1*", "-o", "-name", "inner"];
        let mut find = gnu("find");
        find.arg(&victim).arg("(").args(filter).args([")", "-print0"]);
        let matched: Vec<Vec<u8>> =
            run(find, None).stdout.split(|&b| b == 0).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect();
        let before = all_paths(&victim);
        let selected: BTreeSet<Vec<u8>> = before
            .iter()
            .filter(|p| matched.iter().any(|m| *p == m || p.starts_with(&[m.as_slice(), b"/"].concat())))
            .cloned()
            .collect();
        assert!(selected.len() > 100, "{context}: the filter selects plenty");
        let mut args = vec!["rm", "-r", "--sched", sched, s(&victim)];
        args.extend(filter);
        assert_clean(&mpirun(n, &args, &[]), &context);
        let removed: BTreeSet<Vec<u8>> = before.difference(&all_paths(&victim)).cloned().collect();
        assert!(removed == selected, "{context}: {} removed, {} selected", removed.len(), selected.len());
        // The dry run lists, on rank 0, what one process lists; then everything goes.
        let listed = mpirun(n, &["rm", "-rn", "--sched", sched, s(&victim)], &[]);
        assert_clean(&listed, &context);
        let mut local = canopy();
        local.args(["rm", "-rn", s(&victim)]);
        let want = run(local, None);
        assert!(want.stdout.len() > 1000);
        assert_same_records(&records(&listed.stdout, b'\n'), &records(&want.stdout, b'\n'), &context);
        assert_clean(&mpirun(n, &["rm", "-rf", "--sched", sched, s(&victim)], &[]), &context);
        assert!(!victim.exists(), "{context}: nothing left");
    }
}

#[test]
fn cmp_under_mpirun_reports_what_one_process_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path());
    let other = tmp.path().join("other");
    let mut cp = canopy();
    cp.args(["cp", "-a"]).arg(&src).arg(&other);
    assert_eq!(run(cp, None).status.code(), Some(0));
    damage(&other);
    // A difference deep inside the big file, its size and time kept: only chunks compared find it.
    let chunky = other.join("sizes/chunky");
    let times = std::fs::metadata(&chunky).unwrap();
    rustix::io::pwrite(std::fs::OpenOptions::new().write(true).open(&chunky).unwrap(), b"!", 5 << 20)
        .unwrap();
    set_times_like(&chunky, &times);
    for json in [false, true] {
        let mut args = vec!["cmp", "--content", "--chunk-size", CHUNK, s(&src), s(&other)];
        if json {
            args.insert(1, "--json");
        }
        let mut local = canopy();
        local.args(&args);
        let want = run(local, None);
        assert_eq!(want.status.code(), Some(1), "{}", String::from_utf8_lossy(&want.stderr));
        let want = records(&want.stdout, b'\n');
        assert!(want.iter().any(|l| String::from_utf8_lossy(l).contains("sizes/chunky")), "found by a chunk");
        for (n, sched) in [(2, "h-drqs"), (4, "cp"), (8, "drqs")] {
            let mut args = args.clone();
            args.splice(1..1, ["--sched", sched]);
            let got = mpirun(n, &args, &[]);
            assert_eq!(got.status.code(), Some(1), "{}", String::from_utf8_lossy(&got.stderr));
            assert_same_records(
                &records(&got.stdout, b'\n'),
                &want,
                &format!("cmp -n {n} {sched} json={json}"),
            );
        }
    }
}
