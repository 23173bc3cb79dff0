//! The group tools under `mpirun` (the `mpi` build), one host per rank: pcp and psync leave every host a
//! byte-identical copy, and pcp, psync and ptail print exactly what the same hosts simulated with threads
//! print (the oracle), failures included.
#![cfg(feature = "mpi")]

mod common;

use common::host_roots::{host_file, hosts, random};
use common::mpirun::mpirun;
use common::*;
use std::path::Path;
use std::process::Output;

const NAMES: [&str; 2] = ["--host-name", "host{rank}"];

/// The same tool on `n` hosts simulated with threads.
fn simulated(n: usize, args: &[&str]) -> Output {
    let mut c = canopy();
    c.args(args).args(["--hosts", &n.to_string()]).args(NAMES);
    run(c, None)
}

fn on_ranks(n: usize, args: &[&str]) -> Output {
    let args: Vec<&str> = args.iter().copied().chain(NAMES).collect();
    mpirun(n, &args, &[])
}

/// Exit status, stdout and canopy's own stderr lines (mpirun adds notes of its own on failure), without
/// the time a copy took (pcp's and psync's summary lines end `in TIME`, their JSON has `seconds`).
fn seen(out: &Output) -> (Option<i32>, String, Vec<String>) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ours = stderr.lines().filter(|l| l.starts_with("canopy")).map(str::to_owned).collect();
    let stdout: String = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| match serde_json::from_str::<serde_json::Value>(line) {
            Ok(mut report) if report.get("seconds").is_some() => {
                report.as_object_mut().unwrap().remove("seconds");
                report.to_string()
            }
            _ if line.starts_with("pcp: ") || line.starts_with("psync: ") => {
                line.rsplit_once(" in ").map_or(line, |(summary, _)| summary).to_owned()
            }
            _ => line.to_owned(),
        })
        .map(|line| line + "\n")
        .collect();
    (out.status.code(), stdout, ours)
}

#[test]
fn pcp_on_every_rank_count_copies_byte_identical_and_reports_like_threads() {
    for n in [1, 2, 4, 8] {
        let dir = tempfile::tempdir().unwrap();
        let missing: &[usize] = if n >= 4 { &[2] } else { &[] };
        let root = hosts(dir.path(), n, missing);
        let source = dir.path().join("src.bin");
        let content = random(n as u64, 1024 * 1024 + 7);
        std::fs::write(&source, &content).unwrap();
        let args = ["pcp", source.to_str().unwrap(), "/data/", "--host-root", &root, "--chunk-size", "64K"];
        let got = seen(&on_ranks(n, &args));
        for rank in (0..n).filter(|r| !missing.contains(r)) {
            let copy = std::fs::read(host_file(dir.path(), rank, "/data/src.bin")).unwrap();
            assert!(copy == content, "n = {n}: host {rank}'s copy differs");
        }
        for rank in (0..n).filter(|r| !missing.contains(r)) {
            std::fs::remove_file(host_file(dir.path(), rank, "/data/src.bin")).unwrap();
        }
        let want = seen(&simulated(n, &args));
        assert_eq!(got, want, "n = {n}: mpirun vs threads");
        assert_eq!(got.0, Some(if missing.is_empty() { 0 } else { 1 }), "n = {n}: {got:?}");
        assert!(got.1.starts_with("pcp: 1.0 MiB to /data/src.bin on host"), "n = {n}: {got:?}");
    }
}

#[test]
fn psync_on_ranks_brings_stale_versions_to_the_source_like_threads() {
    let n = 4;
    let dir = tempfile::tempdir().unwrap();
    let root = hosts(dir.path(), n, &[]);
    let source = random(7, 600_000);
    let src_path = dir.path().join("new");
    std::fs::write(&src_path, &source).unwrap();
    let mut changed = source.clone();
    changed[300_000..303_000].fill(0);
    let stale = |dir: &Path| {
        std::fs::write(host_file(dir, 0, "/data/f"), &source).unwrap();
        std::fs::write(host_file(dir, 1, "/data/f"), &changed).unwrap();
        std::fs::write(host_file(dir, 2, "/data/f"), &changed).unwrap();
        let _ = std::fs::remove_file(host_file(dir, 3, "/data/f"));
    };
    let args = ["psync", src_path.to_str().unwrap(), "/data/f", "--host-root", &root, "--json"];
    stale(dir.path());
    let got = seen(&on_ranks(n, &args));
    for rank in 0..n {
        assert!(std::fs::read(host_file(dir.path(), rank, "/data/f")).unwrap() == source, "host {rank}");
    }
    stale(dir.path());
    let want = seen(&simulated(n, &args));
    assert_eq!(got, want, "mpirun vs threads");
    assert_eq!(got.0, Some(0), "{got:?}");
}

#[test]
fn ptail_on_ranks_merges_what_threads_merge() {
    let n = 4;
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..n {
        let log = host_file(dir.path(), rank, "/var/log/syslog");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let mut text = String::new();
        for i in 0..6 {
            if i % 2 == 0 {
                text += &format!("Nov 24 10:00:0{i} node{rank} sshd[{}]: event {i}\n", 100 + rank);
            } else {
                text += &format!("Nov 24 10:00:0{i} node{rank} app[9]: private {rank}.{i}\n");
            }
        }
        std::fs::write(log, text).unwrap();
    }
    let root = format!("{}/h/{{rank}}", dir.path().display());
    let args = ["ptail", "-n", "6", "/var/log/syslog", "--host-root", &root, "--fanout", "2"];
    let (code, stdout, stderr) = seen(&on_ranks(n, &args));
    let mut got: Vec<&str> = stdout.lines().collect();
    got.sort_unstable();
    let (want_code, want_stdout, want_stderr) = seen(&simulated(n, &args));
    let mut want: Vec<&str> = want_stdout.lines().collect();
    want.sort_unstable();
    assert_eq!((code, got.clone(), stderr), (want_code, want, want_stderr));
    // 3 shared events once each, 3 private lines per host.
    assert_eq!(got.len(), 3 + 3 * n, "{stdout}");
    assert!(got.contains(&"host[0-3]: Nov 24 10:00:00 sshd: event 0"), "{stdout}");
}

#[test]
fn pgrep_on_every_rank_count_prints_what_threads_print() {
    for n in [1, 2, 4, 8] {
        let dir = tempfile::tempdir().unwrap();
        for rank in 0..n {
            let etc = host_file(dir.path(), rank, "/etc");
            std::fs::create_dir_all(&etc).unwrap();
            // Ranks 0 and 3 differ; rank 5 has no file.
            let port = if rank == 3 { 2222 } else { 22 };
            if rank != 5 {
                std::fs::write(
                    etc.join("sshd_config"),
                    format!("Port {port}\nMaxSessions {}\n", 10 + rank % 2),
                )
                .unwrap();
            }
        }
        let root = format!("{}/h/{{rank}}", dir.path().display());
        for flags in [&["-i", "port|max"][..], &["-L", "Port"], &["-c", "Max"], &["-S", "-i", "port|max"]] {
            let args: Vec<&str> = ["pgrep"]
                .into_iter()
                .chain(flags.iter().copied())
                .chain(["/etc/sshd_config", "--host-root", &root])
                .collect();
            let got = seen(&on_ranks(n, &args));
            let want = seen(&simulated(n, &args));
            assert_eq!(got, want, "n = {n}, {flags:?}: mpirun vs threads");
            // clush's statuses: 0 whatever failed; -S the largest, grep's 2 for rank 5's missing file.
            let worst = if flags.contains(&"-S") && n > 5 { 2 } else { 0 };
            assert_eq!(got.0, Some(worst), "n = {n}, {flags:?}: {got:?}");
        }
    }
}
